// bf16 x MXFP4 (mixed_matmul_storage) above 64 rows with the weight in the
// Hopper value layout: the wgmma kernel (HopperWgmmaMatmulKernel.cpp). Warp w
// of a warpgroup loads and decodes its 16-column tile as the decode kernel
// does (the wgmma A fragment from registers); the activations go by
// cp.async into 128-byte-swizzled stages read by wgmma descriptors. Its PTX
// assembles with ptxas for sm_90a, and ptxas does not serialize the wgmmas
// (advisory C7513). (Host emulation against float64:
// HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// Two warpgroups of two 64-column tiles, 64-token tiles, 2 stages:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64 matmul-column-warps=8 matmul-warp-columns=32 matmul-activation-stages=2},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILED
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64 matmul-column-warps=8 matmul-warp-columns=32 matmul-activation-stages=2},microscale-gpu-to-ptx)" > %t.tiled.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.tiled.mlir %t/tiled
// RUN: FileCheck %s --check-prefix=TILED-PTX --input-file %t/tiled/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/tiled/microscale_kernels.ptx -o %t/tiled.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// M = 100, K = 160 (two chunks and a half), N = 80 (the image's padding
// past N): one warpgroup per block (two would leave a single block), two
// blocks of 64 columns, and tiles of 32 tokens (halved from 104 while the
// blocks do not give every SM two): 4 token tiles, the last of 4 tokens.
!w = !microscale.qtensor<160x80, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// IR-LABEL: func.func @prefill
// IR: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c2, %c4, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}})
// TILED: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c1, %c2, %c1{{.*}}) threads in (%c256, %c1{{.*}}, %c1{{.*}})
func.func @prefill(%a: memref<100x160xbf16>, %v: memref<32768xi8>, %s: memref<768xi8>, %g: f32, %o: memref<100x80xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<100x160xbf16>, !w, memref<32768xi8>, memref<768xi8>, memref<100x80xbf16>
  return
}

// Eight stages of 32 x 128 bytes, 1024-aligned for the swizzle.
// PTX: .shared .align 1024 .b8 {{.*}}[32768]
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// PTX: cp.async.wait_group 6;
// PTX: bar.sync 0;
// PTX: wgmma.fence.sync.aligned;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0;
// PTX: wgmma.commit_group.sync.aligned;
// PTX: wgmma.wait_group.sync.aligned 0;
// The decode of the next chunk after the wait (ptxas serializes the
// wgmmas otherwise): seed 000's sequence.
// PTX: and.b32 {{.*}}, 0x81C081C0;
// PTX: mul.rn.bf16x2

// TILED-PTX: .shared .align 1024 .b8 {{.*}}[16384]
// TILED-PTX: cp.async.wait_group 0;
// TILED-PTX-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16

// PTXAS-NOT: C7513
// PTXAS: Used {{[0-9]+}} registers
