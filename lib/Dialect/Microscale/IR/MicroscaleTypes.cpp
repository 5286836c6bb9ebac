//===- MicroscaleTypes.cpp - Quantized tensor type ------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

#define GET_TYPEDEF_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleTypes.cpp.inc"

void MicroscaleDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "microscale/Dialect/Microscale/IR/MicroscaleTypes.cpp.inc"
      >();
}

static SmallVector<int64_t> scaleShapeOf(ArrayRef<int64_t> shape, int64_t axis,
                                         unsigned blockSize) {
  SmallVector<int64_t> scaleShape(shape);
  scaleShape[axis] = shape[axis] / blockSize;
  return scaleShape;
}

static bool isDefaultLayout(LayoutAttrInterface layout) {
  auto strided = dyn_cast<StridedAttr>(layout);
  return strided && strided.getMajorDim() == -1;
}

LogicalResult QTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> shape, FormatAttr format,
                                  int64_t axis, LayoutAttrInterface valueLayout,
                                  LayoutAttrInterface scaleLayout) {
  const int64_t rank = shape.size();
  if (rank == 0)
    return emitError() << "quantized tensor must have rank >= 1";
  for (auto [dim, extent] : llvm::enumerate(shape))
    if (extent < 0)
      return emitError() << "dimension " << dim
                         << " must have a static, non-negative size, got "
                         << (ShapedType::isDynamic(extent)
                                 ? std::string("?")
                                 : std::to_string(extent));
  if (!format)
    return emitError() << "quantized tensor needs a format";
  // Storage sizes (with padding) are computed in int64: keep every tensor
  // far from overflowing it (2^48 elements is 256 TiB of FP8).
  constexpr int64_t kMaxElements = int64_t(1) << 48;
  // The product of the non-zero extents: an empty tensor's strides are
  // still products of the other extents.
  int64_t elements = 1;
  for (int64_t extent : shape) {
    if (extent == 0)
      continue;
    if (elements > kMaxElements / extent)
      return emitError() << "quantized tensor is too large: more than 2^48 "
                            "elements (counting the non-zero extents)";
    elements *= extent;
  }
  if (axis < 0 || axis >= rank)
    return emitError() << "block axis " << axis << " is out of range for rank "
                       << rank;
  const unsigned blockSize = format.getBlockSize();
  if (shape[axis] % blockSize != 0)
    return emitError() << "block size " << blockSize
                       << " does not divide the extent " << shape[axis]
                       << " of block axis " << axis;
  if (!valueLayout || !scaleLayout)
    return emitError() << "quantized tensor needs a value and a scale layout";
  if (!valueLayout.supportsRole(StoragePart::values))
    return emitError() << "layout " << Attribute(valueLayout)
                       << " cannot hold element values (it is a scale layout)";
  if (!scaleLayout.supportsRole(StoragePart::scales))
    return emitError() << "layout " << Attribute(scaleLayout)
                       << " cannot hold scales (it is an element-value layout)";
  for (auto [layout, what] : {std::pair(valueLayout, "value"),
                              std::pair(scaleLayout, "scale")}) {
    if (std::optional<int64_t> required = layout.getRequiredBlockAxis(rank))
      if (*required != axis)
        return emitError() << what << " layout " << Attribute(layout)
                           << " requires block axis " << *required
                           << " but the tensor is blocked along axis " << axis;
  }
  std::string error;
  if (!valueLayout.buildReference(shape, format.getElementBits(), &error))
    return emitError() << "value layout " << Attribute(valueLayout)
                       << " does not fit logical shape "
                       << llvm::interleaved_array(shape) << ": " << error;
  SmallVector<int64_t> scaleShape = scaleShapeOf(shape, axis, blockSize);
  if (!scaleLayout.buildReference(scaleShape, 8, &error))
    return emitError() << "scale layout " << Attribute(scaleLayout)
                       << " does not fit scale shape "
                       << llvm::interleaved_array(scaleShape) << ": " << error;
  return success();
}

Type QTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false) ||
      parser.parseComma())
    return {};
  // The format is spelled as the body of #microscale.format<...>.
  bool consumedComma;
  FormatAttr format = FormatAttr::parseBody(parser, consumedComma);
  if (!format)
    return {};
  int64_t axis = 0;
  if ((!consumedComma && parser.parseComma()) || parser.parseKeyword("axis") ||
      parser.parseEqual() || parser.parseInteger(axis))
    return {};
  // Accept Triton-style negative axes; store them normalized.
  if (axis < 0)
    axis += static_cast<int64_t>(shape.size());
  MLIRContext *context = parser.getContext();
  LayoutAttrInterface layouts[2] = {StridedAttr::get(context, -1),
                                    StridedAttr::get(context, -1)};
  bool seen[2] = {false, false};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return {};
    int which = key == "values" ? 0 : key == "scales" ? 1 : -1;
    if (which < 0) {
      parser.emitError(keyLoc)
          << "expected 'values' or 'scales', got '" << key << "'";
      return {};
    }
    if (seen[which]) {
      parser.emitError(keyLoc) << "'" << key << "' is given twice";
      return {};
    }
    seen[which] = true;
    Attribute attr;
    SMLoc attrLoc = parser.getCurrentLocation();
    if (parser.parseEqual() || parser.parseAttribute(attr))
      return {};
    layouts[which] = dyn_cast<LayoutAttrInterface>(attr);
    if (!layouts[which]) {
      parser.emitError(attrLoc)
          << "expected a microscale layout attribute, got " << attr;
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return QTensorType::getChecked([&] { return parser.emitError(loc); },
                                 context, shape, format, axis, layouts[0],
                                 layouts[1]);
}

void QTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << ", ";
  getFormat().printBody(printer);
  printer << ", axis = " << getAxis();
  if (!isDefaultLayout(getValueLayout()))
    printer << ", values = " << Attribute(getValueLayout());
  if (!isDefaultLayout(getScaleLayout()))
    printer << ", scales = " << Attribute(getScaleLayout());
  printer << ">";
}

int64_t QTensorType::getNumElements() const {
  return ShapedType::getNumElements(getShape());
}

SmallVector<int64_t> QTensorType::getScaleShape() const {
  return scaleShapeOf(getShape(), getAxis(), getFormat().getBlockSize());
}

std::unique_ptr<ref::Layout> QTensorType::buildValueReference() const {
  std::string error;
  auto layout = getValueLayout().buildReference(
      getShape(), getFormat().getElementBits(), &error);
  assert(layout && "verified type has a valid value layout");
  return layout;
}

std::unique_ptr<ref::Layout> QTensorType::buildScaleReference() const {
  std::string error;
  auto layout = getScaleLayout().buildReference(getScaleShape(), 8, &error);
  assert(layout && "verified type has a valid scale layout");
  return layout;
}

SmallVector<int64_t> QTensorType::getValueStorageShape() const {
  std::vector<int64_t> shape = buildValueReference()->getStorageShape();
  return SmallVector<int64_t>(shape.begin(), shape.end());
}

SmallVector<int64_t> QTensorType::getScaleStorageShape() const {
  std::vector<int64_t> shape = buildScaleReference()->getStorageShape();
  return SmallVector<int64_t>(shape.begin(), shape.end());
}

QTensorType QTensorType::withLayouts(LayoutAttrInterface values,
                                     LayoutAttrInterface scales) const {
  return QTensorType::get(getContext(), getShape(), getFormat(), getAxis(),
                          values, scales);
}
