//===- Passes.h - microscale to GPU kernels ---------------------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_GPU_PASSES_H
#define MICROSCALE_CONVERSION_GPU_PASSES_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::microscale {

#define GEN_PASS_DECL
#include "microscale/Conversion/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "microscale/Conversion/GPU/Passes.h.inc"

/// The tiling of the mixed_matmul kernel; 0 everywhere is chosen from the
/// shape (the pass options of the same names).
struct MixedMatmulOptions {
  int64_t splitK = 0;       // warps per block splitting K
  int64_t unroll = 0;       // K chunks per software-pipeline stage
  int64_t warpColumns = 0;  // weight columns per warp: 16 or 32
  int64_t warpRows = 0;     // activation rows per warp: 8 or 16
  int64_t columnWarps = 0;  // warps of a block side by side on columns
  int64_t activationStages = 0; // 1: direct loads; 2-4: ring depth
  int64_t weightStages = 0;     // 1: register prefetch; 2-8: ring depth
  int64_t chunkK = 0;           // K per chunk: 64 or 128
  int64_t maxRegisters = 0; // nvvm.maxnreg (0: the backend chooses)
};

/// Outlines a mixed_matmul_storage (bf16 x MXFP4, dense or ragged experts)
/// into an mma.sync kernel of `kernels` and replaces it with its launch;
/// failure (with a diagnostic) for operands it does not take. Defined in
/// ConvertMixedMatmulToGPU.cpp.
LogicalResult outlineMixedMatmul(MixedMatmulStorageOp op,
                                 gpu::GPUModuleOp kernels, unsigned index,
                                 const MixedMatmulOptions &options = {});

/// Outlines a whole convert_storage of FP4 values into a kernel that
/// stages each block of the block route (BlockConversion.h) through shared
/// memory with 16-byte loads and stores, and replaces it with its launch.
/// Returns false, changing nothing, where that route does not apply
/// (padding, runs under 16 bytes, unit ranges, scales, other widths).
/// A block converts `tilesInSequence` tiles one after the other (their
/// loads issued first). Defined in TiledConversionToGPU.cpp.
bool outlineTiledConversion(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                            unsigned index, int64_t tilesInSequence = 1);

/// For tests without a GPU: replaces `op` by the staged kernel's own code
/// (the same planner and emitter) run on the host, block by block, each
/// phase as a loop over the block's threads, shared memory as stack
/// buffers and the byte permutes as integer operations. False, changing
/// nothing, where outlineTiledConversion would not apply.
bool emulateTiledConversionOnHost(ConvertStorageOp op,
                                  int64_t tilesInSequence = 1);

/// How dequantize_storage from the Hopper layouts is lowered.
struct HopperDequantizeOptions {
  /// Stage each block's tile in shared memory and store whole output rows
  /// with 16-byte stores (true), or one thread per word storing its eight
  /// bf16 values one by one (false).
  bool staged = true;
  /// Staged kernel only: tiles per block (a power of two; their loads are
  /// issued together), and whether consecutive tiles follow the output's
  /// rows (true) or the Hopper image's (false).
  int64_t tilesPerBlock = 4;
  bool outputOrder = true;
  /// Per-word kernel only: threads per block, and whether consecutive
  /// threads take consecutive image rows (column-major) or words.
  int64_t blockSize = 256;
  bool columnMajor = false;
  /// Fold the 2^126 bias into the scale for words whose codes are <= 128.
  bool foldScaleBias = true;
};

/// Outlines a dequantize_storage of mxfp4 in the Hopper layouts (mma_version
/// 3) to bf16 into a kernel of `kernels` carrying seed 000's inline PTX
/// decode, and replaces it with its launch; failure (with a diagnostic) for
/// operands it does not take. Defined in DequantizeHopperToGPU.cpp.
LogicalResult outlineHopperDequantize(DequantizeStorageOp op,
                                      gpu::GPUModuleOp kernels,
                                      const HopperDequantizeOptions &options,
                                      unsigned index);

/// For tests without a GPU: replaces `op` by the staged Hopper
/// dequantization kernel's own code run on the host (each phase a loop over
/// the block's threads, the shared tile a stack buffer, the PTX decode as
/// integer operations and bf16 multiplies). False, changing nothing, for
/// ops the kernel does not take or with `options.staged` off.
bool emulateHopperDequantizeOnHost(DequantizeStorageOp op,
                                   const HopperDequantizeOptions &options);

/// Options of the NVIDIA pipeline.
struct NVVMPipelineOptions {
  std::string chip = "sm_90a";
  /// Empty: the PTX version the chip needs (+ptx80 up to sm_90a, +ptx86 for
  /// sm_100a and newer).
  std::string features = "";
  /// "isa" (PTX text, JIT-compiled by the driver at load) or "bin" (a cubin
  /// assembled by ptxas at compile time: no JIT at load).
  std::string format = "isa";
  /// Where to find ptxas for format "bin" (default: the CUDA toolkit that
  /// MLIR finds, e.g. /usr/local/cuda).
  std::string toolkit = "";
};

/// The lowest PTX version (e.g. 86 for 8.6) that `chip` needs, or 0 if the
/// chip is unknown.
int minimumPTXVersion(llvm::StringRef chip);

/// convert_storage -> gpu kernels -> NVVM -> PTX (gpu.binary, format=isa).
/// Registered as `microscale-gpu-to-ptx{chip=... features=...}`.
void buildMicroscaleGPUToPTXPipeline(OpPassManager &pm,
                                     const NVVMPipelineOptions &options);
void registerMicroscaleGPUPipelines();

} // namespace mlir::microscale

#endif
