//===- OutlineSupport.h - What the NVVM outlining passes share --*- C++ -*-===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_OUTLINESUPPORT_H
#define MICROSCALE_LIB_CONVERSION_NVVM_OUTLINESUPPORT_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>

namespace mlir::microscale {

/// The gpu.module every NVIDIA kernel is outlined into.
inline constexpr llvm::StringLiteral kNVVMKernelModule = "microscale_kernels";

/// The chip named by a pass's `chip` option, or std::nullopt after an error
/// at `op` that names it and the chips that are known.
inline std::optional<nvvm::NVIDIAChip>
lookupChip(Operation *op, StringRef chip, StringRef pass) {
  std::optional<nvvm::NVIDIAChip> known = nvvm::NVIDIAChip::lookup(chip);
  // At the op's location, without the op itself attached: a pass option is
  // wrong, not the module.
  if (!known)
    mlir::emitError(op->getLoc())
        << pass << ": unknown NVIDIA chip '" << chip
        << "' (known: " << nvvm::NVIDIAChip::knownChips() << ")";
  return known;
}

/// The index of the next kernel of `kernels`: kernels are named by family
/// and index, in the order they are outlined.
inline unsigned getNextKernelIndex(gpu::GPUModuleOp kernels) {
  return llvm::range_size(kernels.getOps<gpu::GPUFuncOp>());
}

} // namespace mlir::microscale

#endif
