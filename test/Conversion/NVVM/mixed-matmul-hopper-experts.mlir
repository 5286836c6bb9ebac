// bf16 x MXFP4 in the ragged (experts) form with the weights in the Hopper
// layouts. By default the wgmma kernel with grid y a slot of the tile map
// (every expert's rows in token tiles of twice the ragged rows per expert:
// 32 here; min(experts, ragged rows) = 32 slots): a block takes every
// 32nd tile from its slot's on, finds each one's expert by a warp scan
// (shuffles up) and a ballot over the experts' tile counts (the next
// tile's only where there is one), cuts the expert's slice to the ragged
// rows (two 64-column tiles per warpgroup: 45 column blocks; 4 stages of
// 4 KiB of activations and 5 KiB of weight words, registers capped at 128
// for 4 blocks per SM), copies activation rows through the gather
// (cp.async per row; no TMA) and each thread's weight words (cp.async of
// 16 value bytes and 4 scale codes per tile, in the same copy groups),
// reads its words back before their decode, and writes out rows
// through the scatter, its expert's images at expert x image bytes. With
// split_k, the decode kernel with grid z the expert, walking its rows in
// groups of the plan's rows (rows per expert, at most 16). Both PTXs
// assemble with ptxas for sm_90a. (Host emulation against float64:
// HopperLayoutMatmulJITTest, Ragged.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-split-k=4},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=DECODE
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-split-k=4},microscale-gpu-to-ptx)" > %t.decode.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.decode.mlir %t/decode
// RUN: FileCheck %s --check-prefix=DECODE-PTX --input-file %t/decode/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/decode/microscale_kernels.ptx -o %t/decode/kernels.cubin %}

// gpt-oss mlp1 at decode: 32 experts, 128 tokens routed top-4 (512 ragged
// rows, 16 per expert).
!w = !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @moe
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c45, %c32, %c1) threads in (%c128,
// CHECK-SAME: memref<368640xbf16>
// CHECK-SAME: memref<2949120xbf16>
// CHECK-SAME: memref<32xi32>
// CHECK-SAME: memref<32xi32>
// CHECK-SAME: memref<512xi32>
// CHECK-SAME: memref<512xi32>
// CHECK: gpu.func @mixed_matmul_wgmma_0
// CHECK-SAME: workgroup(%{{.*}} : memref<9216xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.block_id y
// CHECK: gpu.grid_dim y
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.b32 $0, $1;"
// CHECK: arith.maxsi
// CHECK: nvvm.shfl.sync up
// CHECK: nvvm.vote.sync ballot
// CHECK: nvvm.shfl.sync idx
// CHECK: scf.for %{{.*}} = %block_id_y to %{{.*}} step %grid_dim_y iter_args(
// CHECK: arith.maxsi
// The next tile's expert, read from the map only where there is one.
// CHECK: scf.if
// CHECK: nvvm.shfl.sync up
// CHECK: nvvm.vote.sync ballot

// DECODE-LABEL: func.func @moe
// DECODE: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_0 blocks in (%c180, %c1, %c32) threads in (%c128,
// DECODE: gpu.func @mixed_matmul_hopper_0
// Programmatic dependent launch: the routing comes from earlier kernels,
// so the ragged form waits before it reads anything.
// DECODE-NOT: memref.load
// DECODE-NOT: vector.load
// DECODE: nvvm.griddepcontrol wait
// DECODE-NOT: nvvm.griddepcontrol
// DECODE: gpu.block_id z
// DECODE: arith.maxsi
// DECODE: scf.for
func.func @moe(%a: memref<128x2880xbf16>, %v: memref<277348352xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<512x5760xbf16>, %off: memref<32xi32>, %cnt: memref<32xi32>, %ga: memref<512xi32>, %sc: memref<512xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%ga : memref<512xi32>) scatter(%sc : memref<512xi32>) : memref<128x2880xbf16>, !w, memref<277348352xi8>, memref<16588800xi8>, memref<512x5760xbf16>
  return
}

// PTX: .entry mixed_matmul_wgmma_0(
// PTX: .maxnreg 128
// PTX: mov.u32 {{.*}}%ctaid.y
// PTX: shfl.sync.up.b32
// PTX: vote.sync.ballot.b32
// PTX: cp.async.cg.shared.global
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4
// PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-NOT: cp.async.bulk.tensor

// DECODE-PTX: .entry mixed_matmul_hopper_0(
// DECODE-PTX: mov.u32 {{.*}}%ctaid.z
// DECODE-PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
