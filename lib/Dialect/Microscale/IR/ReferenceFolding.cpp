//===- ReferenceFolding.cpp - Fold constants through the C++ reference ----===//
//
// Small constant inputs of quantize, dequantize and convert_layout fold into
// constants computed by the plain C++ reference library, which is the oracle
// for every lowering. The patterns also fuse a layout conversion into the
// quantize that produces its input.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Reference/Transcode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;


namespace {
/// A quantized tensor whose bytes are all known.
struct ConstantQTensor {
  std::vector<uint8_t> values;
  std::vector<uint8_t> scales;
  float globalScale = 1.0f;
};
} // namespace

static std::optional<std::vector<uint8_t>> getConstantBytes(Value value) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  std::vector<uint8_t> bytes;
  bytes.reserve(attr.getNumElements());
  for (const APInt &byte : attr.getValues<APInt>())
    bytes.push_back(static_cast<uint8_t>(byte.getZExtValue()));
  return bytes;
}

/// Reads the bytes of a qtensor produced by from_bytes of constants.
static std::optional<ConstantQTensor> getConstantQTensor(Value value,
                                                        int64_t maxElements) {
  auto fromBytes = value.getDefiningOp<FromBytesOp>();
  if (!fromBytes || fromBytes.getType().getNumElements() > maxElements)
    return std::nullopt;
  ConstantQTensor result;
  auto values = getConstantBytes(fromBytes.getValues());
  auto scales = getConstantBytes(fromBytes.getScales());
  if (!values || !scales)
    return std::nullopt;
  result.values = std::move(*values);
  result.scales = std::move(*scales);
  if (Value global = fromBytes.getGlobalScale()) {
    FloatAttr attr;
    if (!matchPattern(global, m_Constant(&attr)))
      return std::nullopt;
    result.globalScale = static_cast<float>(attr.getValueAsDouble());
  }
  return result;
}

static Value makeByteConstant(PatternRewriter &rewriter, Location loc,
                              ArrayRef<int64_t> shape,
                              const std::vector<uint8_t> &bytes) {
  auto type = RankedTensorType::get(shape, rewriter.getI8Type());
  SmallVector<int8_t> data(bytes.begin(), bytes.end());
  return arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(type, ArrayRef<int8_t>(data)));
}

/// Builds from_bytes(constants) for `type` from unpacked codes.
static Value materialize(PatternRewriter &rewriter, Location loc,
                         QTensorType type, const std::vector<uint8_t> &codes,
                         const std::vector<uint8_t> &scaleCodes,
                         float globalScale) {
  auto valueLayout = type.buildValueReference();
  auto scaleLayout = type.buildScaleReference();
  std::vector<uint8_t> values(valueLayout->getStorageBytes());
  std::vector<uint8_t> scales(scaleLayout->getStorageBytes());
  valueLayout->store(codes.data(), values.data());
  scaleLayout->store(scaleCodes.data(), scales.data());
  Value valueBytes =
      makeByteConstant(rewriter, loc, type.getValueStorageShape(), values);
  Value scaleBytes =
      makeByteConstant(rewriter, loc, type.getScaleStorageShape(), scales);
  Value global;
  if (type.getFormat().getGlobalScale())
    global = arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(globalScale));
  return FromBytesOp::create(rewriter, loc, type, valueBytes, scaleBytes,
                             global);
}

static std::vector<int64_t> toStd(ArrayRef<int64_t> shape) {
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// The unpacked reference form of a constant quantized tensor of `type`.
static ref::QuantizedTensor unpackConstant(QTensorType type,
                                           const ConstantQTensor &input) {
  ref::QuantizedTensor tensor;
  tensor.format = type.getFormat().getReferenceFormat();
  tensor.shape = toStd(type.getShape());
  tensor.axis = type.getAxis();
  tensor.scaleShape = toStd(type.getScaleShape());
  tensor.elements.resize(type.getNumElements());
  tensor.scales.resize(ShapedType::getNumElements(type.getScaleShape()));
  tensor.globalScale = input.globalScale;
  type.buildValueReference()->load(input.values.data(),
                                   tensor.elements.data());
  type.buildScaleReference()->load(input.scales.data(), tensor.scales.data());
  return tensor;
}

namespace {
/// quantize(constant) -> from_bytes(constant, constant[, constant]).
struct FoldConstantQuantize : OpRewritePattern<QuantizeOp> {
  FoldConstantQuantize(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}
  int64_t maxElements;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    QTensorType type = op.getType();
    DenseFPElementsAttr input;
    if (type.getNumElements() > maxElements ||
        !matchPattern(op.getInput(), m_Constant(&input)))
      return failure();
    std::optional<float> globalScale;
    if (Value global = op.getGlobalScale()) {
      FloatAttr attr;
      if (!matchPattern(global, m_Constant(&attr)))
        return failure();
      globalScale = static_cast<float>(attr.getValueAsDouble());
    }
    std::vector<float> data;
    data.reserve(input.getNumElements());
    for (APFloat value : input.getValues<APFloat>())
      data.push_back(static_cast<float>(
          value.convertToDouble())); // exact from f32, f16 and bf16
    ref::QuantizedTensor quantized =
        ref::quantize(type.getFormat().getReferenceFormat(),
                      toStd(type.getShape()), type.getAxis(), data.data(),
                      globalScale);
    rewriter.replaceOp(op, materialize(rewriter, op.getLoc(), type,
                                       quantized.elements, quantized.scales,
                                       quantized.globalScale));
    return success();
  }
};

/// dequantize(from_bytes(constants)) -> constant.
struct FoldConstantDequantize : OpRewritePattern<DequantizeOp> {
  FoldConstantDequantize(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}
  int64_t maxElements;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConstantQTensor> input = getConstantQTensor(op.getInput(), maxElements);
    if (!input)
      return failure();
    ref::QuantizedTensor tensor =
        unpackConstant(op.getInput().getType(), *input);
    std::vector<float> values = ref::dequantize(
        tensor, toReference(op.getE8m0Edges()));
    RankedTensorType resultType = op.getType();
    const llvm::fltSemantics &semantics =
        cast<FloatType>(resultType.getElementType()).getFloatSemantics();
    SmallVector<APFloat> converted;
    converted.reserve(values.size());
    for (float value : values) {
      APFloat element(value);
      bool losesInfo = false;
      element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      converted.push_back(element);
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(resultType, converted));
    return success();
  }
};

/// convert_layout(from_bytes(constants)) -> from_bytes(new constants).
struct FoldConstantConvertLayout : OpRewritePattern<ConvertLayoutOp> {
  FoldConstantConvertLayout(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}
  int64_t maxElements;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConstantQTensor> input = getConstantQTensor(op.getInput(), maxElements);
    if (!input)
      return failure();
    QTensorType from = op.getInput().getType();
    std::vector<uint8_t> codes(from.getNumElements());
    std::vector<uint8_t> scaleCodes(
        ShapedType::getNumElements(from.getScaleShape()));
    from.buildValueReference()->load(input->values.data(), codes.data());
    from.buildScaleReference()->load(input->scales.data(), scaleCodes.data());
    rewriter.replaceOp(op, materialize(rewriter, op.getLoc(), op.getType(),
                                       codes, scaleCodes, input->globalScale));
    return success();
  }
};

/// transcode(from_bytes(constants)) -> from_bytes(new constants), with the
/// global scale a constant.
struct FoldConstantTranscode : OpRewritePattern<TranscodeOp> {
  FoldConstantTranscode(MLIRContext *context, int64_t maxElements)
      : OpRewritePattern(context), maxElements(maxElements) {}
  int64_t maxElements;
  LogicalResult matchAndRewrite(TranscodeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConstantQTensor> input =
        getConstantQTensor(op.getInput(), maxElements);
    if (!input)
      return failure();
    ref::QuantizedTensor source =
        unpackConstant(op.getInput().getType(), *input);
    ref::TranscodedTensor result;
    std::string error =
        ref::transcode(source, toReference(op.getVariant()),
                       toReference(op.getExponentBump()), result);
    if (!error.empty())
      return rewriter.notifyMatchFailure(op, error);
    Value transcoded =
        materialize(rewriter, op.getLoc(), op.getResult().getType(),
                    result.mx.elements, result.mx.scales, 1.0f);
    Value global = arith::ConstantOp::create(
        rewriter, op.getLoc(), rewriter.getF32FloatAttr(result.globalScale));
    rewriter.replaceOp(op, {transcoded, global});
    return success();
  }
};

/// convert_layout(quantize(x)) -> quantize(x) into the destination layouts,
/// when the quantize has no other use.
struct FuseConvertIntoQuantize : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    auto quantize = op.getInput().getDefiningOp<QuantizeOp>();
    if (!quantize || !quantize->hasOneUse())
      return failure();
    rewriter.replaceOpWithNewOp<QuantizeOp>(op, op.getType(),
                                            quantize.getInput(),
                                            quantize.getGlobalScale());
    rewriter.eraseOp(quantize);
    return success();
  }
};
} // namespace

void mlir::microscale::populateReferenceFoldingPatterns(
    RewritePatternSet &patterns, int64_t maxElements) {
  MLIRContext *context = patterns.getContext();
  patterns.add<FoldConstantQuantize, FoldConstantDequantize,
               FoldConstantConvertLayout, FoldConstantTranscode>(context,
                                                                 maxElements);
}

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldConstantQuantize>(context, kCanonicalizerFoldLimit);
}

void DequantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<FoldConstantDequantize>(context, kCanonicalizerFoldLimit);
}

void ConvertLayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<FoldConstantConvertLayout>(context, kCanonicalizerFoldLimit);
  results.add<FuseConvertIntoQuantize>(context);
}

void TranscodeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldConstantTranscode>(context, kCanonicalizerFoldLimit);
}
