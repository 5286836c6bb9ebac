//===- Passes.td - microscale to GPU kernels ---------------*- tablegen -*-===//
#ifndef MICROSCALE_CONVERSION_GPU_PASSES_TD
#define MICROSCALE_CONVERSION_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MicroscaleConvertStorageToGPU
    : Pass<"microscale-convert-storage-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn each convert_storage into one GPU kernel and its launch";
  let description = [{
    Outlines every `microscale.convert_storage` (and `dequantize_storage`
    from the Hopper layouts, and `mixed_matmul_storage`) into its own `gpu.func`
    kernel in the `gpu.module @microscale_kernels`, and replaces the op with
    a `gpu.launch_func` of it. Each thread computes `units-per-thread`
    consecutive destination store units (a unit is a byte, or a 4-byte Hopper
    word) directly from their source elements: the kernel reads only the
    source (marked `noalias`, so loads shared by the units are loaded once),
    writes only the destination, and allocates nothing. Unit indices are 64-bit (`index`), so tensors above 2^31 bytes
    are addressed correctly. The module becomes a `gpu.container_module`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"unitsPerThread", "units-per-thread", "int64_t", /*default=*/"4",
           "Consecutive destination units per thread (all loads first, then "
           "all stores, so that shared source bytes are loaded once)">,
    Option<"traversal", "traversal", "std::string", /*default=*/"\"row-major\"",
           "How threads walk the destination's [rows, units] grid: row-major "
           "(consecutive threads along a row) or column-major (consecutive "
           "threads down the rows; whole conversions only)">,
    Option<"stageConversions", "stage-conversions", "bool", /*default=*/"true",
           "Convert FP4 values between layouts that place the nibbles of "
           "a block by a permutation of their index bits (unpadded, 16-byte "
           "runs, whole conversions) through shared-memory tiles with 16-byte "
           "loads and stores; the others, and all with false, per unit">,
    Option<"conversionTilesPerBlock", "conversion-tiles-per-block",
           "int64_t", /*default=*/"1",
           "Staged conversions: tiles a block converts one after the other, "
           "their loads issued together (a power of two in [1, 8])">,
    Option<"matmulSplitK", "matmul-split-k", "int64_t", /*default=*/"0",
           "mixed_matmul: warps per block that split K (a power of two "
           "dividing the K chunks; 0: chosen from the shape)">,
    Option<"matmulUnroll", "matmul-unroll", "int64_t", /*default=*/"0",
           "mixed_matmul: K chunks (128 wide, or 64 where K is not a "
           "multiple of 128) per software-pipeline stage; the next stage's "
           "loads are issued before this one's products (0: 1)">,
    Option<"matmulChunkK", "matmul-chunk-k", "int64_t", /*default=*/"0",
           "mixed_matmul: K values per chunk, 64 (8-byte weight loads) or "
           "128 (16-byte loads; 0: 128 where it divides K, else 64)">,
    Option<"matmulWarpColumns", "matmul-warp-columns", "int64_t",
           /*default=*/"0",
           "mixed_matmul: weight columns per warp, 16 or 32 (0: 16 for "
           "products of at most 8 rows (per expert), else 32)">,
    Option<"matmulWarpRows", "matmul-warp-rows", "int64_t", /*default=*/"0",
           "mixed_matmul: activation rows per warp, 8, 16, 32 or 64 (more "
           "than 16 need staged activations; 0: 8 for products of at most 8 "
           "rows (per expert), 16 up to 32 rows, 32 below 256, else 64)">,
    Option<"matmulColumnWarps", "matmul-column-warps", "int64_t",
           /*default=*/"0",
           "mixed_matmul: warps of a block side by side on columns, sharing "
           "each staged activation (a power of two up to 8; 0: 4 with "
           "staged activations, else 1)">,
    Option<"matmulActivationStages", "matmul-activation-stages", "int64_t",
           /*default=*/"0",
           "mixed_matmul: 1: each warp loads its activations from global "
           "memory; 2-4: the block stages them through a shared-memory ring "
           "of that many K chunks with cp.async (0: staged for experts, and "
           "for more than 8 rows on weights wider than deep, where that "
           "leaves at least 128 blocks; as deep as 40 KiB allows, up to 3)">,
    Option<"matmulWeightStages", "matmul-weight-stages", "int64_t",
           /*default=*/"0",
           "mixed_matmul: 1: each thread loads its weight bytes one K chunk "
           "ahead into registers; 2-8: through a per-thread shared-memory "
           "ring of that many chunks with cp.async, the scale codes that far "
           "ahead in registers (0: registers, or with staged activations a "
           "ring at their depth where both fit in 40 KiB)">,
    Option<"matmulMaxRegisters", "matmul-max-registers", "int64_t",
           /*default=*/"0",
           "mixed_matmul: registers per thread the kernel may use (nvvm.maxnreg; "
           "0: the backend chooses)">,
    Option<"foldScaleBias", "fold-scale-bias", "bool", /*default=*/"true",
           "Hopper dequantization: fold the 2^126 bias into the scale (one "
           "multiply per pair) for words whose scale codes are <= 128, and "
           "keep the exact two-multiply path for the others (false: the "
           "two-multiply path for every word)">,
    Option<"stageDequantize", "stage-dequantize", "bool", /*default=*/"true",
           "Hopper dequantization: each block of 256 threads decodes a tile "
           "of 64 x 64 values into shared memory and writes whole output "
           "rows with 16-byte stores (true), or one thread per word stores "
           "its eight bf16 values one by one (false; block-size and "
           "traversal apply)">,
    Option<"dequantizeTilesPerBlock", "dequantize-tiles-per-block", "int64_t",
           /*default=*/"4",
           "Staged Hopper dequantization: tiles per block, a power of two in "
           "[1, 8] (their loads are issued together)">,
    Option<"dequantizeTileOrder", "dequantize-tile-order", "std::string",
           /*default=*/"\"output\"",
           "Staged Hopper dequantization: consecutive tiles follow the "
           "output's rows (output) or the Hopper image's rows (image)">,
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
