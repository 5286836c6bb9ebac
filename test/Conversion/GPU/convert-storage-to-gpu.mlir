// RUN: mx-opt %s --microscale-convert-storage-to-gpu --canonicalize --cse | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a' | FileCheck %s --check-prefix=SM100
// RUN: not mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a features=+ptx80' 2>&1 | FileCheck %s --check-prefix=OLDPTX
// RUN: not mx-opt %s --microscale-convert-storage-to-gpu='block-size=2048' 2>&1 | FileCheck %s --check-prefix=BAD

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>

// One kernel per conversion and one launch in its place: a thread per
// destination unit (4096 Hopper words here, 16 blocks of 256), 64-bit unit
// indices, a bounds check, loads from the source and stores to the
// destination only, no allocation.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @convert
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<?xi8>, %{{.*}} : memref<?xi8>, %{{.*}} : index, %{{.*}} : index)
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_1
// CHECK-NOT: microscale.convert_storage
// CHECK: gpu.module @microscale_kernels
// CHECK: gpu.func @convert_storage_0(%[[SRC:.*]]: memref<?xi8>, %[[DST:.*]]: memref<?xi8>, %[[B:.*]]: index, %[[E:.*]]: index) kernel
// CHECK-NOT: memref.alloc
// CHECK: %[[U:.*]] = arith.addi %[[B]],
// CHECK: arith.cmpi ult, %[[U]], %[[E]]
// CHECK: scf.if
// CHECK-COUNT-8: memref.load %[[SRC]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[DST]]
// CHECK: gpu.func @convert_storage_1
// CHECK-NOT: memref.alloc
// PTX: gpu.binary @microscale_kernels
// PTX-SAME: .target sm_90a
// PTX-SAME: .visible .entry convert_storage_0
// PTX-SAME: .visible .entry convert_storage_1
// SM100: .target sm_100a
// OLDPTX: error: chip sm_100a needs PTX 8.6 or newer, but the target's features give 8.0 ('+ptx80')
// BAD: microscale-convert-storage-to-gpu: block-size must be in [1, 1024], got 2048
func.func @convert(%v: memref<4096xi8>, %hv: memref<16384xi8>, %s: memref<256xi8>, %hs: memref<512xi8>) {
  microscale.convert_storage values %v, %hv : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  microscale.convert_storage scales %hs, %s : !hopper -> !canon, memref<512xi8>, memref<256xi8>
  return
}
