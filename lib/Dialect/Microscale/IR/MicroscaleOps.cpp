//===- MicroscaleOps.cpp - Verifiers and folders --------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::microscale;

#define GET_OP_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleOps.cpp.inc"

/// Checks that a byte tensor has the storage shape of `layout`.
static LogicalResult verifyStorageShape(Operation *op, StringRef what,
                                        RankedTensorType bytes,
                                        ArrayRef<int64_t> expected,
                                        Attribute layout,
                                        ArrayRef<int64_t> logicalShape) {
  if (bytes.getShape() == expected)
    return success();
  return op->emitOpError()
         << what << " must have the storage shape "
         << llvm::interleaved_array(expected) << " of layout " << layout
         << " for logical shape " << llvm::interleaved_array(logicalShape)
         << ", got " << Type(bytes);
}

/// The checks shared by from_bytes and to_bytes.
static LogicalResult verifyBytes(Operation *op, QTensorType type,
                                 RankedTensorType values,
                                 RankedTensorType scales, bool hasGlobalScale,
                                 StringRef side) {
  if (failed(verifyStorageShape(op, side.str() + " values", values,
                                type.getValueStorageShape(),
                                type.getValueLayout(), type.getShape())) ||
      failed(verifyStorageShape(op, side.str() + " scales", scales,
                                type.getScaleStorageShape(),
                                type.getScaleLayout(), type.getScaleShape())))
    return failure();
  FormatAttr format = type.getFormat();
  if (format.getGlobalScale() && !hasGlobalScale)
    return op->emitOpError() << "format " << Attribute(format)
                             << " has a global scale: the f32 global scale "
                             << side << " is missing";
  if (!format.getGlobalScale() && hasGlobalScale)
    return op->emitOpError() << "format " << Attribute(format)
                             << " has no global scale, but an f32 global "
                                "scale "
                             << side << " is present";
  return success();
}

LogicalResult FromBytesOp::verify() {
  return verifyBytes(*this, getType(), getValues().getType(),
                     getScales().getType(), getGlobalScale() != nullptr,
                     "operand");
}

LogicalResult ToBytesOp::verify() {
  return verifyBytes(*this, getInput().getType(), getValues().getType(),
                     getScales().getType(), getGlobalScale() != nullptr,
                     "result");
}

LogicalResult QuantizeOp::verify() {
  QTensorType type = getType();
  if (getInput().getType().getShape() != type.getShape())
    return emitOpError() << "input shape "
                         << llvm::interleaved_array(
                                getInput().getType().getShape())
                         << " does not match the logical shape "
                         << llvm::interleaved_array(type.getShape())
                         << " of the result";
  if (getGlobalScale() && !type.getFormat().getGlobalScale())
    return emitOpError() << "a global scale operand is given, but format "
                         << Attribute(type.getFormat())
                         << " has no global scale";
  return success();
}

LogicalResult DequantizeOp::verify() {
  QTensorType type = getInput().getType();
  if (getType().getShape() != type.getShape())
    return emitOpError() << "result shape "
                         << llvm::interleaved_array(getType().getShape())
                         << " does not match the logical shape "
                         << llvm::interleaved_array(type.getShape())
                         << " of the input";
  if (getE8m0Edges() == E8M0Edges::zero_inf &&
      !isa<Float8E8M0FNUType>(type.getFormat().getScaleType()))
    return emitOpError() << "e8m0_edges = zero_inf applies to E8M0 scales, "
                            "but format "
                         << Attribute(type.getFormat()) << " has "
                         << type.getFormat().getScaleType() << " scales";
  return success();
}

/// The format pairs a transcode supports, and what it may not change.
static LogicalResult verifyTranscodeTypes(Operation *op, QTensorType from,
                                          QTensorType to) {
  FormatAttr source = from.getFormat(), dest = to.getFormat();
  if (source.getReferenceFormat() != ::microscale::ref::MXFormat::nvfp4B32() ||
      dest.getReferenceFormat() != ::microscale::ref::MXFormat::mxfp6E2M3())
    return op->emitOpError()
           << "unsupported transcode from " << Attribute(source) << " to "
           << Attribute(dest) << ": supported is nvfp4_b32 to mxfp6_e2m3";
  if (from.getShape() != to.getShape())
    return op->emitOpError()
           << "cannot change the logical shape: "
           << llvm::interleaved_array(from.getShape()) << " vs "
           << llvm::interleaved_array(to.getShape());
  if (from.getAxis() != to.getAxis())
    return op->emitOpError() << "cannot change the block axis: "
                             << from.getAxis() << " vs " << to.getAxis();
  return success();
}

LogicalResult TranscodeOp::verify() {
  return verifyTranscodeTypes(*this, getInput().getType(),
                              getResult().getType());
}

/// What a matrix product of two quantized operands needs: [M, K] blocked
/// along K times [K, N] blocked along K, and a transcode variant only where
/// an operand can be transcoded.
static LogicalResult
verifyScaledMatmulTypes(Operation *op, QTensorType lhs, QTensorType rhs,
                        std::optional<TranscodeVariant> variant) {
  if (lhs.getRank() != 2 || rhs.getRank() != 2)
    return op->emitOpError() << "expects rank-2 operands, got ranks "
                             << lhs.getRank() << " and " << rhs.getRank();
  if (lhs.getAxis() != 1)
    return op->emitOpError()
           << "expects lhs blocked along K (axis 1), got axis "
           << lhs.getAxis();
  if (rhs.getAxis() != 0)
    return op->emitOpError()
           << "expects rhs blocked along K (axis 0), got axis "
           << rhs.getAxis();
  if (lhs.getShape()[1] != rhs.getShape()[0])
    return op->emitOpError() << "contraction extents differ: lhs K = "
                             << lhs.getShape()[1]
                             << ", rhs K = " << rhs.getShape()[0];
  if (variant && lhs.getFormat().getReferenceFormat() != ::microscale::ref::MXFormat::nvfp4B32() &&
      rhs.getFormat().getReferenceFormat() != ::microscale::ref::MXFormat::nvfp4B32())
    return op->emitOpError()
           << "has a transcode variant but no nvfp4_b32 operand to transcode";
  return success();
}

/// A float activation [M, K] times a quantized weight [K, N] or experts'
/// weights [E, K, N] (blocked along K).
static LogicalResult verifyMixedMatmulTypes(Operation *op,
                                            ArrayRef<int64_t> lhsShape,
                                            QTensorType rhs) {
  if (lhsShape.size() != 2 || (rhs.getRank() != 2 && rhs.getRank() != 3))
    return op->emitOpError()
           << "expects a rank-2 lhs and a rank-2 (or rank-3: experts) rhs, "
              "got ranks "
           << lhsShape.size() << " and " << rhs.getRank();
  const int64_t kDim = rhs.getRank() - 2;
  if (rhs.getAxis() != kDim)
    return op->emitOpError() << "expects rhs blocked along K (axis " << kDim
                             << "), got axis " << rhs.getAxis();
  if (lhsShape[1] != rhs.getShape()[kDim])
    return op->emitOpError() << "contraction extents differ: lhs K = "
                             << lhsShape[1] << ", rhs K = "
                             << rhs.getShape()[kDim];
  return success();
}

/// The ragged (mixture-of-experts) operands of a mixed matmul: expert
/// slices for an [E, K, N] weight, and the row gather and scatter. With
/// `dynamicRows` (the buffer form), the row counts (lhs and out rows, the
/// gather's and scatter's lengths) may be dynamic: what relates them is
/// checked where both are static, and is the caller's contract otherwise.
static LogicalResult verifyRaggedOperands(Operation *op, QTensorType rhs,
                                          int64_t lhsRows, int64_t outRows,
                                          Value offsets, Value counts,
                                          Value gather, Value scatter,
                                          bool dynamicRows = false) {
  auto length = [](Value v) {
    return cast<ShapedType>(v.getType()).getShape()[0];
  };
  for (Value v : {offsets, counts, gather, scatter})
    if (v && ShapedType::isDynamic(length(v)) &&
        (!dynamicRows || v == offsets || v == counts))
      return op->emitOpError()
             << (dynamicRows ? "expects static shapes of the expert "
                               "operands (one entry per expert), got "
                             : "expects static shapes of the expert and row "
                               "index operands, got ")
             << v.getType();
  auto differ = [](int64_t a, int64_t b) {
    return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
  };
  const bool experts = rhs.getRank() == 3;
  if (experts && !offsets)
    return op->emitOpError() << "an [E, K, N] weight needs "
                                "experts(offsets, counts)";
  if (!experts && offsets)
    return op->emitOpError()
           << "experts(offsets, counts) need an [E, K, N] weight, got rank "
           << rhs.getRank();
  if (experts) {
    const int64_t e = rhs.getShape()[0];
    for (auto [name, v] : {std::pair<StringRef, Value>{"offsets", offsets},
                           {"counts", counts}})
      if (length(v) != e)
        return op->emitOpError()
               << "expert " << name << " must have one entry per expert ("
               << e << "), got " << length(v);
  }
  if (gather && scatter && differ(length(gather), length(scatter)))
    return op->emitOpError() << "gather and scatter must index the same "
                                "ragged rows, got "
                             << length(gather) << " and " << length(scatter);
  const int64_t rows = gather    ? length(gather)
                       : scatter ? length(scatter)
                                 : lhsRows;
  if (!gather && differ(lhsRows, rows))
    return op->emitOpError()
           << "without a gather, lhs must have one row per ragged row ("
           << rows << "), got " << lhsRows;
  if (!scatter && differ(outRows, rows))
    return op->emitOpError()
           << "without a scatter, the result must have one row per ragged "
              "row ("
           << rows << "), got " << outRows;
  return success();
}

LogicalResult ScaledMatmulOp::verify() {
  QTensorType rhs = getRhs().getType();
  SmallVector<int64_t> lhsShape;
  if (auto lhs = dyn_cast<QTensorType>(getLhs().getType())) {
    if (failed(verifyScaledMatmulTypes(*this, lhs, rhs, getVariant())))
      return failure();
    lhsShape.assign(lhs.getShape().begin(), lhs.getShape().end());
  } else {
    auto floats = cast<RankedTensorType>(getLhs().getType());
    if (failed(verifyMixedMatmulTypes(*this, floats.getShape(), rhs)))
      return failure();
    // The transcode exists to feed an MX matrix core, which needs both
    // operands block-scaled.
    if (getVariant())
      return emitOpError() << "a transcode variant needs a quantized lhs "
                              "(w4a6_tc, w4a4_tc); this lhs is "
                           << Type(floats);
    lhsShape.assign(floats.getShape().begin(), floats.getShape().end());
  }
  const bool ragged = getExpertOffsets() || getGatherIndices() ||
                      getScatterIndices() || rhs.getRank() == 3;
  if (ragged) {
    if (isa<QTensorType>(getLhs().getType()))
      return emitOpError() << "experts, gather and scatter need float "
                              "activations (lhs), got "
                           << getLhs().getType();
    if (getType().getRank() != 2 ||
        getType().getShape()[1] != rhs.getShape().back())
      return emitOpError() << "result must be [rows, N] with N = "
                           << rhs.getShape().back() << ", got "
                           << Type(getType());
    return verifyRaggedOperands(*this, rhs, lhsShape[0], getType().getShape()[0],
                                getExpertOffsets(), getExpertCounts(),
                                getGatherIndices(), getScatterIndices());
  }
  SmallVector<int64_t> expected = {lhsShape[0], rhs.getShape()[1]};
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be [M, N] = "
                         << llvm::interleaved_array(expected) << ", got "
                         << llvm::interleaved_array(getType().getShape());
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  QTensorType from = getInput().getType(), to = getType();
  if (from.getShape() != to.getShape())
    return emitOpError() << "cannot change the logical shape: "
                         << llvm::interleaved_array(from.getShape()) << " vs "
                         << llvm::interleaved_array(to.getShape());
  if (from.getFormat() != to.getFormat())
    return emitOpError() << "cannot change the format: "
                         << Attribute(from.getFormat()) << " vs "
                         << Attribute(to.getFormat())
                         << " (use a transcode, not a layout conversion)";
  if (from.getAxis() != to.getAxis())
    return emitOpError() << "cannot change the block axis: " << from.getAxis()
                         << " vs " << to.getAxis();
  return success();
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult FromBytesOp::fold(FoldAdaptor) {
  // from_bytes(to_bytes(%q)) -> %q
  auto toBytes = getValues().getDefiningOp<ToBytesOp>();
  if (!toBytes || getScales().getDefiningOp() != toBytes ||
      toBytes.getInput().getType() != getType() ||
      getValues() != toBytes.getValues() || getScales() != toBytes.getScales() ||
      getGlobalScale() != toBytes.getGlobalScale())
    return {};
  return toBytes.getInput();
}

LogicalResult ToBytesOp::fold(FoldAdaptor,
                              SmallVectorImpl<OpFoldResult> &results) {
  // to_bytes(from_bytes(%v, %s[, %g])) -> %v, %s[, %g]
  auto fromBytes = getInput().getDefiningOp<FromBytesOp>();
  if (!fromBytes)
    return failure();
  results.push_back(fromBytes.getValues());
  results.push_back(fromBytes.getScales());
  if (Value global = fromBytes.getGlobalScale())
    results.push_back(global);
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  // A -> A is the identity.
  if (getInput().getType() == getType())
    return getInput();
  if (auto previous = getInput().getDefiningOp<ConvertLayoutOp>()) {
    // A -> B -> A cancels.
    if (previous.getInput().getType() == getType())
      return previous.getInput();
    // A -> B -> C is A -> C.
    getInputMutable().assign(previous.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// convert_storage
//===----------------------------------------------------------------------===//

SmallVector<int64_t> ConvertStorageOp::getPartShape() {
  QTensorType type = getFromType();
  return getPart() == StoragePart::values
             ? SmallVector<int64_t>(type.getShape())
             : type.getScaleShape();
}

unsigned ConvertStorageOp::getPartBits() {
  return getPart() == StoragePart::values
             ? getFromType().getFormat().getElementBits()
             : 8;
}

LayoutAttrInterface ConvertStorageOp::getSourceLayout() {
  return getPart() == StoragePart::values ? getFromType().getValueLayout()
                                          : getFromType().getScaleLayout();
}

LayoutAttrInterface ConvertStorageOp::getDestLayout() {
  return getPart() == StoragePart::values ? getToType().getValueLayout()
                                          : getToType().getScaleLayout();
}

/// A 1-D buffer holds `count` elements (or its size is dynamic).
static LogicalResult verifyBufferSize(Operation *op, Value buffer,
                                      int64_t count, StringRef what,
                                      StringRef unit) {
  auto memref = cast<MemRefType>(buffer.getType());
  if (memref.isDynamicDim(0) || memref.getDimSize(0) == count)
    return success();
  return op->emitOpError() << what << " must hold the " << count << " "
                           << unit << ", got " << Type(memref);
}

/// A byte buffer must hold exactly the storage bytes of its layout.
static LogicalResult verifyStorageBuffer(Operation *op, Value buffer,
                                         ArrayRef<int64_t> storageShape,
                                         StringRef what) {
  return verifyBufferSize(op, buffer, ShapedType::getNumElements(storageShape),
                          what, "storage bytes of its layout");
}

LogicalResult ConvertStorageOp::verify() {
  QTensorType from = getFromType(), to = getToType();
  if (from.getShape() != to.getShape() || from.getFormat() != to.getFormat() ||
      from.getAxis() != to.getAxis())
    return emitOpError() << "'from' and 'to' must be the same logical tensor "
                            "(shape, format, block axis), got "
                         << Type(from) << " and " << Type(to);
  if (!getUnitRange().empty() && getUnitRange().size() != 2)
    return emitOpError() << "expects a unit range of two bounds, got "
                         << getUnitRange().size();
  auto storageShape = [&](QTensorType type) {
    return getPart() == StoragePart::values ? type.getValueStorageShape()
                                            : type.getScaleStorageShape();
  };
  Operation *op = *this;
  return failure(
      failed(verifyStorageBuffer(op, getSource(), storageShape(from),
                                 "source")) ||
      failed(verifyStorageBuffer(op, getDest(), storageShape(to), "dest")));
}

//===----------------------------------------------------------------------===//
// dequantize_storage / quantize_storage
//===----------------------------------------------------------------------===//

/// The global-scale operand is there exactly when the format has one.
static LogicalResult verifyGlobalScale(Operation *op, FormatAttr format,
                                       Value globalScale) {
  if (format.getGlobalScale() == (globalScale != nullptr))
    return success();
  return op->emitOpError() << "format " << Attribute(format)
                           << (format.getGlobalScale()
                                   ? " needs its f32 global scale"
                                   : " has no global scale");
}

LogicalResult DequantizeStorageOp::verify() {
  QTensorType type = getQTensorType();
  Operation *op = *this;
  if (failed(verifyStorageBuffer(op, getValues(), type.getValueStorageShape(),
                                 "values")) ||
      failed(verifyStorageBuffer(op, getScales(), type.getScaleStorageShape(),
                                 "scales")) ||
      failed(verifyBufferSize(op, getOut(), type.getNumElements(), "out",
                              "logical elements")) ||
      failed(verifyGlobalScale(op, type.getFormat(), getGlobalScale())))
    return failure();
  if (getE8m0Edges() == E8M0Edges::zero_inf &&
      !isa<Float8E8M0FNUType>(type.getFormat().getScaleType()))
    return emitOpError() << "e8m0_edges = zero_inf applies to E8M0 scales";
  return success();
}

//===----------------------------------------------------------------------===//
// quantize_storage
//===----------------------------------------------------------------------===//

LogicalResult QuantizeStorageOp::verify() {
  QTensorType type = getQTensorType();
  Operation *op = *this;
  if (failed(verifyBufferSize(op, getInput(), type.getNumElements(), "input",
                              "logical elements")) ||
      failed(verifyStorageBuffer(op, getValues(), type.getValueStorageShape(),
                                 "values")) ||
      failed(verifyStorageBuffer(op, getScales(), type.getScaleStorageShape(),
                                 "scales")))
    return failure();
  return verifyGlobalScale(op, type.getFormat(), getGlobalScale());
}

//===----------------------------------------------------------------------===//
// transcode_storage
//===----------------------------------------------------------------------===//

LogicalResult TranscodeStorageOp::verify() {
  QTensorType from = getFromType(), to = getToType();
  Operation *op = *this;
  if (failed(verifyTranscodeTypes(op, from, to)) ||
      failed(verifyStorageBuffer(op, getValues(), from.getValueStorageShape(),
                                 "values")) ||
      failed(verifyStorageBuffer(op, getScales(), from.getScaleStorageShape(),
                                 "scales")) ||
      failed(verifyStorageBuffer(op, getOutValues(),
                                 to.getValueStorageShape(), "out_values")) ||
      failed(verifyStorageBuffer(op, getOutScales(),
                                 to.getScaleStorageShape(), "out_scales")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// scaled_matmul_storage
//===----------------------------------------------------------------------===//

LogicalResult ScaledMatmulStorageOp::verify() {
  QTensorType lhs = getLhsType(), rhs = getRhsType();
  Operation *op = *this;
  if (failed(verifyScaledMatmulTypes(op, lhs, rhs, getVariant())) ||
      failed(verifyStorageBuffer(op, getLhsValues(),
                                 lhs.getValueStorageShape(), "lhs values")) ||
      failed(verifyStorageBuffer(op, getLhsScales(),
                                 lhs.getScaleStorageShape(), "lhs scales")) ||
      failed(verifyStorageBuffer(op, getRhsValues(),
                                 rhs.getValueStorageShape(), "rhs values")) ||
      failed(verifyStorageBuffer(op, getRhsScales(),
                                 rhs.getScaleStorageShape(), "rhs scales")))
    return failure();
  // M * N cannot overflow: both are extents of valid (size-checked) types,
  // but their product is not, so compute it with a check.
  int64_t m = lhs.getShape()[0], n = rhs.getShape()[1], elements = 0;
  if (llvm::MulOverflow(m, n, elements))
    return emitOpError() << "result of " << m << " x " << n
                         << " elements overflows int64";
  return verifyBufferSize(op, getOut(), elements, "out", "result elements");
}

//===----------------------------------------------------------------------===//
// mixed_matmul_storage
//===----------------------------------------------------------------------===//

LogicalResult MixedMatmulStorageOp::verify() {
  QTensorType rhs = getRhsType();
  Operation *op = *this;
  auto lhs = cast<MemRefType>(getLhs().getType());
  auto out = cast<MemRefType>(getOut().getType());
  // Rows may be known at run time only (a serving engine's tokens); the
  // extents of the weight (K, N) may not.
  if (ShapedType::isDynamic(lhs.getShape()[1]) ||
      ShapedType::isDynamic(out.getShape()[1]))
    return emitOpError() << "expects static K and N extents (only the rows "
                            "may be dynamic), got "
                         << Type(lhs) << " and " << Type(out);
  if (failed(verifyMixedMatmulTypes(op, lhs.getShape(), rhs)) ||
      failed(verifyStorageBuffer(op, getRhsValues(),
                                 rhs.getValueStorageShape(), "rhs values")) ||
      failed(verifyStorageBuffer(op, getRhsScales(),
                                 rhs.getScaleStorageShape(), "rhs scales")))
    return failure();
  if (out.getShape()[1] != rhs.getShape().back())
    return emitOpError() << "out must be [rows, N] with N = "
                         << rhs.getShape().back() << ", got " << Type(out);
  return verifyRaggedOperands(op, rhs, lhs.getShape()[0], out.getShape()[0],
                              getExpertOffsets(), getExpertCounts(),
                              getGatherIndices(), getScatterIndices(),
                              /*dynamicRows=*/true);
}
