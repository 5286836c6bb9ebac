//===- ByteTileConversion.cpp - Byte layouts converted by translated tiles ===//
#include "microscale/Dialect/Microscale/Utils/ByteTileConversion.h"

#include "microscale/Reference/Layout.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir::microscale;
using ::microscale::ref::Layout;

namespace {
/// The byte offsets of one batch's elements in both layouts, row-major by
/// logical index, and the batch strides, checked on three batches.
///
/// A batch above `maxBatchBytes` is cut into equal blocks of its columns
/// (or rows) where both layouts store each block as a translation of the
/// first (Hopper's and Blackwell's scales keep blocks of 256 and 128
/// columns apart; a K-contiguous side, columns; an N-contiguous side,
/// rows): the blocks are then the plan's batches. Every block of the first
/// batch is checked.
struct BatchImages {
  int64_t rows = 0, cols = 0, batches = 1;
  int64_t sourceBatchBytes = 0, destBatchBytes = 0;
  /// Blocks per logical batch and the logical dim they cut (0: rows, 1:
  /// columns); a plan batch b is block b % blocks of logical batch b /
  /// blocks.
  int64_t blocks = 1;
  int blockAxis = 1;
  /// Offsets within a batch: below kByteTileMaxBatchBytes, 32 bits (the
  /// planner's memory is a few times a batch's bytes).
  static_assert(kByteTileMaxBatchBytes <= INT32_MAX);
  std::vector<int32_t> source, dest;

  /// Byte offset of element (r, c) of plan batch `batch`, or -1 where its
  /// bits are not one whole byte.
  int64_t byteOf(const Layout &layout, int64_t batch, int64_t r,
                 int64_t c) const {
    const std::vector<int64_t> &shape = layout.getLogicalShape();
    const size_t rank = shape.size();
    const int64_t block = batch % blocks;
    batch /= blocks;
    llvm::SmallVector<int64_t, 8> index(rank);
    index[rank - 2] = blockAxis == 0 ? block * rows + r : r;
    index[rank - 1] = blockAxis == 1 ? block * cols + c : c;
    for (size_t d = rank - 2; d-- > 0;) {
      index[d] = batch % shape[d];
      batch /= shape[d];
    }
    std::array<int64_t, 8> bits;
    layout.locate(index.data(), bits.data());
    if (bits[0] % 8)
      return -1;
    for (int i = 1; i < 8; ++i)
      if (bits[i] != bits[0] + i)
        return -1;
    return bits[0] / 8;
  }

  bool build(const Layout &from, const Layout &to, int64_t maxBatchBytes,
             bool cutIntoBlocks) {
    const std::vector<int64_t> &shape = from.getLogicalShape();
    if (shape.size() < 2 || shape != to.getLogicalShape() ||
        from.getElementBits() != 8 || to.getElementBits() != 8)
      return false;
    const int64_t allRows = shape[shape.size() - 2];
    const int64_t allCols = shape[shape.size() - 1];
    int64_t logicalBatches = 1;
    for (size_t d = 0; d + 2 < shape.size(); ++d)
      logicalBatches *= shape[d];
    if (allRows <= 0 || allCols <= 0 || logicalBatches <= 0)
      return false;
    maxBatchBytes = std::min(maxBatchBytes, kByteTileMaxBatchBytes);
    auto tryBlocks = [&](int axis, int64_t count) {
      const int64_t planBatches = logicalBatches * count;
      if (from.getStorageBytes() % planBatches ||
          to.getStorageBytes() % planBatches)
        return false;
      blocks = count;
      blockAxis = axis;
      batches = planBatches;
      rows = axis == 0 ? allRows / count : allRows;
      cols = axis == 1 ? allCols / count : allCols;
      sourceBatchBytes = from.getStorageBytes() / planBatches;
      destBatchBytes = to.getStorageBytes() / planBatches;
      if (destBatchBytes > maxBatchBytes || sourceBatchBytes > maxBatchBytes)
        return false;
      return fill(from, to);
    };
    if (tryBlocks(1, 1))
      return true;
    if (!cutIntoBlocks)
      return false;
    // Too large (or not batches of translations at all): blocks small
    // enough to plan quickly, the fewest that are translations.
    if (from.getStorageBytes() / logicalBatches <= maxBatchBytes &&
        to.getStorageBytes() / logicalBatches <= maxBatchBytes)
      return false;
    const int64_t target =
        std::min(maxBatchBytes, kByteTileBlockBytes);
    for (int axis : {1, 0}) {
      const int64_t extent = axis == 1 ? allCols : allRows;
      for (int64_t count = 2; count <= extent; ++count) {
        if (extent % count)
          continue;
        const int64_t bytes =
            std::max(from.getStorageBytes(), to.getStorageBytes()) /
            (logicalBatches * count);
        if (bytes > target)
          continue;
        if (tryBlocks(axis, count))
          return true;
      }
    }
    return false;
  }

private:
  /// The images of plan batch 0, checked against blocks 1 to blocks - 1
  /// of the first logical batch and against the first block of the
  /// second, middle and last.
  bool fill(const Layout &from, const Layout &to) {
    source.assign(rows * cols, 0);
    dest.assign(rows * cols, 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t s = byteOf(from, 0, r, c), d = byteOf(to, 0, r, c);
        if (s < 0 || d < 0 || s >= sourceBatchBytes || d >= destBatchBytes)
          return false;
        source[r * cols + c] = static_cast<int32_t>(s);
        dest[r * cols + c] = static_cast<int32_t>(d);
      }
    llvm::SmallVector<int64_t, 8> checked;
    for (int64_t block = 1; block < blocks; ++block)
      checked.push_back(block);
    const int64_t logicalBatches = batches / blocks;
    for (int64_t b : {int64_t(1), logicalBatches / 2, logicalBatches - 1})
      if (b > 0 && b < logicalBatches && !llvm::is_contained(checked, b * blocks))
        checked.push_back(b * blocks);
    // Batch b is batch 0 moved by b strides, on both sides.
    for (int64_t b : checked)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          if (byteOf(from, b, r, c) !=
                  b * sourceBatchBytes + source[r * cols + c] ||
              byteOf(to, b, r, c) != b * destBatchBytes + dest[r * cols + c])
            return false;
    return true;
  }
};

/// The largest of 16, 8, 4, 2, 1 that divides all of `values`.
int64_t commonAlignment(std::initializer_list<int64_t> values) {
  int64_t a = 16;
  for (int64_t v : values)
    while (v % a)
      a /= 2;
  return a;
}

/// One kind's gather: its mode; for each chunk the loaded position each of
/// its reads takes (a byte, or for the word gathers the first byte of a
/// word; -1: the zero byte); for the word gathers, for each destination
/// byte the read it takes and its byte within that read.
struct KindGather {
  ByteTileGather mode = ByteTileGather::bytes;
  int64_t readsPerChunk = 0;
  std::vector<int64_t> reads;
  std::vector<int8_t> readOfByte, byteInRead;
};

/// The cheapest gather `loadedOf` (a kind's loaded byte per destination
/// byte, chunks of `w`) allows: four word reads per chunk where every chunk
/// lies in at most four shared words, two per destination word where every
/// destination word lies in at most two, else a read per byte. Word
/// membership is that of the loaded bytes: the shared padding keeps words
/// whole (its period and size are multiples of 4).
KindGather chooseGather(const std::vector<int64_t> &loadedOf, int64_t w,
                        bool wordGather) {
  const int64_t chunks = static_cast<int64_t>(loadedOf.size()) / w;
  auto wordOf = [&](int64_t byte) {
    const int64_t loaded = loadedOf[byte];
    return loaded < 0 ? int64_t(-1) : loaded / 4;
  };
  // The distinct words of bytes [first, first + count), in order.
  auto distinctWords = [&](int64_t first, int64_t count) {
    llvm::SmallVector<int64_t, 16> words;
    for (int64_t k = first; k < first + count; ++k)
      if (!llvm::is_contained(words, wordOf(k)))
        words.push_back(wordOf(k));
    return words;
  };
  bool quads = wordGather && w == 16, pairs = wordGather && w % 4 == 0;
  for (int64_t c = 0; c < chunks && (quads || pairs); ++c) {
    quads = quads && distinctWords(c * w, w).size() <= 4;
    for (int64_t j = 0; j < w / 4 && pairs; ++j)
      pairs = distinctWords(c * w + 4 * j, 4).size() <= 2;
  }
  KindGather g;
  g.mode = quads   ? ByteTileGather::wordQuads
           : pairs ? ByteTileGather::wordPairs
                   : ByteTileGather::bytes;
  g.readsPerChunk = ByteTilePlan::getReadsPerChunk(g.mode, w);
  if (g.mode == ByteTileGather::bytes) {
    g.reads = loadedOf;
    return g;
  }
  g.readOfByte.resize(loadedOf.size());
  g.byteInRead.resize(loadedOf.size());
  // Slots: the chunk's distinct words (quads) or each destination word's
  // (pairs, two slots each), a word repeated where there are fewer.
  auto assign = [&](int64_t first, int64_t count, int64_t slot0,
                    int64_t slots) {
    llvm::SmallVector<int64_t, 16> words = distinctWords(first, count);
    for (int64_t s = 0; s < slots; ++s) {
      const int64_t word = words[s < int64_t(words.size()) ? s : 0];
      g.reads.push_back(word < 0 ? -1 : 4 * word);
    }
    for (int64_t k = first; k < first + count; ++k) {
      g.readOfByte[k] = static_cast<int8_t>(
          slot0 + (llvm::find(words, wordOf(k)) - words.begin()));
      g.byteInRead[k] =
          static_cast<int8_t>(loadedOf[k] < 0 ? 0 : loadedOf[k] % 4);
    }
  };
  for (int64_t c = 0; c < chunks; ++c) {
    if (quads) {
      assign(c * w, w, 0, 4);
      continue;
    }
    for (int64_t j = 0; j < w / 4; ++j)
      assign(c * w + 4 * j, 4, 2 * j, 2);
  }
  return g;
}

/// The gather's bank conflicts for kind 0 with `threads` threads: the
/// average over warp-wide reads of the most distinct 4-byte words any bank
/// serves. `rotation`: the byte gather's read order per chunk
/// (ByteTilePlan::Kind::chunkRotation), or empty.
double conflictDegree(const ByteTilePlan &plan, const KindGather &gather,
                      llvm::ArrayRef<uint8_t> rotation = {}) {
  const int64_t r = gather.readsPerChunk;
  const int64_t chunks = static_cast<int64_t>(gather.reads.size()) / r;
  int64_t total = 0, reads = 0;
  std::array<std::array<int64_t, 32>, 32> words; // per bank, distinct words
  std::array<int, 32> count;
  for (int64_t first = 0; first < chunks; first += 32) {
    const int64_t lanes = std::min<int64_t>(32, chunks - first);
    for (int64_t k = 0; k < r; ++k) {
      count.fill(0);
      int degree = 0;
      for (int64_t lane = 0; lane < lanes; ++lane) {
        const int64_t c = first + lane;
        const int64_t loaded =
            gather.reads[c * r + (rotation.empty() ? k
                                                   : (k + rotation[c]) % r)];
        const int64_t word =
            (loaded < 0 ? plan.zeroByte : plan.sharedPosition(loaded)) / 4;
        const int bank = word % 32;
        auto &list = words[bank];
        if (std::find(list.begin(), list.begin() + count[bank], word) ==
            list.begin() + count[bank])
          list[count[bank]++] = word;
        degree = std::max(degree, count[bank]);
      }
      total += degree;
      ++reads;
    }
  }
  return reads ? double(total) / reads : 1.0;
}

/// Read orders for a byte gather (ByteTilePlan::Kind::chunkRotation):
/// warp by warp (32 consecutive chunks, as the threads take them), each
/// chunk's rotation the one whose reads add the least to the banks the
/// warp's other chunks already load at each step (the sum of squared
/// distinct words per bank), in two passes over the warp. Empty where the
/// rotations do not lower the conflict degree.
std::vector<uint8_t> chooseRotations(const ByteTilePlan &plan,
                                     const KindGather &gather) {
  const int64_t r = gather.readsPerChunk;
  if (gather.mode != ByteTileGather::bytes || r != 16)
    return {};
  const int64_t chunks = static_cast<int64_t>(gather.reads.size()) / r;
  std::vector<int64_t> word(gather.reads.size());
  for (size_t i = 0; i < word.size(); ++i)
    word[i] = (gather.reads[i] < 0 ? plan.zeroByte
                                   : plan.sharedPosition(gather.reads[i])) /
              4;
  std::vector<uint8_t> rotation(chunks, 0);
  // Per step and bank: the distinct words the warp reads there, counted.
  std::array<std::array<llvm::SmallVector<std::pair<int64_t, int>, 4>, 32>,
             16>
      banks;
  auto update = [&](int64_t c, int64_t rot, int delta) {
    for (int64_t k = 0; k < r; ++k) {
      const int64_t w = word[c * r + (k + rot) % r];
      auto &list = banks[k][w % 32];
      auto it = llvm::find_if(list, [&](auto &p) { return p.first == w; });
      if (it == list.end()) {
        list.push_back({w, delta});
        continue;
      }
      it->second += delta;
      if (it->second == 0)
        list.erase(it);
    }
  };
  for (int64_t first = 0; first < chunks; first += 32) {
    const int64_t last = std::min<int64_t>(first + 32, chunks);
    for (auto &step : banks)
      for (auto &list : step)
        list.clear();
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t c = first; c < last; ++c) {
        if (pass)
          update(c, rotation[c], -1);
        int64_t bestCost = INT64_MAX;
        for (int64_t rot = 0; rot < r; ++rot) {
          int64_t cost = 0;
          for (int64_t k = 0; k < r; ++k) {
            const int64_t w = word[c * r + (k + rot) % r];
            const auto &list = banks[k][w % 32];
            const int64_t n =
                int64_t(list.size()) +
                (llvm::any_of(list, [&](auto &p) { return p.first == w; })
                     ? 0
                     : 1);
            cost += n * n;
          }
          if (cost < bestCost) {
            bestCost = cost;
            rotation[c] = static_cast<uint8_t>(rot);
          }
        }
        update(c, rotation[c], +1);
      }
  }
  return rotation;
}

/// The chunks of one kind (`chunks`, sorted) in the copy-in's groups of
/// four along `pitch` (ByteTilePlan::transposedQuads): each chain c, c +
/// pitch, ... of them cut into fours, its last group filled up with that
/// group's first chunk. `positionOf[i]`: where chunk i went.
std::vector<int64_t> quadOrder(const std::vector<int64_t> &chunks,
                               int64_t pitch,
                               std::vector<int64_t> &positionOf) {
  auto indexOf = [&](int64_t offset) -> int64_t {
    auto it = std::lower_bound(chunks.begin(), chunks.end(), offset);
    return it != chunks.end() && *it == offset ? it - chunks.begin() : -1;
  };
  std::vector<int64_t> order;
  positionOf.assign(chunks.size(), -1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (indexOf(chunks[i] - pitch) >= 0)
      continue;
    for (int64_t at = i; at >= 0; at = indexOf(chunks[at] + pitch)) {
      positionOf[at] = order.size();
      order.push_back(chunks[at]);
    }
    while (order.size() % 4)
      order.push_back(order[order.size() / 4 * 4]);
  }
  return order;
}

/// `loadedOf` (a kind's loaded byte per destination byte, chunks in order)
/// for the same chunks in groups of four transposed: chunk i moved to
/// `positionOf[i]`.
std::vector<int64_t> quadLoadedOf(const std::vector<int64_t> &loadedOf,
                                  const std::vector<int64_t> &positionOf) {
  std::vector<int64_t> result;
  result.reserve(loadedOf.size());
  for (int64_t loaded : loadedOf) {
    if (loaded < 0) {
      result.push_back(-1);
      continue;
    }
    result.push_back(ByteTilePlan::transposedIndex(positionOf[loaded / 16],
                                                   loaded % 16));
  }
  return result;
}

/// The warp-wide shared-store wavefronts of a copy-in that transposes
/// `groups` groups of four chunks (ByteTilePlan::transposedQuads), thread
/// g storing group g's 64 bytes as pieces of `piece` bytes in order: per
/// store, the lanes of one phase (128 bytes) serialise on a bank as many
/// times as they address distinct words there.
int64_t quadStoreWavefronts(const ByteTilePlan &plan, int64_t groups,
                            int64_t piece) {
  const int64_t lanesPerPhase = 128 / piece;
  int64_t total = 0;
  std::array<llvm::SmallVector<int64_t, 4>, 32> words;
  for (int64_t first = 0; first < groups; first += 32)
    for (int64_t k = 0; k < 64 / piece; ++k)
      for (int64_t phase = first; phase < std::min(first + 32, groups);
           phase += lanesPerPhase) {
        for (auto &list : words)
          list.clear();
        size_t degree = 0;
        for (int64_t g = phase;
             g < std::min({phase + lanesPerPhase, first + 32, groups}); ++g) {
          const int64_t at = plan.sharedPosition(64 * g + k * piece) / 4;
          for (int64_t word = at; word < at + piece / 4; ++word) {
            auto &list = words[word % 32];
            if (!llvm::is_contained(list, word))
              list.push_back(word);
            degree = std::max(degree, list.size());
          }
        }
        total += degree;
      }
  return total;
}

/// The plan with tiles of `group` indices along `groupedAxis` by `span`
/// indices of the other dim (a divisor of its extent), or std::nullopt
/// where the tiles are not translations of one another or their accesses
/// could not be `minWidth` bytes wide.
std::optional<ByteTilePlan> planGroup(const BatchImages &images,
                                      int groupedAxis, int64_t group,
                                      int64_t span, int64_t sourceBytes,
                                      int64_t threads, bool wordGather,
                                      bool transposedCopies,
                                      int64_t minWidth = 1) {
  const int64_t rows = images.rows, cols = images.cols;
  const int64_t along = groupedAxis == 1 ? cols : rows;
  const int64_t whole = groupedAxis == 1 ? rows : cols;
  group = std::min(group, along);
  if (span <= 0 || whole % span)
    return std::nullopt;
  ByteTilePlan plan;
  plan.batches = images.batches;
  plan.groupedAxis = groupedAxis;
  plan.group = group;
  plan.numGroups = (along + group - 1) / group;
  plan.span = span;
  plan.numSplits = whole / span;
  plan.hasEdge = along % group != 0;
  plan.threads = threads;
  plan.sourceBatchStride = images.sourceBatchBytes;
  plan.destBatchStride = images.destBatchBytes;
  if (group * span > kByteTileMaxSharedBytes)
    return std::nullopt;
  // Element (w, j) of tile (s, g): index s * span + w of the cut dim, g *
  // group + j of the grouped one.
  auto element = [&](int64_t s, int64_t g, int64_t w, int64_t j) {
    const int64_t i = g * group + j, k = s * span + w;
    return groupedAxis == 1 ? k * cols + i : i * cols + k;
  };
  const int64_t fullGroups = plan.numGroups - (plan.hasEdge ? 1 : 0);
  // The strides from tile 0 to its neighbours (an edge tile's base follows
  // them too; its tables are its own, relative to that base); every tile's
  // elements must be those of the tile of its kind at split 0, translated.
  if (plan.numGroups >= 2) {
    plan.sourceGroupStride = images.source[element(0, 1, 0, 0)] -
                             images.source[element(0, 0, 0, 0)];
    plan.destGroupStride =
        images.dest[element(0, 1, 0, 0)] - images.dest[element(0, 0, 0, 0)];
  }
  if (plan.numSplits >= 2) {
    plan.sourceSplitStride = images.source[element(1, 0, 0, 0)] -
                             images.source[element(0, 0, 0, 0)];
    plan.destSplitStride =
        images.dest[element(1, 0, 0, 0)] - images.dest[element(0, 0, 0, 0)];
    // The bounds check below takes the furthest tile at the last split.
    if (plan.sourceSplitStride < 0 || plan.destSplitStride < 0)
      return std::nullopt;
  }
  // The strides bound the accesses' width (checked before the walks over
  // the batch below, which the search for a wider tile would repeat).
  if (commonAlignment({images.sourceBatchBytes, plan.sourceGroupStride,
                       plan.sourceSplitStride}) < minWidth ||
      commonAlignment({images.destBatchBytes, plan.destGroupStride,
                       plan.destSplitStride}) < minWidth)
    return std::nullopt;
  for (int64_t s = 0; s < plan.numSplits; ++s)
    for (int64_t g = 0; g < plan.numGroups; ++g) {
      // The edge tile of split 0 is its kind's own reference.
      const int64_t reference = g < fullGroups ? 0 : g;
      if (s == 0 && g == reference)
        continue;
      const int64_t extent = std::min(group, along - g * group);
      const int64_t sourceShift = (g - reference) * plan.sourceGroupStride +
                                  s * plan.sourceSplitStride;
      const int64_t destShift = (g - reference) * plan.destGroupStride +
                                s * plan.destSplitStride;
      for (int64_t w = 0; w < span; ++w)
        for (int64_t j = 0; j < extent; ++j) {
          const int64_t e = element(s, g, w, j),
                        e0 = element(0, reference, w, j);
          if (images.source[e] != images.source[e0] + sourceShift ||
              images.dest[e] != images.dest[e0] + destShift)
            return std::nullopt;
        }
    }

  // Which tile (s * numGroups + g) writes each destination byte of a
  // batch: its elements', and the padding after them (before the first
  // element: the first's).
  const int64_t batchBytes = images.destBatchBytes;
  const int64_t tilesPerBatch = plan.numSplits * plan.numGroups;
  std::vector<int32_t> owner(batchBytes, -1), elementAt(batchBytes, -1);
  for (int64_t s = 0; s < plan.numSplits; ++s)
    for (int64_t g = 0; g < plan.numGroups; ++g) {
      const int64_t extent = std::min(group, along - g * group);
      for (int64_t w = 0; w < span; ++w)
        for (int64_t j = 0; j < extent; ++j) {
          const int64_t e = element(s, g, w, j);
          const int64_t x = images.dest[e];
          if (owner[x] != -1)
            return std::nullopt;
          owner[x] = static_cast<int32_t>(s * plan.numGroups + g);
          elementAt[x] = e;
        }
    }
  {
    int32_t last = -1;
    for (int64_t x = 0; x < batchBytes; ++x) {
      if (owner[x] == -1)
        owner[x] = last;
      last = owner[x];
    }
    int32_t first = -1;
    for (int64_t x = 0; x < batchBytes && first == -1; ++x)
      first = elementAt[x] >= 0 ? owner[x] : -1;
    for (int64_t x = 0; x < batchBytes && owner[x] == -1; ++x)
      owner[x] = first;
  }
  // Padding after the last element of a split can belong to the next
  // split's tile of the same group: Hopper's rows of padding columns hold
  // the spans of every split one after the other, and the element before
  // the row is the last split's. A padding byte one split stride after
  // padding of the same group takes the split after that byte's (the
  // splits repeat in that order), else split 0.
  if (plan.numSplits > 1) {
    const int32_t groups = static_cast<int32_t>(plan.numGroups);
    std::vector<int32_t> splitOf(batchBytes);
    for (int64_t x = 0; x < batchBytes; ++x) {
      if (elementAt[x] >= 0) {
        splitOf[x] = owner[x] / groups;
        continue;
      }
      const int64_t before = x - plan.destSplitStride;
      const int32_t group = owner[x] % groups;
      splitOf[x] = before >= 0 && elementAt[before] < 0 &&
                           owner[before] % groups == group
                       ? (splitOf[before] + 1) %
                             static_cast<int32_t>(plan.numSplits)
                       : 0;
      owner[x] = splitOf[x] * groups + group;
    }
  }
  std::vector<std::vector<int32_t>> written(tilesPerBatch);
  for (int64_t x = 0; x < batchBytes; ++x)
    written[owner[x]].push_back(static_cast<int32_t>(x));
  for (int64_t s = 0; s < plan.numSplits; ++s)
    for (int64_t g = 0; g < plan.numGroups; ++g) {
      const int64_t reference = g < fullGroups ? 0 : g;
      if (s == 0 && g == reference)
        continue;
      const std::vector<int32_t> &list = written[s * plan.numGroups + g];
      const std::vector<int32_t> &first = written[reference];
      const int64_t shift = (g - reference) * plan.destGroupStride +
                            s * plan.destSplitStride;
      if (list.size() != first.size())
        return std::nullopt;
      for (size_t i = 0; i < list.size(); ++i)
        if (list[i] != first[i] + shift)
          return std::nullopt;
    }

  // Chunk widths: every tile's share of the destination in whole aligned
  // chunks; source chunks aligned wherever a tile's base falls.
  // group < along wherever there is an edge, so the edge tile is never
  // tile 0.
  llvm::SmallVector<int64_t, 2> kindGroups = {0};
  if (plan.hasEdge)
    kindGroups.push_back(plan.numGroups - 1);
  plan.storeBytes = commonAlignment(
      {images.destBatchBytes, plan.destGroupStride, plan.destSplitStride});
  for (int64_t g : kindGroups) {
    const std::vector<int32_t> &list = written[g];
    for (size_t i = 0; i < list.size();) {
      while (list[i] % plan.storeBytes)
        plan.storeBytes /= 2;
      size_t run = 1;
      while (i + run < list.size() && list[i + run] == list[i] + int64_t(run))
        ++run;
      while (run % plan.storeBytes)
        plan.storeBytes /= 2;
      i += run;
    }
  }
  plan.loadBytes = commonAlignment({images.sourceBatchBytes,
                                    plan.sourceGroupStride,
                                    plan.sourceSplitStride});
  if (plan.storeBytes < 4 || plan.loadBytes < 4)
    return std::nullopt;

  // Per kind: the source chunks (relative to the tile's source base), the
  // destination chunks, and for each destination byte the loaded byte it
  // takes (-1: zero).
  std::vector<std::vector<int64_t>> loadedOfKind;
  int64_t maxLoaded = 0;
  for (int64_t g : kindGroups) {
    const int64_t sourceBase = g * plan.sourceGroupStride;
    const int64_t destBase = g * plan.destGroupStride;
    const int64_t extent = std::min(group, along - g * group);
    std::vector<int64_t> chunks;
    for (int64_t w = 0; w < span; ++w)
      for (int64_t j = 0; j < extent; ++j) {
        const int64_t rel = images.source[element(0, g, w, j)] - sourceBase;
        chunks.push_back(rel - ((rel % plan.loadBytes) + plan.loadBytes) %
                                   plan.loadBytes);
      }
    std::sort(chunks.begin(), chunks.end());
    chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
    // Nothing read outside the source, for any batch or tile of this kind
    // (the furthest: the last full tile, or the edge tile, at the last
    // split).
    const int64_t furthest = g == 0 ? fullGroups - 1 : g;
    if (sourceBase + chunks.front() < 0 ||
        (images.batches - 1) * images.sourceBatchBytes +
                (plan.numSplits - 1) * plan.sourceSplitStride +
                furthest * plan.sourceGroupStride + chunks.back() +
                plan.loadBytes >
            sourceBytes)
      return std::nullopt;
    // Reading much more than a full tile needs would not pay (an edge tile
    // may read its padded neighbours: it is one per batch).
    if (int64_t(chunks.size()) * plan.loadBytes > 2 * span * group + 64)
      return std::nullopt;
    ByteTilePlan::Kind kind;
    for (int64_t c : chunks)
      kind.sourceChunks.push_back(static_cast<int32_t>(c));
    const std::vector<int32_t> &list = written[g];
    std::vector<int64_t> loadedOf;
    for (size_t i = 0; i < list.size(); i += plan.storeBytes)
      kind.destChunks.push_back(static_cast<int32_t>(list[i] - destBase));
    for (int64_t x : list) {
      const int64_t e = elementAt[x];
      if (e < 0) {
        loadedOf.push_back(-1);
        continue;
      }
      const int64_t rel = images.source[e] - sourceBase;
      const int64_t chunk = rel - ((rel % plan.loadBytes) + plan.loadBytes) %
                                      plan.loadBytes;
      const int64_t index =
          std::lower_bound(chunks.begin(), chunks.end(), chunk) - chunks.begin();
      loadedOf.push_back(index * plan.loadBytes + (rel - chunk));
    }
    maxLoaded = std::max<int64_t>(maxLoaded, chunks.size() * plan.loadBytes);
    plan.kinds.push_back(std::move(kind));
    loadedOfKind.push_back(std::move(loadedOf));
  }

  std::vector<KindGather> gathers;
  for (size_t k = 0; k < plan.kinds.size(); ++k) {
    gathers.push_back(
        chooseGather(loadedOfKind[k], plan.storeBytes, wordGather));
    plan.kinds[k].gather = gathers.back().mode;
  }
  // Where the full tile's gather reads bytes, the copy-in may transpose the
  // chunks in groups of four rows (ByteTilePlan::transposedQuads): tried
  // along every distance from the first chunk to one of the next 64, and
  // taken along the one whose gather reads the fewest words per chunk, if
  // fewer than the bytes.
  if (wordGather && transposedCopies && plan.loadBytes == 16 &&
      gathers[0].mode == ByteTileGather::bytes) {
    auto chunksOf = [&](size_t k) {
      const std::vector<int32_t> &list = plan.kinds[k].sourceChunks;
      return std::vector<int64_t>(list.begin(), list.end());
    };
    const std::vector<int64_t> first = chunksOf(0);
    std::optional<std::pair<int64_t, int64_t>> best; // (reads, pitch)
    for (size_t i = 1; i < first.size() && i <= 64; ++i) {
      const int64_t pitch = first[i] - first[0];
      std::vector<int64_t> positionOf;
      quadOrder(first, pitch, positionOf);
      const KindGather g = chooseGather(
          quadLoadedOf(loadedOfKind[0], positionOf), plan.storeBytes, true);
      if (g.readsPerChunk < (best ? best->first : gathers[0].readsPerChunk))
        best = std::make_pair(g.readsPerChunk, pitch);
    }
    if (best) {
      plan.transposedQuads = true;
      maxLoaded = 0;
      for (size_t k = 0; k < plan.kinds.size(); ++k) {
        std::vector<int64_t> positionOf;
        std::vector<int64_t> order =
            quadOrder(chunksOf(k), best->second, positionOf);
        plan.kinds[k].sourceChunks.assign(order.begin(), order.end());
        loadedOfKind[k] = quadLoadedOf(loadedOfKind[k], positionOf);
        gathers[k] = chooseGather(loadedOfKind[k], plan.storeBytes, true);
        plan.kinds[k].gather = gathers[k].mode;
        maxLoaded = std::max<int64_t>(maxLoaded, order.size() * 16);
      }
    }
  }

  // The shared layout: the padding that spreads the gather's reads best.
  struct Choice {
    int64_t period, pad;
    double degree;
    std::vector<uint8_t> rotation;
  };
  std::optional<Choice> best;
  // The width of the copy-in's shared stores: the chunks' where the
  // padding keeps them aligned.
  auto sharedStoreBytes = [&] {
    return plan.sharedPad ? commonAlignment({plan.loadBytes, plan.sharedPad,
                                             plan.sharedPeriod})
                          : plan.loadBytes;
  };
  // With the transposed copy-in, whose stores the padding spreads too, the
  // layout is chosen by the wavefronts of both (warp-wide gather reads
  // times their conflict degree, plus the stores').
  const int64_t gatherReads =
      (static_cast<int64_t>(plan.kinds[0].destChunks.size()) + 31) / 32 *
      gathers[0].readsPerChunk;
  const int64_t groups =
      static_cast<int64_t>(plan.kinds[0].sourceChunks.size()) / 4;
  auto wavefronts = [&](double degree) {
    return degree * gatherReads +
           quadStoreWavefronts(plan, groups, sharedStoreBytes());
  };
  // The best layout whose pads are multiples of `padStep` bytes; with
  // `rotate`, byte gathers may read their chunks in rotated orders.
  auto search = [&](int64_t padStep, bool rotate) {
    std::optional<Choice> found;
    std::optional<double> bestWavefronts;
    for (int64_t period = 64; period <= 8192; period *= 2) {
      if (period % plan.loadBytes)
        continue;
      for (int64_t pad = 0; pad <= 60; pad += padStep) {
        if (pad && period >= maxLoaded)
          break;
        // A transposed group's 64 bytes stay in one period.
        if (plan.transposedQuads && period % 64)
          continue;
        plan.sharedPeriod = period;
        plan.sharedPad = pad;
        plan.zeroByte = (plan.sharedPosition(maxLoaded) + 3) / 4 * 4;
        double degree = conflictDegree(plan, gathers[0]);
        if (plan.transposedQuads) {
          const double cost = wavefronts(degree);
          if (!bestWavefronts || cost < *bestWavefronts - 1e-9) {
            bestWavefronts = cost;
            found = Choice{period, pad, degree, {}};
          }
          continue;
        }
        std::vector<uint8_t> rotation;
        if (rotate && degree > 1 + 1e-9) {
          rotation = chooseRotations(plan, gathers[0]);
          const double rotated = conflictDegree(plan, gathers[0], rotation);
          if (rotated < degree - 1e-9)
            degree = rotated;
          else
            rotation.clear();
        }
        if (!found || degree < found->degree - 1e-9)
          found = Choice{period, pad, degree, std::move(rotation)};
      }
    }
    return found;
  };
  best = search(4, false);
  // Pads that leave the chunks unaligned cost the copy-in its cp.async
  // (register loads, then narrower shared stores); where a layout of
  // aligned pads, with rotated byte reads, spreads the gather clearly
  // better, it is taken instead (docs/design.md, "Rotated byte gathers").
  const auto storeBytesOf = [&](const Choice &c) {
    return c.pad ? commonAlignment({plan.loadBytes, c.pad, c.period})
                 : plan.loadBytes;
  };
  if (!plan.transposedQuads && plan.loadBytes == 16 && plan.storeBytes == 16 &&
      storeBytesOf(*best) < 16) {
    std::optional<Choice> aligned = search(16, true);
    if (aligned &&
        aligned->degree < best->degree - kByteTileAlignedLayoutMinGain)
      best = std::move(aligned);
  }
  plan.sharedPeriod = best->period;
  plan.sharedPad = best->pad;
  plan.conflictDegree = best->degree;
  plan.sharedStoreBytes = sharedStoreBytes();
  plan.zeroByte = (plan.sharedPosition(maxLoaded) + 15) / 16 * 16;
  // The full tile's read orders, and the edge tile's for the same layout.
  plan.kinds[0].chunkRotation = std::move(best->rotation);
  for (size_t k = 1;
       k < plan.kinds.size() && !plan.kinds[0].chunkRotation.empty(); ++k) {
    std::vector<uint8_t> rotation = chooseRotations(plan, gathers[k]);
    if (!rotation.empty() &&
        conflictDegree(plan, gathers[k], rotation) <
            conflictDegree(plan, gathers[k]) - 1e-9)
      plan.kinds[k].chunkRotation = std::move(rotation);
  }
  // A rotation travels in the low bits of the chunk's destination offset.
  for (ByteTilePlan::Kind &kind : plan.kinds)
    if (llvm::any_of(kind.destChunks,
                     [&](int32_t o) { return o % plan.storeBytes; }))
      kind.chunkRotation.clear();
  plan.sharedBytes = plan.zeroByte + 16;
  if (plan.sharedBytes > kByteTileMaxSharedBytes || plan.zeroByte > 0xFFFF)
    return std::nullopt;
  // Each chunk as its first read's position and the offsets of all its
  // reads from it (and the word gathers' permute selectors), the offsets
  // shared between chunks. Rotated read orders multiply the patterns: where
  // they would take more than the table may hold, the chunks read in order.
  auto buildPatterns = [&]() -> bool {
    std::map<std::vector<int16_t>, uint16_t> patternIndex;
    const int64_t w = plan.storeBytes;
    for (size_t k = 0; k < plan.kinds.size(); ++k) {
      ByteTilePlan::Kind &kind = plan.kinds[k];
      const KindGather &gather = gathers[k];
      const int64_t r = gather.readsPerChunk;
      for (size_t c = 0; c < kind.destChunks.size(); ++c) {
        const int64_t rotation =
            kind.chunkRotation.empty() ? 0 : kind.chunkRotation[c];
        auto position = [&](int64_t read) {
          const int64_t loaded = gather.reads[c * r + (read + rotation) % r];
          return loaded < 0 ? plan.zeroByte : plan.sharedPosition(loaded);
        };
        const int64_t base = position(0);
        std::vector<int16_t> pattern(w, 0);
        for (int64_t read = 0; read < r; ++read) {
          const int64_t offset = position(read) - base;
          if (offset < INT16_MIN || offset > INT16_MAX)
            return false;
          pattern[read] = static_cast<int16_t>(offset);
        }
        for (int64_t j = 0; j < w / 4 && gather.mode != ByteTileGather::bytes;
             ++j) {
          uint32_t low = 0, high = 0, merge = 0, pair = 0;
          for (int64_t b = 0; b < 4; ++b) {
            const int64_t x = c * w + 4 * j + b;
            const uint32_t slot = gather.readOfByte[x];
            const uint32_t byte = gather.byteInRead[x];
            if (gather.mode == ByteTileGather::wordPairs) {
              pair |= (4 * (slot - 2 * j) + byte) << (4 * b);
            } else if (slot < 2) {
              low |= (4 * slot + byte) << (4 * b);
              merge |= uint32_t(b) << (4 * b);
            } else {
              high |= (4 * (slot - 2) + byte) << (4 * b);
              merge |= uint32_t(4 + b) << (4 * b);
            }
          }
          auto entry = [&](int64_t part) {
            return ByteTilePlan::getSelectorEntry(gather.mode, w, j, part);
          };
          if (gather.mode == ByteTileGather::wordPairs) {
            pattern[entry(0)] = static_cast<int16_t>(pair);
          } else {
            pattern[entry(0)] = static_cast<int16_t>(low);
            pattern[entry(1)] = static_cast<int16_t>(high);
            pattern[entry(2)] = static_cast<int16_t>(merge);
          }
        }
        auto [it, inserted] = patternIndex.try_emplace(
            pattern, static_cast<uint16_t>(patternIndex.size()));
        if (inserted) {
          if (int64_t(patternIndex.size()) > kByteTileMaxPatterns)
            return false;
          llvm::append_range(plan.patterns, pattern);
        }
        kind.chunkBase.push_back(static_cast<uint16_t>(base));
        kind.chunkPattern.push_back(it->second);
      }
    }
    return true;
  };
  if (!buildPatterns()) {
    if (llvm::none_of(plan.kinds, [](const ByteTilePlan::Kind &kind) {
          return !kind.chunkRotation.empty();
        }))
      return std::nullopt;
    plan.patterns.clear();
    for (ByteTilePlan::Kind &kind : plan.kinds) {
      kind.chunkRotation.clear();
      kind.chunkBase.clear();
      kind.chunkPattern.clear();
    }
    plan.conflictDegree = conflictDegree(plan, gathers[0]);
    if (!buildPatterns())
      return std::nullopt;
  }
  return plan;
}
} // namespace

/// The shortest contiguous run of a tile side's chunks (chunk offsets in
/// units of `width` bytes, any order, repeats allowed), in bytes.
static int64_t shortestChunkRun(std::vector<int32_t> chunks, int64_t width) {
  llvm::sort(chunks);
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < chunks.size();) {
    size_t j = i + 1;
    while (j < chunks.size() && chunks[j] == chunks[j - 1] + width)
      ++j;
    shortest = std::min(shortest, static_cast<int64_t>(j - i) * width);
    i = j;
  }
  return shortest;
}

/// The tile search of planByteTileConversion on built batch images, for
/// one minRun.
static std::optional<ByteTilePlan>
planTiles(const BatchImages &images, const Layout &from, int64_t threads,
          bool wordGather, bool transposedCopies, int64_t minTileBytes,
          int64_t minRun) {
  // The tile: along the long dim, or the other where that fails, the
  // smallest group that the layouts' periods allow, that makes a tile of at
  // least minTileBytes whose global accesses are as wide as any (16
  // bytes) and move whole 32-byte sectors on both sides; failing that, the
  // tile that moves the most whole sectors, then the widest accesses,
  // among such tiles, else the largest tile that fits. The other dim is
  // taken whole, unless that leaves the accesses narrower than 16 bytes,
  // sectors in part, or no plan: then it is cut into the fewest equal
  // spans that do better. Both come from a group that cuts a side's
  // contiguous runs: 4 rows of a K-contiguous side whose columns are 224
  // bytes load 4 bytes per column, where 16 rows load 16, and 16 rows
  // leave half of every other sector to the next tile, where 32 do not.
  auto bytesPerLoad = [](const ByteTilePlan &p) {
    int64_t loaded = 0, stored = 0;
    for (const ByteTilePlan::Kind &k : p.kinds) {
      loaded += k.sourceChunks.size();
      stored += k.destChunks.size();
    }
    return double(loaded * p.loadBytes + stored * p.storeBytes) /
           double(loaded + stored);
  };
  // A tile under `minTileBytes` is small, and so is one under
  // kByteTileMinBytesShortRuns whose runs are short: loads of less than a
  // line or stores of less than two sectors. Smaller tiles make more
  // blocks, whose loads and stores then overlap, but a block waits for its
  // whole tile before its first store (docs/performance.md).
  auto isSmall = [&](const ByteTilePlan &p) {
    const int64_t bytes = p.group * p.span;
    if (bytes < minTileBytes)
      return true;
    if (bytes >= kByteTileMinBytesShortRuns)
      return false;
    const ByteTilePlan::Kind &k = p.kinds.front();
    return shortestChunkRun(k.sourceChunks, p.loadBytes) < 128 ||
           shortestChunkRun(k.destChunks, p.storeBytes) < 64;
  };
  auto width = [](const ByteTilePlan &p) {
    return std::min(p.loadBytes, p.storeBytes);
  };
  // The share of the 32-byte sectors a tile touches (on its worse side)
  // that it reads or writes whole: DRAM moves sectors, so a tile whose rows
  // end mid-sector moves bytes it does not use, or writes sectors in
  // halves that another tile completes later.
  auto sectorUse = [](const ByteTilePlan &p) {
    // `chunks` holds `count` distinct chunks.
    auto side = [](const std::vector<int32_t> &chunks, int64_t count,
                   int64_t w) {
      std::vector<int64_t> sectors;
      sectors.reserve(chunks.size());
      for (int32_t c : chunks)
        for (int64_t s = c / 32; s <= (c + w - 1) / 32; ++s)
          sectors.push_back(s);
      llvm::sort(sectors);
      const int64_t distinct =
          std::unique(sectors.begin(), sectors.end()) - sectors.begin();
      return distinct ? double(count * w) / double(32 * distinct) : 1.0;
    };
    const ByteTilePlan::Kind &k = p.kinds.front();
    int64_t sourceCount = k.sourceChunks.size();
    if (p.transposedQuads) {
      // The groups' fillers read a chunk twice.
      std::vector<int32_t> distinct = k.sourceChunks;
      llvm::sort(distinct);
      sourceCount =
          std::unique(distinct.begin(), distinct.end()) - distinct.begin();
    }
    return std::min(side(k.sourceChunks, sourceCount, p.loadBytes),
                    side(k.destChunks, k.destChunks.size(), p.storeBytes));
  };
  // The shortest contiguous run a kind-0 tile loads, as the load width
  // times a power of two, up to minRun (0 where that is off): runs of whole
  // lines keep a DRAM page's lines in one block instead of spreading them
  // over the blocks that run together. (The store side is left out: tiles
  // lengthening store runs at the cost of load runs measured slower,
  // docs/performance.md.)
  auto accessRun = [&](const ByteTilePlan &p) -> int64_t {
    if (minRun <= 0)
      return 0;
    const ByteTilePlan::Kind &k = p.kinds.front();
    const int64_t shortest = shortestChunkRun(k.sourceChunks, p.loadBytes);
    int64_t run = p.loadBytes;
    while (run < minRun && 2 * run <= shortest)
      run *= 2;
    return std::min(run, minRun);
  };
  // Tiles compare by whole sectors, then by their runs (where minRun
  // asks), then by the accesses' width.
  auto moves = [&](const ByteTilePlan &p, const ByteTilePlan &current) {
    const double a = sectorUse(p), b = sectorUse(current);
    if (std::abs(a - b) > 1e-9)
      return a > b;
    const int64_t runP = accessRun(p), runCurrent = accessRun(current);
    if (runP != runCurrent)
      return runP > runCurrent;
    return bytesPerLoad(p) > bytesPerLoad(current) + 1e-9;
  };
  auto isDone = [&](const ByteTilePlan &p) {
    return !isSmall(p) && width(p) == 16 && sectorUse(p) > 1 - 1e-9 &&
           accessRun(p) >= minRun;
  };
  // The best tile with `span` rows or columns of the cut dim, its accesses
  // at least `minWidth` bytes wide.
  auto planSpan = [&](int axis, int64_t span, int64_t minWidth) {
    const int64_t along = axis == 1 ? images.cols : images.rows;
    std::optional<ByteTilePlan> best;
    for (int64_t group = 1;; group *= 2) {
      const int64_t g = std::min(group, along);
      if (g * span > kByteTileMaxSharedBytes)
        break;
      if (std::optional<ByteTilePlan> p =
              planGroup(images, axis, g, span, from.getStorageBytes(),
                        threads, wordGather, transposedCopies, minWidth)) {
        const bool take =
            !best || isSmall(*best) ||
            (!isSmall(*p) && moves(*p, *best));
        if (take)
          best = std::move(p);
        if (isDone(*best))
          break;
      }
      if (g == along)
        break;
    }
    return best;
  };
  std::optional<ByteTilePlan> chosen;
  for (int axis : {1, 0}) {
    const int64_t whole = axis == 1 ? images.rows : images.cols;
    std::optional<ByteTilePlan> best = planSpan(axis, whole, 1);
    if (best && (!chosen || moves(*best, *chosen)))
      chosen = std::move(best);
  }
  if (chosen && isDone(*chosen))
    return chosen;
  // Spans below this are not tried: their tiles' rows on the cut side
  // would be shorter than a 16-byte access.
  constexpr int64_t kMinSpan = 16;
  auto prefer = [&](const ByteTilePlan &p, const ByteTilePlan &current) {
    if (isSmall(p) != isSmall(current))
      return isSmall(current);
    const double a = sectorUse(p), b = sectorUse(current);
    if (std::abs(a - b) > 1e-9)
      return a > b;
    const int64_t runP = accessRun(p), runCurrent = accessRun(current);
    if (runP != runCurrent)
      return runP > runCurrent;
    return width(p) > width(current);
  };
  for (int axis : {1, 0}) {
    const int64_t whole = axis == 1 ? images.rows : images.cols;
    for (int64_t splits = 2; whole / splits >= kMinSpan; ++splits) {
      if (whole % splits)
        continue;
      // Only wider accesses than the whole dim's, or as wide with more
      // whole sectors or longer source runs, replace its tile.
      const int64_t minWidth =
          !chosen || isSmall(*chosen) ? 1
          : sectorUse(*chosen) < 1 - 1e-9 || accessRun(*chosen) < minRun
              ? width(*chosen)
              : 2 * width(*chosen);
      std::optional<ByteTilePlan> p = planSpan(axis, whole / splits, minWidth);
      if (p && (!chosen || prefer(*p, *chosen)))
        chosen = std::move(p);
      if (chosen && isDone(*chosen))
        return chosen;
    }
  }
  return chosen;
}

std::optional<ByteTilePlan>
mlir::microscale::planByteTileConversion(const Layout &from, const Layout &to,
                                         int64_t threads, bool wordGather,
                                         int64_t maxBatchBytes,
                                         bool blocksOfLargeBatches,
                                         bool transposedCopies,
                                         int64_t minTileBytes,
                                         int64_t minRun) {
  BatchImages images;
  if (!images.build(from, to, maxBatchBytes, blocksOfLargeBatches))
    return std::nullopt;
  std::optional<ByteTilePlan> plan = planTiles(
      images, from, threads, wordGather, transposedCopies, minTileBytes, 0);
  // (A tile whose load runs are already that long is what the search
  // with minRun finds too.)
  if (minRun <= 0 || !plan ||
      shortestChunkRun(plan->kinds.front().sourceChunks, plan->loadBytes) >=
          minRun)
    return plan;
  // Longer load runs only where the tile stays within kByteTileMaxRunGrowth
  // times the shared memory of the tile without them: fewer, larger tiles
  // cost more than the runs gain (docs/performance.md).
  std::optional<ByteTilePlan> longer =
      planTiles(images, from, threads, wordGather, transposedCopies,
                minTileBytes, minRun);
  if (longer &&
      longer->sharedBytes <= kByteTileMaxRunGrowth * plan->sharedBytes)
    return longer;
  return plan;
}

void mlir::microscale::runByteTilePlan(const ByteTilePlan &plan,
                                       const uint8_t *source, uint8_t *dest) {
  std::vector<uint8_t> shared(plan.sharedBytes);
  for (int64_t t = 0; t < plan.getNumTiles(); ++t) {
    const int64_t outer = t / plan.numGroups, g = t % plan.numGroups;
    const int64_t b = outer / plan.numSplits, split = outer % plan.numSplits;
    const ByteTilePlan::Kind &kind =
        plan.kinds[plan.hasEdge && g == plan.numGroups - 1 ? plan.kinds.size() - 1
                                                           : 0];
    const int64_t sourceBase = b * plan.sourceBatchStride +
                               split * plan.sourceSplitStride +
                               g * plan.sourceGroupStride;
    const int64_t destBase = b * plan.destBatchStride +
                             split * plan.destSplitStride +
                             g * plan.destGroupStride;
    std::fill(shared.begin(), shared.end(), 0xCD);
    shared[plan.zeroByte] = 0;
    for (size_t i = 0; i < kind.sourceChunks.size(); ++i)
      for (int64_t k = 0; k < plan.loadBytes; ++k)
        shared[plan.sharedPosition(plan.loadedIndex(i, k))] =
            source[sourceBase + kind.sourceChunks[i] + k];
    const int64_t w = plan.storeBytes;
    auto wordAt = [&](int64_t position) {
      uint32_t word;
      std::memcpy(&word, &shared[position], 4);
      return word;
    };
    for (size_t c = 0; c < kind.destChunks.size(); ++c) {
      const int16_t *entries = &plan.patterns[w * kind.chunkPattern[c]];
      uint8_t *out = &dest[destBase + kind.destChunks[c]];
      if (kind.gather == ByteTileGather::bytes) {
        const int64_t rotation =
            kind.chunkRotation.empty() ? 0 : kind.chunkRotation[c];
        for (int64_t k = 0; k < w; ++k)
          out[(k + rotation) % w] = shared[kind.chunkBase[c] + entries[k]];
        continue;
      }
      // The word gathers as the kernel runs them: word reads, permutes.
      auto slot = [&](int64_t s) {
        return wordAt(kind.chunkBase[c] + entries[s]);
      };
      for (int64_t j = 0; j < w / 4; ++j) {
        auto selector = [&](int64_t part) {
          return uint32_t(uint16_t(entries[ByteTilePlan::getSelectorEntry(
              kind.gather, w, j, part)]));
        };
        uint32_t word;
        if (kind.gather == ByteTileGather::wordPairs) {
          word = permuteBytes(slot(2 * j), slot(2 * j + 1), selector(0));
        } else {
          const uint32_t low = permuteBytes(slot(0), slot(1), selector(0));
          const uint32_t high = permuteBytes(slot(2), slot(3), selector(1));
          word = permuteBytes(low, high, selector(2));
        }
        std::memcpy(out + 4 * j, &word, 4);
      }
    }
  }
}
