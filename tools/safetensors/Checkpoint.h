//===- Checkpoint.h - One file, or shards and an index ----------*- C++ -*-===//
//
// How models ship their weights: one .safetensors file, or shards
// (model-00001-of-00003.safetensors, ...) listed by an index
// (model.safetensors.index.json: {"metadata": {"total_size": N},
// "weight_map": {tensor: shard}}). A checkpoint is opened from the file,
// the index, or the directory holding either; the index is checked against
// the shards (every entry names a tensor its shard holds, every tensor of a
// shard is listed, shard names are plain file names in the index's
// directory) before any byte is used. Shards are mapped, not read: a tensor
// costs memory only while it is used (releasePages).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TOOLS_CHECKPOINT_H
#define MICROSCALE_TOOLS_CHECKPOINT_H

#include "Safetensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace microscale::safetensors {

struct Shard {
  /// The file's name in the checkpoint's directory (as the index names it),
  /// or, for a single file, its name.
  std::string fileName;
  File file;
};

struct Checkpoint {
  /// The directory holding the shards and the index.
  std::string directory;
  /// The index's file name; none for a single file.
  std::optional<std::string> indexName;
  /// The index as read, to be written back with the new total size.
  llvm::json::Object index;
  /// In the order of their file names.
  std::vector<Shard> shards;

  bool sharded() const { return indexName.has_value(); }
  /// The tensor named `name`, in whichever shard holds it, or null.
  const Tensor *find(llvm::StringRef name) const;
  /// The shard holding `tensor`.
  const Shard &shardOf(const Tensor &tensor) const;
  /// How many tensors and bytes of tensor data the shards hold.
  size_t numTensors() const;
  uint64_t dataBytes() const;
};

/// Opens `path`: a .safetensors file, an index (*.index.json), or a
/// directory holding exactly one index or else exactly one .safetensors
/// file. Says why it cannot.
llvm::Expected<Checkpoint> openCheckpoint(llvm::StringRef path);

/// Whether `path` names something openCheckpoint reads as a checkpoint (a
/// directory, an index, a .safetensors file, or a file that starts like
/// one), rather than raw bytes.
bool looksLikeCheckpoint(llvm::StringRef path);

/// The checkpoint's index with its total size set to `totalSize` (the
/// other keys kept), as JSON text.
std::string encodeIndex(const Checkpoint &checkpoint, uint64_t totalSize);

} // namespace microscale::safetensors

#endif
