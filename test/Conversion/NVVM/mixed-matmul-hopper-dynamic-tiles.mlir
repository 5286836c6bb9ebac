// Rows known at run time: each wgmma variant (rows17: 17-64 rows, rows65:
// 65-256, rows257: above) compiles its planned tile and, below it, tiles
// of 8 tokens fewer, then of 16 fewer at a time (_t32, _t48, _t56; _t80,
// _t96, _t112, _t120; _t96, _t112, _t120): the host code evens M's tiles
// of the planned size out (as the static planner does) and launches the
// fewest-token tile they fit in.
// Above 256 rows, where they stay full, it chooses from M by the rule the
// planner applies where M is static (the busiest SM's work:
// chooseTileByBusiestSM) between rows257 (128 tokens, two warpgroups),
// rows257_w1 (128 tokens, one) and rows257_t256 (256 tokens, one). Here M
// is static behind a memref.cast, so canonicalization folds the host
// code's arithmetic and switches down to the one launch it picks. On 2880
// x 5760 over 132 SMs: M = 40 one tile of 40 tokens (_t48, K split in 3
// as planned), 100 one of 104 (_t112), 130 two of 72 (_t80), 300 three of
// 104 (_t112: what the static planner runs, 104), 257 three of 88 (_t96);
// M = 700 six of 117 (_t120); M = 1000 two warpgroups of 128 by the
// rule, 2000 and 4096 256-token tiles; on
// 2880 x 2880: M = 300 three tiles of 112 tokens with K split in two (a
// rung takes the split the planner chooses for its fewest tiles, here as
// the static planner does at M = 300), 1000 one warpgroup by
// the rule. Without the fold: the switches themselves.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels --canonicalize | FileCheck %s
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=SWITCH
// A tiling that fixes the tile (here warp_columns): one kernel above 256
// rows, no choice.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-columns=16},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=ASKED

!w = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
// CHECK-LABEL: func.func @rows_40
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows17_t48 blocks in (%c90, %c1, %c3) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_40(%sa: memref<40x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<40x5760xbf16>) {
  %a = memref.cast %sa : memref<40x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<40x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_64
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows17 blocks in (%c90, %c1, %c3) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_64(%sa: memref<64x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<64x5760xbf16>) {
  %a = memref.cast %sa : memref<64x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<64x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_100
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows65_t112 blocks in (%c90, %c1, %c2) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_100(%sa: memref<100x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<100x5760xbf16>) {
  %a = memref.cast %sa : memref<100x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<100x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_130
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows65_t80 blocks in (%c90, %c2, %c2) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_130(%sa: memref<130x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<130x5760xbf16>) {
  %a = memref.cast %sa : memref<130x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<130x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_257
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t96 blocks in (%c90, %c3, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_257(%sa: memref<257x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<257x5760xbf16>) {
  %a = memref.cast %sa : memref<257x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<257x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_300
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t112 blocks in (%c90, %c3, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_300(%sa: memref<300x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<300x5760xbf16>) {
  %a = memref.cast %sa : memref<300x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<300x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_700
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t120 blocks in (%c90, %c6, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_700(%sa: memref<700x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<700x5760xbf16>) {
  %a = memref.cast %sa : memref<700x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<700x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

!sq = !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
// CHECK-LABEL: func.func @square_300
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t112 blocks in (%c45, %c3, %c2) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @square_300(%sa: memref<300x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %so: memref<300x2880xbf16>) {
  %a = memref.cast %sa : memref<300x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<300x2880xbf16> to memref<?x2880xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}

// CHECK-LABEL: func.func @square_1000
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_w1 blocks in (%c45, %c8, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @square_1000(%sa: memref<1000x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %so: memref<1000x2880xbf16>) {
  %a = memref.cast %sa : memref<1000x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<1000x2880xbf16> to memref<?x2880xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}

// CHECK-LABEL: func.func @rows_1000
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks in (%c45, %c8, %c1) threads in (%c256,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_1000(%sa: memref<1000x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<1000x5760xbf16>) {
  %a = memref.cast %sa : memref<1000x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<1000x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_2000
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t256 blocks in (%c90, %c8, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_2000(%sa: memref<2000x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<2000x5760xbf16>) {
  %a = memref.cast %sa : memref<2000x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<2000x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// CHECK-LABEL: func.func @rows_4096
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_t256 blocks in (%c90, %c16, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rows_4096(%sa: memref<4096x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %so: memref<4096x5760xbf16>) {
  %a = memref.cast %sa : memref<4096x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<4096x5760xbf16> to memref<?x5760xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// SWITCH-LABEL: func.func @serve
// SWITCH: case 3 {
// SWITCH: scf.index_switch
// SWITCH-NEXT: case 1 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I:[0-9]+]]_rows17_t48 blocks
// SWITCH: default {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows17_t32 blocks
// SWITCH: case 5 {
// SWITCH: scf.index_switch
// SWITCH-NEXT: case 1 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t112 blocks
// SWITCH: case 2 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t120 blocks
// SWITCH: case 3 {
// SWITCH: arith.ceildivui
// SWITCH: scf.index_switch %{{[0-9]+}}
// SWITCH-NEXT: case 1 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_w1 blocks in (%c90{{.*}}, %[[T1:[0-9]+]], %c1{{.*}}) threads in (%c128
// SWITCH: case 2 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t256 blocks in (%c90{{.*}}, %[[T2:[0-9]+]], %c1{{.*}}) threads in (%c128
// SWITCH: default {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257 blocks in (%c45{{.*}}, %{{.*}}, %c1{{.*}}) threads in (%c256
// SWITCH: default {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t96 blocks
// SWITCH: gpu.module @microscale_kernels
// SWITCH-COUNT-4: gpu.func @mixed_matmul_hopper_{{[0-9]+}}_rows17{{(_t32|_t48|_t56)?}}(
// SWITCH-COUNT-5: gpu.func @mixed_matmul_hopper_{{[0-9]+}}_rows65{{(_t80|_t96|_t112|_t120)?}}(
// SWITCH-COUNT-6: gpu.func @mixed_matmul_hopper_{{[0-9]+}}_rows257{{(_t96|_t112|_t120|_w1|_t256)?}}(
// SWITCH-NOT: mixed_matmul_hopper_[[I]]_rows257_s2(
// ASKED-LABEL: func.func @serve
// ASKED: case 5 {
// ASKED-NOT: scf.index_switch
// ASKED: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks
// ASKED-NOT: rows257_
// ASKED-NOT: _t{{[0-9]+}}(
func.func @serve(%a: memref<?x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<?x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}
