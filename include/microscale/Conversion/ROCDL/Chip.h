//===- Chip.h - What an AMD chip offers the kernels -------------*- C++ -*-===//
//
// The AMD chip model: from a target's chip string (`gfx942`, `gfx950`) the
// limits and the instructions the ROCDL kernels choose by. The CU count is
// a planning default only (it is a property of the part).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_ROCDL_CHIP_H
#define MICROSCALE_CONVERSION_ROCDL_CHIP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::microscale::rocdl {

struct AMDChip {
  /// The chip string as the ROCDL target spells it, e.g. "gfx950".
  llvm::StringRef name;
  int64_t defaultComputeUnits = 0;
  int64_t waveSize = 64;
  int64_t maxThreadsPerBlock = 1024;
  /// LDS (shared memory) one workgroup may use.
  int64_t ldsPerWorkgroup = 64 * 1024;
  /// Block-scaled MFMA with FP4/FP6/FP8 operands and E8M0 scales
  /// (v_mfma_scale_f32_32x32x64_f8f6f4).
  bool hasScaledMFMA = false;
  /// Packed conversions with a scale to and from FP4/FP6
  /// (v_cvt_scalef32_pk_*), which the HWCVT transcode uses.
  bool hasScaledFP4FP6Conversions = false;

  /// The chip named `chip`, or std::nullopt for a chip this library does not
  /// know.
  static std::optional<AMDChip> lookup(llvm::StringRef chip);
  /// The chips `lookup` knows, for diagnostics.
  static std::string knownChips();
};

} // namespace mlir::microscale::rocdl

#endif
