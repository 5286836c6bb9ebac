//===- HostBlockConversion.h - The host's additions to the block route -*- C++ -*-===//
//
// The block route (Dialect/Microscale/Utils/BlockConversion.h) is written in
// target-neutral dialects. On the host CPU, lowered through LLVM, it gains:
// non-temporal (streaming) stores ordered by one LLVM fence, and, where the
// host has x86 GFNI (and AVX-512BW for 64-byte vectors), word bit
// interleaves (Hopper's Step B) by GF(2) affine byte transforms
// (vgf2p8affineqb) instead of shifts and masks.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_CPU_HOSTBLOCKCONVERSION_H
#define MICROSCALE_CONVERSION_CPU_HOSTBLOCKCONVERSION_H

#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"

namespace mlir::microscale {

class HostBlockConversionTarget : public BlockConversionTarget {
public:
  explicit HostBlockConversionTarget(bool gfni) : gfni(gfni) {}

  Value emitWordBitMap(OpBuilder &builder, Location loc, Value bytes,
                       const std::array<int8_t, 32> &map) const override;
  bool hasStreamingStores() const override { return true; }
  void emitStreamingFence(OpBuilder &builder, Location loc) const override;

private:
  bool gfni;
};

} // namespace mlir::microscale

#endif
