// RUN: mx-opt %s --microscale-lower-storage-conversions --canonicalize | FileCheck %s
// RUN: mx-opt %s --microscale-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// One parallel loop over the logical elements; codes decode through
// constant tables shared by the module; the product is rounded once to bf16.
// CHECK-DAG: memref.global "private" constant @microscale_decode_e2m1 : memref<16xf32> = dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00, -0.000000e+00, -5.000000e-01, -1.000000e+00, -1.500000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00, -6.000000e+00]>
// CHECK-DAG: memref.global "private" constant @microscale_decode_e8m0_ocp : memref<256xf32>
// CHECK-LABEL: func @dequantize
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK: arith.mulf
// CHECK: arith.cmpf uno
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<128xbf16>
// LLVM: llvm.mlir.global private constant @microscale_decode_e2m1
// LLVM-NOT: microscale.
!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @dequantize(%v: memref<64xi8>, %s: memref<4xi8>, %o: memref<128xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<4xi8>, memref<128xbf16>
  return
}
