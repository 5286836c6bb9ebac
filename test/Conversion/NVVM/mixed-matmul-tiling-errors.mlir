// mixed_matmul tilings that the NVIDIA kernel cannot take, asked for with
// the pass options, are reported at the op with what would fit.
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-columns=24},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=COLUMNS
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-stages=5},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64 matmul-activation-stages=1},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=48},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=ROWS48
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-chunk-k=96},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-stages=8 matmul-split-k=8},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=RINGS
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-split-k=16 matmul-column-warps=4},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-unroll=2 matmul-weight-stages=3},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=UNROLL

// COLUMNS: tiling warp_columns = 24 must be 16 or 32
// ROWS: tiling warp_rows = 64 needs staged activations (activation_stages 2 to 4)
// ROWS48: tiling warp_rows = 48 must be 8, 16, 32 or 64
// CHUNK: tiling chunk_k = 96 must be 64 or 128
// STAGES: tiling activation_stages = 5 must be 0 (chosen), 1 (no staging) or a ring depth of 2 to 4
// RINGS: rings of 65536 bytes (activations: 0 stages of 16384 bytes; weights: 8 of 8192) exceed the 46 KiB of static shared memory the kernel may use
// BLOCK: a block of 64 warps (split K 16 x column warps 4) exceeds 1024 threads
// UNROLL: tiling unroll = 2 applies without the weight ring only (weight_stages = 1)

!w = !microscale.qtensor<4096x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @mm(%a: memref<2x4096xbf16>, %v: memref<131072xi8>, %s: memref<8192xi8>, %g: f32, %o: memref<2x64xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x4096xbf16>, !w, memref<131072xi8>, memref<8192xi8>, memref<2x64xbf16>
  return
}
