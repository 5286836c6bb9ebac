//===- Passes.h - microscale to GPU kernels ---------------------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_NVVM_PASSES_H
#define MICROSCALE_CONVERSION_NVVM_PASSES_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::microscale {

#define GEN_PASS_DECL
#include "microscale/Conversion/NVVM/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "microscale/Conversion/NVVM/Passes.h.inc"

/// Outlines a mixed_matmul_storage (bf16 x MXFP4, dense or ragged experts)
/// into an mma.sync kernel of `kernels` and replaces it with its launch;
/// failure (with a diagnostic) for operands it does not take. Defined in
/// MixedMatmulKernel.cpp.
LogicalResult outlineMixedMatmul(MixedMatmulStorageOp op,
                                 gpu::GPUModuleOp kernels, unsigned index,
                                 const nvvm::NVIDIAChip &chip, int64_t smCount,
                                 const MixedMatmulOptions &options = {});

/// Outlines a whole convert_storage of FP4 values into a kernel that
/// stages each block of the block route (BlockConversion.h) through shared
/// memory with 16-byte loads and stores, and replaces it with its launch.
/// Returns false, changing nothing, where that route does not apply
/// (padding, runs under 16 bytes, unit ranges, scales, other widths).
/// A block converts `tilesInSequence` tiles one after the other (their
/// loads issued first). Defined in StagedConversionKernel.cpp.
bool outlineTiledConversion(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                            unsigned index, int64_t tilesInSequence = 1);

/// For tests without a GPU: replaces `op` by the staged kernel's own code
/// (the same planner and emitter) run on the host, block by block, each
/// phase as a loop over the block's threads, shared memory as stack
/// buffers and the byte permutes as integer operations. False, changing
/// nothing, where outlineTiledConversion would not apply.
bool emulateTiledConversionOnHost(ConvertStorageOp op,
                                  int64_t tilesInSequence = 1);

/// Outlines a dequantize_storage of mxfp4 in the Hopper layouts (mma_version
/// 3) to bf16 into a kernel of `kernels` carrying the inline PTX
/// decode, and replaces it with its launch; failure (with a diagnostic) for
/// operands it does not take. Defined in HopperDequantizeKernel.cpp.
LogicalResult outlineHopperDequantize(DequantizeStorageOp op,
                                      gpu::GPUModuleOp kernels,
                                      const HopperDequantizeOptions &options,
                                      unsigned index,
                                      const nvvm::NVIDIAChip &chip);

/// For tests without a GPU: replaces `op` by the staged Hopper
/// dequantization kernel's own code run on the host (each phase a loop over
/// the block's threads, the shared tile a stack buffer, the PTX decode as
/// integer operations and bf16 multiplies). False, changing nothing, for
/// ops the kernel does not take or with `options.staged` off.
bool emulateHopperDequantizeOnHost(DequantizeStorageOp op,
                                   const HopperDequantizeOptions &options);

/// Outlines a dequantize_storage of mxfp4 in the Blackwell value and scale
/// layouts to bf16 into a kernel of `kernels` decoding with the native FP4
/// conversions, and replaces it with its launch; failure (with a
/// diagnostic) for operands it does not take or a chip without the
/// conversions. Defined in BlackwellDequantizeKernel.cpp.
LogicalResult outlineBlackwellDequantize(DequantizeStorageOp op,
                                         gpu::GPUModuleOp kernels,
                                         const HopperDequantizeOptions &options,
                                         unsigned index,
                                         const nvvm::NVIDIAChip &chip);

/// For tests without a GPU: replaces `op` by that kernel's own code run on
/// the host (the conversions as integer operations). False, changing
/// nothing, for ops the kernel does not take.
bool emulateBlackwellDequantizeOnHost(DequantizeStorageOp op,
                                      const HopperDequantizeOptions &options);

/// Outlines a scaled_matmul_storage of two MXFP4 (or NVFP4) operands
/// stored K-major into a kernel of the sm_120a block-scaled mma.sync
/// (kind::mxf4) or, on chips with tcgen05, of the tcgen05 MMA
/// (TCGen05ScaledMatmul.h), and replaces it with its launch; failure (with
/// a diagnostic) for a chip without either or operands the kernel does not
/// take. Defined in BlackwellScaledMatmulKernel.cpp.
LogicalResult outlineBlackwellScaledMatmul(ScaledMatmulStorageOp op,
                                           gpu::GPUModuleOp kernels,
                                           unsigned index,
                                           const nvvm::NVIDIAChip &chip);

/// For tests without a GPU: replaces `op` by that kernel's own loads and
/// stores run on the host, lane by lane, with each MMA emulated from the
/// PTX ISA's fragment and scale-factor tables. False, changing nothing,
/// for ops the kernel does not take.
bool emulateBlackwellScaledMatmulOnHost(ScaledMatmulStorageOp op);

/// Options of the NVIDIA pipeline.
struct NVVMPipelineOptions {
  std::string chip = "sm_90a";
  /// Empty: the PTX version the chip needs (the chip model's, at least
  /// +ptx80).
  std::string features = "";
  /// "isa" (PTX text, JIT-compiled by the driver at load) or "bin" (a cubin
  /// assembled by ptxas at compile time: no JIT at load).
  std::string format = "isa";
  /// Where to find ptxas for format "bin" (default: the CUDA toolkit that
  /// MLIR finds, e.g. /usr/local/cuda).
  std::string toolkit = "";
  /// SMs of the GPU that grids are planned for (0: the chip model's
  /// default).
  int64_t smCount = 0;
};

/// The three outlining passes, one per kernel family (conversions,
/// Hopper dequantization, mixed matmul), for `chip`. Registered as the
/// pipeline `microscale-nvvm-outline-kernels{chip=...}`.
void buildMicroscaleNVVMOutlinePipeline(OpPassManager &pm,
                                        llvm::StringRef chip,
                                        int64_t smCount = 0);

/// The buffer-level ops -> gpu kernels -> NVVM -> PTX (gpu.binary,
/// format=isa) or cubins. Registered as
/// `microscale-gpu-to-ptx{chip=... features=...}`.
void buildMicroscaleGPUToPTXPipeline(OpPassManager &pm,
                                     const NVVMPipelineOptions &options);
void registerMicroscaleGPUPipelines();

} // namespace mlir::microscale

#endif
