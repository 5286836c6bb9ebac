// Rows known at run time above 256: the host code chooses the wgmma tile
// from M by the rule the planner applies where M is static (the busiest
// SM's work: chooseTileByBusiestSM), between three compiled kernels:
// rows257 (128 tokens, two warpgroups), rows257_w1 (128 tokens, one) and
// rows257_t256 (256 tokens, one). Here M is static behind a memref.cast,
// so canonicalization folds the host code's arithmetic and switch down to
// the one launch it picks. The rule applies where the static planner
// applies it, where M's 128-token tiles evened out stay 128 (M > 120 per
// tile); below, the planner's base rule: two warpgroups where their blocks
// cover the SMs, else one. On 2880 x 5760 over 132 SMs: M = 300 and 700
// (below) two warpgroups (135 and 270 blocks), M = 1000 two by the rule,
// 2000 and 4096 256-token tiles; on 2880 x 2880: M = 300 one warpgroup by
// the base rule (69 blocks of two would leave SMs idle), 1000 one by the
// rule. Without the fold: the switch itself.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels --canonicalize | FileCheck %s
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=SWITCH
// A tiling that fixes the tile (here warp_columns): one kernel above 256
// rows, no choice.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-columns=16},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=ASKED

!w = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
// CHECK-LABEL: func.func @rows_300
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks in (%c45, %c3, %c1) threads in (%c256,
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
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks in (%c45, %c6, %c1) threads in (%c256,
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
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_w1 blocks in (%c45, %c3, %c1) threads in (%c128,
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
// SWITCH: case 5 {
// SWITCH: arith.ceildivui
// SWITCH: scf.index_switch %{{[0-9]+}}
// SWITCH-NEXT: case 1 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I:[0-9]+]]_rows257_w1 blocks in (%c90{{.*}}, %[[T1:[0-9]+]], %c1{{.*}}) threads in (%c128
// SWITCH: case 2 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t256 blocks in (%c90{{.*}}, %[[T2:[0-9]+]], %c1{{.*}}) threads in (%c128
// SWITCH: default {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257 blocks in (%c45{{.*}}, %{{.*}}, %c1{{.*}}) threads in (%c256
// SWITCH: gpu.module @microscale_kernels
// SWITCH-COUNT-3: gpu.func @mixed_matmul_hopper_{{[0-9]+}}_rows257{{(_w1|_t256)?}}(
// ASKED-LABEL: func.func @serve
// ASKED: case 5 {
// ASKED-NOT: scf.index_switch
// ASKED: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks
// ASKED-NOT: rows257_
func.func @serve(%a: memref<?x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<?x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}
