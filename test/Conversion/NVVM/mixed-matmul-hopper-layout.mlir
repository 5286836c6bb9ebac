// bf16 x MXFP4 (mixed_matmul_storage) with the weight in Triton's Hopper
// value layout (mma_version 3) and scale layout: the Hopper-layout decode
// kernel (HopperLayoutMatmulKernel.cpp). Each lane loads 16 bytes of an
// image row per 64-K chunk (its four A fragments), one scale word, and
// decodes with seed 000's inline PTX straight into mma.sync m16n8k16; a warp
// vote picks the folded or the exact scale path. More than one row stages
// the activations per warp through cp.async. Its PTX assembles with ptxas
// for sm_90a. (Host emulation against float64: HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}
// An explicit split and 32 columns per warp:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-split-k=2 matmul-warp-columns=32},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILED
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-split-k=2 matmul-warp-columns=32},microscale-gpu-to-ptx)" > %t.tiled.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.tiled.mlir %t/tiled
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/tiled/microscale_kernels.ptx -o %t/tiled.cubin %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-stages=3},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=DEPTH

// One row, K = 160 (two chunks and a half), N = 40 (a partial column tile).
// Value image: 256 / 4 rows of 4 x 128 bytes; scales: 128 / 32 rows of
// 32 x 6 bytes.
!w = !microscale.qtensor<160x40, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// IR-LABEL: func.func @decode
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_hopper_0 blocks in (%c3, %c1, %c1{{.*}}) threads in (%c32,
// IR-SAME: args(%{{.*}} : memref<160xbf16>, %{{.*}} : memref<32768xi8>, %{{.*}} : memref<768xi8>, %{{.*}} : memref<40xbf16>, %{{.*}} : f32)
func.func @decode(%a: memref<1x160xbf16>, %v: memref<32768xi8>, %s: memref<768xi8>, %g: f32, %o: memref<1x40xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x160xbf16>, !w, memref<32768xi8>, memref<768xi8>, memref<1x40xbf16>
  return
}

// 7 rows (staged activations), K = 256, N = 64, scales of num_warps 8.
!w16 = !microscale.qtensor<256x64, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>

// IR-LABEL: func.func @rows7
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_hopper_1 blocks in (%c4,
// TILED-LABEL: func.func @rows7
// TILED: gpu.launch_func @microscale_kernels::@mixed_matmul_hopper_1 blocks in (%c2, %c1, %c1{{.*}}) threads in (%c64,
func.func @rows7(%a: memref<7x256xbf16>, %v: memref<32768xi8>, %s: memref<2048xi8>, %g: f32, %o: memref<7x64xf32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<7x256xbf16>, !w16, memref<32768xi8>, memref<2048xi8>, memref<7x64xf32>
  return
}

// The M = 1 kernel: per chunk, a 16-byte image load, a scale word and the
// activation words (4-byte loads); the loop takes `depth` chunks per
// iteration; a vote between the folded and the exact decode, then the mmas.
// IR-LABEL: gpu.func @mixed_matmul_hopper_0(
// IR: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<32768xi8>, vector<16xi8>
// IR: vector.load %arg2[{{.*}}] {alignment = 4 : i64} : memref<768xi8>, vector<4xi8>
// IR: vector.load %arg0[{{.*}}] {alignment = 4 : i64} : memref<160xbf16>, vector<2xbf16>
// IR: scf.for
// IR: nvvm.vote.sync all
// IR: llvm.inline_asm {{.*}}and.b32 $0, $4, 0x81C081C0;
// IR: nvvm.mma.sync
// The 7-row kernel: cp.async of the activations into the warp's ring,
// warp barriers around the ring slot's reads.
// IR-LABEL: gpu.func @mixed_matmul_hopper_1(
// IR: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// IR: nvvm.cp.async.commit.group
// IR: scf.for
// IR: nvvm.cp.async.wait.group
// IR: nvvm.bar.warp.sync
// IR: memref.load %{{.*}} : memref<{{[0-9]+}}xi32, #gpu.address_space<workgroup>>

// PTX-LABEL: .entry mixed_matmul_hopper_0(
// PTX: ld.global.nc.v4.b32
// PTX: vote.sync.all.pred
// PTX: mul.rn.bf16x2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry mixed_matmul_hopper_1(
// PTX: cp.async.cg.shared.global
// PTX: bar.warp.sync
// PTX: ld.shared.b32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// weight_stages sets the chunks a warp has loaded ahead (the planner's
// choice here: 4): at M = 1 the loop carries 3 chunks of 13 words (4
// weight words, a scale word, 8 activation words) beside the 4
// accumulators; at 16 rows each step waits for all but its 2 later
// cp.async groups.
// DEPTH-LABEL: gpu.func @mixed_matmul_hopper_0(
// DEPTH: %{{.*}}:43 = scf.for
// DEPTH-LABEL: gpu.func @mixed_matmul_hopper_1(
// DEPTH: nvvm.cp.async.wait.group 2
// DEPTH-NOT: nvvm.cp.async.wait.group 3
