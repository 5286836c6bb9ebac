// RUN: mx-opt %s --microscale-lower-storage-conversions --canonicalize | FileCheck %s
// RUN: mx-opt %s --microscale-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// Two parallel loops over destination store units (scales, then elements);
// codes come from two constant tables built by the C++ reference, named by
// variant and bump rule and shared by the module. The JIT tests
// (unittests/Runtime/TranscodeJITTest.cpp) check the bytes.
// CHECK-DAG: memref.global "private" constant @microscale_transcode_scale_hwcvt_nonzero_mantissa : memref<256xi8>
// CHECK-DAG: memref.global "private" constant @microscale_transcode_element_hwcvt_nonzero_mantissa : memref<4096xi8>
// CHECK-DAG: memref.global "private" constant @microscale_transcode_element_lut_mantissa_at_least_3 : memref<4096xi8>
// CHECK-LABEL: func @transcode
// CHECK-NOT: memref.alloc
// CHECK: memref.get_global @microscale_transcode_scale_hwcvt_nonzero_mantissa
// CHECK: memref.get_global @microscale_transcode_element_hwcvt_nonzero_mantissa
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: microscale.transcode_storage
// LLVM-DAG: llvm.mlir.global private constant @microscale_transcode_element_hwcvt_nonzero_mantissa
// LLVM-DAG: llvm.mlir.global private constant @microscale_transcode_element_lut_mantissa_at_least_3
// LLVM-NOT: microscale.
!nv = !microscale.qtensor<2x64, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<2x64, mxfp6_e2m3, axis = 1>
func.func @transcode(%v: memref<64xi8>, %s: memref<4xi8>, %ov: memref<96xi8>, %os: memref<4xi8>) {
  microscale.transcode_storage %v, %s into %ov, %os {variant = #microscale.transcode_variant<hwcvt>} : !nv -> !mx, memref<64xi8>, memref<4xi8>, memref<96xi8>, memref<4xi8>
  return
}
func.func @transcode_minimal(%v: memref<64xi8>, %s: memref<4xi8>, %ov: memref<96xi8>, %os: memref<4xi8>) {
  microscale.transcode_storage %v, %s into %ov, %os {exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>} : !nv -> !mx, memref<64xi8>, memref<4xi8>, memref<96xi8>, memref<4xi8>
  return
}

// The NVIDIA path says it has no transcode rather than leaving it behind.
// RUN: not mx-opt %s --microscale-nvvm-outline-conversions 2>&1 | FileCheck %s --check-prefix=GPU
// GPU: error: 'microscale.transcode_storage' op has no NVIDIA lowering (the CPU one is microscale-cpu-lower-storage)
