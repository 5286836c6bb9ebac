//===- FoldConstants.cpp - Fold constant weights through the reference ----===//
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALEFOLDCONSTANTS
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;

namespace {
struct FoldConstantsPass
    : public mlir::microscale::impl::MicroscaleFoldConstantsBase<
          FoldConstantsPass> {
  using MicroscaleFoldConstantsBase::MicroscaleFoldConstantsBase;

  void runOnOperation() override {
    if (maxElements < 0) {
      getOperation()->emitError()
          << "microscale-fold-constants: max-elements must be >= 0, got "
          << maxElements.getValue();
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateReferenceFoldingPatterns(
        patterns, maxElements == 0 ? std::numeric_limits<int64_t>::max()
                                   : static_cast<int64_t>(maxElements));
    // The greedy driver also runs the ops' folders, so the from_bytes /
    // to_bytes pairs that folding exposes disappear too.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
