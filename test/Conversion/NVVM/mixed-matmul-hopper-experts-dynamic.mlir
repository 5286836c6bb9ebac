// The ragged (experts) form with the weights in the Hopper layouts and
// rows known at run time (tokens, ragged rows and out rows), as a serving
// engine's MoE step has them: one compile of seven wgmma kernels, planned
// for 1 (a decode step: few experts with rows), 4, 8, 16, 32, 64 and 128
// ragged rows per expert (token tiles of twice that, 8 to 128), and host
// code that launches nothing when any count is 0 and otherwise the variant
// of ceil(ragged rows / experts), its grid's y the tile map's
// min(experts, ragged rows) slots. The
// buffers of rows known at run time are passed as flat arrays of 2^40
// elements (nothing reads that bound), the three counts as index
// arguments. Every kernel assembles with ptxas for sm_90a. (Host
// emulation against float64: HopperLayoutMatmulJITTest, Ragged, the
// dynamic cases.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

!w = !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @moe_dynamic
// CHECK: memref.reinterpret_cast {{.*}} : memref<?xbf16> to memref<1099511627776xbf16>
// CHECK: memref.reinterpret_cast {{.*}} : memref<?xi32> to memref<1099511627776xi32>
// CHECK: %[[RAGGED:.*]] = memref.dim %arg7
// CHECK: %[[LHS:.*]] = memref.dim %arg0
// CHECK: %[[OUT:.*]] = memref.dim %arg4
// CHECK: scf.if
// CHECK: %[[PLUS:.*]] = arith.addi %[[RAGGED]], %c31
// CHECK: %[[MEAN:.*]] = arith.divui %[[PLUS]], %c32
// CHECK: arith.cmpi ugt, %[[MEAN]], %c1 :
// CHECK: arith.cmpi ugt, %[[MEAN]], %c4 :
// CHECK: arith.cmpi ugt, %[[MEAN]], %c8 :
// CHECK: arith.cmpi ugt, %[[MEAN]], %c16 :
// CHECK: arith.cmpi ugt, %[[MEAN]], %c32{{.*}} :
// CHECK: arith.cmpi ugt, %[[MEAN]], %c64 :
// CHECK: scf.index_switch
// CHECK: case 1 {
// CHECK: %[[SLOTS:.*]] = arith.minui %[[RAGGED]], %c32
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0_mean4 blocks in (%c45, %[[SLOTS]], %c1{{.*}}) threads in (%c128,
// CHECK-SAME: %[[RAGGED]] : index, %[[LHS]] : index, %[[OUT]] : index)
// CHECK: case 5 {
// CHECK: @mixed_matmul_wgmma_0_mean64 blocks in (%c45, %{{.*}}, %c1{{.*}}) threads in (%c256,
// CHECK: default {
// CHECK: @mixed_matmul_wgmma_0_mean1 blocks
// The 8-token tiles (1 and 4 rows per expert) capped at 128 registers
// (4 blocks of 128 threads per SM); the others at ptxas's choice.
// CHECK: gpu.func @mixed_matmul_wgmma_0_mean1
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK: nvvm.shfl.sync up
// CHECK: nvvm.vote.sync ballot
// CHECK: gpu.func @mixed_matmul_wgmma_0_mean4
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK: gpu.func @mixed_matmul_wgmma_0_mean8
// CHECK-NOT: nvvm.maxnreg
// CHECK: gpu.func @mixed_matmul_wgmma_0_mean16
func.func @moe_dynamic(%a: memref<?x2880xbf16>, %v: memref<277348352xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<?x5760xbf16>, %off: memref<32xi32>, %cnt: memref<32xi32>, %ga: memref<?xi32>, %sc: memref<?xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%ga : memref<?xi32>) scatter(%sc : memref<?xi32>) : memref<?x2880xbf16>, !w, memref<277348352xi8>, memref<16588800xi8>, memref<?x5760xbf16>
  return
}

// PTX-DAG: .entry mixed_matmul_wgmma_0_mean1(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean4(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean8(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean16(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean32(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean64(
// PTX-DAG: .entry mixed_matmul_wgmma_0_mean128(
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
// PTX-DAG: vote.sync.ballot.b32
// PTX-DAG: shfl.sync.up.b32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
