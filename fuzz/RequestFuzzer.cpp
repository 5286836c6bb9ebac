//===- RequestFuzzer.cpp - Fuzz mx-convert's request checks ---------------===//
//
// The input is lines: --type, --from, --to and the input's size in bytes,
// as mx-convert would get them (or, when the first line is
// `ckpt NAME D0,D1,...`, a checkpoint tensor whose type is inferred as
// mx-convert infers it). checkConversion() must accept or refuse them with
// a message, never crash; what it accepts must respect the output bound.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "Request.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace ::microscale::convert;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<llvm::StringRef, 4> lines;
  text.split(lines, '\n', /*MaxSplit=*/3);
  if (lines.size() < 4)
    return 0;
  std::string typeText = lines[0].str(), error;
  if (lines[0].consume_front("ckpt ")) {
    auto [name, dims] = lines[0].split(' ');
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, ',');
    llvm::SmallVector<int64_t> shape;
    for (llvm::StringRef part : parts) {
      int64_t extent;
      if (part.getAsInteger(10, extent) || extent < 0)
        return 0;
      shape.push_back(extent);
    }
    std::optional<std::string> inferred =
        inferCheckpointType(name, shape, error);
    if (!inferred)
      return 0;
    typeText = *inferred;
  }
  uint64_t inputBytes;
  if (lines[3].trim().getAsInteger(10, inputBytes))
    return 0;
  // A fixed memory bound, so that the run does not depend on the machine.
  const uint64_t available = uint64_t(1) << 32;
  std::optional<Conversion> conversion = checkConversion(
      ::microscale::fuzz::contextForNextInput(), typeText, lines[1], lines[2],
      inputBytes, "input", available, error);
  if (!conversion)
    return 0;
  if (conversion->sourceBytes != inputBytes ||
      conversion->destBytes >
          kMaxOutputGrowth * inputBytes + kOutputSlackBytes ||
      conversion->destBytes > available) {
    llvm::errs() << "accepted a conversion outside the bounds\n";
    abort();
  }
  return 0;
}
