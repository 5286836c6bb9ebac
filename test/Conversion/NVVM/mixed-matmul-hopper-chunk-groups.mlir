// The wgmma kernel's chunk loop in groups of its stages (tiling
// chunk_groups), on the plans that copy the weight's words into shared
// memory by cp.async: gpt-oss mlp1 in the ragged form (32-token tiles, 4
// stages, 45 chunks: 11 groups of 4, then the last chunk unrolled after
// them) and a dense 16-row product split over a cluster of 4 (each block's
// 32 chunks, known at run time only: groups of 8 stages, then a rolled
// loop for what is left). In a group every copy's shared address is the
// thread's own register plus an immediate (the stage's, the unit's and the
// tile's bytes), where the rolled loop computes each from the chunk's
// stage. By default the dense form takes the groups and the ragged form
// the rolled loop (as timed: docs/performance.md, "Chunk groups timed");
// `false` rolls both. The same addresses as offsets are what the host
// emulation computes (HopperLayoutMatmulOnHost, every staged plan),
// checked against float64.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-chunk-groups=true},microscale-gpu-to-ptx)" > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=GROUPS --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-chunk-groups=false},microscale-gpu-to-ptx)" > %t.rolled.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.rolled.mlir %t/rolled
// RUN: FileCheck %s --check-prefix=ROLLED --input-file %t/rolled/microscale_kernels.ptx
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.default.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.default.mlir %t/default
// RUN: FileCheck %s --check-prefix=DEFAULT --input-file %t/default/microscale_kernels.ptx
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-chunk-groups=true matmul-weight-copies=registers},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=REGISTERS
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-chunk-groups=false matmul-weight-copies=registers},microscale-nvvm-outline-kernels)" -o /dev/null

!w = !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @moe(%a: memref<128x2880xbf16>, %v: memref<277348352xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<512x5760xbf16>, %off: memref<32xi32>, %cnt: memref<32xi32>, %ga: memref<512xi32>, %sc: memref<512xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%ga : memref<512xi32>) scatter(%sc : memref<512xi32>) : memref<128x2880xbf16>, !w, memref<277348352xi8>, memref<16588800xi8>, memref<512x5760xbf16>
  return
}

!d = !microscale.qtensor<8192x8192, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @dense(%a: memref<16x8192xbf16>, %v: memref<33554432xi8>, %s: memref<2097152xi8>, %g: f32, %o: memref<16x8192xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<16x8192xbf16>, !d, memref<33554432xi8>, memref<2097152xi8>, memref<16x8192xbf16>
  return
}

// In a group: the copies of the chunk S - 1 ahead (activations: two
// 16-byte units 2048 bytes apart; the weight: 16 value bytes and 4 scale
// codes per tile), then the chunk's words read back and decoded, its
// wgmmas; the next chunk's copies go to the next stage's immediates.
// GROUPS-LABEL: .entry mixed_matmul_wgmma_0(
// GROUPS: cp.async.wait_group 2;
// GROUPS-NEXT: bar.sync 0;
// GROUPS: cp.async.cg.shared.global [[[ACT:%r[0-9]+]]+12288], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// GROUPS: cp.async.cg.shared.global [[[ACT]]+14336], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// GROUPS: cp.async.cg.shared.global [[[VALUES:%r[0-9]+]]+15360], [%rd{{[0-9]+}}], 16;
// GROUPS: cp.async.ca.shared.global [[[SCALES:%r[0-9]+]]+15360], [%rd{{[0-9]+}}], 4;
// GROUPS: cp.async.cg.shared.global [[[VALUES]]+17408], [%rd{{[0-9]+}}], 16;
// GROUPS: cp.async.ca.shared.global [[[SCALES]]+15872], [%rd{{[0-9]+}}], 4;
// GROUPS: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// GROUPS: cp.async.wait_group 2;
// GROUPS-NEXT: bar.sync 0;
// GROUPS: cp.async.cg.shared.global [[[ACT]]+0], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// GROUPS: cp.async.cg.shared.global [[[ACT]]+2048], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// GROUPS: cp.async.cg.shared.global [[[VALUES]]+0], [%rd{{[0-9]+}}], 16;
// GROUPS-LABEL: .entry mixed_matmul_wgmma_1(
// GROUPS: cp.async.cg.shared.global [%r{{[0-9]+}}+{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};

// ROLLED: cp.async.cg.shared.global [%rd
// ROLLED-NOT: shared.global [%r{{[0-9]+}}+

// DEFAULT-LABEL: .entry mixed_matmul_wgmma_0(
// DEFAULT-NOT: shared.global [%r{{[0-9]+}}+
// DEFAULT-LABEL: .entry mixed_matmul_wgmma_1(
// DEFAULT: cp.async.cg.shared.global [%r{{[0-9]+}}+{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};

// PTXAS-NOT: C7513
// PTXAS: Used {{[0-9]+}} registers
// PTXAS: Used {{[0-9]+}} registers

// REGISTERS: error: 'microscale.mixed_matmul_storage' op tiling chunk_groups needs the weight's words in shared memory (weight_copies = "shared"), which this plan keeps in registers
