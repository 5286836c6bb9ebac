//===- Safetensors.cpp - Read and write .safetensors files ----------------===//
#include "Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace microscale::safetensors;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;

static int64_t dtypeBytes(llvm::StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases({"U8", "I8", "BOOL", "F8_E4M3", "F8_E5M2", "F8_E8M0"}, 1)
      .Cases({"U16", "I16", "F16", "BF16"}, 2)
      .Cases({"U32", "I32", "F32"}, 4)
      .Cases({"U64", "I64", "F64"}, 8)
      .Default(0);
}

Tensor *File::find(llvm::StringRef name) {
  for (Tensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

llvm::Expected<File> microscale::safetensors::read(llvm::StringRef path) {
  auto fail = [&](const llvm::Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "'" + path + "' is not a valid safetensors file: " +
                                 why);
  };
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(buffer.getError(), "cannot read '" + path +
                                                    "': " +
                                                    buffer.getError().message());
  File file;
  file.buffer = std::move(*buffer);
  const auto *bytes =
      reinterpret_cast<const uint8_t *>(file.buffer->getBufferStart());
  const uint64_t size = file.buffer->getBufferSize();
  if (size < 8)
    return fail("shorter than its 8-byte header size");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | bytes[i];
  if (headerSize > size - 8)
    return fail("the header claims " + llvm::Twine(headerSize) +
                " bytes but the file has " + llvm::Twine(size - 8) +
                " after the size field (truncated?)");
  llvm::StringRef headerText(reinterpret_cast<const char *>(bytes + 8),
                             headerSize);
  auto header = llvm::json::parse(headerText);
  if (!header)
    return fail("malformed JSON header: " + llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  if (!object)
    return fail("the header is not a JSON object");
  const uint64_t dataStart = 8 + headerSize;
  const uint64_t dataSize = size - dataStart;
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__") {
      const llvm::json::Object *meta = value.getAsObject();
      if (!meta)
        return fail("__metadata__ is not an object");
      for (const auto &[metaKey, metaValue] : *meta)
        if (auto text = metaValue.getAsString())
          file.metadata[metaKey.str()] = text->str();
      continue;
    }
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return fail("tensor '" + key.str() + "' is not an object");
    Tensor tensor;
    tensor.name = key.str();
    auto dtype = entry->getString("dtype");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!dtype || !shape || !offsets || offsets->size() != 2)
      return fail("tensor '" + tensor.name +
                  "' needs dtype, shape and two data_offsets");
    tensor.dtype = dtype->str();
    const int64_t elementBytes = dtypeBytes(tensor.dtype);
    if (!elementBytes)
      return fail("tensor '" + tensor.name + "' has unknown dtype '" +
                  tensor.dtype + "'");
    int64_t count = 1;
    for (const llvm::json::Value &dim : *shape) {
      auto extent = dim.getAsInteger();
      if (!extent || *extent < 0)
        return fail("tensor '" + tensor.name + "' has a bad shape");
      tensor.shape.push_back(*extent);
      count *= *extent;
    }
    auto begin = (*offsets)[0].getAsInteger();
    auto end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > dataSize)
      return fail("tensor '" + tensor.name + "' has data_offsets outside the " +
                  llvm::Twine(dataSize) + " data bytes (truncated?)");
    if (*end - *begin != count * elementBytes)
      return fail("tensor '" + tensor.name + "' has " +
                  llvm::Twine(*end - *begin) + " bytes, but its dtype and shape "
                  "need " + llvm::Twine(count * elementBytes));
    tensor.data = llvm::ArrayRef<uint8_t>(bytes + dataStart + *begin,
                                          *end - *begin);
    file.tensors.push_back(std::move(tensor));
  }
  std::sort(file.tensors.begin(), file.tensors.end(),
            [&](const Tensor &a, const Tensor &b) {
              return a.data.data() < b.data.data();
            });
  return std::move(file);
}

llvm::Error microscale::safetensors::write(const File &file,
                                           llvm::StringRef path) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const Tensor &tensor : file.tensors) {
    llvm::json::Array shape;
    for (int64_t d : tensor.shape)
      shape.push_back(d);
    header[tensor.name] = llvm::json::Object{
        {"dtype", tensor.dtype},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + tensor.data.size()}}};
    offset += tensor.data.size();
  }
  if (!file.metadata.empty()) {
    llvm::json::Object meta;
    for (const auto &[key, value] : file.metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  std::string headerText;
  llvm::raw_string_ostream(headerText) << llvm::json::Value(std::move(header));
  // The data starts 8-byte aligned, as the reference writer does.
  while ((8 + headerText.size()) % 8)
    headerText.push_back(' ');

  std::string temporary = (path + ".mx-convert-partial").str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::OF_None);
    if (ec)
      return createStringError(ec, "cannot write '" + path + "': " +
                                       ec.message());
    uint64_t size = headerText.size();
    for (int i = 0; i < 8; ++i)
      out << static_cast<char>((size >> (8 * i)) & 0xFF);
    out << headerText;
    for (const Tensor &tensor : file.tensors)
      out.write(reinterpret_cast<const char *>(tensor.data.data()),
                tensor.data.size());
    out.close();
    if (out.has_error()) {
      llvm::sys::fs::remove(temporary);
      return createStringError(out.error(), "cannot write '" + path + "': " +
                                                out.error().message());
    }
  }
  if ((ec = llvm::sys::fs::rename(temporary, path))) {
    llvm::sys::fs::remove(temporary);
    return createStringError(ec, "cannot write '" + path + "': " +
                                     ec.message());
  }
  return llvm::Error::success();
}
