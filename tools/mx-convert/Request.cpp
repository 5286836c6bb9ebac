//===- Request.cpp - What mx-convert is asked to do -----------------------===//
#include "Request.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::microscale;

static std::string toString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// The product of `shape`, or nullopt when it overflows int64.
static std::optional<int64_t> product(ArrayRef<int64_t> shape) {
  // A zero extent makes the product 0 whatever the others are.
  if (llvm::is_contained(shape, 0))
    return 0;
  std::optional<int64_t> result = 1;
  for (int64_t extent : shape)
    if (!(result = llvm::checkedMul(*result, extent)))
      return std::nullopt;
  return result;
}

namespace microscale::convert {

std::string spell(mlir::Attribute attr) { return toString(attr); }

std::string spell(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(type.getShape(), os, "x");
  if (type.getRank())
    os << "x";
  os << type.getElementType();
  return text;
}

bool nestsAtMost(StringRef text, int limit) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return false;
    } else if (c == ')' || c == ']' || c == '}' || c == '>')
      depth = std::max(depth - 1, 0);
  }
  return true;
}

LayoutAttrInterface parseLayout(MLIRContext &context, StringRef flag,
                                StringRef text, std::string &error) {
  if (!nestsAtMost(text, kMaxSpellingDepth)) {
    error =
        ("--" + flag + ": '" + text.take_front(40) + "...' nests deeper than " +
         llvm::Twine(kMaxSpellingDepth) + " levels")
            .str();
    return {};
  }
  Attribute attr = parseAttribute(text, &context);
  if (!attr) {
    error =
        ("--" + flag + ": cannot parse '" + text + "' as an attribute").str();
    return {};
  }
  auto layout = dyn_cast<LayoutAttrInterface>(attr);
  if (!layout)
    error = ("--" + flag + ": '" + text +
             "' is not a microscale layout (e.g. #microscale.strided, "
             "#microscale.hopper_value<mx_axis = -2, mma_version = 3>)")
                .str();
  return layout;
}

RankedTensorType parseLogicalType(MLIRContext &context, StringRef text,
                                  std::string &error) {
  if (!nestsAtMost(text, kMaxSpellingDepth)) {
    error = ("--type: '" + text.take_front(40) + "...' nests deeper than " +
             llvm::Twine(kMaxSpellingDepth) + " levels")
                .str();
    return {};
  }
  // A negative extent would reach MLIR's parser as a '-' where it expects a
  // type ("expected non-function type"): named here instead.
  {
    StringRef body = text;
    body.consume_front("tensor<");
    SmallVector<StringRef> parts;
    body.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t extent;
      if (part.starts_with("-") && !part.getAsInteger(10, extent)) {
        error = ("--type: extent " + part + " of '" + text +
                 "' is negative; extents are >= 0")
                    .str();
        return {};
      }
    }
  }
  // The shaped-type spelling of a tensor body: 2x64x128xf4E2M1FN.
  std::string wrapped =
      text.starts_with("tensor<") ? text.str() : "tensor<" + text.str() + ">";
  Type parsed = parseType(wrapped, &context);
  auto tensor = dyn_cast_or_null<RankedTensorType>(parsed);
  if (!tensor || !tensor.hasStaticShape()) {
    error = ("--type: expected a static shaped type such as "
             "2x64x128xf4E2M1FN, got '" +
             text + "'")
                .str();
    return {};
  }
  bool isScales = isa<Float8E8M0FNUType>(tensor.getElementType());
  if (!isScales && !isa<Float4E2M1FNType>(tensor.getElementType())) {
    error = ("--type: the element type must be f4E2M1FN (packed FP4 "
             "values) or f8E8M0FNU (scale bytes), got " +
             text)
                .str();
    return {};
  }
  if (tensor.getRank() < 1) {
    error = "--type: the tensor must have rank >= 1";
    return {};
  }
  // The dialect's own bound (QTensorType's verifier): storage sizes stay
  // far from overflowing int64. Checked here first, as `tensor` has none,
  // and over the nonzero extents: an empty tensor's strides are products
  // of its other extents, and must not overflow either.
  SmallVector<int64_t> nonzero;
  llvm::copy_if(tensor.getShape(), std::back_inserter(nonzero),
                [](int64_t extent) { return extent != 0; });
  std::optional<int64_t> elements = product(nonzero);
  if (!elements || *elements > (int64_t(1) << 48)) {
    error = ("--type: " + text + " has more than 2^48 elements").str();
    return {};
  }
  return tensor;
}

std::optional<Conversion>
checkConversion(MLIRContext &context, StringRef typeText, StringRef fromText,
                StringRef toText, uint64_t inputBytes, StringRef inputName,
                std::optional<uint64_t> availableBytes, std::string &error) {
  RankedTensorType tensor = parseLogicalType(context, typeText, error);
  if (!tensor)
    return std::nullopt;
  const bool isScales = isa<Float8E8M0FNUType>(tensor.getElementType());
  LayoutAttrInterface from = parseLayout(context, "from", fromText, error);
  if (!from)
    return std::nullopt;
  LayoutAttrInterface to = parseLayout(context, "to", toText, error);
  if (!to)
    return std::nullopt;
  const StoragePart role = isScales ? StoragePart::scales : StoragePart::values;
  for (auto [layout, flag] : {std::pair(from, "--from"), std::pair(to, "--to")})
    if (!layout.supportsRole(role)) {
      error = (llvm::Twine(flag) + ": " + toString(layout) + " cannot hold " +
               (isScales ? "scales" : "FP4 values"))
                  .str();
      return std::nullopt;
    }

  // The byte conversion depends only on the layouts, not on the scales'
  // block size, so the tensor is described with blocks of 2, the smallest
  // that packs, along the block axis the layouts name. When no layout names
  // one, it is the first dim from the second-to-last down whose extent packs
  // (so that a bad extent is reported by the layout that cannot pack it).
  const int64_t rank = tensor.getRank();
  int64_t axis = rank >= 2 ? rank - 2 : 0;
  if (!isScales)
    for (int64_t d : {rank - 2, rank - 1})
      if (d >= 0 && tensor.getDimSize(d) % 2 == 0) {
        axis = d;
        break;
      }
  for (LayoutAttrInterface layout : {from, to})
    if (std::optional<int64_t> required = layout.getRequiredBlockAxis(rank))
      axis = *required;
  // FP4 values are described in blocks of 2 along `axis` (above): an odd
  // extent there is the user's shape, not a block size they gave.
  if (!isScales && tensor.getDimSize(axis) % 2 != 0) {
    error = ("--type: " + typeText + " has an odd extent (" +
             llvm::Twine(tensor.getDimSize(axis)) + ") along dim " +
             llvm::Twine(axis) +
             ", the axis its scale blocks run along: packed FP4 values need "
             "an even extent there")
                .str();
    return std::nullopt;
  }
  auto emitter = [&] { return emitError(UnknownLoc::get(&context)); };
  FormatAttr format = FormatAttr::getChecked(
      emitter, &context, Type(Float4E2M1FNType::get(&context)),
      Type(Float8E8M0FNUType::get(&context)), 2u, false);
  SmallVector<int64_t> shape(tensor.getShape());
  auto strided = StridedAttr::get(&context, -1);
  if (isScales) {
    // The values whose scales these are (2^48 elements at most: no overflow).
    shape[axis] *= 2;
  }
  auto make = [&](LayoutAttrInterface layout) {
    LayoutAttrInterface values =
        isScales ? LayoutAttrInterface(strided) : layout;
    LayoutAttrInterface scales =
        isScales ? layout : LayoutAttrInterface(strided);
    return QTensorType::getChecked(emitter, &context, ArrayRef<int64_t>(shape),
                                   format, axis, values, scales);
  };
  Conversion conversion;
  conversion.part = isScales ? StoragePart::scales : StoragePart::values;
  // On failure the verifier's diagnostic said why.
  if (!(conversion.fromType = make(from)) || !(conversion.toType = make(to)))
    return std::nullopt;

  auto storageShape = [&](QTensorType type) {
    return isScales ? type.getScaleStorageShape() : type.getValueStorageShape();
  };
  std::optional<int64_t> sourceBytes =
      product(storageShape(conversion.fromType));
  conversion.destStorageShape = storageShape(conversion.toType);
  std::optional<int64_t> destBytes = product(conversion.destStorageShape);
  if (!sourceBytes || !destBytes) {
    error = ("a " + typeText + " tensor's storage overflows int64").str();
    return std::nullopt;
  }
  conversion.sourceBytes = *sourceBytes;
  conversion.destBytes = *destBytes;
  if (inputBytes != conversion.sourceBytes) {
    error = (inputName + " has " + llvm::Twine(inputBytes) + " bytes, but a " +
             typeText + " tensor in " + fromText + " has " +
             llvm::Twine(conversion.sourceBytes) + " storage bytes")
                .str();
    return std::nullopt;
  }
  // Refused here, before anything is allocated.
  const uint64_t bound = kMaxOutputGrowth * inputBytes + kOutputSlackBytes;
  if (conversion.destBytes > bound) {
    error = ("converting " + inputName + " (" + llvm::Twine(inputBytes) +
             " bytes) to " + toText + " would write " +
             llvm::Twine(conversion.destBytes) +
             " bytes, more than the limit of " + llvm::Twine(kMaxOutputGrowth) +
             " x the input + 64 MiB: the "
             "layout's padding dwarfs the tensor")
                .str();
    return std::nullopt;
  }
  if (availableBytes && conversion.destBytes > *availableBytes) {
    error = ("converting " + inputName + " to " + toText + " needs " +
             llvm::Twine(conversion.destBytes) +
             " bytes of memory for the output, but only " +
             llvm::Twine(*availableBytes) + " are available")
                .str();
    return std::nullopt;
  }
  return conversion;
}

std::optional<std::string> inferCheckpointType(StringRef name,
                                               ArrayRef<int64_t> shape,
                                               std::string &error) {
  const bool blocks = name.ends_with("_blocks");
  const bool scales = name.ends_with("_scales");
  if ((blocks && (shape.size() < 3 || shape.back() != 16)) ||
      (scales && shape.size() < 2) || (!blocks && !scales)) {
    error = ("cannot infer the logical type of tensor '" + name +
             "' (expected *_blocks [..., N, K/32, 16] or *_scales "
             "[..., N, K/32]): pass --type")
                .str();
    return std::nullopt;
  }
  size_t keep = shape.size() - (blocks ? 3 : 2);
  std::string leading;
  for (size_t i = 0; i < keep; ++i)
    leading += std::to_string(shape[i]) + "x";
  const int64_t n = shape[keep], groups = shape[keep + 1];
  if (!blocks)
    return leading + std::to_string(groups) + "x" + std::to_string(n) +
           "xf8E8M0FNU";
  // K = 32 * groups; the file's own size check bounds the shape's product,
  // but not this one.
  std::optional<int64_t> k = llvm::checkedMul(groups, int64_t(32));
  if (!k) {
    error = ("tensor '" + name + "' has too many blocks").str();
    return std::nullopt;
  }
  return leading + std::to_string(*k) + "x" + std::to_string(n) + "xf4E2M1FN";
}

std::optional<uint64_t> availableMemoryBytes() {
  // Linux only; elsewhere the bound above is the only one.
  auto meminfo = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo");
  if (!meminfo)
    return std::nullopt;
  StringRef text = (*meminfo)->getBuffer();
  size_t at = text.find("MemAvailable:");
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = text.drop_front(at + strlen("MemAvailable:")).ltrim();
  uint64_t kib;
  if (rest.consumeInteger(10, kib) || !rest.ltrim().starts_with("kB"))
    return std::nullopt;
  return llvm::SaturatingMultiply(kib, uint64_t(1024));
}

} // namespace microscale::convert
