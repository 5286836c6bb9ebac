// Rows known at run time above 256 rows, on weights narrow enough that one
// warpgroup's 128-token blocks leave some SM fewer than two: the last
// variant also compiles rows257_s2 (128 tokens, one warpgroup, K split in
// two over a cluster), and the host code launches it wherever the blocks
// of rows257_w1 would be fewer than twice the SMs, as the static planner
// splits K there. On 2880 x 2880 over 132 SMs: M = 500 (45 x 4 blocks
// unsplit) takes it, M = 1000 (45 x 8) keeps one warpgroup unsplit, 2000
// two warpgroups. On 7168 x 2048: M = 1000 (32 x 8) takes it. On 2880 x
// 5760 no M above 256 rows needs it (90 x 3 blocks already cover the
// SMs twice): not compiled (mixed-matmul-hopper-dynamic-tiles.mlir).
// RUN: mx-opt %s --microscale-nvvm-outline-kernels --canonicalize | FileCheck %s
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=SWITCH
// Fewer SMs (16): 45 x 3 blocks cover them twice, no sibling.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels="sm-count=16" | FileCheck %s --check-prefix=FEW

!sq = !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
!narrow = !microscale.qtensor<7168x2048, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @square_500
// CHECK-NOT: scf.index_switch
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_s2 blocks in (%c45, %c4, %c2) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @square_500(%sa: memref<500x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %so: memref<500x2880xbf16>) {
  %a = memref.cast %sa : memref<500x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<500x2880xbf16> to memref<?x2880xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}

// CHECK-LABEL: func.func @square_1000
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_w1 blocks in (%c45, %c8, %c1) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @square_1000(%sa: memref<1000x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %so: memref<1000x2880xbf16>) {
  %a = memref.cast %sa : memref<1000x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<1000x2880xbf16> to memref<?x2880xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}

// CHECK-LABEL: func.func @square_2000
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257 blocks in (%c23, %c16, %c1) threads in (%c256,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @square_2000(%sa: memref<2000x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %so: memref<2000x2880xbf16>) {
  %a = memref.cast %sa : memref<2000x2880xbf16> to memref<?x2880xbf16>
  %o = memref.cast %so : memref<2000x2880xbf16> to memref<?x2880xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}

// CHECK-LABEL: func.func @narrow_1000
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257_s2 blocks in (%c32, %c8, %c2) threads in (%c128,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @narrow_1000(%sa: memref<1000x7168xbf16>, %v: memref<7340032xi8>, %s: memref<458752xi8>, %g: f32, %so: memref<1000x2048xbf16>) {
  %a = memref.cast %sa : memref<1000x7168xbf16> to memref<?x7168xbf16>
  %o = memref.cast %so : memref<1000x2048xbf16> to memref<?x2048xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x7168xbf16>, !narrow, memref<7340032xi8>, memref<458752xi8>, memref<?x2048xbf16>
  return
}

// The full tiles' switch: index 3 is the sibling.
// SWITCH-LABEL: func.func @serve
// SWITCH: case 5 {
// SWITCH: scf.index_switch
// SWITCH: case 3 {
// SWITCH: arith.ceildivui
// SWITCH: scf.index_switch %{{[0-9]+}}
// SWITCH-NEXT: case 1 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I:[0-9]+]]_rows257_w1 blocks in (%c45{{.*}}, %{{[0-9]+}}, %c1{{.*}}) threads in (%c128
// SWITCH: case 2 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_t256 blocks in (%c45{{.*}}, %{{[0-9]+}}, %c1{{.*}}) threads in (%c128
// SWITCH: case 3 {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257_s2 blocks in (%c45{{.*}}, %{{[0-9]+}}, %c2{{.*}}) threads in (%c128
// SWITCH: default {
// SWITCH: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_[[I]]_rows257 blocks in (%c23{{.*}}, %{{.*}}, %c1{{.*}}) threads in (%c256
// SWITCH: gpu.func @mixed_matmul_hopper_[[I]]_rows257_s2(
// FEW-LABEL: func.func @serve
// FEW-NOT: _s2
// FEW: gpu.module @microscale_kernels
// FEW-NOT: _s2(
func.func @serve(%a: memref<?x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<?x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !sq, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}
