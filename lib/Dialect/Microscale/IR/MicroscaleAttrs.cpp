//===- MicroscaleAttrs.cpp - Formats and layouts --------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

#include "microscale/Dialect/Microscale/IR/MicroscaleEnums.cpp.inc"
#include "microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleAttrs.cpp.inc"

void MicroscaleDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "microscale/Dialect/Microscale/IR/MicroscaleAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// FormatAttr
//===----------------------------------------------------------------------===//

/// The reference scalar format of a builtin float type, if it is one.
static std::optional<ref::ScalarFormat> toScalarFormat(Type type) {
  if (isa<Float4E2M1FNType>(type))
    return ref::ScalarFormat::E2M1;
  if (isa<Float6E2M3FNType>(type))
    return ref::ScalarFormat::E2M3;
  if (isa<Float6E3M2FNType>(type))
    return ref::ScalarFormat::E3M2;
  if (isa<Float8E4M3FNType>(type))
    return ref::ScalarFormat::E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ref::ScalarFormat::E5M2;
  if (isa<Float8E8M0FNUType>(type))
    return ref::ScalarFormat::E8M0;
  return std::nullopt;
}

static Type toBuiltinType(MLIRContext *context, ref::ScalarFormat format) {
  switch (format) {
  case ref::ScalarFormat::E2M1:
    return Float4E2M1FNType::get(context);
  case ref::ScalarFormat::E2M3:
    return Float6E2M3FNType::get(context);
  case ref::ScalarFormat::E3M2:
    return Float6E3M2FNType::get(context);
  case ref::ScalarFormat::E4M3FN:
    return Float8E4M3FNType::get(context);
  case ref::ScalarFormat::E5M2:
    return Float8E5M2Type::get(context);
  case ref::ScalarFormat::E8M0:
    return Float8E8M0FNUType::get(context);
  }
  llvm_unreachable("unknown scalar format");
}

LogicalResult FormatAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type elementType, Type scaleType,
                                 unsigned blockSize, bool globalScale) {
  std::optional<ref::ScalarFormat> element = toScalarFormat(elementType);
  if (!element || *element == ref::ScalarFormat::E8M0)
    return emitError() << "unsupported element type " << elementType
                       << ": expected f4E2M1FN, f6E2M3FN, f6E3M2FN, "
                          "f8E4M3FN or f8E5M2";
  std::optional<ref::ScalarFormat> scale = toScalarFormat(scaleType);
  if (!scale || (*scale != ref::ScalarFormat::E8M0 &&
                 *scale != ref::ScalarFormat::E4M3FN))
    return emitError() << "unsupported scale type " << scaleType
                       << ": expected f8E8M0FNU or f8E4M3FN";
  if (blockSize < 2 || blockSize > 1024 || !llvm::isPowerOf2_32(blockSize))
    return emitError() << "block size must be a power of two in [2, 1024], "
                          "got "
                       << blockSize;
  if (globalScale && *scale != ref::ScalarFormat::E4M3FN)
    return emitError() << "a global scale requires f8E4M3FN block scales, "
                          "got "
                       << scaleType;
  return success();
}

ref::MXFormat FormatAttr::getReferenceFormat() const {
  return {*toScalarFormat(getElementType()), *toScalarFormat(getScaleType()),
          getBlockSize(), getGlobalScale()};
}

unsigned FormatAttr::getElementBits() const {
  return ref::getInfo(*toScalarFormat(getElementType())).bits;
}

StringRef FormatAttr::getShortName() const {
  std::string_view name = ref::formatName(getReferenceFormat());
  return StringRef(name.data(), name.size());
}

FormatAttr FormatAttr::getNamed(MLIRContext *context, StringRef name) {
  std::optional<ref::MXFormat> format = ref::lookupFormat(name.str());
  if (!format)
    return {};
  return FormatAttr::get(context, toBuiltinType(context, format->element),
                         toBuiltinType(context, format->scale),
                         format->blockSize, format->hasGlobalScale);
}

void FormatAttr::printBody(AsmPrinter &printer) const {
  StringRef name = getShortName();
  if (!name.empty()) {
    printer << name;
    return;
  }
  printer << getElementType() << ", " << getScaleType()
          << ", block = " << getBlockSize();
  if (getGlobalScale())
    printer << ", global_scale";
}

FormatAttr FormatAttr::parseBody(AsmParser &parser, bool &consumedComma) {
  consumedComma = false;
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<StringRef> names;
  std::string known;
  for (const ref::NamedFormat &format : ref::namedFormats()) {
    names.push_back(StringRef(format.name.data(), format.name.size()));
    known += (known.empty() ? "" : ", ") + std::string(format.name);
  }
  StringRef name;
  if (succeeded(parser.parseOptionalKeyword(&name, names)))
    return getNamed(context, name);
  Type elementType, scaleType;
  OptionalParseResult explicitForm = parser.parseOptionalType(elementType);
  if (!explicitForm.has_value()) {
    if (succeeded(parser.parseOptionalKeyword(&name)))
      parser.emitError(loc) << "unknown microscaling format '" << name
                            << "'; expected one of " << known
                            << ", or element type, scale type, block = N";
    else
      parser.emitError(loc) << "expected a microscaling format (" << known
                            << ", or element type, scale type, block = N)";
    return {};
  }
  unsigned blockSize = 0;
  if (failed(*explicitForm) || parser.parseComma() ||
      parser.parseType(scaleType) || parser.parseComma() ||
      parser.parseKeyword("block") || parser.parseEqual() ||
      parser.parseInteger(blockSize))
    return {};
  // `, global_scale` is optional; a comma followed by anything else belongs
  // to the caller (the qtensor type continues with `, axis = ...`).
  bool globalScale = false;
  if (succeeded(parser.parseOptionalComma())) {
    globalScale = succeeded(parser.parseOptionalKeyword("global_scale"));
    consumedComma = !globalScale;
  }
  return FormatAttr::getChecked([&] { return parser.emitError(loc); },
                                context, elementType, scaleType, blockSize,
                                globalScale);
}

Attribute FormatAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  bool consumedComma;
  FormatAttr format = parseBody(parser, consumedComma);
  if (!format)
    return {};
  if (consumedComma) {
    parser.emitError(parser.getCurrentLocation(), "expected 'global_scale'");
    return {};
  }
  if (parser.parseGreater())
    return {};
  return format;
}

void FormatAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

//===----------------------------------------------------------------------===//
// StridedAttr
//===----------------------------------------------------------------------===//

bool StridedAttr::supportsRole(LayoutRole) const { return true; }

std::unique_ptr<ref::Layout>
StridedAttr::buildReference(ArrayRef<int64_t> logicalShape,
                                  unsigned elementBits,
                                  std::string *error) const {
  return ref::makeStridedLayout(
      std::vector<int64_t>(logicalShape.begin(), logicalShape.end()),
      elementBits, getMajorDim(), error);
}
