//===- ByteTileConversion.h - Byte layouts converted by translated tiles -*- C++ -*-===//
//
// Scale tensors ([E, K/32, N] E8M0 bytes) are small in one dim: gpt-oss has
// 90 scale blocks along K. Every scale layout keeps each byte whole, and
// each fixes a period along the other dim (128 rows of N for the Blackwell
// atom, 32 x num_warps for Hopper's, 1 for the strided forms) after which
// its image repeats at a fixed byte distance. A tile that takes the whole
// short dim and one period's worth of the long one is therefore a fixed set
// of source bytes and a fixed set of destination bytes, the same for every
// tile up to a translation: one destination range of a few KiB for the
// swizzled layouts and the K-contiguous form (128 x 90 = 11520 bytes), or
// 90 rows of 128 bytes for the N-contiguous one.
//
// The plan lists, for one such tile, the source chunks to copy into shared
// memory (16-byte aligned loads, whatever the rows' pitch), the destination
// chunks to write and, for each destination byte, the shared byte it takes
// (or zero: the layout's padding). The kernel is then the same for every
// layout pair: copy in, gather out. Where the long dim is not a multiple of
// the period, the last tile of each batch has tables of its own. The
// destination's padding is written by the tile owning the element before
// it, so every destination byte is written exactly once.
//
// The short dim is not always short: 7168 / 32 = 224 scale rows against
// Hopper's 256-column period is 56 KiB, and 4096 columns of a 512-row
// tensor leave 8 rows per tile, whose K-contiguous side is read 8 bytes at
// a time. The other dim is then cut into equal spans (a divisor of its
// extent, so that there is no second kind of edge): a tile of `group` x
// `span`, translated along both dims.
//
// Everything is derived from, and checked against, the layouts' reference
// maps at compile time: every element of the first batch and of two more,
// and every tile's share of the destination.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_BYTETILECONVERSION_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_BYTETILECONVERSION_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace microscale::ref {
class Layout;
} // namespace microscale::ref

namespace mlir::microscale {

/// How the destination chunks of one kind of tile are gathered from shared
/// memory. Shared memory serves one read per lane per instruction whatever
/// its width, so a chunk whose bytes lie in a few shared words is built
/// from word reads and byte permutes (`prmt.b32`) rather than byte reads.
enum class ByteTileGather {
  /// Every destination byte read on its own: storeBytes reads per chunk.
  bytes,
  /// Destination word j from shared slots 2j and 2j + 1 (two words, the
  /// same one twice where its bytes lie in one), one permute: storeBytes /
  /// 2 reads per chunk.
  wordPairs,
  /// A 16-byte chunk from four shared words, each destination word three
  /// permutes over them: 4 reads per chunk.
  wordQuads,
};

struct ByteTilePlan {
  /// The tables of one kind of tile: every full tile shares kind 0; the
  /// last group of each outer index, where the grouped dim is not a
  /// multiple of the group, is kind 1.
  struct Kind {
    /// Source offsets, relative to the tile's source base, of the
    /// `loadBytes`-byte chunks copied into shared memory, in shared order.
    std::vector<int32_t> sourceChunks;
    /// Destination offsets, relative to the tile's destination base, of
    /// the `storeBytes`-byte chunks written.
    std::vector<int32_t> destChunks;
    /// Destination byte k of chunk c takes shared byte chunkBase[c] +
    /// patterns[storeBytes * chunkPattern[c] + k] (`zeroByte` for padding).
    /// Chunks repeat a few patterns (a transpose's: one per position of the
    /// row boundary in the chunk), so the kernel reads 4 bytes per chunk
    /// and a pattern table that stays in the cache, not 2 bytes per byte.
    std::vector<uint16_t> chunkBase, chunkPattern;
    /// With a word gather, a pattern's storeBytes entries are instead the
    /// slots' shared byte offsets from chunkBase (word-aligned; slot 0 at
    /// offset 0), then the permute selectors: wordPairs, slots 0 to
    /// storeBytes / 2 - 1, then one selector per destination word over its
    /// two slots; wordQuads, slots 0 to 3, then per destination word the
    /// selectors of slots (0, 1), of slots (2, 3) and of those two results.
    ByteTileGather gather = ByteTileGather::bytes;
    /// With the byte gather, where not empty: chunk c reads its bytes in
    /// an order rotated by chunkRotation[c], so that at each of the
    /// gather's steps the lanes of a warp read different banks (a
    /// transpose's lanes would otherwise read rows of one column that
    /// share a bank). Read k of the chunk, at chunkBase[c] + patterns[...
    /// + k], is destination byte (k + chunkRotation[c]) % storeBytes; the
    /// kernel rotates the gathered chunk back before storing it.
    std::vector<uint8_t> chunkRotation;
  };

  /// Tiles: `group` indices of one of the last two logical dims
  /// (`groupedAxis` 0: the rows, 1: the columns) by `span` indices of the
  /// other, which is cut into `numSplits` = its extent / span equal parts
  /// (1 where the tile takes it whole). A batch has numSplits x numGroups
  /// tiles; the "outer" index o = batch * numSplits + split, and tile t =
  /// (outer t / numGroups, group t % numGroups).
  int64_t batches = 0, numGroups = 0, group = 0;
  int64_t numSplits = 1, span = 0;
  int groupedAxis = 1;
  bool hasEdge = false;
  /// Tile (b, s, g) reads from source byte b * sourceBatchStride + s *
  /// sourceSplitStride + g * sourceGroupStride and writes from destination
  /// byte b * destBatchStride + s * destSplitStride + g * destGroupStride,
  /// the tables' offsets added.
  int64_t sourceBatchStride = 0, sourceSplitStride = 0, sourceGroupStride = 0;
  int64_t destBatchStride = 0, destSplitStride = 0, destGroupStride = 0;
  llvm::SmallVector<Kind, 2> kinds;
  /// The gather patterns of all kinds, storeBytes offsets each.
  std::vector<int16_t> patterns;
  int64_t loadBytes = 16, storeBytes = 16;
  /// How the copy-in lays the loaded chunks out. In order (false): byte k
  /// of chunk i is loaded byte i * loadBytes + k. Transposed in groups of
  /// four (true; 16-byte chunks): the chunks come in groups of four
  /// consecutive rows of the source, a chain c, c + d, c + 2d, c + 3d, and
  /// the copy-in stores each group's 4 x 16 bytes transposed, byte k of
  /// its chunk r as loaded byte 64 * (i / 4) + 4 * k + r: the four rows'
  /// bytes of one column then share a shared word, so that a destination
  /// whose words run across the rows (an N-contiguous source read into
  /// the K-contiguous form) takes word reads instead of byte reads. A
  /// chain whose length is not a multiple of four has its last group
  /// filled up with the group's first chunk again, whose copies no
  /// destination byte takes.
  bool transposedQuads = false;
  /// Loaded byte x (chunk x / loadBytes) lies at shared byte x + x /
  /// sharedPeriod * sharedPad: the padding spreads the gather's byte reads
  /// over the banks. Stores into shared memory are `sharedStoreBytes` wide.
  int64_t sharedPeriod = 1 << 30, sharedPad = 0, sharedStoreBytes = 16;
  /// A byte of shared memory that holds zero, and the shared bytes in all.
  int64_t zeroByte = 0, sharedBytes = 0;
  /// Threads per block the gather's bank conflicts were minimised for.
  int64_t threads = 256;
  /// Sum over the gather's warp-wide byte reads of their bank-conflict
  /// degree, per read (1.0: conflict-free), for the full tile.
  double conflictDegree = 1.0;

  int64_t getNumOuter() const { return batches * numSplits; }
  int64_t getNumTiles() const { return getNumOuter() * numGroups; }
  int64_t getNumPatterns() const {
    return static_cast<int64_t>(patterns.size()) / storeBytes;
  }
  /// Shared reads per destination chunk of `kind`.
  int64_t getReadsPerChunk(const Kind &kind) const {
    return getReadsPerChunk(kind.gather, storeBytes);
  }
  static int64_t getReadsPerChunk(ByteTileGather gather, int64_t storeBytes) {
    switch (gather) {
    case ByteTileGather::bytes:
      return storeBytes;
    case ByteTileGather::wordPairs:
      return storeBytes / 2;
    case ByteTileGather::wordQuads:
      return 4;
    }
    return storeBytes;
  }
  /// A word gather's pattern entry holding the permute selector for
  /// destination word `word`: wordPairs, its one selector (`part` 0);
  /// wordQuads, `part` 0 and 1 the selectors of slots (0, 1) and (2, 3), 2
  /// that of their merge.
  static int64_t getSelectorEntry(ByteTileGather gather, int64_t storeBytes,
                                  int64_t word, int64_t part = 0) {
    const int64_t slots = getReadsPerChunk(gather, storeBytes);
    return gather == ByteTileGather::wordPairs ? slots + word
                                               : slots + 3 * word + part;
  }
  /// The loaded byte that byte `byte` of chunk `chunk` (of a kind's
  /// sourceChunks) becomes.
  int64_t loadedIndex(int64_t chunk, int64_t byte) const {
    return transposedQuads ? transposedIndex(chunk, byte)
                           : chunk * loadBytes + byte;
  }
  /// loadedIndex of a plan whose copy-in transposes groups of four.
  static int64_t transposedIndex(int64_t chunk, int64_t byte) {
    return chunk / 4 * 64 + 4 * byte + chunk % 4;
  }
  int64_t sharedPosition(int64_t loaded) const {
    return loaded + loaded / sharedPeriod * sharedPad;
  }
};

/// Limits of the plan: the shared memory a tile may take, the tile's size
/// below which a larger group is preferred, and the size below which it is
/// preferred too where the tile's load runs are shorter than a 128-byte
/// line or its store runs shorter than two 32-byte sectors.
inline constexpr int64_t kByteTileMaxSharedBytes = 40 * 1024;
inline constexpr int64_t kByteTileMinBytes = 4 * 1024;
inline constexpr int64_t kByteTileMinBytesShortRuns = 8 * 1024;
/// How much lower (in conflict degree, ByteTilePlan::conflictDegree) the
/// gather of a shared layout with 16-byte-aligned pads and rotated byte
/// reads must be than that of the best layout with 4-byte pads, whose
/// copy-in then loses cp.async, for the planner to take it.
inline constexpr double kByteTileAlignedLayoutMinGain = 0.25;
/// Plans with more gather patterns than this are not taken: their pattern
/// table would no longer stay in the cache.
inline constexpr int64_t kByteTileMaxPatterns = 1024;
/// Batches (of either side's storage) larger than this are planned as
/// blocks of their columns or rows where the layouts allow (see
/// `planByteTileConversion`), else not at all: the planner holds the
/// offsets of a whole batch.
inline constexpr int64_t kByteTileMaxBatchBytes = int64_t(16) << 20;
/// The load runs the NVIDIA outline pass asks the planner for by default
/// (planByteTileConversion's `minRun`): a 128-byte line.
inline constexpr int64_t kByteTileMinRun = 128;
/// A tile planned for longer load runs (planByteTileConversion's minRun)
/// may take at most this many times the shared memory of the tile planned
/// without them; else the latter is kept.
inline constexpr int64_t kByteTileMaxRunGrowth = 2;
/// The size those blocks are cut to at most: the planner walks a block
/// several times, once per tile shape tried.
inline constexpr int64_t kByteTileBlockBytes = int64_t(4) << 20;

/// The plan converting the storage of `from` into that of `to` (the same
/// logical tensor of 8-bit elements) with `threads` threads per tile, or
/// std::nullopt where no group gives translated tiles within the limits.
/// `wordGather` false keeps every kind on the byte gather. A batch above
/// `maxBatchBytes` (at most kByteTileMaxBatchBytes) is planned as equal
/// blocks of its columns or rows of at most kByteTileBlockBytes that both
/// layouts store as translations of one another (the fewest such blocks;
/// the plan's batches are then the blocks), or, where
/// `blocksOfLargeBatches` is false or no such blocks exist, not at all.
/// `transposedCopies` lets the copy-in transpose groups of four chunks
/// where that turns a kind's byte reads into word reads
/// (ByteTilePlan::transposedQuads). Tiles under `minTileBytes` count as
/// small: a larger group is preferred to them. `minRun` above 0: a
/// tile that reads its source in contiguous runs shorter than that many
/// bytes is not final; longer groups, then spans that cut the other dim,
/// are searched for one whose load runs are longer, which is taken where
/// it takes at most kByteTileMaxRunGrowth times the shared memory of the
/// tile planned without minRun.
std::optional<ByteTilePlan>
planByteTileConversion(const ::microscale::ref::Layout &from,
                       const ::microscale::ref::Layout &to,
                       int64_t threads = 256, bool wordGather = true,
                       int64_t maxBatchBytes = kByteTileMaxBatchBytes,
                       bool blocksOfLargeBatches = true,
                       bool transposedCopies = false,
                       int64_t minTileBytes = kByteTileMinBytes,
                       int64_t minRun = 0);

/// prmt.b32's byte select (selector nibbles 0-7: the bytes of x, then of
/// y; the sign-replicate modes are not used).
inline uint32_t permuteBytes(uint32_t x, uint32_t y, uint32_t selector) {
  uint32_t result = 0;
  for (int k = 0; k < 4; ++k) {
    const uint32_t pick = (selector >> (4 * k)) & 7;
    result |= ((pick < 4 ? x : y) >> (8 * (pick % 4)) & 0xFF) << (8 * k);
  }
  return result;
}

/// Runs `plan` on the host, tile by tile (a reference for the plan itself,
/// independent of any code generation): `dest` is written from `source`.
void runByteTilePlan(const ByteTilePlan &plan, const uint8_t *source,
                     uint8_t *dest);

} // namespace mlir::microscale

#endif
