//===- LowerToStorage.cpp - Tensor-level ops to buffer-level ops ----------===//
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALELOWERTOSTORAGE
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;

/// The 1-D buffer of a byte or float tensor (read-only).
static Value flatBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
  if (type.getRank() == 1)
    return buffer;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return memref::CollapseShapeOp::create(b, loc, buffer, all);
}

/// The tensor of `shape` that a filled 1-D allocation becomes.
static Value asTensorOfShape(OpBuilder &b, Location loc, Value flat,
                             ArrayRef<int64_t> shape) {
  Type element = cast<MemRefType>(flat.getType()).getElementType();
  Value shaped = flat;
  if (shape.size() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (size_t d = 0; d < shape.size(); ++d)
      all[0].push_back(d);
    shaped = memref::ExpandShapeOp::create(
        b, loc, MemRefType::get(shape, element), flat, all);
  }
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(shape, element), shaped,
      /*restrict=*/true, /*writable=*/true);
}

/// A fresh 1-D allocation of `shape`'s element count.
static Value allocateFlat(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Type element) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::getNumElements(shape)}, element));
}

/// A fresh 1-D allocation of `shape`'s element count, and the tensor of
/// `shape` it becomes once `fill` has written it.
static Value allocateAndFill(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type element,
                             function_ref<void(Value)> fill) {
  Value flat = allocateFlat(b, loc, shape, element);
  fill(flat);
  return asTensorOfShape(b, loc, flat, shape);
}

/// Fresh value and scale byte buffers for `type`'s storage, written by one
/// op that `fill` creates, and the quantized tensor they become.
static Value allocateAndFillQTensor(OpBuilder &b, Location loc,
                                    QTensorType type, Value globalScale,
                                    function_ref<void(Value, Value)> fill) {
  SmallVector<int64_t> valueShape = type.getValueStorageShape();
  SmallVector<int64_t> scaleShape = type.getScaleStorageShape();
  Type i8 = b.getI8Type();
  Value values = allocateFlat(b, loc, valueShape, i8);
  Value scales = allocateFlat(b, loc, scaleShape, i8);
  fill(values, scales);
  // Two statements: the IR order must not depend on argument evaluation.
  Value valueTensor = asTensorOfShape(b, loc, values, valueShape);
  Value scaleTensor = asTensorOfShape(b, loc, scales, scaleShape);
  return FromBytesOp::create(b, loc, type, valueTensor, scaleTensor,
                             globalScale);
}

/// The f32 global scale of a quantized tensor from bytes; 1.0 for formats
/// that have none (a product with it is then the plain product).
static Value globalScaleOrOne(OpBuilder &b, Location loc, FromBytesOp input) {
  if (Value scale = input.getGlobalScale())
    return scale;
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
}

namespace {
struct LowerConvertLayout : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    auto input = op.getInput().getDefiningOp<FromBytesOp>();
    if (!input)
      return failure();
    Location loc = op.getLoc();
    QTensorType from = op.getInput().getType(), to = op.getType();
    auto convert = [&](Value bytes, StoragePart part,
                       ArrayRef<int64_t> storage) -> Value {
      LayoutAttrInterface a = part == StoragePart::values
                                  ? from.getValueLayout()
                                  : from.getScaleLayout();
      LayoutAttrInterface b = part == StoragePart::values ? to.getValueLayout()
                                                          : to.getScaleLayout();
      if (a == b)
        return bytes;
      Value source = flatBuffer(rewriter, loc, bytes);
      return allocateAndFill(
          rewriter, loc, storage, rewriter.getI8Type(), [&](Value dest) {
            ConvertStorageOp::create(
                rewriter, loc, StoragePartAttr::get(getContext(), part),
                source, dest, ValueRange(), TypeAttr::get(from),
                TypeAttr::get(to));
          });
    };
    Value values = convert(input.getValues(), StoragePart::values,
                           to.getValueStorageShape());
    Value scales = convert(input.getScales(), StoragePart::scales,
                           to.getScaleStorageShape());
    rewriter.replaceOpWithNewOp<FromBytesOp>(op, to, values, scales,
                                             input.getGlobalScale());
    return success();
  }
};

struct LowerDequantize : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto input = op.getInput().getDefiningOp<FromBytesOp>();
    if (!input)
      return failure();
    Location loc = op.getLoc();
    Value values = flatBuffer(rewriter, loc, input.getValues());
    Value scales = flatBuffer(rewriter, loc, input.getScales());
    RankedTensorType result = op.getType();
    Value tensor = allocateAndFill(
        rewriter, loc, result.getShape(), result.getElementType(),
        [&](Value out) {
          DequantizeStorageOp::create(
              rewriter, loc, values, scales, input.getGlobalScale(), out,
              TypeAttr::get(op.getInput().getType()),
              E8M0EdgesAttr::get(getContext(), op.getE8m0Edges()));
        });
    rewriter.replaceOp(op, tensor);
    return success();
  }
};

struct LowerQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    QTensorType type = op.getType();
    // NVFP4's default global scale (amax of the whole tensor) is not
    // lowered yet; with an explicit one, it is.
    if (type.getFormat().getGlobalScale() && !op.getGlobalScale())
      return failure();
    Location loc = op.getLoc();
    Value input = flatBuffer(rewriter, loc, op.getInput());
    rewriter.replaceOp(
        op, allocateAndFillQTensor(
                rewriter, loc, type, op.getGlobalScale(),
                [&](Value values, Value scales) {
                  QuantizeStorageOp::create(rewriter, loc, input,
                                            op.getGlobalScale(), values,
                                            scales, TypeAttr::get(type));
                }));
    return success();
  }
};

struct LowerTranscode : OpRewritePattern<TranscodeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TranscodeOp op,
                                PatternRewriter &rewriter) const override {
    auto input = op.getInput().getDefiningOp<FromBytesOp>();
    if (!input)
      return failure();
    Location loc = op.getLoc();
    QTensorType from = op.getInput().getType(), to = op.getResult().getType();
    Value values = flatBuffer(rewriter, loc, input.getValues());
    Value scales = flatBuffer(rewriter, loc, input.getScales());
    Value result = allocateAndFillQTensor(
        rewriter, loc, to, /*globalScale=*/Value(),
        [&](Value outValues, Value outScales) {
          TranscodeStorageOp::create(
              rewriter, loc, values, scales, outValues, outScales,
              TypeAttr::get(from), TypeAttr::get(to),
              TranscodeVariantAttr::get(getContext(), op.getVariant()),
              ExponentBumpAttr::get(getContext(), op.getExponentBump()));
        });
    rewriter.replaceOp(op, {result, input.getGlobalScale()});
    return success();
  }
};

struct LowerScaledMatmul : OpRewritePattern<ScaledMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto rhs = op.getRhs().getDefiningOp<FromBytesOp>();
    if (!rhs)
      return failure();
    Location loc = op.getLoc();
    if (isa<RankedTensorType>(op.getLhs().getType()))
      return lowerMixed(op, rhs, rewriter);
    auto lhs = op.getLhs().getDefiningOp<FromBytesOp>();
    if (!lhs)
      return failure();
    Value lhsValues = flatBuffer(rewriter, loc, lhs.getValues());
    Value lhsScales = flatBuffer(rewriter, loc, lhs.getScales());
    Value rhsValues = flatBuffer(rewriter, loc, rhs.getValues());
    Value rhsScales = flatBuffer(rewriter, loc, rhs.getScales());
    Value lhsGlobal = globalScaleOrOne(rewriter, loc, lhs);
    Value rhsGlobal = globalScaleOrOne(rewriter, loc, rhs);
    RankedTensorType result = op.getType();
    Value tensor = allocateAndFill(
        rewriter, loc, result.getShape(), result.getElementType(),
        [&](Value out) {
          ScaledMatmulStorageOp::create(
              rewriter, loc, lhsValues, lhsScales, lhsGlobal, rhsValues,
              rhsScales, rhsGlobal, out, TypeAttr::get(op.getLhs().getType()),
              TypeAttr::get(op.getRhs().getType()), op.getVariantAttr(),
              op.getExponentBumpAttr());
        });
    rewriter.replaceOp(op, tensor);
    return success();
  }

  /// Float activations: the [M, K] buffer as it is, the result [M, N].
  static LogicalResult lowerMixed(ScaledMatmulOp op, FromBytesOp rhs,
                                  PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    // A tensor operand as a read-only buffer of its shape (none: none).
    auto buffer = [&](Value tensor) -> Value {
      if (!tensor)
        return Value();
      auto type = cast<RankedTensorType>(tensor.getType());
      return bufferization::ToBufferOp::create(
          rewriter, loc,
          MemRefType::get(type.getShape(), type.getElementType()), tensor,
          /*read_only=*/true);
    };
    Value lhs = buffer(op.getLhs());
    Value rhsValues = flatBuffer(rewriter, loc, rhs.getValues());
    Value rhsScales = flatBuffer(rewriter, loc, rhs.getScales());
    Value rhsGlobal = globalScaleOrOne(rewriter, loc, rhs);
    RankedTensorType result = op.getType();
    auto outType = MemRefType::get(result.getShape(), result.getElementType());
    Value out = memref::AllocOp::create(rewriter, loc, outType);
    Value offsets = buffer(op.getExpertOffsets()),
          counts = buffer(op.getExpertCounts()),
          gather = buffer(op.getGatherIndices()),
          scatter = buffer(op.getScatterIndices());
    // The ragged forms may leave rows of the result unwritten (rows in no
    // expert slice, or skipped for an index out of range): those are zero.
    if (offsets || gather || scatter) {
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(result.getElementType()));
      auto c = [&](int64_t v) {
        return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
      };
      scf::ParallelOp::create(
          rewriter, loc, ValueRange{c(0), c(0)},
          ValueRange{c(result.getShape()[0]), c(result.getShape()[1])},
          ValueRange{c(1), c(1)},
          [&](OpBuilder &b, Location l, ValueRange ivs) {
            memref::StoreOp::create(b, l, zero, out, ivs);
          });
    }
    MixedMatmulStorageOp::create(rewriter, loc, lhs, rhsValues, rhsScales,
                                 rhsGlobal, out, offsets, counts, gather,
                                 scatter, TypeAttr::get(op.getRhs().getType()));
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, loc, result, out,
                               /*restrict=*/true, /*writable=*/true));
    return success();
  }
};

struct LowerToStoragePass
    : public mlir::microscale::impl::MicroscaleLowerToStorageBase<
          LowerToStoragePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerConvertLayout, LowerDequantize, LowerQuantize,
                 LowerTranscode, LowerScaledMatmul>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left cannot be lowered yet: say so at each op.
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (isa<ConvertLayoutOp, DequantizeOp, QuantizeOp, TranscodeOp,
              ScaledMatmulOp>(op)) {
        op->emitOpError()
            << "cannot be lowered to byte buffers: "
            << (isa<QuantizeOp>(op)
                    ? "an NVFP4 quantize needs an explicit global scale "
                      "operand (the amax-based default is not lowered yet)"
                    : isa<ScaledMatmulOp>(op)
                          ? "its quantized operands do not both come from "
                            "from_bytes"
                          : "its quantized operand does not come from "
                            "from_bytes");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
