//===- Safetensors.h - Read and write .safetensors files --------*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header size, a JSON header
// mapping tensor names to {dtype, shape, data_offsets} (plus an optional
// "__metadata__" string map), then the data. Reading validates everything a
// malformed or truncated file can get wrong before any byte is used.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TOOLS_SAFETENSORS_H
#define MICROSCALE_TOOLS_SAFETENSORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <new>
#include <vector>

namespace microscale::safetensors {

/// Byte buffers aligned to 64 bytes: the conversions' streaming stores (the
/// CPU block route) need whole aligned cache lines.
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(64)));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <typename U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};
using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  /// The bytes: a view into the file, or owned replacement bytes.
  llvm::ArrayRef<uint8_t> data;
  AlignedBytes owned;
};

struct File {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<Tensor> tensors; // in data-offset order
  std::map<std::string, std::string> metadata;

  Tensor *find(llvm::StringRef name);
};

/// Reads and validates `path`.
llvm::Expected<File> read(llvm::StringRef path);

/// Validates the bytes of `buffer` (`name` is for messages). The header must
/// be a JSON object of at most 100 MB nesting at most 64 deep; every size is
/// overflow-checked; tensors may not overlap; metadata values are strings.
llvm::Expected<File> parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::StringRef name);

/// What a header says about one tensor, for writing a file tensor by
/// tensor: its data follows the previous tensor's, in the order given.
struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// The bytes before the data of a file holding `tensors` (in this order)
/// and `metadata`: the 8-byte size and the JSON header, padded so that the
/// data starts 8-byte aligned, as the reference writer does.
std::string encodeHeader(llvm::ArrayRef<TensorInfo> tensors,
                         const std::map<std::string, std::string> &metadata);

/// Gives back the memory pages that hold `bytes` (a view into `file`'s
/// mapping) once they have been used: read through a mapping, a file's
/// pages otherwise stay in the process (its resident set) until the end.
/// The bytes stay readable (the pages are read again from the page cache).
/// Does nothing when the file was read into memory rather than mapped.
void releasePages(const File &file, llvm::ArrayRef<uint8_t> bytes);

/// Maps the pages that hold `bytes` in one call (where the system can),
/// instead of one page fault per few pages as they are first read.
void prefetchPages(const File &file, llvm::ArrayRef<uint8_t> bytes);

/// Where `bytes` (a view into `file`'s data) start in the file.
uint64_t fileOffset(const File &file, llvm::ArrayRef<uint8_t> bytes);

/// Serializes `file` to `os`.
void write(const File &file, llvm::raw_ostream &os);

/// Writes `file` to `path` as OutputFile does (never clobbering OUT or
/// leaving a partial file behind).
llvm::Error write(const File &file, llvm::StringRef path);

} // namespace microscale::safetensors

#endif
