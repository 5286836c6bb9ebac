//===- HopperWgmmaMatmul.h - bf16 x MXFP4 wgmma, Hopper layout -*- C++ -*-===//
//
// The Hopper-layout matmul above decode sizes (HopperWgmmaMatmulKernel.cpp),
// which outlineHopperLayoutMatmul and emulateHopperLayoutMatmulOnHost
// (HopperLayoutMatmul.h) take for more than 64 activation rows, after their
// checks of the operands.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWGMMAMATMUL_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWGMMAMATMUL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::microscale {

/// Outlines `op` (checked by the Hopper-layout matmul) into the wgmma
/// kernel of `kernels` and replaces it with its launch; failure, with a
/// diagnostic, for a chip without wgmma or a tiling it cannot take.
LogicalResult outlineHopperWgmmaMatmul(MixedMatmulStorageOp op,
                                       gpu::GPUModuleOp kernels,
                                       unsigned index,
                                       const nvvm::NVIDIAChip &chip,
                                       int64_t smCount,
                                       const MixedMatmulOptions &options);

/// The wgmma kernel's own code run on the host (per thread its copies into
/// the swizzled stages, per lane its weight words and decode, each wgmma
/// from the PTX ISA's fragment tables and the descriptor's fields, the
/// epilogue); false, changing nothing, where it would not apply.
bool emulateHopperWgmmaMatmulOnHost(MixedMatmulStorageOp op,
                                    const nvvm::NVIDIAChip &chip,
                                    int64_t smCount,
                                    const MixedMatmulOptions &options);

} // namespace mlir::microscale

#endif
