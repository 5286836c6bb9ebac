//===- Passes.td - microscale to GPU kernels ---------------*- tablegen -*-===//
#ifndef MICROSCALE_CONVERSION_NVVM_PASSES_TD
#define MICROSCALE_CONVERSION_NVVM_PASSES_TD

include "mlir/Pass/PassBase.td"

class NVVMOutlinePass<string name> : Pass<name, "::mlir::ModuleOp"> {
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The NVIDIA chip the kernels are for (its limits and instructions "
           "come from the chip model, Conversion/NVVM/Chip.h)">,
  ];
}

def MicroscaleNVVMOutlineConversions
    : NVVMOutlinePass<"microscale-nvvm-outline-conversions"> {
  let summary = "Turn each convert_storage into one NVIDIA kernel and its "
                "launch";
  let description = [{
    Outlines every `microscale.convert_storage` into its own `gpu.func`
    kernel in the `gpu.module @microscale_kernels`, and replaces the op with
    a `gpu.launch_func` of it. The module becomes a `gpu.container_module`.

    FP4 values (and scales and FP8, seen as pairs of nibbles) between
    layouts that place the nibbles of a block by a permutation of their
    index bits (unpadded, 16-byte runs, whole conversions) are converted
    through shared-memory tiles with 16-byte loads and stores (the staged
    kernel, planned by the block route of `Utils/BlockConversion.h`). The
    others take the per-unit kernel: each thread computes consecutive
    destination store units (a byte, or a 4-byte Hopper word) directly from
    their source elements. Either kernel reads only the source (`noalias`),
    writes only the destination, and allocates nothing; unit indices are
    64-bit, so tensors above 2^31 bytes are addressed correctly.

    The tiling is chosen from the chip and the shape. An explicit one (for
    sweeps and tests) travels as the op's `microscale.tiling` dictionary:
    `staged` (bool), `tiles_per_block` (1, 2, 4 or 8), `block_size`,
    `units_per_thread` (1-64) and `traversal` (`"row-major"` or
    `"column-major"`); `microscale-nvvm-set-tiling` writes it.

    Conversions of 8-bit elements (scales, FP8) whose layouts repeat along
    one dim take the byte tile kernel first: tiles over the whole short dim,
    one block per tile, or (`byte-tile-blocks-per-sm` of
    `microscale-nvvm-set-tiling`) a persistent grid planned for the chip
    model's SM count (`sm-count` overrides the chip's planning default).

    A `transcode_storage` is reported: the NVIDIA target has no lowering for
    it (the CPU's is `microscale-cpu-lower-storage`).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The NVIDIA chip the kernels are for (its limits and instructions "
           "come from the chip model, Conversion/NVVM/Chip.h)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "SMs of the GPU the byte tile kernel's grid is planned for (0: "
           "the chip model's default, e.g. 132 for sm_90a)">,
  ];
}

def MicroscaleNVVMOutlineDequantize
    : NVVMOutlinePass<"microscale-nvvm-outline-dequantize"> {
  let summary = "Turn each dequantize_storage from the Hopper layouts into "
                "one NVIDIA kernel and its launch";
  let description = [{
    Outlines every `microscale.dequantize_storage` of MXFP4 in
    `#microscale.hopper_value<mma_version = 3>` with
    `#microscale.hopper_scale` to bf16 into a kernel of
    `@microscale_kernels` whose decode is inline PTX (and/shl/shr/or and
    `mul.rn.bf16x2`, with the E8M0 scale built by `prmt.b32`; see
    docs/hopper-dequant.md), and replaces it with its launch. Other
    operands, and chips without bf16x2 arithmetic, are reported at the op.

    By default each block of 256 threads decodes tiles of 64 x 64 values
    into shared memory and writes whole output rows with 16-byte stores,
    with the 2^126 bias folded into the scale for words whose scale codes
    are <= 128. An explicit tiling travels as the op's `microscale.tiling`:
    `staged` (bool), `tiles_per_block` (1, 2, 4 or 8), `tile_order`
    (`"output"` or `"image"`), `fold_scale_bias` (bool), and for the
    per-word kernel `block_size` and `traversal`.
  }];
}

def MicroscaleNVVMOutlineBlackwellDequantize
    : NVVMOutlinePass<"microscale-nvvm-outline-blackwell-dequantize"> {
  let summary = "Turn each dequantize_storage from the Blackwell layouts into "
                "one NVIDIA kernel with native FP4 conversions";
  let description = [{
    Outlines every `microscale.dequantize_storage` of MXFP4 in
    `#microscale.blackwell_value` with `#microscale.blackwell_scale` to bf16
    into a kernel of `@microscale_kernels` that decodes with the native
    conversions of sm_100a and sm_120a (`cvt.rn.f16x2.e2m1x2`, then f16 to
    bf16 by a shift with the 2^112 folded into the scale;
    `cvt.rn.bf16x2.ue8m0x2` for the scales), and replaces it with its
    launch. Blocks of 256 threads transpose 64 x 64 tiles through shared
    memory and write whole output rows with 16-byte stores. Chips without
    native FP4 conversions are reported at the op; dequantizations from
    other layouts are left to `microscale-nvvm-outline-dequantize`, which
    runs after this pass in `microscale-nvvm-outline-kernels`.

    Of the `microscale.tiling` keys, `tiles_per_block` and
    `fold_scale_bias` apply (folding: scale codes <= 142).
  }];
}

def MicroscaleNVVMOutlineMatmul
    : NVVMOutlinePass<"microscale-nvvm-outline-matmul"> {
  let summary = "Turn each mixed_matmul_storage (bf16 x MXFP4, dense or "
                "ragged experts) into one mma.sync kernel and its launch";
  let description = [{
    Outlines every `microscale.mixed_matmul_storage` into an `mma.sync`
    kernel of `@microscale_kernels` (the weight as the m16n8k16 A operand,
    the activations as B, cp.async rings where the chip has them) and
    replaces it with its launch. The tiling (split K, rows and columns per
    warp, ring depths) is planned from the shape and the chip model: its SM
    count (`sm-count` overrides the chip's planning default; the SM count is
    a property of the part, not of the chip string) and its shared memory.
    With the weight in the Hopper layouts, the decode kernel (mma.sync)
    takes up to 7 rows and the wgmma kernel more rows and, by default,
    the ragged (experts) form; a `split_k` tiling keeps the decode kernel
    (up to 64 rows).

    An explicit tiling travels as the op's `microscale.tiling`: `split_k`,
    `unroll`, `chunk_k`, `warp_columns`, `warp_rows`, `column_warps`,
    `activation_stages`, `weight_stages`, `max_registers` (0: chosen),
    `activation_copies` (`"chosen"`: TMA for tiles of 128 tokens or more
    where the chip has it, else cp.async; `"tma"`; `"cp.async"`),
    `decode_overlap` (the wgmma kernel: `"on"` decodes the next chunk's
    weight while this chunk's wgmmas run, `"off"` after waiting for them,
    `"chosen"`: on where the activations come by TMA),
    `weight_copies` (the wgmma kernel: `"registers"` queues each thread's
    weight words a few chunks ahead in registers, `"shared"` copies them
    by cp.async into the activations' stages, in the same copy groups;
    `"chosen"`: shared on the ragged form's tiles of 32 to 64 tokens and
    the dense form's of 9 to 16 unless `weight_stages` is given, registers
    elsewhere),
    `cluster_split_k` (the wgmma kernel: blocks of a cluster splitting K,
    1 to 8; 0: chosen), `chunk_groups` (the wgmma kernel with `weight_copies`
    shared: the chunk loop in groups of its stages, the copies' shared
    addresses each thread's own plus immediates; unset: true on the dense
    form's staged plans, false on the ragged form's); a tiling the kernel cannot take is reported at the op
    with what would fit. A `scaled_matmul_storage` left by
    `microscale-nvvm-outline-scaled-matmul` is reported.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The NVIDIA chip the kernels are for (its limits and instructions "
           "come from the chip model, Conversion/NVVM/Chip.h)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "SMs of the GPU the grid is planned for (0: the chip model's "
           "default, e.g. 132 for sm_90a)">,
  ];
}

def MicroscaleNVVMOutlineScaledMatmul
    : NVVMOutlinePass<"microscale-nvvm-outline-scaled-matmul"> {
  let summary = "Turn each scaled_matmul_storage (MXFP4 x MXFP4, NVFP4 x "
                "NVFP4) into one block-scaled MMA kernel (sm_120a: mma.sync; "
                "sm_100a: tcgen05) and its launch";
  let description = [{
    Outlines every `microscale.scaled_matmul_storage` of two MXFP4 (or two
    NVFP4) operands stored K-major (activations `#microscale.strided`, the
    weight `#microscale.blackwell_value` or `#microscale.strided<major_dim =
    0>`; any scale layout, `#microscale.blackwell_scale` included) into a
    kernel of `@microscale_kernels` and replaces it with its launch; any M
    and N, K a multiple of 16.

    On sm_120a the kernel is built on the warp-level block-scaled MMA,
    `mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale
    .scale_vec::2X` (NVFP4: `kind::mxf4nvf4 ... scale_vec::4X ... ue4m3`;
    NVVM `mma.block_scale`): the weight is the MMA's A operand, four warps
    per block, each 16 weight columns by 8, 16 or 32 activation rows.

    On sm_100a (chips with tcgen05) it is built on the tensor-memory MMA,
    `tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X`
    (NVFP4: `kind::mxf4nvf4 ... scale_vec::4X`): one CTA of 128 threads
    per 128 weight columns (the MMA's M; swap-AB) and 16 to 128 tokens
    (its N), the operand tiles copied into shared memory in two stages, the
    scale atoms copied into tensor memory by `tcgen05.cp`, the accumulator
    read back by `tcgen05.ld`. The weight may also be
    `#microscale.blackwell_shuffled_value`.

    Chips without a block-scaled MMA (sm_90a and older) and operands the
    kernels do not take are reported at the op. Runs before
    `microscale-nvvm-outline-matmul` in `microscale-nvvm-outline-kernels`.
  }];
}

def MicroscaleNVVMSetTiling
    : Pass<"microscale-nvvm-set-tiling", "::mlir::ModuleOp"> {
  let summary = "Attach an explicit kernel tiling to the buffer-level ops "
                "(sweeps and tests)";
  let description = [{
    Writes the options that are given (and only those) into the
    `microscale.tiling` dictionary of every `convert_storage`,
    `dequantize_storage` and `mixed_matmul_storage` they apply to, for the
    `microscale-nvvm-outline-*` passes to use instead of their own choice.
    Not part of any production pipeline: the planners choose from the chip
    and the shape. Values are checked where they are used, at the op.

    ```
    mx-opt --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=32},microscale-gpu-to-ptx)' mm.mlir
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Per-unit conversion and per-word dequantization kernels: threads "
           "per block">,
    Option<"unitsPerThread", "units-per-thread", "int64_t", /*default=*/"4",
           "Per-unit conversion kernel: consecutive destination units per "
           "thread (all loads first, then all stores)">,
    Option<"traversal", "traversal", "::mlir::microscale::Traversal",
           /*default=*/"::mlir::microscale::Traversal::RowMajor",
           "Per-unit conversion and per-word dequantization kernels: how "
           "threads walk the destination's rows",
           [{::llvm::cl::values(
             clEnumValN(::mlir::microscale::Traversal::RowMajor, "row-major",
                        "consecutive threads along a row"),
             clEnumValN(::mlir::microscale::Traversal::ColumnMajor,
                        "column-major",
                        "consecutive threads down the rows (whole "
                        "conversions only)"))}]>,
    Option<"stageConversions", "stage-conversions", "bool", /*default=*/"true",
           "Conversions: the staged (shared-memory tile) kernel where it "
           "applies (false: always the per-unit kernel)">,
    Option<"conversionTilesPerBlock", "conversion-tiles-per-block", "int64_t",
           /*default=*/"1",
           "Staged conversions: tiles a block converts one after the other "
           "(1, 2, 4 or 8)">,
    Option<"byteTileConversions", "byte-tile-conversions", "bool",
           /*default=*/"true",
           "Conversions of 8-bit elements (scales): the whole-axis byte tile "
           "kernel where it applies (false: the staged or per-unit kernel)">,
    Option<"byteTileWordGather", "byte-tile-word-gather", "bool",
           /*default=*/"true",
           "Byte tile kernel: build destination chunks whose bytes lie in "
           "a few shared words from word reads and byte permutes "
           "(prmt.b32) instead of one read per byte (false: byte reads "
           "everywhere)">,
    Option<"byteTileTransposedCopies", "byte-tile-transposed-copies", "bool",
           /*default=*/"false",
           "Byte tile kernel: where the gather would read bytes, let the "
           "copy into shared memory transpose the source chunks in groups "
           "of four rows (4 x 4 byte transposes) so that it reads words; "
           "off by default: measured slower than the byte reads it saves "
           "(docs/performance.md)">,
    Option<"byteTileBlocksPerSM", "byte-tile-blocks-per-sm", "int64_t",
           /*default=*/"0",
           "Byte tile kernel: a persistent grid of this many blocks per SM "
           "(1 to 64, within what an SM holds), each looping over tiles "
           "(0: one block per tile)">,
    Option<"byteTileBuffers", "byte-tile-buffers", "int64_t",
           /*default=*/"0",
           "Byte tile kernel, persistent grid: shared buffers per block, 2 "
           "(the next tile copied in while this one is gathered) or 1 (0: 2 "
           "where they fit in 48 KiB)">,
    Option<"byteTileMinTileBytes", "byte-tile-min-bytes", "int64_t",
           /*default=*/"4096",
           "Byte tile kernel: tiles smaller than this many bytes count as "
           "small, and a larger group of the long dim is taken where the "
           "layouts allow (256 to 40960); below 8192 bytes, so do tiles "
           "whose load runs are shorter than 128 bytes or store runs "
           "shorter than 64">,
    Option<"byteTileMinRun", "byte-tile-min-run", "int64_t",
           /*default=*/"128",
           "Byte tile kernel: a tile that loads contiguous runs shorter "
           "than this many bytes does not end the planner's search; longer "
           "groups, then spans of the other dim, are tried, and taken where "
           "their tile takes at most twice the shared memory (0: off; at "
           "most 4096)">,
    Option<"byteTileHoistTables", "byte-tile-hoist-tables", "bool",
           /*default=*/"true",
           "Byte tile kernel, persistent grid: a block reads its threads' "
           "gather tables once, into registers (false: for each tile)">,
    Option<"matmulSplitK", "matmul-split-k", "int64_t", /*default=*/"0",
           "mixed_matmul: warps per block that split K (at most 32 and "
           "the K chunks; dividing them when staged or unrolled; 0: chosen "
           "from the chip model)">,
    Option<"matmulUnroll", "matmul-unroll", "int64_t", /*default=*/"0",
           "mixed_matmul: K chunks per software-pipeline stage (0: 1)">,
    Option<"matmulChunkK", "matmul-chunk-k", "int64_t", /*default=*/"0",
           "mixed_matmul: K values per chunk, 64 or 128, the last one "
           "partial where it does not divide K (0: 128)">,
    Option<"matmulWarpColumns", "matmul-warp-columns", "int64_t",
           /*default=*/"0",
           "mixed_matmul: weight columns per warp, 16 or 32 (0: chosen)">,
    Option<"matmulWarpRows", "matmul-warp-rows", "int64_t", /*default=*/"0",
           "mixed_matmul: activation rows per warp, 8, 16, 32 or 64; the "
           "Hopper-layout wgmma kernel (above 64 rows): tokens per tile, a "
           "multiple of 8 up to 256 (0: chosen)">,
    Option<"matmulColumnWarps", "matmul-column-warps", "int64_t",
           /*default=*/"0",
           "mixed_matmul: warps of a block side by side on columns (a power "
           "of two up to 8; the wgmma kernel: 4, 8, 12 or 16, whole "
           "warpgroups; 0: chosen)">,
    Option<"matmulActivationStages", "matmul-activation-stages", "int64_t",
           /*default=*/"0",
           "mixed_matmul: 1: activations from global memory; 2-4: a "
           "shared-memory ring of that many K chunks (the wgmma kernel: "
           "2-8 swizzled stages; 0: chosen)">,
    Option<"matmulWeightStages", "matmul-weight-stages", "int64_t",
           /*default=*/"0",
           "mixed_matmul: 1: weights one chunk ahead in registers; 2-8: a "
           "per-thread shared-memory ring of that depth (the Hopper-layout "
           "decode kernel: 1-8 chunks loaded ahead in registers; the wgmma "
           "kernel: 1-8 chunks of weight words queued in registers; 0: "
           "chosen)">,
    Option<"matmulMaxRegisters", "matmul-max-registers", "int64_t",
           /*default=*/"0",
           "mixed_matmul: registers per thread (nvvm.maxnreg; 0: the "
           "backend chooses)">,
    Option<"matmulActivationCopies", "matmul-activation-copies",
           "std::string", /*default=*/"\"chosen\"",
           "mixed_matmul, the Hopper-layout wgmma kernel: how activations "
           "reach shared memory: tma (a tensor map the host code builds, "
           "dynamic shared memory), cp.async (static shared memory; for "
           "host code that cannot call MLIR's CUDA runtime to build the "
           "tensor map) or chosen (TMA for tiles of 128 tokens or more)">,
    Option<"matmulDecodeOverlap", "matmul-decode-overlap", "std::string",
           /*default=*/"\"chosen\"",
           "mixed_matmul, the Hopper-layout wgmma kernel: whether each "
           "chunk's weight is decoded while the previous chunk's wgmmas run "
           "(on), after waiting for them (off), or chosen (on where the "
           "activations come by TMA)">,
    Option<"matmulWeightCopies", "matmul-weight-copies", "std::string",
           /*default=*/"\"chosen\"",
           "mixed_matmul, the Hopper-layout wgmma kernel: where the weight's "
           "words wait for their decode: registers (loads a few chunks "
           "ahead), shared (cp.async into the activations' stages; only "
           "with cp.async activations and without the overlapped decode) "
           "or chosen (shared on the ragged form's tiles of 32 to 64 "
           "tokens and the dense form's of 9 to 16, registers "
           "elsewhere)">,
    Option<"matmulChunkGroups", "matmul-chunk-groups", "bool",
           /*default=*/"false",
           "mixed_matmul, the Hopper-layout wgmma kernel with the weight's "
           "words in shared memory (weight_copies shared): the chunk loop "
           "in groups of its stages, each cp.async's shared address the "
           "thread's own plus an immediate (unset: on the dense form's "
           "staged plans, off on the ragged form's)">,
    Option<"matmulClusterSplitK", "matmul-cluster-split-k", "int64_t",
           /*default=*/"0",
           "mixed_matmul, the Hopper-layout wgmma kernel: blocks of a "
           "thread block cluster that split K, their sums added in rank "
           "order through distributed shared memory (1 to 8; 0: chosen "
           "from the chip model)">,
    Option<"tcgen05BulkCopies", "tcgen05-bulk-copies", "bool",
           /*default=*/"false",
           "scaled_matmul on sm_100a: the operand tiles by cp.async.bulk "
           "(one 16-byte copy per lane) instead of loads and shared stores">,
    Option<"tcgen05TensorMaps", "tcgen05-tensor-maps", "bool",
           /*default=*/"true",
           "scaled_matmul on sm_100a: the operand tiles of K-major rows by "
           "TMA (a 3-D box per tile on a tensor map the host code builds; "
           "the FP4 kinds) instead of the threads' copies">,
    Option<"foldScaleBias", "fold-scale-bias", "bool", /*default=*/"true",
           "Hopper dequantization: fold the 2^126 bias into the scale where "
           "the codes allow (false: the exact two-multiply path everywhere)">,
    Option<"stageDequantize", "stage-dequantize", "bool", /*default=*/"true",
           "Hopper dequantization: the staged kernel (false: one thread per "
           "word)">,
    Option<"dequantizeTilesPerBlock", "dequantize-tiles-per-block", "int64_t",
           /*default=*/"4",
           "Staged Hopper dequantization: tiles per block (1, 2, 4 or 8)">,
    Option<"dequantizeTileOrder", "dequantize-tile-order",
           "::mlir::microscale::TileOrder",
           /*default=*/"::mlir::microscale::TileOrder::Output",
           "Staged Hopper dequantization: which rows consecutive tiles follow",
           [{::llvm::cl::values(
             clEnumValN(::mlir::microscale::TileOrder::Output, "output",
                        "the output's rows"),
             clEnumValN(::mlir::microscale::TileOrder::Image, "image",
                        "the Hopper image's rows"))}]>,
  ];
}

def MicroscaleVerifyNVVMTarget
    : Pass<"microscale-verify-nvvm-target", "::mlir::ModuleOp"> {
  let summary = "Reject NVVM targets whose PTX version the chip cannot use";
  let description = [{
    The NVPTX backend aborts the process (no diagnostic) when a chip needs a
    newer PTX version than the target's features give (sm_100a needs PTX 8.6,
    sm_90a 7.8). This pass checks every `#nvvm.target` first and reports the
    mismatch as an error at the gpu.module.
  }];
}

#endif
