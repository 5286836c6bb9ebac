//===- LowerStorageConversions.cpp - convert_storage to parallel loops ----===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"
#include "microscale/Dialect/Microscale/Transforms/StorageConversion.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALELOWERSTORAGECONVERSIONS
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

static void lower(ConvertStorageOp op) {
  StorageConversion conversion(op);
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value begin = op.getUnitRange().empty() ? e.index(0) : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty() ? e.index(conversion.getNumUnits())
                                        : op.getUnitRange()[1];
  Value source = op.getSource(), dest = op.getDest();
  scf::ParallelOp::create(
      builder, loc, ValueRange{begin}, ValueRange{end},
      ValueRange{e.index(1)},
      [&](OpBuilder &body, Location bodyLoc, ValueRange ivs) {
        conversion.emitUnit(body, bodyLoc, source, dest, ivs[0]);
      });
  op.erase();
}

namespace {
struct LowerStorageConversionsPass
    : public mlir::microscale::impl::MicroscaleLowerStorageConversionsBase<
          LowerStorageConversionsPass> {
  void runOnOperation() override {
    SmallVector<ConvertStorageOp> ops;
    getOperation()->walk([&](ConvertStorageOp op) { ops.push_back(op); });
    for (ConvertStorageOp op : ops)
      lower(op);
  }
};
} // namespace
