//===- MicroscaleAttrs.cpp - Formats and layouts --------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "microscale/Reference/TritonLayouts.h"
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

bool StridedAttr::supportsRole(StoragePart) const { return true; }

std::unique_ptr<ref::Layout>
StridedAttr::buildReference(ArrayRef<int64_t> logicalShape,
                                  unsigned elementBits,
                                  std::string *error) const {
  return ref::makeStridedLayout(
      std::vector<int64_t>(logicalShape.begin(), logicalShape.end()),
      elementBits, getMajorDim(), error);
}

//===----------------------------------------------------------------------===//
// Triton's layouts
//===----------------------------------------------------------------------===//

static std::vector<int64_t> toStd(ArrayRef<int64_t> shape) {
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// Value layouts hold FP4 codes, scale layouts 8-bit scale codes.
static bool checkElementBits(StringRef layout, unsigned elementBits,
                             unsigned expected, std::string *error) {
  if (elementBits == expected)
    return true;
  if (error)
    *error = (layout + " holds " + Twine(expected) + "-bit codes only, got " +
              Twine(elementBits) + "-bit codes")
                 .str();
  return false;
}

/// Triton's block axis convention: -1 or -2, counted from the end.
static std::optional<int64_t> blockAxisFromEnd(int64_t mxAxis, int64_t rank) {
  if (rank < 2)
    return std::nullopt; // the reference map rejects the rank
  return rank + mxAxis;
}

static LogicalResult verifyMxAxis(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t mxAxis) {
  if (mxAxis != -1 && mxAxis != -2)
    return emitError() << "mx_axis must be -1 or -2, got " << mxAxis;
  return success();
}

LogicalResult
HopperValueAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t mxAxis, int64_t mmaVersion) {
  if (failed(verifyMxAxis(emitError, mxAxis)))
    return failure();
  if (mmaVersion != 2 && mmaVersion != 3)
    return emitError() << "mma_version must be 2 (mma.sync) or 3 (wgmma), got "
                       << mmaVersion;
  return success();
}

bool HopperValueAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::values;
}

std::unique_ptr<ref::Layout>
HopperValueAttr::buildReference(ArrayRef<int64_t> shape, unsigned elementBits,
                                std::string *error) const {
  if (!checkElementBits("hopper_value", elementBits, 4, error))
    return nullptr;
  return ref::makeHopperValueLayout(toStd(shape), getMxAxis(),
                                    static_cast<int>(getMmaVersion()), error);
}

std::optional<int64_t> HopperValueAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(getMxAxis(), rank);
}

LogicalResult
HopperScaleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t mxAxis, int64_t numWarps) {
  if (failed(verifyMxAxis(emitError, mxAxis)))
    return failure();
  // A CTA has at most 32 warps (1024 threads).
  if (numWarps <= 0 || numWarps > 32 || !llvm::isPowerOf2_64(numWarps))
    return emitError() << "num_warps must be a power of two in [1, 32], got "
                       << numWarps;
  return success();
}

bool HopperScaleAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::scales;
}

std::unique_ptr<ref::Layout>
HopperScaleAttr::buildReference(ArrayRef<int64_t> shape, unsigned elementBits,
                                std::string *error) const {
  if (!checkElementBits("hopper_scale", elementBits, 8, error))
    return nullptr;
  return ref::makeHopperScaleLayout(toStd(shape), getMxAxis(),
                                    static_cast<int>(getNumWarps()), error);
}

std::optional<int64_t> HopperScaleAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(getMxAxis(), rank);
}

bool BlackwellValueAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::values;
}

std::unique_ptr<ref::Layout>
BlackwellValueAttr::buildReference(ArrayRef<int64_t> shape,
                                   unsigned elementBits,
                                   std::string *error) const {
  if (!checkElementBits("blackwell_value", elementBits, 4, error))
    return nullptr;
  return ref::makeBlackwellValueLayout(toStd(shape), error);
}

std::optional<int64_t>
BlackwellValueAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(-2, rank);
}

LogicalResult BlackwellShuffledValueAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockK,
    int64_t blockN) {
  // TMA boxes are at most 256 elements a side; allow up to 64Ki so that
  // padded sizes stay far from overflowing.
  if (blockK <= 0 || blockK % 2 != 0 || blockK > 65536)
    return emitError() << "block_k must be an even number of FP4 elements in "
                          "[2, 65536], got "
                       << blockK;
  if (blockN <= 0 || blockN > 65536)
    return emitError() << "block_n must be in [1, 65536], got " << blockN;
  return success();
}

bool BlackwellShuffledValueAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::values;
}

std::unique_ptr<ref::Layout>
BlackwellShuffledValueAttr::buildReference(ArrayRef<int64_t> shape,
                                           unsigned elementBits,
                                           std::string *error) const {
  if (!checkElementBits("blackwell_shuffled_value", elementBits, 4, error))
    return nullptr;
  return ref::makeBlackwellShuffledValueLayout(toStd(shape), getBlockK(),
                                               getBlockN(), error);
}

std::optional<int64_t>
BlackwellShuffledValueAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(-2, rank);
}

bool BlackwellScaleAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::scales;
}

std::unique_ptr<ref::Layout>
BlackwellScaleAttr::buildReference(ArrayRef<int64_t> shape,
                                   unsigned elementBits,
                                   std::string *error) const {
  if (!checkElementBits("blackwell_scale", elementBits, 8, error))
    return nullptr;
  return ref::makeBlackwellScaleLayout(toStd(shape), error);
}

std::optional<int64_t>
BlackwellScaleAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(-2, rank);
}

bool CDNA4ScaleAttr::supportsRole(StoragePart role) const {
  return role == StoragePart::scales;
}

std::unique_ptr<ref::Layout>
CDNA4ScaleAttr::buildReference(ArrayRef<int64_t> shape, unsigned elementBits,
                               std::string *error) const {
  if (!checkElementBits("cdna4_scale", elementBits, 8, error))
    return nullptr;
  return ref::makeCDNA4ScaleLayout(toStd(shape), error);
}

std::optional<int64_t> CDNA4ScaleAttr::getRequiredBlockAxis(int64_t rank) const {
  return blockAxisFromEnd(-2, rank);
}
