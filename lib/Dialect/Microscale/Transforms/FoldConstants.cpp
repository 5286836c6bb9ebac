//===- FoldConstants.cpp - Fold constant weights through the reference ----===//
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/Matchers.h"
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
    if (maxElements != 0)
      remarkOnSkipped();
  }

  /// Says which constants were left unfolded for their size: a compiler
  /// that expected its weights packed at compile time should learn why they
  /// were not.
  void remarkOnSkipped() {
    auto isConstantQTensor = [](Value value) {
      auto fromBytes = value.getDefiningOp<FromBytesOp>();
      return fromBytes && matchPattern(fromBytes.getValues(), m_Constant()) &&
             matchPattern(fromBytes.getScales(), m_Constant());
    };
    getOperation()->walk([&](Operation *op) {
      int64_t elements = -1;
      if (auto quantize = dyn_cast<QuantizeOp>(op)) {
        if (matchPattern(quantize.getInput(), m_Constant()))
          elements = quantize.getType().getNumElements();
      } else if (isa<DequantizeOp, ConvertLayoutOp, TranscodeOp>(op)) {
        Value input = op->getOperand(0);
        if (isConstantQTensor(input))
          elements = cast<QTensorType>(input.getType()).getNumElements();
      }
      if (elements > maxElements)
        op->emitRemark() << "not folded: " << elements
                         << " elements, more than max-elements = "
                         << maxElements.getValue()
                         << " (0 folds any size)";
    });
  }
};
} // namespace
