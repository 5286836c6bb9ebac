//===- HopperLayoutMatmul.h - bf16 x MXFP4 from the Hopper layout -*- C++ -*-===//
//
// mixed_matmul_storage with the weight in Triton's Hopper value layout
// (#microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales in
// #microscale.hopper_scale<mx_axis = -2>) at decode sizes: the kernel of
// lib/Conversion/NVVM/HopperLayoutMatmulKernel.cpp, which
// outlineMixedMatmul (Passes.h) dispatches to for such a weight.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_HOPPERLAYOUTMATMUL_H
#define MICROSCALE_CONVERSION_NVVM_HOPPERLAYOUTMATMUL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::microscale {

/// Whether the weight of `op` is stored in a Hopper value layout (any
/// parameters): such an op is the Hopper-layout kernel's to take or refuse.
bool hasHopperLayoutWeight(MixedMatmulStorageOp op);

/// Outlines `op` (a weight in a Hopper value layout) into the Hopper-layout
/// decode kernel of `kernels` and replaces it with its launch; failure,
/// with a diagnostic naming what to do, for what the kernel does not take
/// (other Hopper parameters, experts, rows known at run time, more than 64
/// rows, a chip without bf16x2 arithmetic).
LogicalResult outlineHopperLayoutMatmul(MixedMatmulStorageOp op,
                                        gpu::GPUModuleOp kernels,
                                        unsigned index,
                                        const nvvm::NVIDIAChip &chip,
                                        int64_t smCount,
                                        const MixedMatmulOptions &options);

/// For tests without a GPU: replaces `op` by the Hopper-layout kernel's
/// own code run on the host, with the plan it would have on `chip`: per
/// block and warp, every lane's loads (which image word, scale word and
/// activation words it reads) and decode (the PTX sequences as integer
/// operations and rounded bf16 multiplies), each mma.sync m16n8k16 emulated
/// from the PTX ISA's fragment tables, the split warps' sums added in the
/// kernel's order and stored by its epilogue. False, changing nothing,
/// where the kernel would not apply.
bool emulateHopperLayoutMatmulOnHost(MixedMatmulStorageOp op,
                                     const nvvm::NVIDIAChip &chip,
                                     int64_t smCount = 0,
                                     const MixedMatmulOptions &options = {});

} // namespace mlir::microscale

#endif
