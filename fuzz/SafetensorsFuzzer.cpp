//===- SafetensorsFuzzer.cpp - Fuzz the .safetensors reader ---------------===//
//
// Any bytes: parse() must accept or refuse them with a message, never crash,
// hang or read outside the buffer. What it accepts must survive a round trip
// through the writer unchanged.
//
//===----------------------------------------------------------------------===//
#include "Safetensors.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace microscale::safetensors;

static std::unique_ptr<llvm::MemoryBuffer> copy(llvm::StringRef bytes) {
  return llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.safetensors");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<File> file = parse(copy(bytes), "fuzz.safetensors");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  // Touch every byte the reader handed out (ASan checks they are in bounds).
  unsigned sum = 0;
  for (const Tensor &tensor : file->tensors)
    for (uint8_t byte : tensor.data)
      sum += byte;
  (void)sum;

  std::string written;
  llvm::raw_string_ostream os(written);
  write(*file, os);
  llvm::Expected<File> again = parse(copy(written), "written.safetensors");
  if (!again) {
    llvm::errs() << "the writer's output does not parse: "
                 << llvm::toString(again.takeError()) << "\n";
    abort();
  }
  bool same = again->metadata == file->metadata &&
              again->tensors.size() == file->tensors.size();
  for (size_t i = 0; same && i < file->tensors.size(); ++i) {
    const Tensor &a = file->tensors[i], &b = again->tensors[i];
    same = a.name == b.name && a.dtype == b.dtype && a.shape == b.shape &&
           a.data == b.data;
  }
  if (!same) {
    llvm::errs() << "the round trip through the writer changed the file\n";
    abort();
  }
  return 0;
}
