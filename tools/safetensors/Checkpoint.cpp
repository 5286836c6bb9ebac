//===- Checkpoint.cpp - A checkpoint: one file, or shards and an index ----===//
#include "Checkpoint.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>

using namespace microscale::safetensors;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

const Tensor *Checkpoint::find(llvm::StringRef name) const {
  for (const Shard &shard : shards)
    for (const Tensor &tensor : shard.file.tensors)
      if (tensor.name == name)
        return &tensor;
  return nullptr;
}

const Shard &Checkpoint::shardOf(const Tensor &tensor) const {
  for (const Shard &shard : shards)
    if (!shard.file.tensors.empty() && &tensor >= &shard.file.tensors.front() &&
        &tensor <= &shard.file.tensors.back())
      return shard;
  llvm_unreachable("the tensor is not one of the checkpoint's");
}

size_t Checkpoint::numTensors() const {
  size_t count = 0;
  for (const Shard &shard : shards)
    count += shard.file.tensors.size();
  return count;
}

uint64_t Checkpoint::dataBytes() const {
  uint64_t bytes = 0;
  for (const Shard &shard : shards)
    for (const Tensor &tensor : shard.file.tensors)
      bytes += tensor.data.size();
  return bytes;
}

bool microscale::safetensors::looksLikeCheckpoint(llvm::StringRef name) {
  if (fs::is_directory(name) || name.ends_with(".safetensors") ||
      name.ends_with(".index.json"))
    return true;
  // A regular file that starts like one: a plausible header size, then
  // '{'. (Not a FIFO or device: reading it here would take its bytes.)
  if (!fs::is_regular_file(name))
    return false;
  int fd;
  if (fs::openFileForRead(name, fd))
    return false;
  char head[9];
  llvm::Expected<size_t> got =
      fs::readNativeFile(fs::convertFDToNativeFile(fd), head);
  fs::closeFile(fd);
  if (!got) {
    llvm::consumeError(got.takeError());
    return false;
  }
  if (*got != sizeof(head) || head[8] != '{')
    return false;
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i)
    size = size << 8 | static_cast<uint8_t>(head[i]);
  return size >= 2 && size <= 100'000'000;
}

/// A shard name from an index: a plain file name in the index's directory,
/// never a path out of it.
static bool isPlainFileName(llvm::StringRef name) {
  return !name.empty() && name != "." && name != ".." && !name.contains('/') &&
         !name.contains('\\') && !name.contains('\0');
}

static llvm::Expected<Checkpoint> openSingle(llvm::StringRef file) {
  Checkpoint checkpoint;
  checkpoint.directory = path::parent_path(file).str();
  if (checkpoint.directory.empty())
    checkpoint.directory = ".";
  llvm::Expected<File> read = microscale::safetensors::read(file);
  if (!read)
    return read.takeError();
  checkpoint.shards.push_back({path::filename(file).str(), std::move(*read)});
  return std::move(checkpoint);
}

static llvm::Expected<Checkpoint> openIndex(llvm::StringRef indexPath) {
  auto fail = [&](const llvm::Twine &why) {
    return failure("'" + indexPath +
                   "' is not a valid checkpoint index: " + why);
  };
  auto text = llvm::MemoryBuffer::getFile(indexPath, /*IsText=*/true);
  if (!text)
    return failure("cannot read '" + indexPath +
                   "': " + text.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*text)->getBuffer());
  if (!json)
    return fail("malformed JSON: " + llvm::toString(json.takeError()));
  llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("not a JSON object");
  const llvm::json::Object *weightMap = root->getObject("weight_map");
  if (!weightMap)
    return fail("no \"weight_map\" object");
  if (const llvm::json::Value *meta = root->get("metadata");
      meta && !meta->getAsObject())
    return fail("\"metadata\" is not an object");

  Checkpoint checkpoint;
  checkpoint.directory = path::parent_path(indexPath).str();
  if (checkpoint.directory.empty())
    checkpoint.directory = ".";
  checkpoint.indexName = path::filename(indexPath).str();
  // Which shard each tensor is in, by name; the shards in name order.
  std::map<std::string, std::string> shardOfTensor;
  std::map<std::string, std::vector<std::string>> tensorsOfShard;
  for (const auto &[key, value] : *weightMap) {
    std::optional<llvm::StringRef> shard = value.getAsString();
    if (!shard)
      return fail("the entry of tensor '" + key.str() +
                  "' in \"weight_map\" is not a file name");
    if (!isPlainFileName(*shard))
      return fail("tensor '" + key.str() + "' is mapped to '" + *shard +
                  "', which is not a file name in the index's directory");
    shardOfTensor[key.str()] = shard->str();
    tensorsOfShard[shard->str()].push_back(key.str());
  }
  if (tensorsOfShard.empty())
    return fail("\"weight_map\" is empty");
  for (auto &[shardName, names] : tensorsOfShard) {
    llvm::SmallString<256> shardPath(checkpoint.directory);
    path::append(shardPath, shardName);
    llvm::Expected<File> file = microscale::safetensors::read(shardPath);
    if (!file)
      return fail(llvm::toString(file.takeError()));
    for (const std::string &name : names)
      if (!file->find(name))
        return fail("tensor '" + name + "' is mapped to '" + shardName +
                    "', which has no tensor of that name");
    for (const Tensor &tensor : file->tensors) {
      auto listed = shardOfTensor.find(tensor.name);
      if (listed == shardOfTensor.end())
        return fail("'" + shardName + "' holds tensor '" + tensor.name +
                    "', which \"weight_map\" does not list");
      if (listed->second != shardName)
        return fail("'" + shardName + "' holds tensor '" + tensor.name +
                    "', which \"weight_map\" maps to '" + listed->second + "'");
    }
    checkpoint.shards.push_back({shardName, std::move(*file)});
  }
  checkpoint.index = std::move(*root);
  return std::move(checkpoint);
}

llvm::Expected<Checkpoint>
microscale::safetensors::openCheckpoint(llvm::StringRef name) {
  if (!fs::is_directory(name)) {
    if (name.ends_with(".json"))
      return openIndex(name);
    return openSingle(name);
  }
  // A directory: its index, else its one .safetensors file.
  std::vector<std::string> indexes, files;
  std::error_code ec;
  for (fs::directory_iterator it(name, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef entry = path::filename(it->path());
    if (entry.ends_with(".safetensors.index.json"))
      indexes.push_back(it->path());
    else if (entry.ends_with(".safetensors"))
      files.push_back(it->path());
  }
  if (ec)
    return failure("cannot read the directory '" + name + "': " + ec.message());
  llvm::sort(indexes);
  if (indexes.size() == 1)
    return openIndex(indexes.front());
  if (indexes.size() > 1)
    return failure("'" + name + "' holds " + llvm::Twine(indexes.size()) +
                   " indexes (" + path::filename(indexes[0]) + ", " +
                   path::filename(indexes[1]) + "): name the one to convert");
  if (files.size() == 1)
    return openSingle(files.front());
  return failure("'" + name + "' holds no *.safetensors.index.json and " +
                 llvm::Twine(files.size()) +
                 " .safetensors files: name the index or the file");
}

std::string microscale::safetensors::encodeIndex(const Checkpoint &checkpoint,
                                                 uint64_t totalSize) {
  llvm::json::Object index = checkpoint.index;
  llvm::json::Object *meta = index.getObject("metadata");
  if (!meta) {
    index["metadata"] = llvm::json::Object{};
    meta = index.getObject("metadata");
  }
  (*meta)["total_size"] = totalSize;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(index))) << "\n";
  return text;
}
