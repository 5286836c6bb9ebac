//===- TCGen05ScaledMatmul.h - scaled_matmul through tcgen05 ----*- C++ -*-===//
//
// The sm_100a (B200, GB200) scaled_matmul kernel: MXFP4 x MXFP4, NVFP4 x
// NVFP4 and MXFP8 activations x MXFP4 weights through the tensor-memory MMA
// `tcgen05.mma ... block_scale`, and its host emulation.
// `microscale-nvvm-outline-scaled-matmul` dispatches here for chips with
// tcgen05 (BlackwellScaledMatmulKernel.cpp keeps sm_120a's mma.sync
// kernel).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_TCGEN05SCALEDMATMUL_H
#define MICROSCALE_CONVERSION_NVVM_TCGEN05SCALEDMATMUL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::microscale {

/// Outlines a scaled_matmul_storage of two MXFP4 (kind::mxf4), two NVFP4
/// (kind::mxf4nvf4) or MXFP8 x MXFP4 (kind::mxf8f6f4) operands stored
/// K-major, copied as the op's tiling says (ScaledMatmulTiling: loads, or
/// bulk copies), into a tcgen05 kernel of
/// `kernels` and replaces it with its launch; failure (with a diagnostic
/// naming what to do instead) for operands it does not take or a chip
/// without tcgen05. Defined in TCGen05ScaledMatmulKernel.cpp.
LogicalResult outlineTCGen05ScaledMatmul(ScaledMatmulStorageOp op,
                                         gpu::GPUModuleOp kernels,
                                         unsigned index,
                                         const nvvm::NVIDIAChip &chip);

/// For tests without a GPU: replaces `op` by that kernel run on the host:
/// its own copies into an emulated shared memory and its own descriptors,
/// with `tcgen05.cp`, `tcgen05.mma` and `tcgen05.ld` replaced by code that
/// interprets the descriptors and tensor-memory addresses the kernel hands
/// them (PTX ISA 9.7.16) on emulated shared and tensor memory. False,
/// changing nothing, for ops the kernel does not take.
bool emulateTCGen05ScaledMatmulOnHost(ScaledMatmulStorageOp op);

} // namespace mlir::microscale

#endif
