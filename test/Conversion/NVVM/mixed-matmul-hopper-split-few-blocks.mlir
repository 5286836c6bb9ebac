// How far the wgmma kernel splits K over a cluster where its blocks are
// fewer than the SMs (kFewBlocksMinClusterSplitChunks): a split block
// takes at least 8 of the 64-K chunks, but dense tiles of up to 64 tokens
// whose split blocks still fit one wave (at most one per SM of the H200's
// 132) go down to 4. K = 1504 (24 chunks) x N = 1000 (16 column tiles) at
// M = 64: three ways by the 8-chunk bound, six by the few-blocks one (96
// blocks). 2048 x 2048 (32 chunks, 32 column tiles) at M = 16: four ways
// (128 blocks); five would take 160, more than one wave, and stays out
// (it ran 5-8% slower: docs/performance.md, "Few blocks"). Its 16-token
// tiles take their weight's words from shared memory (weight_copies
// chosen): 8 stages of 2 KiB of activations, then 8 of 2.5 KiB of words.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// A weight_stages tiling (the register queue's depth) keeps the words in
// registers: 8 stages of activations alone.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-stages=2},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=QUEUE

// CHECK-LABEL: func.func @k1504_n1000_m64
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c16, %c1, %c6) threads in (%c128,
func.func @k1504_n1000_m64(%a: memref<64x1504xbf16>, %v: memref<786432xi8>, %s: memref<49152xi8>, %g: f32, %o: memref<64x1000xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<64x1504xbf16>, !microscale.qtensor<1504x1000, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<786432xi8>, memref<49152xi8>, memref<64x1000xbf16>
  return
}

// CHECK-LABEL: func.func @k2048_n2048_m16
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_1 blocks in (%c32{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) threads in (%c128,
func.func @k2048_n2048_m16(%a: memref<16x2048xbf16>, %v: memref<2097152xi8>, %s: memref<131072xi8>, %g: f32, %o: memref<16x2048xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<16x2048xbf16>, !microscale.qtensor<2048x2048, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<2097152xi8>, memref<131072xi8>, memref<16x2048xbf16>
  return
}

// CHECK: gpu.func @mixed_matmul_wgmma_0
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 6>
// CHECK: gpu.func @mixed_matmul_wgmma_1
// CHECK-SAME: workgroup(%{{.*}} : memref<9216xi32, #gpu.address_space<workgroup>>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 4>

// QUEUE: gpu.func @mixed_matmul_wgmma_1
// QUEUE-SAME: workgroup(%{{.*}} : memref<4096xi32, #gpu.address_space<workgroup>>
