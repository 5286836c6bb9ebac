//===- TypeParserFuzzer.cpp - Fuzz the dialect's type and attribute parsers
//===//
//
// Any text, parsed with the microscale dialect loaded as a type and as an
// attribute: the parsers and verifiers must accept or refuse it, never
// crash. What parses as ours is printed and parsed back to the same object,
// and a qtensor's storage shapes (the layouts' reference maps, the sizes
// everything downstream allocates from) are computed.
//
// Spellings nested deeper than mx-convert accepts (kMaxSpellingDepth) are
// skipped: MLIR's recursive descent parser overflows the stack on those, an
// upstream limit that mx-convert guards against before parsing.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "Request.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::microscale;

template <typename T> static std::string print(T entity) {
  std::string text;
  llvm::raw_string_ostream os(text);
  entity.print(os);
  return text;
}

/// Ours: the dialect's printers and parsers must agree. (Upstream's need
/// not: `@""` prints as `@<<INVALID EMPTY SYMBOL>>`.)
static bool isOurs(Dialect &dialect) { return isa<MicroscaleDialect>(dialect); }

static void checkType(MLIRContext &context, Type type) {
  if (!type || !isOurs(type.getDialect()))
    return;
  if (parseType(print(type), &context) != type) {
    llvm::errs() << "type does not round-trip: " << print(type) << "\n";
    abort();
  }
  if (auto qtensor = dyn_cast<QTensorType>(type)) {
    (void)qtensor.getNumElements();
    (void)qtensor.getScaleShape();
    (void)qtensor.getValueStorageShape();
    (void)qtensor.getScaleStorageShape();
  }
}

static void checkAttribute(MLIRContext &context, Attribute attr) {
  if (!attr || !isOurs(attr.getDialect()))
    return;
  if (parseAttribute(print(attr), &context) != attr) {
    llvm::errs() << "attribute does not round-trip: " << print(attr) << "\n";
    abort();
  }
  if (auto layout = dyn_cast<LayoutAttrInterface>(attr)) {
    (void)layout.supportsRole(StoragePart::values);
    (void)layout.supportsRole(StoragePart::scales);
    for (int64_t rank = 1; rank <= 4; ++rank)
      (void)layout.getRequiredBlockAxis(rank);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (!::microscale::convert::nestsAtMost(
          text, ::microscale::convert::kMaxSpellingDepth))
    return 0;
  MLIRContext &context = ::microscale::fuzz::contextForNextInput();
  // The parser wants a null-terminated buffer of its own.
  std::string owned = text.str();
  checkType(context, parseType(owned, &context));
  checkAttribute(context, parseAttribute(owned, &context));
  return 0;
}
