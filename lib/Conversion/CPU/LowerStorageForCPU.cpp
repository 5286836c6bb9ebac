//===- LowerStorageForCPU.cpp - Buffer-level ops as host loops ------------===//
#include "microscale/Conversion/CPU/HostBlockConversion.h"
#include "microscale/Conversion/CPU/Passes.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALECPULOWERSTORAGE
#include "microscale/Conversion/CPU/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;

namespace {
struct CPULowerStoragePass
    : public mlir::microscale::impl::MicroscaleCPULowerStorageBase<
          CPULowerStoragePass> {
  using MicroscaleCPULowerStorageBase::MicroscaleCPULowerStorageBase;
  void runOnOperation() override {
    HostBlockConversionTarget host(gfni);
    StorageLoweringOptions options;
    options.vectorBytes = vectorBytes;
    options.target = &host;
    options.minBytesWithGaps = minGapBytes;
    options.registerFileBytes = registerFileBytes;
    if (failed(lowerStorageOps(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
