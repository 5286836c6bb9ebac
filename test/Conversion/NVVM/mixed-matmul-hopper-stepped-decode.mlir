// The wgmma kernel's staged-weight chunk decoded step by step (tiling
// stepped_decode), on the plans that copy the weight's words into shared
// memory by cp.async: gpt-oss mlp1 in the ragged form (32-token tiles, two
// 64-column tiles per warpgroup) and a dense 16-row product. Each of the
// chunk's four 16-K steps is decoded (the warp's vote choosing the folded
// or the exact decode), fenced, and its two wgmmas committed as a group of
// their own before the next step's decode, so that the decode issues
// while the earlier steps' wgmmas run; one wait ends the chunk. By default
// the chunk decodes all four steps, then one fence, eight wgmmas, one
// commit. Off by default. ptxas must not serialize the wgmmas (C7513,
// "Potential Performance Loss"): every step's fragments stay live until
// the wait. The order of the products is the default's (step 0 to 3 into
// the same accumulators), so the host emulation's check of the decode and
// the data movement against float64 (HopperLayoutMatmulOnHost) covers it.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-stepped-decode=true},microscale-gpu-to-ptx)" > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=STEPPED --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.default.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.default.mlir %t/default
// RUN: FileCheck %s --check-prefix=DEFAULT --input-file %t/default/microscale_kernels.ptx
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-stepped-decode=true matmul-weight-copies=registers},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=REGISTERS

!w = !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @moe(%a: memref<128x2880xbf16>, %v: memref<277348352xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<512x5760xbf16>, %off: memref<32xi32>, %cnt: memref<32xi32>, %ga: memref<512xi32>, %sc: memref<512xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%ga : memref<512xi32>) scatter(%sc : memref<512xi32>) : memref<128x2880xbf16>, !w, memref<277348352xi8>, memref<16588800xi8>, memref<512x5760xbf16>
  return
}

!d = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @dense(%a: memref<16x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<16x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<16x2880xbf16>, !d, memref<8667136xi8>, memref<518400xi8>, memref<16x5760xbf16>
  return
}

// After the chunk's copy wait and barrier: a step's folded decode, its
// fence, its two wgmmas (one per 64-column tile) and their commit, then
// the next step's decode before the next fence. Four fences per chunk.
// STEPPED-LABEL: .entry mixed_matmul_wgmma_0(
// STEPPED: cp.async.wait_group 2;
// STEPPED-NEXT: bar.sync 0;
// STEPPED: mul.rn.bf16x2 %r{{[0-9]+}}, %r{{[0-9]+}}, even;
// STEPPED: wgmma.fence.sync.aligned;
// STEPPED: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// STEPPED: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// STEPPED-NOT: wgmma.mma_async
// STEPPED: wgmma.commit_group.sync.aligned;
// STEPPED-NOT: wgmma.fence
// STEPPED: mul.rn.bf16x2 %r{{[0-9]+}}, %r{{[0-9]+}}, even;
// STEPPED: wgmma.fence.sync.aligned;
// STEPPED-LABEL: .entry mixed_matmul_wgmma_1(

// STEPPED-COUNT-4: wgmma.fence.sync.aligned;
// STEPPED-NOT: wgmma.fence.sync.aligned;

// DEFAULT-LABEL: .entry mixed_matmul_wgmma_0(
// DEFAULT-NOT: wgmma.fence.sync.aligned;
// DEFAULT: wgmma.fence.sync.aligned;
// DEFAULT-NOT: wgmma.fence.sync.aligned;
// DEFAULT-LABEL: .entry mixed_matmul_wgmma_1(

// PTXAS-NOT: Potential Performance Loss
// PTXAS: Used {{[0-9]+}} registers
// PTXAS-NOT: Potential Performance Loss
// PTXAS: Used {{[0-9]+}} registers

// REGISTERS: error: 'microscale.mixed_matmul_storage' op tiling stepped_decode needs the weight's words in shared memory (weight_copies = "shared"), which this plan keeps in registers
