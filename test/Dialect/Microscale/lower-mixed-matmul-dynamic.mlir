// The host lowering of mixed_matmul_storage with rows known at run time
// only: the row counts come from the buffers (memref.dim), nothing runs
// when one of them is zero, and the rows loop to the runtime count. (The
// values: MixedMatmulJITDynamic.OneCompileEveryM.)
// RUN: mx-opt %s --microscale-lower-storage-conversions | FileCheck %s

// CHECK-LABEL: func.func @dense
// CHECK: memref.dim %arg0, %c0{{.*}} : memref<?x64xbf16>
// CHECK: memref.dim %arg4, %c0{{.*}} : memref<?x16xf32>
// CHECK: %[[M:.*]] = memref.dim %arg0, %c0{{.*}} : memref<?x64xbf16>
// CHECK: scf.if
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[M]], %{{.*}})
// CHECK-NOT: microscale.mixed_matmul_storage
!w = !microscale.qtensor<64x16, mxfp4, axis = 0>
func.func @dense(%a: memref<?x64xbf16>, %v: memref<512xi8>, %s: memref<32xi8>, %g: f32, %o: memref<?x16xf32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x64xbf16>, !w, memref<512xi8>, memref<32xi8>, memref<?x16xf32>
  return
}

// The ragged form: the rows from the gather's length, each expert's count
// clipped to it.
// CHECK-LABEL: func.func @ragged
// CHECK: %[[R:.*]] = memref.dim %arg7, %c0{{.*}} : memref<?xi32>
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.minui %{{.*}}, %[[R]] : index
!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @ragged(%a: memref<?x64xbf16>, %v: memref<2048xi8>, %s: memref<128xi8>, %g: f32, %o: memref<?x16xbf16>,
                  %off: memref<4xi32>, %cnt: memref<4xi32>, %gi: memref<?xi32>, %si: memref<?xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<4xi32>, memref<4xi32>) gather(%gi : memref<?xi32>) scatter(%si : memref<?xi32>) : memref<?x64xbf16>, !e, memref<2048xi8>, memref<128xi8>, memref<?x16xbf16>
  return
}
