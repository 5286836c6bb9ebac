// How far the wgmma kernel splits K over a cluster for token tiles above
// 64 tokens (the planner's kFourWaySplitTokens): DeepSeek-V3's expert
// weight (7168 x 2048, 32 column tiles) at M = 130 has two 72-token tiles,
// 64 blocks of one warpgroup; split until the blocks give every SM two,
// at most four ways: grid z 4, a cluster of (1, 1, 4). At M = 100 it has
// one 104-token tile, 32 blocks: split two ways at most, though the blocks
// would want more (three ran 30-40% slower than two on 104- and 128-token
// tiles: docs/performance.md, "Measurements behind defaults"; at 128
// tokens still with the sums' reduce-scatter, "The split's sums").
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @deepseek_expert_m130
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c32, %c2, %c4) threads in (%c128,
func.func @deepseek_expert_m130(%a: memref<130x7168xbf16>, %v: memref<7340032xi8>, %s: memref<458752xi8>, %g: f32, %o: memref<130x2048xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<130x7168xbf16>, !microscale.qtensor<7168x2048, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<7340032xi8>, memref<458752xi8>, memref<130x2048xbf16>
  return
}

// CHECK-LABEL: func.func @deepseek_expert_m100
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_1 blocks in (%c32{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}) threads in (%c128,
func.func @deepseek_expert_m100(%a: memref<100x7168xbf16>, %v: memref<7340032xi8>, %s: memref<458752xi8>, %g: f32, %o: memref<100x2048xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<100x7168xbf16>, !microscale.qtensor<7168x2048, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<7340032xi8>, memref<458752xi8>, memref<100x2048xbf16>
  return
}

// CHECK: gpu.func @mixed_matmul_wgmma_0
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 4>
// CHECK: gpu.func @mixed_matmul_wgmma_1
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 2>
