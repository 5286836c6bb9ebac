// A layout added outside the dialect, in one attribute and one reference map
// (#microscale_test.tile_transposed, test/lib/Dialect/Test): its emitters
// are derived from the map, so the GPU lowering builds kernels for it with no
// pass knowing it. Byte-exactness on the host is checked by
// MicroscaleJITTests (DerivedLayoutJITTest.cpp).
// RUN: mx-opt %s --microscale-gpu-to-ptx | FileCheck %s

!canon = !microscale.qtensor<2x64x258, mxfp4, axis = 1>
!tiles = !microscale.qtensor<2x64x258, mxfp4, axis = 1, values = #microscale_test.tile_transposed<tile = 16>, scales = #microscale_test.tile_transposed<tile = 4>>

// CHECK-LABEL: func.func @to_tiles
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_1
// CHECK-NOT: microscale.convert_storage
func.func @to_tiles(%vs: memref<?xi8>, %ss: memref<?xi8>,
                    %vd: memref<?xi8>, %sd: memref<?xi8>) {
  microscale.convert_storage values %vs, %vd : !canon -> !tiles, memref<?xi8>, memref<?xi8>
  microscale.convert_storage scales %ss, %sd : !canon -> !tiles, memref<?xi8>, memref<?xi8>
  return
}

// CHECK-LABEL: func.func @from_tiles
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_2
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_3
func.func @from_tiles(%vs: memref<?xi8>, %ss: memref<?xi8>,
                      %vd: memref<?xi8>, %sd: memref<?xi8>) {
  microscale.convert_storage values %vs, %vd : !tiles -> !canon, memref<?xi8>, memref<?xi8>
  microscale.convert_storage scales %ss, %sd : !tiles -> !canon, memref<?xi8>, memref<?xi8>
  return
}

// The PTX has the four kernels.
// CHECK: gpu.binary @microscale_kernels
// CHECK-SAME: .entry convert_storage_0
// CHECK-SAME: .entry convert_storage_1
// CHECK-SAME: .entry convert_storage_2
// CHECK-SAME: .entry convert_storage_3
