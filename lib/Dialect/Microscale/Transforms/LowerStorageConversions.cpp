//===- LowerStorageConversions.cpp - convert_storage to parallel loops ----===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALELOWERSTORAGECONVERSIONS
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

/// Stores the low `count` bytes of the i32 `unitBits` at byte `offset`.
static void storeUnit(Emitter &e, Value dest, Value offset, Value unitBits,
                      int64_t count) {
  OpBuilder &b = e.builder();
  for (int64_t i = 0; i < count; ++i) {
    Value byte = arith::TruncIOp::create(b, e.location(), b.getI8Type(),
                                         e.shr(unitBits, 8 * i));
    memref::StoreOp::create(b, e.location(), byte, dest,
                            ValueRange{e.add(offset, i)});
  }
}

static void lower(ConvertStorageOp op) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  SmallVector<int64_t> shape = op.getPartShape();
  const unsigned bits = op.getPartBits();
  LayoutAttrInterface from = op.getSourceLayout();
  LayoutAttrInterface to = op.getDestLayout();
  QTensorType toType = op.getToType();
  const int64_t destBytes = ShapedType::getNumElements(
      op.getPart() == StoragePart::values ? toType.getValueStorageShape()
                                          : toType.getScaleStorageShape());
  const int64_t unitBytes = to.getStoreUnitBytes(bits);
  const bool empty = ShapedType::getNumElements(shape) == 0;
  Value begin = op.getUnitRange().empty() ? e.index(0) : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty() ? e.index(destBytes / unitBytes)
                                        : op.getUnitRange()[1];
  Value source = op.getSource(), dest = op.getDest();
  scf::ParallelOp::create(
      builder, loc, ValueRange{begin}, ValueRange{end},
      ValueRange{e.index(1)},
      [&](OpBuilder &body, Location bodyLoc, ValueRange ivs) {
        Emitter inner(body, bodyLoc);
        Value unit = ivs[0];
        // An empty logical tensor may still have padded storage: zeros.
        Value bitsOfUnit =
            empty ? inner.i32(0)
                  : to.emitStoreUnit(
                        body, bodyLoc, shape, bits, unit,
                        [&](OpBuilder &b, Location l, ValueRange index) {
                          return from.emitLoadElement(b, l, source, shape,
                                                      bits, index);
                        });
        storeUnit(inner, dest, inner.mul(unit, unitBytes), bitsOfUnit,
                  unitBytes);
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
