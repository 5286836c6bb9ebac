//===- LowerStorageConversions.cpp - convert_storage to parallel loops ----===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALELOWERSTORAGECONVERSIONS
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

/// The block route's plan for a conversion, when it applies (see BlockConversion.h).
static std::optional<BlockConversionPlan>
planFor(const StorageConversion &conversion,
        const StorageLoweringOptions &options) {
  if (options.vectorBytes == 0 ||
      (conversion.bits != 4 && conversion.bits != 8))
    return std::nullopt;
  std::unique_ptr<::microscale::ref::Layout> from, to;
  if (!conversion.buildReferences(from, to))
    return std::nullopt;
  // With edge blocks (emitBlockConversion runs them): no element of a shape
  // that the block does not divide is left to the per-unit writer.
  auto plan = planBlockConversion(*from, *to, options.vectorBytes,
                                  options.minBytesWithGaps,
                                  /*minBlockBits=*/0, /*edgeBlocks=*/true,
                                  options.registerFileBytes);
  if (!plan)
    return std::nullopt;
  // Bands, spans, tails and gaps in whole store units.
  const int64_t unit = conversion.unitBytes;
  if (plan->bandBytes % unit || plan->spanBytes % unit ||
      plan->batchTailBytes % unit ||
      llvm::any_of(plan->spanGaps, [&](std::pair<int64_t, int64_t> gap) {
        return gap.first % unit || gap.second % unit;
      }))
    return std::nullopt;
  return plan;
}

/// The block route for plans that leave destination bytes (padding, or the
/// elements outside the blocks): the destination is, per batch, one span per
/// band and a tail. Band g's span starts at unit start(g) = g / P * B +
/// g % P * S (P bands per batch, B units per batch, S per span), and the
/// units up to start(g + 1) are its own (the tail goes with a batch's last
/// band). The bands whose units lie wholly in [begin, end) go by blocks,
/// with their gaps; the rest unit by unit.
static void
lowerWithGaps(ConvertStorageOp op, const StorageConversion &conversion,
              const BlockConversionPlan &plan,
              const BlockConversionTarget *target,
              function_ref<void(Value, Value)> perUnit) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value begin = op.getUnitRange().empty() ? e.index(0) : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty() ? e.index(conversion.getNumUnits())
                                        : op.getUnitRange()[1];
  const int64_t unit = conversion.unitBytes;
  const int64_t perBatch = plan.bandsPerBatch;
  const int64_t unitsPerBatch = plan.getBatchBytes() / unit;
  const int64_t unitsPerSpan = plan.spanBytes / unit;
  auto minU = [&](Value x, Value y) -> Value {
    return arith::MinUIOp::create(builder, loc, x, y);
  };
  auto start = [&](Value band) {
    return e.add(e.mul(e.div(band, perBatch), unitsPerBatch),
                 e.mul(e.rem(band, perBatch), unitsPerSpan));
  };
  // The first band that starts at or after `begin`, and the end of the
  // last band that ends at or before `end`.
  Value withinBegin = e.rem(begin, unitsPerBatch);
  Value firstBand = e.add(
      e.mul(e.div(begin, unitsPerBatch), perBatch),
      minU(arith::CeilDivUIOp::create(builder, loc, withinBegin,
                                      e.index(unitsPerSpan)),
           e.index(perBatch)));
  Value lastBand =
      e.add(e.mul(e.div(end, unitsPerBatch), perBatch),
            minU(e.div(e.rem(end, unitsPerBatch), unitsPerSpan),
                 e.index(perBatch - 1)));
  lastBand = arith::MaxUIOp::create(builder, loc, lastBand, firstBand);
  Value low = minU(start(firstBand), end);
  Value high = arith::MaxUIOp::create(builder, loc, start(lastBand), low);
  perUnit(begin, low);
  Value source = op.getSource(), dest = op.getDest();
  // A named callable: GapWriter holds a function_ref to it.
  auto emitUnit = [&](OpBuilder &b, Location l, Value u) {
    conversion.emitUnit(b, l, source, dest, u);
  };
  GapWriter gaps;
  gaps.unitBytes = unit;
  gaps.emitUnit = emitUnit;
  emitBlockConversion(builder, loc, plan, source, dest, firstBand, lastBand,
                      target, &gaps);
  perUnit(high, end);
  op.erase();
}

static void lower(ConvertStorageOp op, const StorageLoweringOptions &options) {
  const BlockConversionTarget *target = options.target;
  StorageConversion conversion(op);
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value begin = op.getUnitRange().empty() ? e.index(0) : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty() ? e.index(conversion.getNumUnits())
                                        : op.getUnitRange()[1];
  Value source = op.getSource(), dest = op.getDest();
  auto perUnit = [&](Value first, Value last) {
    scf::ParallelOp::create(
        builder, loc, ValueRange{first}, ValueRange{last},
        ValueRange{e.index(1)},
        [&](OpBuilder &body, Location bodyLoc, ValueRange ivs) {
          conversion.emitUnit(body, bodyLoc, source, dest, ivs[0]);
        });
  };
  std::optional<BlockConversionPlan> plan =
      planFor(conversion, options);
  if (!plan) {
    perUnit(begin, end);
    op.erase();
    return;
  }
  if (!plan->coversDestination()) {
    lowerWithGaps(op, conversion, *plan, target, perUnit);
    return;
  }
  // Whole bands of [begin, end) by blocks, the partial bands at either end
  // unit by unit: [begin, low) [low, high) [high, end).
  const int64_t unitsPerBand = plan->bandBytes / conversion.unitBytes;
  Value perBand = e.index(unitsPerBand);
  Value low = arith::MulIOp::create(
      builder, loc, arith::CeilDivUIOp::create(builder, loc, begin, perBand),
      perBand);
  Value high = e.mul(arith::DivUIOp::create(builder, loc, end, perBand),
                     unitsPerBand);
  low = arith::MinUIOp::create(builder, loc, low, end);
  high = arith::MaxUIOp::create(builder, loc, high, low);
  perUnit(begin, low);
  emitBlockConversion(builder, loc, *plan, source, dest,
                      arith::DivUIOp::create(builder, loc, low, perBand),
                      arith::DivUIOp::create(builder, loc, high, perBand), target);
  perUnit(high, end);
  op.erase();
}

static SmallVector<float> decodeTable(::microscale::ref::ScalarFormat format,
                                      ::microscale::ref::E8M0Edges edges) {
  namespace ref = ::microscale::ref;
  SmallVector<float> table;
  for (uint32_t code = 0; code < (1u << ref::getInfo(format).bits); ++code)
    table.push_back(static_cast<float>(ref::decode(format, code, edges)));
  return table;
}

DecodeTables mlir::microscale::getDecodeTables(OpBuilder &builder,
                                                Location loc, ModuleOp module,
                                                FormatAttr formatAttr,
                                                E8M0Edges edgesAttr) {
  namespace ref = ::microscale::ref;
  ref::MXFormat format = formatAttr.getReferenceFormat();
  ref::E8M0Edges edges = toReference(edgesAttr);
  std::string elementName =
      "microscale_decode_" + std::string(ref::getInfo(format.element).name);
  std::string scaleName =
      "microscale_decode_" + std::string(ref::getInfo(format.scale).name) +
      (format.scale == ref::ScalarFormat::E8M0
           ? (edges == ref::E8M0Edges::OCP ? "_ocp" : "_zero_inf")
           : "");
  Value elementTable = getConstantTable(
      builder, loc, module, elementName,
      ArrayRef(decodeTable(format.element, ref::E8M0Edges::OCP)),
      builder.getF32Type());
  Value scaleTable = getConstantTable(builder, loc, module, scaleName,
                                      ArrayRef(decodeTable(format.scale, edges)),
                                      builder.getF32Type());
  return {elementTable, scaleTable};
}

static void lower(DequantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  ModuleOp module = op->getParentOfType<ModuleOp>();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  // Named values, not structured bindings: lambdas below capture them.
  auto tables = getDecodeTables(
      builder, loc, module, type.getFormat(), op.getE8m0Edges());
  Value elementTable = tables.element, scaleTable = tables.scale;
  const int64_t block = type.getFormat().getBlockSize();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<int64_t> scaleShape = type.getScaleShape();
  const int64_t axis = type.getAxis();
  const unsigned bits = type.getFormat().getElementBits();
  LayoutAttrInterface valueLayout = type.getValueLayout();
  LayoutAttrInterface scaleLayout = type.getScaleLayout();
  Value values = op.getValues(), scales = op.getScales(), out = op.getOut();
  Value global = op.getGlobalScale();
  Type outType = cast<MemRefType>(out.getType()).getElementType();
  scf::ParallelOp::create(
      builder, loc, ValueRange{e.index(0)},
      ValueRange{e.index(type.getNumElements())}, ValueRange{e.index(1)},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Emitter in(b, l);
        SmallVector<Value> index(shape.size());
        Value rest = ivs[0];
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
          index[d] = in.rem(rest, shape[d]);
          rest = in.div(rest, shape[d]);
        }
        SmallVector<Value> scaleIndex(index);
        scaleIndex[axis] = in.div(index[axis], block);
        Value code = valueLayout.emitLoadElement(b, l, values, shape, bits, index);
        Value scaleCode =
            scaleLayout.emitLoadElement(b, l, scales, scaleShape, 8, scaleIndex);
        Value element = memref::LoadOp::create(b, l, elementTable,
                                               ValueRange{in.toIndex(code)});
        Value scale = memref::LoadOp::create(b, l, scaleTable,
                                             ValueRange{in.toIndex(scaleCode)});
        Value value = arith::MulFOp::create(b, l, element, scale);
        if (global)
          value = arith::MulFOp::create(b, l, value, global);
        // One NaN on every target: the positive quiet NaN.
        Value isNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                            value, value);
        Value nan = arith::ConstantOp::create(
            b, l, b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN()));
        value = arith::SelectOp::create(b, l, isNaN, nan, value);
        if (outType != value.getType())
          value = arith::TruncFOp::create(b, l, outType, value);
        memref::StoreOp::create(b, l, value, out, ValueRange{ivs[0]});
      });
  op.erase();
}

LogicalResult
mlir::microscale::lowerStorageOps(Operation *root,
                                  const StorageLoweringOptions &options) {
  SmallVector<ConvertStorageOp> ops;
  SmallVector<DequantizeStorageOp> dequantizes;
  SmallVector<QuantizeStorageOp> quantizes;
  SmallVector<TranscodeStorageOp> transcodes;
  SmallVector<ScaledMatmulStorageOp> matmuls;
  SmallVector<MixedMatmulStorageOp> mixed;
  root->walk([&](Operation *op) {
    if (auto convert = dyn_cast<ConvertStorageOp>(op))
      ops.push_back(convert);
    else if (auto dequantize = dyn_cast<DequantizeStorageOp>(op))
      dequantizes.push_back(dequantize);
    else if (auto quantize = dyn_cast<QuantizeStorageOp>(op))
      quantizes.push_back(quantize);
    else if (auto transcode = dyn_cast<TranscodeStorageOp>(op))
      transcodes.push_back(transcode);
    else if (auto matmul = dyn_cast<ScaledMatmulStorageOp>(op))
      matmuls.push_back(matmul);
    else if (auto product = dyn_cast<MixedMatmulStorageOp>(op))
      mixed.push_back(product);
  });
  for (QuantizeStorageOp op : quantizes)
    lowerQuantizeStorage(op);
  for (ConvertStorageOp op : ops)
    lower(op, options);
  for (TranscodeStorageOp op : transcodes)
    if (failed(lowerTranscodeStorage(op)))
      return failure();
  for (ScaledMatmulStorageOp op : matmuls)
    if (failed(lowerScaledMatmulStorage(op)))
      return failure();
  for (MixedMatmulStorageOp op : mixed)
    if (failed(lowerMixedMatmulStorage(op)))
      return failure();
  for (DequantizeStorageOp op : dequantizes) {
    if (!op->getParentOfType<ModuleOp>())
      return op.emitOpError()
             << "needs an enclosing module for its decode tables";
    lower(op);
  }
  return success();
}

namespace {
struct LowerStorageConversionsPass
    : public mlir::microscale::impl::MicroscaleLowerStorageConversionsBase<
          LowerStorageConversionsPass> {
  using MicroscaleLowerStorageConversionsBase::
      MicroscaleLowerStorageConversionsBase;
  void runOnOperation() override {
    StorageLoweringOptions options;
    options.vectorBytes = vectorBytes;
    options.minBytesWithGaps = minGapBytes;
    options.registerFileBytes = registerFileBytes;
    if (failed(lowerStorageOps(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
