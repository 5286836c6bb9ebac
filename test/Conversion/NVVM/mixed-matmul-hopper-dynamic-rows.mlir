// bf16 x MXFP4 with the weight in the Hopper layout and rows known at run
// time (a serving engine's tokens): one compile of the decode kernel
// planned for 1 and 7 rows and the wgmma kernel for 16, 64, 256 and 4096
// (the last three in several tiles, chosen between from M by the host
// code: mixed-matmul-hopper-dynamic-tiles.mlir), and host code that
// launches the one of M (nothing when M is 0), the wgmma grid's token
// tiles computed from M. The rows are the smaller of lhs's and out's.
// Every kernel assembles with ptxas for sm_90a. (Host emulation
// of the same switch against float64: HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

!w = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @serve
// CHECK-DAG: %[[LHSROWS:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[OUTROWS:.*]] = memref.dim %arg4, %c0
// CHECK: %[[ROWS:.*]] = arith.minui %[[LHSROWS]], %[[OUTROWS]]
// CHECK: scf.if
// The decode variant (planned for 7 rows: light warps, but 180 blocks on
// 132 SMs, short of whole waves) takes up to 7, as static rows do; the
// first wgmma variant 8-16.
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT: arith.cmpi ugt, %{{.*}}, %[[C7]]
// CHECK: scf.index_switch
// CHECK: case 1 {
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_0_rows7 blocks in (%c180,
// CHECK: case 2 {
// CHECK: @mixed_matmul_hopper_0_rows8 blocks in (%c90, %{{.*}}, %c5) threads in (%c128
// CHECK: case 3 {
// CHECK: @mixed_matmul_hopper_0_rows17 blocks in (%c90, %{{.*}}, %c3)
// CHECK: case 4 {
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_0_rows65 blocks in (%{{.*}}, %[[T4:.*]], %{{.*}})
// CHECK: case 5 {
// CHECK: @mixed_matmul_hopper_0_rows257
// CHECK: default {
// CHECK: @mixed_matmul_hopper_0_rows1
// CHECK-SAME: memref<1099511627776xbf16>
// CHECK-SAME: index)
func.func @serve(%a: memref<?x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<?x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// PTX-COUNT-2: .entry mixed_matmul_hopper_0_rows{{1|7}}(
// The wgmma variants for up to 16, 64 and 256 rows split K over the
// blocks of a cluster (5, 3 and 2: their 90 and 45 column tiles alone
// would not give each of 132 SMs three blocks, the 16-token tile, or two);
// the one for more rows does not.
// PTX: .entry mixed_matmul_hopper_0_rows8(
// PTX: .reqnctapercluster 1, 1, 5
// PTX: wgmma.mma_async.sync.aligned.m64n16k16
// PTX: .entry mixed_matmul_hopper_0_rows17(
// PTX: .reqnctapercluster 1, 1, 3
// PTX: wgmma.mma_async.sync.aligned.m64n64k16
// PTX: .entry mixed_matmul_hopper_0_rows65(
// PTX: .reqnctapercluster 1, 1, 2
// PTX: wgmma.mma_async.sync.aligned.m64n128k16
// PTX: .entry mixed_matmul_hopper_0_rows257(
// PTX-NOT: .reqnctapercluster
// PTX: wgmma.mma_async.sync.aligned.m64n128k16
// PTX: .entry mixed_matmul_hopper_0_rows257_w1(
// PTX-NOT: .reqnctapercluster
// PTX: wgmma.mma_async.sync.aligned.m64n128k16
// PTX: .entry mixed_matmul_hopper_0_rows257_t256(
// PTX-NOT: .reqnctapercluster
// PTX: wgmma.mma_async.sync.aligned.m64n256k16

// gpt-oss mlp2 (2880 x 2880): the decode variant's light plan has 90
// blocks, at most one per SM, and takes up to 8 rows; the first wgmma
// variant 9-16.
!w2 = !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
// CHECK-LABEL: func.func @serve_mlp2
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: arith.cmpi ugt, %{{.*}}, %[[C8]]
// CHECK: scf.index_switch
// CHECK: case 1 {
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows7 blocks in (%c90,
// CHECK: case 2 {
// CHECK: @mixed_matmul_hopper_{{[0-9]+}}_rows9 blocks in (%c45,
func.func @serve_mlp2(%a: memref<?x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<?x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x2880xbf16>, !w2, memref<4521984xi8>, memref<264960xi8>, memref<?x2880xbf16>
  return
}
