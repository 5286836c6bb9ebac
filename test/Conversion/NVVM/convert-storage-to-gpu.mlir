// RUN: mx-opt %s --microscale-nvvm-outline-kernels --canonicalize --cse | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a' | FileCheck %s --check-prefix=SM100
// RUN: not mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a features=+ptx80' 2>&1 | FileCheck %s --check-prefix=OLDPTX
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{block-size=2048},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=BAD

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>

// One kernel per conversion and one launch in its place: a thread per 4
// consecutive destination units (4096 Hopper words here: 4 blocks of 256
// threads), 64-bit unit indices, loads from the source and stores to the
// destination only, no allocation. The buffers are static-shaped, noalias
// and 16-byte aligned, so that the kernel takes bare pointers, reads through
// the read-only path and merges each word's 4 byte stores.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @convert
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<4096xi8>, %{{.*}} : memref<16384xi8>, %{{.*}} : index, %{{.*}} : index)
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_1
// CHECK-NOT: microscale.convert_storage
// CHECK: gpu.module @microscale_kernels
// CHECK: gpu.func @convert_storage_0(%[[SRC:.*]]: memref<4096xi8> {llvm.align = 16 : i64, llvm.noalias}, %[[DST:.*]]: memref<16384xi8> {llvm.align = 16 : i64, llvm.noalias}, %[[B:.*]]: index, %[[E:.*]]: index) kernel
// CHECK-NOT: memref.alloc
// CHECK: %[[U:.*]] = arith.addi %[[B]],
// CHECK: arith.cmpi ule, %{{.*}}, %[[E]]
// CHECK: scf.if
// CHECK-COUNT-32: memref.load %[[SRC]]
// CHECK-COUNT-16: memref.store %{{.*}}, %[[DST]]
// CHECK: } else {
// CHECK: gpu.func @convert_storage_1
// CHECK-NOT: memref.alloc
// PTX: gpu.binary @microscale_kernels
// PTX-SAME: .target sm_90a
// PTX-SAME: .visible .entry convert_storage_0(
// PTX-SAME: .param .u64 .ptr .align 16 convert_storage_0_param_0,
// PTX-SAME: .param .u64 .ptr .align 16 convert_storage_0_param_1,
// PTX-SAME: ld.global.nc.b8
// PTX-SAME: st.global.b32
// PTX-SAME: .visible .entry convert_storage_1
// SM100: .target sm_100a
// OLDPTX: error: chip sm_100a needs PTX 8.6 or newer, but the target's features give 8.0 ('+ptx80')
// BAD: error: 'microscale.convert_storage' op tiling block_size = 2048 must be in [1, 1024]
func.func @convert(%v: memref<4096xi8>, %hv: memref<16384xi8>, %s: memref<256xi8>, %hs: memref<512xi8>) {
  microscale.convert_storage values %v, %hv : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  microscale.convert_storage scales %hs, %s : !hopper -> !canon, memref<512xi8>, memref<256xi8>
  return
}

