//===- Safetensors.cpp - Read and write .safetensors files ----------------===//
#include "Safetensors.h"

#include "OutputFile.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#include <sys/mman.h>

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

/// The deepest nesting a header may have. A valid header nests 3 deep
/// (header, tensor entry, shape); llvm::json::parse recurses once per level,
/// so an adversarial header ("[[[[...") would otherwise overflow the stack.
static constexpr int kMaxHeaderDepth = 64;

/// The largest header accepted: the reference implementation's limit.
static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// Whether `text` nests arrays and objects at most `limit` deep (brackets
/// inside strings do not count). Malformed text is left to the JSON parser.
static bool nestsAtMost(llvm::StringRef text, int limit) {
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
    else if (c == '[' || c == '{') {
      if (++depth > limit)
        return false;
    } else if (c == ']' || c == '}')
      --depth;
  }
  return true;
}

llvm::Expected<File> microscale::safetensors::read(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(buffer.getError(), "cannot read '" + path +
                                                    "': " +
                                                    buffer.getError().message());
  return parse(std::move(*buffer), path);
}

llvm::Expected<File>
microscale::safetensors::parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                               llvm::StringRef name) {
  auto fail = [&](const llvm::Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "'" + name + "' is not a valid safetensors file: " +
                                 why);
  };
  File file;
  file.buffer = std::move(buffer);
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
  if (headerSize > kMaxHeaderBytes)
    return fail("the header has " + llvm::Twine(headerSize) +
                " bytes, more than the format's limit of " +
                llvm::Twine(kMaxHeaderBytes));
  llvm::StringRef headerText(reinterpret_cast<const char *>(bytes + 8),
                             headerSize);
  if (!nestsAtMost(headerText, kMaxHeaderDepth))
    return fail("the JSON header nests deeper than " +
                llvm::Twine(kMaxHeaderDepth) + " levels");
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
      // The format maps strings to strings; dropping other values would
      // lose them from the file mx-convert writes back.
      for (const auto &[metaKey, metaValue] : *meta) {
        auto text = metaValue.getAsString();
        if (!text)
          return fail("__metadata__ value '" + metaKey.str() +
                      "' is not a string");
        file.metadata[metaKey.str()] = text->str();
      }
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
    // The byte count the dtype and shape need, overflow-checked: a shape
    // such as [2^62] must not wrap around to match a small data range.
    std::optional<int64_t> count = elementBytes;
    bool empty = false;
    for (const llvm::json::Value &dim : *shape) {
      auto extent = dim.getAsInteger();
      if (!extent || *extent < 0)
        return fail("tensor '" + tensor.name + "' has a bad shape");
      tensor.shape.push_back(*extent);
      empty |= *extent == 0;
      if (count)
        count = llvm::checkedMul(*count, *extent);
    }
    if (empty)
      count = 0;
    auto begin = (*offsets)[0].getAsInteger();
    auto end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > dataSize)
      return fail("tensor '" + tensor.name + "' has data_offsets outside the " +
                  llvm::Twine(dataSize) + " data bytes (truncated?)");
    if (!count || *end - *begin != *count)
      return fail("tensor '" + tensor.name + "' has " +
                  llvm::Twine(*end - *begin) +
                  " bytes, but its dtype and shape need " +
                  (count ? llvm::Twine(*count)
                         : llvm::Twine("more than 2^63")));
    tensor.data = llvm::ArrayRef<uint8_t>(bytes + dataStart + *begin,
                                          *end - *begin);
    file.tensors.push_back(std::move(tensor));
  }
  // In data order (names break ties between empty tensors), then no two
  // tensors may share a byte: writing one back would change the other. An
  // empty tensor shares none.
  std::sort(file.tensors.begin(), file.tensors.end(),
            [&](const Tensor &a, const Tensor &b) {
              if (a.data.data() != b.data.data())
                return a.data.data() < b.data.data();
              return a.name < b.name;
            });
  const Tensor *previous = nullptr;
  for (const Tensor &tensor : file.tensors) {
    if (tensor.data.empty())
      continue;
    if (previous &&
        tensor.data.data() < previous->data.data() + previous->data.size())
      return fail("tensors '" + previous->name + "' and '" + tensor.name +
                  "' overlap in the data (data_offsets)");
    previous = &tensor;
  }
  return std::move(file);
}

std::string microscale::safetensors::encodeHeader(
    llvm::ArrayRef<TensorInfo> tensors,
    const std::map<std::string, std::string> &metadata) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const TensorInfo &tensor : tensors) {
    llvm::json::Array shape;
    for (int64_t d : tensor.shape)
      shape.push_back(d);
    // The sizes are of tensors that fit in memory or in a file: their sum
    // cannot wrap a uint64.
    header[tensor.name] = llvm::json::Object{
        {"dtype", tensor.dtype},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + tensor.bytes}}};
    offset += tensor.bytes;
  }
  if (!metadata.empty()) {
    llvm::json::Object meta;
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  std::string headerText;
  llvm::raw_string_ostream(headerText) << llvm::json::Value(std::move(header));
  // The data starts 8-byte aligned, as the reference writer does.
  while ((8 + headerText.size()) % 8)
    headerText.push_back(' ');
  std::string result;
  uint64_t size = headerText.size();
  for (int i = 0; i < 8; ++i)
    result.push_back(static_cast<char>((size >> (8 * i)) & 0xFF));
  return result + headerText;
}

/// Gives `advice` for the mapped pages that hold `bytes`; nothing when
/// `file` was read into memory (where MADV_DONTNEED would zero it).
static void advise(const File &file, llvm::ArrayRef<uint8_t> bytes,
                   int advice) {
  if (bytes.empty() ||
      file.buffer->getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap)
    return;
  const uintptr_t page = llvm::sys::Process::getPageSizeEstimate();
  const auto start = reinterpret_cast<uintptr_t>(file.buffer->getBufferStart());
  const auto end = start + file.buffer->getBufferSize();
  // The whole file is mapped from a page boundary, so the pages around
  // `bytes` are the mapping's (the last one's tail included).
  if (start % page)
    return;
  uintptr_t begin = reinterpret_cast<uintptr_t>(bytes.data()) / page * page;
  uintptr_t stop = llvm::alignTo(
      std::min<uintptr_t>(reinterpret_cast<uintptr_t>(bytes.end()), end), page);
  if (begin < start || stop <= begin)
    return;
  // Advice only: where the system does not take it, the bytes are read as
  // they would have been.
  (void)::madvise(reinterpret_cast<void *>(begin), stop - begin, advice);
}

void microscale::safetensors::releasePages(const File &file,
                                           llvm::ArrayRef<uint8_t> bytes) {
  // A read-only file mapping: dropped pages read back as the file's bytes.
  advise(file, bytes, MADV_DONTNEED);
}

void microscale::safetensors::prefetchPages(const File &file,
                                            llvm::ArrayRef<uint8_t> bytes) {
#ifdef MADV_POPULATE_READ
  advise(file, bytes, MADV_POPULATE_READ);
#else
  advise(file, bytes, MADV_WILLNEED);
#endif
}

uint64_t microscale::safetensors::fileOffset(const File &file,
                                             llvm::ArrayRef<uint8_t> bytes) {
  return reinterpret_cast<const char *>(bytes.data()) -
         file.buffer->getBufferStart();
}

void microscale::safetensors::write(const File &file, llvm::raw_ostream &os) {
  std::vector<TensorInfo> infos;
  for (const Tensor &tensor : file.tensors)
    infos.push_back({tensor.name, tensor.dtype, tensor.shape,
                     static_cast<uint64_t>(tensor.data.size())});
  os << encodeHeader(infos, file.metadata);
  for (const Tensor &tensor : file.tensors)
    os.write(reinterpret_cast<const char *>(tensor.data.data()),
             tensor.data.size());
}

llvm::Error microscale::safetensors::write(const File &file,
                                           llvm::StringRef path) {
  llvm::Expected<OutputFile> out = OutputFile::open(path);
  if (!out)
    return out.takeError();
  write(file, out->os());
  return out->commit();
}
