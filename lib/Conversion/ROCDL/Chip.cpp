//===- Chip.cpp - The AMD chips the kernels know --------------------------===//
#include "microscale/Conversion/ROCDL/Chip.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir::microscale::rocdl;

/// Figures from AMD's CDNA3 (MI300X) and CDNA4 (MI355X) ISA guides.
static const llvm::SmallVector<AMDChip> &chips() {
  static const llvm::SmallVector<AMDChip> table = [] {
    llvm::SmallVector<AMDChip> t;
    AMDChip cdna3;
    cdna3.name = "gfx942";
    cdna3.defaultComputeUnits = 304;
    cdna3.ldsPerWorkgroup = 64 * 1024;
    t.push_back(cdna3);
    AMDChip cdna4;
    cdna4.name = "gfx950";
    cdna4.defaultComputeUnits = 256;
    cdna4.ldsPerWorkgroup = 160 * 1024;
    cdna4.hasScaledMFMA = true;
    cdna4.hasScaledFP4FP6Conversions = true;
    t.push_back(cdna4);
    return t;
  }();
  return table;
}

std::optional<AMDChip> AMDChip::lookup(llvm::StringRef chip) {
  for (const AMDChip &known : chips())
    if (known.name == chip)
      return known;
  return std::nullopt;
}

std::string AMDChip::knownChips() {
  std::string list;
  for (const AMDChip &known : chips()) {
    if (!list.empty())
      list += ", ";
    list += known.name.str();
  }
  return list;
}
