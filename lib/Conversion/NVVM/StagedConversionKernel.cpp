//===- StagedConversionKernel.cpp - Conversions through shared tiles -----===//
//
// The GPU form of the block route (BlockConversion.h): where both layouts
// place each nibble of a block of the logical tensor at an address whose
// bits are a permutation of the element's index bits, one thread block
// converts one such block (a tile of 2^n nibbles, n = 11..14) in three
// phases:
//
//  1. copy the tile's source runs into shared memory A with 16-byte loads
//     (A holds the tile in the source's own address order, compacted);
//  2. each thread reads 8 words of A, routes their 64 nibbles in registers
//     into 8 words of the destination (a nibble swap by shifts and masks,
//     then byte permutes, `prmt.b32`; Hopper's Step B bit interleave undone
//     or applied on whole words), and writes them to shared memory B (the
//     tile in the destination's address order);
//  3. copy B to the destination runs with 16-byte stores.
//
// A thread's 8 words are the 64 nibbles whose element index varies in 6
// bits U: the 3 bits that select a nibble within a source word, the 3 that
// select it within a destination word, and more bits to make 6. The other
// n - 6 bits come from the thread index. Which of them the 32 lanes of a
// warp vary decides the shared-memory bank conflicts of phase 2; the plan
// picks U and the lane bits that minimize them on A and B together.
//
// The block shape, the order of blocks (bands), the strides and the word
// interleaves come from planBlockConversion, which checks them against the
// reference on sampled blocks. Storage rows may be any pitch apart (1440
// bytes for gpt-oss's K = 2880): the tile's address bits are virtual
// (BlockAddressBits), its row bits scaled by the pitch. Where the blocks do
// not write the whole destination (a layout's padding, and the elements
// outside the blocks on shapes that are not multiples of them), the blocks
// of the same launch after the tiles' write the rest, one unit per thread:
// 16-byte zeros for padding, the per-unit body for elements. The kernel
// needs 16-byte runs on both sides; other conversions (and unit ranges)
// take the generic per-unit kernel.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "HostEmulation.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"

#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"
#include "microscale/Dialect/Microscale/Utils/WordBitMap.h"
#include "microscale/Dialect/Microscale/Utils/ConstantTable.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Reference/BlockBits.h"
#include "microscale/Reference/Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

#define DEBUG_TYPE "microscale-staged-conversion"

namespace {
/// Nibble bits held by one thread: 3 within a word, 3 for its 8 registers.
constexpr int kHeldBits = 6;
constexpr int kWordsPerThread = 8;
/// Tiles of fewer threads share a block, up to this many threads.
constexpr int64_t kMinBlockThreads = 128;


SmallVector<int> sortedPositions(ArrayRef<int> bits) {
  SmallVector<int> sorted(bits.begin(), bits.end());
  llvm::sort(sorted);
  return sorted;
}

SmallVector<int> ranks(ArrayRef<int> bits) {
  SmallVector<int> sorted = sortedPositions(bits), rank;
  for (int b : bits)
    rank.push_back(llvm::find(sorted, b) - sorted.begin());
  return rank;
}

/// An XOR swizzle of a shared buffer's word addresses: bit `from` (>= 5)
/// of the address is XORed into bit `to` (2..4), so that lanes that differ
/// only in high bits reach different banks. Bits 0 and 1 stay: the 16-byte
/// accesses of phases 1 and 3 stay whole, and aligned 128-byte rows are
/// only permuted by chunks.
using Swizzle = SmallVector<std::pair<int, int>, 3>;

int64_t applySwizzle(const Swizzle &swizzle, int64_t word) {
  for (auto [from, to] : swizzle)
    word ^= ((word >> from) & 1) << to;
  return word;
}

/// The swizzle for a warp access whose lanes set word address bits
/// `laneBits` (one per lane bit): each lane bit at or above 5 goes to a
/// bank bit among 2..4 that no lane sets directly.
Swizzle makeSwizzle(ArrayRef<int> laneBits) {
  SmallVector<int> free;
  for (int t : {2, 3, 4})
    if (!llvm::is_contained(laneBits, t))
      free.push_back(t);
  Swizzle swizzle;
  for (int bit : laneBits)
    if (bit >= 5 && swizzle.size() < free.size())
      swizzle.push_back({bit, free[swizzle.size()]});
  return swizzle;
}

/// The worst number of distinct words that one bank serves when the 32
/// lanes of a warp access word sum_i bit(lane, i) << wordBits[i], swizzled.
int bankConflicts(ArrayRef<int> wordBits, const Swizzle &swizzle) {
  std::map<int64_t, std::set<int64_t>> banks;
  for (int64_t lane = 0; lane < 32; ++lane) {
    int64_t word = 0;
    for (int i = 0; i < 5; ++i)
      if ((lane >> i) & 1)
        word |= int64_t(1) << wordBits[i];
    word = applySwizzle(swizzle, word);
    banks[word % 32].insert(word);
  }
  int worst = 0;
  for (auto &[bank, words] : banks)
    worst = std::max<int>(worst, words.size());
  return worst;
}

struct TilePlan {
  BlockConversionPlan geometry;
  /// Tile bits (log2 of its nibbles).
  int n = 0;
  /// Per element bit: its bit in the compacted tile address (nibbles) of A
  /// (source order) and B (destination order).
  SmallVector<int> sourceRank, destRank;
  /// Compacted address bit k -> virtual nibble-address bit from the block's
  /// base (BlockAddressBits: bits from rowShift on count storage rows, which
  /// are pitchBytes apart).
  SmallVector<int> sourcePositions, destPositions;
  int sourceRowShift = 62, destRowShift = 62;
  int64_t sourcePitchBytes = 0, destPitchBytes = 0;
  /// Thread index bit i -> element bit (the first 5 are the lanes).
  SmallVector<int> threadBits;
  /// Register nibble position p (0: nibble in byte, 1-2: byte in word, 3-5:
  /// register) -> element bit, as loaded from A and as stored to B.
  std::array<int, kHeldBits> sourceState, targetState;
  /// The word-address swizzles of A and B.
  Swizzle swizzleA, swizzleB;

  /// Nibble bits of one run of consecutive bytes on either side (5: 16
  /// bytes), and its bytes.
  int sourceRunBits = 5, destRunBits = 5;
  int64_t getSourceRunBytes() const { return int64_t(1) << (sourceRunBits - 1); }
  int64_t getDestRunBytes() const { return int64_t(1) << (destRunBits - 1); }

  /// Blocks per tile along a band (innerStep) and along a batch's bands
  /// (bandStep), 1 or 2; a pair's second block is where element bit
  /// innerPairBit (bandPairBit) is set. Where a paired axis has an odd
  /// count of blocks, the axis' last tiles hold its first blocks only: their
  /// accesses to the missing ones are masked.
  int64_t innerStep = 1, bandStep = 1;
  int innerPairBit = -1, bandPairBit = -1;
  bool isHalfInner() const {
    return innerStep == 2 && geometry.blocksPerBand % 2;
  }
  bool isHalfBand() const {
    return bandStep == 2 && geometry.bandsPerBatch % 2;
  }

  /// Where the blocks do not divide the band axis (gpt-oss's K = 2880 =
  /// 22.5 blocks of 128 rows), one more band per batch, whose blocks hold the
  /// axis' last `extent` indices: an access is missing where its run's
  /// axis index reaches the extent. The run's axis index bits at or above
  /// `shift` come from run-index bits (`moves`: run-index bit -> axis bit -
  /// shift); those below lie within a run, and the extent is a multiple of
  /// 2^shift. Loads of missing runs give zeros; their stores are skipped
  /// unless they land on the destination's padding (`maskStores` false),
  /// which the zeros then write.
  struct EdgeBand {
    /// The edge is on the inner axis: one more block per band, not one
    /// more band per batch.
    bool inner = false;
    int64_t extent = 0;
    int sourceShift = 0, destShift = 0;
    SmallVector<std::pair<int, int>> sourceMoves, destMoves;
    bool maskStores = true;
    /// Where the source's runs hold axis bits above run-index ones (the
    /// Hopper image: a K bit inside a 16-byte run above K bits outside
    /// it), a mask per run cannot cut the edge: the edge's source runs are
    /// then loaded whole (they lie inside the source: checked) and their
    /// missing nibbles zeroed. sourceMoves (with sourceShift 0) give the
    /// run-index part of the axis index; per value v of the part inside
    /// the run, the loaded words' bits of the nibbles with that part.
    bool sourceNibbleMasks = false;
    SmallVector<std::pair<int64_t, SmallVector<uint32_t>>> sourceWithinMasks;
  };
  std::optional<EdgeBand> edge;

  int64_t getThreads() const { return int64_t(1) << (n - kHeldBits); }
  int64_t getTileBytes() const { return int64_t(1) << (n - 1); }
  int64_t getInnerTiles() const {
    return llvm::divideCeil(geometry.blocksPerBand, innerStep) +
           (edge && edge->inner ? 1 : 0);
  }
  int64_t getBandTiles() const {
    return llvm::divideCeil(geometry.bandsPerBatch, bandStep) +
           (edge && !edge->inner ? 1 : 0);
  }
  int64_t getNumTiles() const {
    return geometry.numBands / geometry.bandsPerBatch * getBandTiles() *
           getInnerTiles();
  }
};

/// The virtual address bit (BlockConversionPlan::sourceAddress' positions)
/// of a byte stride between blocks, where it is one: a power of two within a
/// storage row, or a power of two of rows.
std::optional<int> strideBit(const BlockAddressBits &bits,
                             int64_t strideBytes) {
  const int64_t nibbles = 2 * strideBytes;
  if (nibbles <= 0)
    return std::nullopt;
  if (nibbles < bits.pitch && llvm::isPowerOf2_64(nibbles))
    return static_cast<int>(llvm::Log2_64(nibbles));
  if (nibbles % bits.pitch == 0 && llvm::isPowerOf2_64(nibbles / bits.pitch))
    return bits.rowShift + static_cast<int>(llvm::Log2_64(nibbles / bits.pitch));
  return std::nullopt;
}

/// Whether the column bits of `bits` (those below rowShift) address nibbles
/// within one storage row.
bool columnsFitRow(const BlockAddressBits &bits) {
  int64_t span = 0;
  for (int position : bits)
    if (position < bits.rowShift)
      span += int64_t(1) << position;
  return span < bits.pitch;
}

/// Nibble-address bits from 0 up that `bits` holds below its row shift: a
/// storage row's contiguous extent of one block is 2^this nibbles.
int contiguousBits(const BlockAddressBits &bits) {
  int c = 0;
  while (c < bits.rowShift && llvm::is_contained(bits, c))
    ++c;
  return c;
}

/// Contiguous bits of a row segment that make a warp's accesses whole
/// 64-byte pieces (L2 requests of two sectors): shorter ones, as gpt-oss's
/// 32-byte rows of K = 2880 = 45 x 64 give, cost L2 bandwidth per byte.
constexpr int kWantedContiguousBits = 7;

/// Adds TilePlan::edge where the blocks (`blocks`: the planner's, before
/// any merge) leave the last indices of one axis to the gaps and one more
/// band per batch (the band axis) or one more block per band (the inner
/// axis) of masked blocks can take them: their present elements must be
/// where the plan's strides put them (checked on every one of the first
/// edge blocks' and on a later one), each destination byte written whole,
/// and what they write is then taken out of the batch's tail runs (band
/// axis) or the spans' gaps (inner axis).
void planEdgeBand(TilePlan &plan, const BlockConversionPlan &blocks,
                  const ::microscale::ref::Layout &fromLayout,
                  const ::microscale::ref::Layout &toLayout) {
  const BlockConversionPlan &g = plan.geometry;
  const bool tailElements =
      llvm::is_contained(g.batchTailRunHoldsElements, true);
  const bool spanElements = llvm::is_contained(g.spanGapHoldsElements, true);
  // One axis with an edge: the band axis where the tail holds elements,
  // the inner axis where the spans' gaps do.
  if (tailElements == spanElements)
    return;
  const bool inner = spanElements;
  if (inner ? plan.innerStep != 1 || g.blocksPerBand != blocks.blocksPerBand
            : plan.bandStep != 1)
    return;
  // The planner sees 8-bit tensors as nibbles.
  std::unique_ptr<::microscale::ref::Layout> fromView, toView;
  const ::microscale::ref::Layout *from = &fromLayout, *to = &toLayout;
  if (from->getElementBits() == 8) {
    fromView = ::microscale::ref::makeNibbleView(*from);
    toView = ::microscale::ref::makeNibbleView(*to);
    from = fromView.get();
    to = toView.get();
  }
  const std::vector<int64_t> &shape = from->getLogicalShape();
  const size_t rank = shape.size();
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  const int logRows = llvm::Log2_64(blocks.blockRows);
  const int logCols = llvm::Log2_64(blocks.blockCols);
  // The bands step down the rows where their blocks lie along the columns.
  const bool bandAxisRows = g.innerAlongCols;
  const bool edgeRows = inner ? !bandAxisRows : bandAxisRows;
  const int64_t axisExtent = edgeRows ? rows : cols;
  const int64_t blockExtent = edgeRows ? blocks.blockRows : blocks.blockCols;
  const int64_t otherExtent = edgeRows ? cols : rows;
  const int64_t otherBlock = edgeRows ? blocks.blockCols : blocks.blockRows;
  const int64_t fullBlocks = inner ? blocks.blocksPerBand : g.bandsPerBatch;
  const int64_t otherBlocks = inner ? g.bandsPerBatch : blocks.blocksPerBand;
  const int64_t edgeStart = fullBlocks * blockExtent;
  const int64_t extent = axisExtent - edgeStart;
  if (extent <= 0 || extent >= blockExtent || otherExtent % otherBlock ||
      otherExtent / otherBlock != otherBlocks)
    return;
  // Element bit of the edge axis' index bit i.
  const int axisBits = edgeRows ? logRows : logCols;
  auto elementBit = [&](int i) { return edgeRows ? logCols + i : i; };
  TilePlan::EdgeBand edge;
  edge.inner = inner;
  edge.extent = extent;
  auto masks = [&](ArrayRef<int> rank, int runBits, int &shift,
                   SmallVector<std::pair<int, int>> &moves) {
    shift = 0;
    while (shift < axisBits && rank[elementBit(shift)] < runBits)
      ++shift;
    for (int i = shift; i < axisBits; ++i) {
      if (rank[elementBit(i)] < runBits)
        return false;
      moves.push_back({rank[elementBit(i)] - runBits, i - shift});
    }
    return extent % (int64_t(1) << shift) == 0;
  };
  // The source's runs loaded whole, their missing nibbles zeroed: the
  // axis index is a run-index part plus a part inside the run.
  auto nibbleMasks = [&]() {
    const int runBits = plan.sourceRunBits;
    if (runBits < 3)
      return false; // runs of at least a word
    edge.sourceShift = 0;
    edge.sourceMoves.clear();
    SmallVector<std::pair<int, int>> within; // (nibble position, axis bit)
    for (int i = 0; i < axisBits; ++i) {
      const int position = plan.sourceRank[elementBit(i)];
      if (position >= runBits)
        edge.sourceMoves.push_back({position - runBits, i});
      else
        within.push_back({position, i});
    }
    const int64_t words = (int64_t(1) << runBits) / 8;
    std::map<int64_t, SmallVector<uint32_t>> byValue;
    for (int64_t slot = 0; slot < (int64_t(1) << runBits); ++slot) {
      int64_t value = 0;
      for (auto [position, bit] : within)
        value |= ((slot >> position) & 1) << bit;
      SmallVector<uint32_t> &mask = byValue[value];
      mask.resize(words, 0);
      // The nibble's bits before the word interleave, then where the
      // interleave puts them in the loaded word.
      for (int i = 0; i < 4; ++i) {
        int bit = 4 * (slot % 8) + i;
        if (g.sourceWordMap)
          bit = llvm::find(*g.sourceWordMap, bit) - g.sourceWordMap->begin();
        mask[slot / 8] |= uint32_t(1) << bit;
      }
    }
    edge.sourceWithinMasks.assign(byValue.begin(), byValue.end());
    edge.sourceNibbleMasks = true;
    return true;
  };
  // Stores that cannot be masked per run (the Hopper image as the
  // destination: a K bit inside a 16-byte run above K bits outside it) can
  // still go unmasked where every missing element lands on padding (below).
  const bool destRunsMaskable =
      masks(plan.destRank, plan.destRunBits, edge.destShift, edge.destMoves);
  if (!masks(plan.sourceRank, plan.sourceRunBits, edge.sourceShift,
             edge.sourceMoves) &&
      !nibbleMasks())
    return;

  // The region the edge blocks of one batch (band axis) or of one band
  // (inner axis) write in: the batch's tail, or band 0's span.
  const int64_t batches = g.numBands / g.bandsPerBatch;
  const int64_t regionStart = inner ? 0 : 2 * g.bandsPerBatch * g.spanBytes;
  const int64_t regionBytes = inner ? g.spanBytes : g.batchTailBytes;
  const int64_t regionNibbles = 2 * regionBytes;
  // Per region nibble: 0 not written by the edge blocks, 1 a present
  // element, 2 a missing one (zeros, where the stores are not masked).
  std::vector<uint8_t> written(regionNibbles, 0);
  std::vector<int64_t> index(rank, 0);
  const int64_t blockElements = int64_t(1) << (logRows + logCols);
  auto planned = [&](const BlockAddressBits &bits, int64_t batchStride,
                     int64_t bandStride, int64_t innerStride, int64_t batch,
                     int64_t band, int64_t innerBlock, int64_t e) {
    int64_t spread = 0;
    for (auto [j, position] : llvm::enumerate(bits))
      if ((e >> j) & 1)
        spread |= int64_t(1) << position;
    return 2 * (batch * batchStride + band * bandStride +
                innerBlock * innerStride) +
           bits.physical(spread);
  };
  auto reference = [&](const ::microscale::ref::Layout &layout, int64_t batch,
                       int64_t row, int64_t col) -> int64_t {
    int64_t b = batch;
    for (size_t d = rank - 2; d-- > 0;) {
      index[d] = b % shape[d];
      b /= shape[d];
    }
    index[rank - 2] = row;
    index[rank - 1] = col;
    int64_t bits[4];
    layout.locateBeforeInterleave(index.data(), bits);
    if (bits[0] % 4)
      return -1;
    for (int i = 1; i < 4; ++i)
      if (bits[i] != bits[0] + i)
        return -1;
    return bits[0] / 4;
  };
  bool storesLandOnPadding = true;
  const int64_t sourceNibbles = 2 * from->getStorageBytes();
  std::vector<int64_t> missing; // region nibbles
  // Edge block `k` (the band's block index, or the band) of `batch`; its
  // nibbles are recorded in the region when `record`.
  auto visit = [&](int64_t batch, int64_t k, bool record) {
    const int64_t band = inner ? k : g.bandsPerBatch;
    const int64_t innerBlock = inner ? blocks.blocksPerBand : k;
    // Block origin: the band's blocks lie along the columns or the rows.
    const int64_t rowBlock = bandAxisRows ? band : innerBlock;
    const int64_t colBlock = bandAxisRows ? innerBlock : band;
    for (int64_t e = 0; e < blockElements; ++e) {
      const int64_t r = e >> logCols, c = e & (blocks.blockCols - 1);
      const int64_t axis = edgeRows ? r : c;
      const int64_t row = rowBlock * blocks.blockRows + r;
      const int64_t col = colBlock * blocks.blockCols + c;
      const int64_t dest =
          planned(blocks.destAddress, blocks.destBatchStride,
                  blocks.destBandStride, blocks.destInnerStride, batch, band,
                  innerBlock, e);
      if (axis < extent) {
        const int64_t source =
            planned(blocks.sourceAddress, blocks.sourceBatchStride,
                    blocks.sourceBandStride, blocks.sourceInnerStride, batch,
                    band, innerBlock, e);
        if (source != reference(*from, batch, row, col) ||
            dest != reference(*to, batch, row, col))
          return false;
      } else if (edge.sourceNibbleMasks &&
                 planned(blocks.sourceAddress, blocks.sourceBatchStride,
                         blocks.sourceBandStride, blocks.sourceInnerStride,
                         batch, band, innerBlock, e) >= sourceNibbles) {
        // Whole runs are loaded: the missing elements' nibbles must lie
        // inside the source (its padding, here).
        return false;
      }
      if (!record)
        continue;
      const int64_t t = dest - regionStart;
      if (axis < extent) {
        if (t < 0 || t >= regionNibbles || written[t])
          return false;
        written[t] = 1;
      } else if (t < 0 || t >= regionNibbles) {
        storesLandOnPadding = false;
      } else {
        missing.push_back(t);
      }
    }
    return true;
  };
  // The band axis: every band's block of batch 0's edge band. The inner
  // axis: band 0's edge block, then the last band's.
  const int64_t recorded = inner ? 1 : blocks.blocksPerBand;
  for (int64_t k = 0; k < recorded; ++k)
    if (!visit(0, k, /*record=*/true))
      return;
  if (inner && !visit(0, g.bandsPerBatch - 1, /*record=*/false))
    return;
  if (batches > 1 && !visit(batches - 1, 0, /*record=*/false))
    return;
  // The last edge block reads furthest into the source.
  if (edge.sourceNibbleMasks &&
      !visit(batches - 1, inner ? g.bandsPerBatch - 1 : recorded - 1,
             /*record=*/false))
    return;
  // The region's bytes and their kinds, from the planner's runs.
  std::vector<int8_t> kind(regionBytes, -1); // -1: written by no gap
  const auto &runs = inner ? g.spanGaps : g.batchTailRuns;
  const auto &kinds = inner ? g.spanGapHoldsElements : g.batchTailRunHoldsElements;
  for (auto [run, elements] : llvm::zip(runs, kinds))
    for (int64_t k = run.first; k < run.first + run.second; ++k)
      kind[k] = elements;
  // Where the edge blocks write every element of the region (as many as
  // the full blocks leave there), the rest of it is padding, also the bytes
  // that the planner's runs gave to the elements (short padding next to
  // them).
  int64_t present = 0;
  for (uint8_t w : written)
    present += w;
  if (present == extent * (inner ? blocks.blockRows * blocks.blockCols /
                                       blockExtent
                                 : otherExtent))
    for (int8_t &k : kind)
      if (k > 0)
        k = 0;
  // Missing elements may take zeros only where the region is padding,
  // each nibble once.
  for (int64_t t : missing)
    if (kind[t / 2] != 0 || written[t])
      storesLandOnPadding = false;
  if (storesLandOnPadding) {
    edge.maskStores = false;
    for (int64_t t : missing)
      written[t] = 2;
  } else if (!destRunsMaskable) {
    return;
  }
  // Whole bytes only; what is left of the region keeps its kind.
  SmallVector<std::pair<int64_t, int64_t>> left;
  SmallVector<bool> leftHoldsElements;
  for (int64_t k = 0; k < regionBytes; ++k) {
    const bool low = written[2 * k], high = written[2 * k + 1];
    if (low != high)
      return;
    if (low || kind[k] < 0)
      continue;
    if (!left.empty() && left.back().first + left.back().second == k &&
        leftHoldsElements.back() == bool(kind[k]))
      ++left.back().second;
    else {
      left.push_back({k, 1});
      leftHoldsElements.push_back(kind[k]);
    }
  }
  if (inner) {
    plan.geometry.spanGaps = std::move(left);
    plan.geometry.spanGapHoldsElements = std::move(leftHoldsElements);
  } else {
    plan.geometry.batchTailRuns = std::move(left);
    plan.geometry.batchTailRunHoldsElements = std::move(leftHoldsElements);
  }
  plan.geometry.gapsHoldElements =
      llvm::is_contained(plan.geometry.batchTailRunHoldsElements, true) ||
      llvm::is_contained(plan.geometry.spanGapHoldsElements, true);
  plan.edge = std::move(edge);
}

/// The tile plan; with `allowPairing`, blocks may be paired (TilePlan's
/// innerStep, bandStep), and `paired` says whether they were.
std::optional<TilePlan> planTilesWith(const ::microscale::ref::Layout &from,
                                      const ::microscale::ref::Layout &to,
                                      bool allowPairing, bool allowEdgeBand,
                                      bool &paired) {
  paired = false;
  // Plans with gaps too (padding, edges): the gap kernel writes those.
  // Blocks of a warp's worth at least where the tensor has them; else
  // smaller blocks, several to a tile.
  std::optional<BlockConversionPlan> geometry =
      planBlockConversion(from, to, /*vectorBytes=*/64,
                          /*minBytesWithGaps=*/0, kHeldBits + 5);
  if (!geometry)
    geometry = planBlockConversion(from, to, /*vectorBytes=*/64,
                                   /*minBytesWithGaps=*/0);
  if (!geometry)
    return std::nullopt;
  LLVM_DEBUG(llvm::dbgs() << "staged conversion: block " << geometry->blockRows
                          << " x " << geometry->blockCols << ", "
                          << geometry->numBands << " bands of "
                          << geometry->blocksPerBand << " blocks, "
                          << geometry->spanGaps.size() << " gaps per span, "
                          << geometry->batchTailBytes << " tail bytes\n");
  const BlockConversionPlan blocks = *geometry;
  BlockAddressBits sourceBits = geometry->sourceAddress;
  BlockAddressBits destBits = geometry->destAddress;
  // Blocks too small for a warp of threads: take 2, 4, ... neighbouring
  // blocks of a band as one tile, where the blocks of a band lie a power of
  // two apart on both sides (their index bits are then address bits too).
  while (static_cast<int>(sourceBits.size()) < kHeldBits + 5 &&
         geometry->blocksPerBand % 2 == 0) {
    std::optional<int> sourceBit =
        strideBit(sourceBits, geometry->sourceInnerStride);
    std::optional<int> destBit = strideBit(destBits, geometry->destInnerStride);
    if (!sourceBit || !destBit ||
        llvm::is_contained(sourceBits, *sourceBit) ||
        llvm::is_contained(destBits, *destBit))
      break;
    BlockAddressBits source = sourceBits, dest = destBits;
    source.push_back(*sourceBit);
    dest.push_back(*destBit);
    if (!columnsFitRow(source) || !columnsFitRow(dest))
      break;
    sourceBits = std::move(source);
    destBits = std::move(dest);
    geometry->blocksPerBand /= 2;
    geometry->sourceInnerStride *= 2;
    geometry->destInnerStride *= 2;
  }
  TilePlan plan;
  // Short row segments on either side: pair the blocks along the axis
  // (a band's blocks, or a batch's bands) whose stride lengthens the shorter
  // side's segments, an odd count leaving a half tile at the axis' end.
  const int contiguous =
      std::min(contiguousBits(sourceBits), contiguousBits(destBits));
  if (allowPairing && contiguous < kWantedContiguousBits) {
    // The axes: a band's blocks, a batch's bands.
    struct Axis {
      int64_t sourceStride, destStride, count;
    };
    const std::array<Axis, 2> axes = {
        Axis{geometry->sourceInnerStride, geometry->destInnerStride,
             geometry->blocksPerBand},
        Axis{geometry->sourceBandStride, geometry->destBandStride,
             geometry->bandsPerBatch}};
    int best = contiguous;
    unsigned chosen = 0;
    BlockAddressBits chosenSource, chosenDest;
    // Pairs along one axis, then along both (a 2 x 2 group of blocks).
    for (unsigned mask : {1u, 2u, 3u}) {
      BlockAddressBits source = sourceBits, dest = destBits;
      bool fits = true;
      for (int axis = 0; axis < 2 && fits; ++axis) {
        if (!((mask >> axis) & 1))
          continue;
        const Axis &a = axes[axis];
        std::optional<int> sourceBit = strideBit(source, a.sourceStride);
        std::optional<int> destBit = strideBit(dest, a.destStride);
        fits = a.count >= 2 && sourceBit && destBit &&
               !llvm::is_contained(source, *sourceBit) &&
               !llvm::is_contained(dest, *destBit);
        if (fits) {
          source.push_back(*sourceBit);
          dest.push_back(*destBit);
          fits = columnsFitRow(source) && columnsFitRow(dest);
        }
      }
      if (!fits || source.size() > 14)
        continue;
      int gain = std::min(contiguousBits(source), contiguousBits(dest));
      if (gain > best) {
        best = gain;
        chosen = mask;
        chosenSource = std::move(source);
        chosenDest = std::move(dest);
      }
    }
    if (chosen) {
      // Pair bits in the order pushed: the inner axis' first.
      int bit = sourceBits.size();
      if (chosen & 1) {
        plan.innerStep = 2;
        plan.innerPairBit = bit++;
      }
      if (chosen & 2) {
        plan.bandStep = 2;
        plan.bandPairBit = bit++;
      }
      sourceBits = std::move(chosenSource);
      destBits = std::move(chosenDest);
      paired = true;
    }
  }
  plan.geometry = *geometry;
  plan.n = sourceBits.size();
  // At least a warp of threads; at most 8 KiB per tile and shared buffer.
  if (plan.n < kHeldBits + 5 || plan.n > 14)
    return std::nullopt;
  plan.sourcePositions = sortedPositions(sourceBits);
  plan.destPositions = sortedPositions(destBits);
  plan.sourceRowShift = sourceBits.rowShift;
  plan.destRowShift = destBits.rowShift;
  plan.sourcePitchBytes = sourceBits.pitch / 2;
  plan.destPitchBytes = destBits.pitch / 2;
  // Runs of up to 16 bytes: the low compacted bits that are
  // contiguous nibbles within a storage row, as far as the blocks' strides
  // and the rows' pitch keep them aligned (rows of 90 scale bytes give
  // 2-byte runs).
  auto runBits = [&](ArrayRef<int> positions, int rowShift, int64_t pitchBytes,
                     ArrayRef<int64_t> strides) {
    int bits = 0;
    while (bits < 5 && positions[bits] == bits && bits < rowShift)
      ++bits;
    auto aligned = [&](int64_t runBytes) {
      for (int64_t stride : strides)
        if (stride % runBytes)
          return false;
      return positions.back() < rowShift || pitchBytes % runBytes == 0;
    };
    while (bits > 1 && !aligned(int64_t(1) << (bits - 1)))
      --bits;
    return bits;
  };
  plan.sourceRunBits = runBits(
      plan.sourcePositions, plan.sourceRowShift, plan.sourcePitchBytes,
      {geometry->sourceBatchStride, geometry->sourceBandStride,
       geometry->sourceInnerStride});
  plan.destRunBits = runBits(
      plan.destPositions, plan.destRowShift, plan.destPitchBytes,
      {geometry->destBatchStride, geometry->destBandStride,
       geometry->destInnerStride});
  // Whole bytes at least on the source side; 16-byte runs on the
  // destination side, where narrower runs write partial sectors and
  // measured slower than the per-unit kernel (docs/performance.md).
  if (plan.sourceRunBits < 1 || plan.destRunBits < 5)
    return std::nullopt;
  plan.sourceRank = ranks(sourceBits);
  plan.destRank = ranks(destBits);
  // A half tile masks whole runs: the pair's bit must lie above them.
  for (auto [half, bit] : {std::pair{plan.isHalfInner(), plan.innerPairBit},
                           std::pair{plan.isHalfBand(), plan.bandPairBit}})
    if (half && (plan.sourceRank[bit] < plan.sourceRunBits ||
                 plan.destRank[bit] < plan.destRunBits))
      return std::nullopt;

  // U: the bits of the source and destination words, plus the choice of
  // the rest that (with the choice of lanes) gives the fewest conflicts.
  const int n = plan.n;
  llvm::SmallSetVector<int, 8> wordBits;
  for (int j = 0; j < n; ++j)
    if (plan.sourceRank[j] < 3)
      wordBits.insert(j);
  for (int j = 0; j < n; ++j)
    if (plan.destRank[j] < 3)
      wordBits.insert(j);
  SmallVector<int> others;
  for (int j = 0; j < n; ++j)
    if (!wordBits.contains(j))
      others.push_back(j);
  const int extra = kHeldBits - wordBits.size();
  int bestCost = INT_MAX;
  SmallVector<int> bestHeld, bestLanes;
  // Subsets of `others` of size `extra`, then 5 lanes from the remaining
  // bits: both small (at most C(11, 3) x C(8, 5)).
  auto forSubsets = [](ArrayRef<int> set, int size, auto fn) {
    const int m = set.size();
    for (uint32_t mask = 0; mask < (1u << m); ++mask) {
      if (llvm::popcount(mask) != size)
        continue;
      SmallVector<int> in, out;
      for (int i = 0; i < m; ++i)
        ((mask >> i) & 1 ? in : out).push_back(set[i]);
      fn(in, out);
    }
  };
  forSubsets(others, extra, [&](ArrayRef<int> held, ArrayRef<int> rest) {
    forSubsets(rest, 5, [&](ArrayRef<int> lanes, ArrayRef<int>) {
      SmallVector<int> a, b;
      for (int j : lanes) {
        a.push_back(plan.sourceRank[j] - 3);
        b.push_back(plan.destRank[j] - 3);
      }
      Swizzle swizzleA = makeSwizzle(a), swizzleB = makeSwizzle(b);
      int cost = bankConflicts(a, swizzleA) + bankConflicts(b, swizzleB);
      if (cost < bestCost) {
        bestCost = cost;
        bestHeld.assign(held.begin(), held.end());
        bestLanes.assign(lanes.begin(), lanes.end());
        plan.swizzleA = swizzleA;
        plan.swizzleB = swizzleB;
      }
    });
  });
  if (bestCost == INT_MAX)
    return std::nullopt;
  SmallVector<int> held(wordBits.begin(), wordBits.end());
  held.append(bestHeld);
  plan.threadBits = bestLanes;
  for (int j = 0; j < n; ++j)
    if (!llvm::is_contained(held, j) && !llvm::is_contained(bestLanes, j))
      plan.threadBits.push_back(j);
  // Register states: the word's bits in address order, then the rest of U
  // in address order.
  auto state = [&](ArrayRef<int> rank) {
    SmallVector<int> order(held);
    llvm::sort(order, [&](int x, int y) { return rank[x] < rank[y]; });
    std::array<int, kHeldBits> s;
    llvm::copy(order, s.begin());
    return s;
  };
  plan.sourceState = state(plan.sourceRank);
  plan.targetState = state(plan.destRank);
  // The word bits must come first in their own order.
  for (int p = 0; p < 3; ++p)
    if (plan.sourceRank[plan.sourceState[p]] != p ||
        plan.destRank[plan.targetState[p]] != p)
      return std::nullopt;
  if (allowEdgeBand)
    planEdgeBand(plan, blocks, from, to);
  return plan;
}

/// The tile plan, paired blocks where they plan, else unpaired ones.
std::optional<TilePlan> planTiles(const ::microscale::ref::Layout &from,
                                  const ::microscale::ref::Layout &to,
                                  bool allowEdgeBand = true) {
  bool paired = false;
  std::optional<TilePlan> plan =
      planTilesWith(from, to, true, allowEdgeBand, paired);
  if (!plan && paired)
    plan = planTilesWith(from, to, false, allowEdgeBand, paired);
  return plan;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

class TileEmitter {
public:
  TileEmitter(OpBuilder &builder, Location loc, const TilePlan &plan)
      : b(builder), loc(loc), e(builder, loc), plan(plan) {}

  /// sum_i bit(x, from_i) << to_i for (from_i, to_i) in `moves` (index).
  /// Bits that move by the same distance go together, one mask and one
  /// shift each: this address arithmetic runs for every access of every
  /// thread.
  Value scatter(Value x, ArrayRef<std::pair<int, int>> moves) {
    std::map<int, int64_t> masks; // distance -> mask of source bits
    for (auto [from, to] : moves)
      masks[to - from] |= int64_t(1) << from;
    Value result;
    for (auto [distance, mask] : masks) {
      Value bits = arith::AndIOp::create(b, loc, x, e.index(mask));
      if (distance > 0)
        bits = arith::ShLIOp::create(b, loc, bits, e.index(distance));
      else if (distance < 0)
        bits = arith::ShRUIOp::create(b, loc, bits, e.index(-distance));
      result = result ? arith::OrIOp::create(b, loc, result, bits) : bits;
    }
    return result ? result : e.index(0);
  }

  /// Byte offset from the block's base of run `run` (of 2^(runBits - 1)
  /// bytes) of a compacted tile whose address bit k (nibbles) is
  /// `positions[k]`: bits below `rowShift` within a storage row, the others
  /// storage rows of `pitchBytes`.
  Value runOffset(Value run, int runBits, ArrayRef<int> positions,
                  int rowShift, int64_t pitchBytes) {
    SmallVector<std::pair<int, int>> columnMoves, rowMoves;
    for (int k = runBits; k < plan.n; ++k) {
      if (positions[k] < rowShift)
        columnMoves.push_back({k - runBits, positions[k] - 1});
      else
        rowMoves.push_back({k - runBits, positions[k] - rowShift});
    }
    Value offset = scatter(run, columnMoves);
    if (!rowMoves.empty())
      offset = e.add(offset, e.mul(scatter(run, rowMoves), pitchBytes));
    return offset;
  }

  /// runOffset of a run index known at compile time.
  int64_t runOffset(int64_t run, int runBits, ArrayRef<int> positions,
                    int rowShift, int64_t pitchBytes) {
    int64_t column = 0, row = 0;
    for (int k = runBits; k < plan.n; ++k) {
      if (!((run >> (k - runBits)) & 1))
        continue;
      if (positions[k] < rowShift)
        column |= int64_t(1) << (positions[k] - 1);
      else
        row |= int64_t(1) << (positions[k] - rowShift);
    }
    return column + row * pitchBytes;
  }

  /// The swizzled word address of `threadWords` + `constWords` given the
  /// first's swizzled address: their bits are disjoint and the swizzle is
  /// linear over XOR.
  Value sharedWord(Value swizzledThreadWords, int64_t constWords,
                   const Swizzle &swizzle) {
    const int64_t swizzled = applySwizzle(swizzle, constWords);
    return swizzled ? arith::XOrIOp::create(b, loc, swizzledThreadWords,
                                            e.index(swizzled))
                    : swizzledThreadWords;
  }

  /// The swizzled word address (index) of `word`.
  Value swizzle(Value word, const Swizzle &swizzle) {
    for (auto [from, to] : swizzle) {
      Value bit = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, word, e.index(from)),
          e.index(1));
      word = arith::XOrIOp::create(
          b, loc, word, arith::ShLIOp::create(b, loc, bit, e.index(to)));
    }
    return word;
  }

  Value prmt(Value x, Value y, uint32_t selector) {
    if (onHost) {
      // The same byte select in integer operations (selector nibbles 0-7:
      // bytes of x then y).
      Value result = e.i32(0);
      for (int k = 0; k < 4; ++k) {
        unsigned pick = (selector >> (4 * k)) & 7;
        Value byte = e.band(e.shr(pick < 4 ? x : y, 8 * (pick % 4)), 0xFF);
        result = e.bor(result, e.shl(byte, 8 * k));
      }
      return result;
    }
    std::string text =
        "prmt.b32 $0, $1, $2, 0x" + llvm::utohexstr(selector) + ";";
    return pureInlinePtx(b, loc, b.getI32Type(), ValueRange{x, y}, text,
                         "=r,r,r")
        .getResult(0);
  }

  /// The bits of x where `mask` is set and those of y elsewhere. ptxas
  /// does not see `(x & m) | (y & ~m)` as one three-input LOP3 (it emits two,
  /// one per mask), so on the device the select is written as one `lop3`.
  Value selectBits(uint32_t mask, Value x, Value y) {
    if (onHost)
      return e.bor(e.band(x, mask),
                   arith::AndIOp::create(b, loc, y,
                                         e.i32(static_cast<int32_t>(~mask))));
    // lop3's table is f(a, b, c) over a = 0xF0, b = 0xCC, c = 0xAA:
    // (a & b) | (c & ~b) = 0xE2 with a = x, b = mask, c = y.
    std::string text = "lop3.b32 $0, $1, 0x" + llvm::utohexstr(mask) +
                       ", $2, 0xE2;";
    return pureInlinePtx(b, loc, b.getI32Type(), ValueRange{x, y}, text,
                         "=r,r,r")
        .getResult(0);
  }

  Value shift(Value x, int distance) {
    if (distance > 0)
      return e.shl(x, distance);
    if (distance < 0)
      return e.shr(x, -distance);
    return x;
  }

  /// Bit i of x moves to bit map[i]: a move per term of planWordBitMap,
  /// whose multiplies move several distances at once on the multiply-add
  /// pipe (the tiles of the Hopper-image pairs are bound by the integer
  /// pipe). The terms' destination masks partition the word, so each term
  /// after the first is merged by one select on its mask: no term needs its
  /// destination mask applied, and a shift term no source mask.
  Value permuteBits(Value x, const std::array<int8_t, 32> &map) {
    Value result;
    std::vector<WordBitMapTerm> terms = planWordBitMap(map);
    [[maybe_unused]] uint32_t covered = 0; // checked by the asserts only
    for (const WordBitMapTerm &term : terms) {
      assert(!(covered & term.destMask) && "terms' destinations overlap");
      covered |= term.destMask;
      Value part;
      if (!term.multiplier) {
        part = shift(x, term.distance);
      } else {
        // The source mask keeps the other bits' copies off the product.
        Value masked = arith::AndIOp::create(
            b, loc, x, e.i32(static_cast<int32_t>(term.sourceMask)));
        Value multiplier = e.i32(static_cast<int32_t>(term.multiplier));
        if (term.highWord)
          part = arith::MulUIExtendedOp::create(b, loc, masked, multiplier)
                     .getHigh();
        else
          part = arith::MulIOp::create(b, loc, masked, multiplier);
      }
      result = result ? selectBits(term.destMask, part, result) : part;
    }
    assert(covered == 0xFFFFFFFFu && "terms leave bits of the word unset");
    return result;
  }

  /// Emits the kernel body. A block converts `groups` x `sequence` tiles:
  /// `groups` side by side (each on its own threads), `sequence` one after
  /// the other, all loads first. Tile (block * sequence + s) * groups + g
  /// uses shared buffers s * groups + g of `a` and `bBuffer`. `barrier`
  /// separates the three phases.
  void run(Value source, Value dest, Value a, Value bBuffer, int64_t groups,
           int64_t sequence, Value block, Value blockThread,
           function_ref<void()> barrier) {
    emitPhase(1, source, dest, a, bBuffer, groups, sequence, block, blockThread);
    barrier();
    emitPhase(2, source, dest, a, bBuffer, groups, sequence, block, blockThread);
    barrier();
    emitPhase(3, source, dest, a, bBuffer, groups, sequence, block, blockThread);
  }

  /// One of the three phases for thread `blockThread` of block `block`.
  void emitPhase(int phase, Value source, Value dest, Value a, Value bBuffer,
                 int64_t groups, int64_t sequence, Value block,
                 Value blockThread) {
    const BlockConversionPlan &g = plan.geometry;
    const int64_t threads = plan.getThreads();
    const int64_t tileWords = plan.getTileBytes() / 4;
    Type i32 = b.getI32Type();
    Value thread = e.rem(blockThread, threads);
    Value group = e.div(blockThread, threads);

    struct Tile {
      Value sourceBase, destBase, buffer; // buffer: word offset in a and b
      /// i1: the tile holds only the first blocks of its inner (band)
      /// pairs; null where no tile does.
      Value halfInner, halfBand;
      /// i1: the tile is of the edge band; null where there is none.
      Value edge;
    };
    SmallVector<Tile> tiles;
    const int64_t innerTiles = plan.getInnerTiles();
    const int64_t bandTiles = plan.getBandTiles();
    for (int64_t s = 0; s < sequence; ++s) {
      Value tile = e.add(e.mul(e.add(e.mul(block, sequence), s), groups), group);
      Value innerTile = e.rem(tile, innerTiles);
      Value bandTile = e.rem(e.div(tile, innerTiles), bandTiles);
      Value batch = e.div(tile, innerTiles * bandTiles);
      Value inner = e.mul(innerTile, plan.innerStep);
      Value bandInBatch = e.mul(bandTile, plan.bandStep);
      auto base = [&](int64_t batchStride, int64_t bandStride,
                      int64_t innerStride) {
        return e.add(e.add(e.mul(batch, batchStride),
                           e.mul(bandInBatch, bandStride)),
                     e.mul(inner, innerStride));
      };
      auto isLast = [&](Value tileIndex, int64_t count) -> Value {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     tileIndex, e.index(count - 1));
      };
      Value halfInner, halfBand;
      if (plan.isHalfInner())
        halfInner = isLast(innerTile, innerTiles);
      if (plan.isHalfBand())
        halfBand = isLast(bandTile, bandTiles);
      Value edge;
      if (plan.edge)
        edge = plan.edge->inner ? isLast(innerTile, innerTiles)
                                : isLast(bandTile, bandTiles);
      tiles.push_back(
          {base(g.sourceBatchStride, g.sourceBandStride, g.sourceInnerStride),
           base(g.destBatchStride, g.destBandStride, g.destInnerStride),
           e.mul(e.add(group, s * groups), tileWords), halfInner, halfBand,
           edge});
    }
    // Whether run `threadRuns + constRuns` (their bits disjoint) of the
    // source or destination side lies in a missing block: a half tile's
    // (a pair's bit is a run-index bit on either side), or past the edge
    // band's extent. Null where no tile misses any.
    auto inMissingBlock = [&](const Tile &t, Value threadRuns,
                              int64_t constRuns, bool sourceSide) -> Value {
      ArrayRef<int> rank = sourceSide ? plan.sourceRank : plan.destRank;
      const int runBits = sourceSide ? plan.sourceRunBits : plan.destRunBits;
      Value missing;
      for (auto [half, bit] : {std::pair{t.halfInner, plan.innerPairBit},
                               std::pair{t.halfBand, plan.bandPairBit}}) {
        if (!half)
          continue;
        const int64_t runBit = int64_t(1) << (rank[bit] - runBits);
        Value here = half;
        if (!(constRuns & runBit))
          here = e.andI1(
              half, arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::ne,
                        arith::AndIOp::create(b, loc, threadRuns,
                                              e.index(runBit)),
                        e.index(0)));
        missing = missing ? arith::OrIOp::create(b, loc, missing, here)
                          : here;
      }
      // In the edge band, runs whose axis index reaches the extent.
      if (t.edge && (sourceSide ? !plan.edge->sourceNibbleMasks
                                : plan.edge->maskStores)) {
        const TilePlan::EdgeBand &edge = *plan.edge;
        ArrayRef<std::pair<int, int>> moves =
            sourceSide ? edge.sourceMoves : edge.destMoves;
        const int shift = sourceSide ? edge.sourceShift : edge.destShift;
        int64_t constAxis = 0;
        for (auto [from, to] : moves)
          if ((constRuns >> from) & 1)
            constAxis |= int64_t(1) << to;
        Value axis = e.add(scatter(threadRuns, moves), constAxis);
        Value beyond = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::uge, axis,
            e.index(edge.extent >> shift));
        Value here = e.andI1(t.edge, beyond);
        missing = missing ? arith::OrIOp::create(b, loc, missing, here)
                          : here;
      }
      return missing;
    };

    // The mask of a whole-loaded source run of the edge band (all ones in
    // other tiles): the nibbles whose axis index, the run's part plus the
    // part inside the run, is below the extent.
    auto edgeNibbleMask = [&](const Tile &t, Value threadRuns,
                              int64_t constRuns, int64_t words) -> Value {
      const TilePlan::EdgeBand &edge = *plan.edge;
      auto type = VectorType::get({words}, i32);
      auto constant = [&](ArrayRef<uint32_t> bits) -> Value {
        SmallVector<int32_t> values;
        for (uint32_t w : bits)
          values.push_back(static_cast<int32_t>(w));
        return arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(type, ArrayRef(values)));
      };
      int64_t constAxis = 0;
      for (auto [from, to] : edge.sourceMoves)
        if ((constRuns >> from) & 1)
          constAxis |= int64_t(1) << to;
      Value axis = e.add(scatter(threadRuns, edge.sourceMoves), constAxis);
      Value zeros = constant(SmallVector<uint32_t>(words, 0));
      Value mask = zeros;
      for (const auto &[value, bits] : edge.sourceWithinMasks) {
        if (value >= edge.extent)
          continue;
        Value keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           axis, e.index(edge.extent - value));
        mask = arith::OrIOp::create(
            b, loc, mask,
            arith::SelectOp::create(b, loc, keep, constant(bits), zeros));
      }
      return arith::SelectOp::create(
          b, loc, t.edge, mask,
          constant(SmallVector<uint32_t>(words, 0xFFFFFFFFu)));
    };

    // Phases 1 and 3 move the tile between memory and shared memory in
    // accesses of max(run, 4) bytes: a run of 4 to 16 bytes is one vector
    // of words; runs of 1 or 2 bytes are packed 4 or 2 to a shared word.
    auto accessBytes = [](int64_t runBytes) {
      return std::max<int64_t>(runBytes, 4);
    };
    // A run's offset and shared word are the thread's part plus a constant
    // (their index bits are disjoint): the thread's part, computed once per
    // side.
    struct ThreadPart {
      int64_t runsPerAccess;
      Value runs, offset, sharedWords;
    };
    auto threadPart = [&](bool sourceSide, int64_t run) {
      ThreadPart part;
      part.runsPerAccess = accessBytes(run) / run;
      part.runs = e.mul(thread, part.runsPerAccess);
      part.offset =
          sourceSide
              ? runOffset(part.runs, plan.sourceRunBits, plan.sourcePositions,
                          plan.sourceRowShift, plan.sourcePitchBytes)
              : runOffset(part.runs, plan.destRunBits, plan.destPositions,
                          plan.destRowShift, plan.destPitchBytes);
      part.sharedWords =
          swizzle(e.mul(thread, accessBytes(run) / 4),
                  sourceSide ? plan.swizzleA : plan.swizzleB);
      return part;
    };
    Type i8 = b.getI8Type();
    if (phase == 1) {
      // The source runs into A, every tile's loads before any store to
      // shared memory.
      const int64_t run = plan.getSourceRunBytes();
      const int64_t accesses = plan.getTileBytes() / accessBytes(run);
      auto runType = VectorType::get({run}, i8);
      SmallVector<std::pair<Value, Value>> loaded; // (words, A word index)
      const ThreadPart part = threadPart(/*sourceSide=*/true, run);
      const int64_t runsPerAccess = part.runsPerAccess;
      Value threadRuns = part.runs, threadOffset = part.offset;
      Value threadWordsA = part.sharedWords;
      for (const Tile &t : tiles)
        for (int64_t step = 0; step < accesses / threads; ++step) {
          auto load = [&](int64_t k) -> Value {
            const int64_t constRuns = step * threads * runsPerAccess + k;
            Value offset = e.add(
                e.add(t.sourceBase, threadOffset),
                runOffset(constRuns, plan.sourceRunBits, plan.sourcePositions,
                          plan.sourceRowShift, plan.sourcePitchBytes));
            auto emitLoad = [&](OpBuilder &builder) -> Value {
              return vector::LoadOp::create(builder, loc, runType, source,
                                            ValueRange{offset}, false,
                                            llvm::MaybeAlign(run));
            };
            Value missing = inMissingBlock(t, threadRuns, constRuns,
                                           /*sourceSide=*/true);
            if (!missing)
              return emitLoad(b);
            // Nothing is read past the tensor; the missing block's
            // words are never stored.
            auto ifPresent = scf::IfOp::create(
                b, loc, missing,
                [&](OpBuilder &builder, Location) {
                  Value zero = arith::ConstantOp::create(
                      builder, loc, DenseElementsAttr::get(
                                        runType, builder.getI8IntegerAttr(0)));
                  scf::YieldOp::create(builder, loc, zero);
                },
                [&](OpBuilder &builder, Location) {
                  scf::YieldOp::create(builder, loc, emitLoad(builder));
                });
            return ifPresent.getResult(0);
          };
          Value words;
          if (run >= 4) {
            words = vector::BitCastOp::create(
                b, loc, VectorType::get({run / 4}, i32), load(0));
            if (t.edge && plan.edge->sourceNibbleMasks)
              words = arith::AndIOp::create(
                  b, loc, words,
                  edgeNibbleMask(t, threadRuns,
                                 step * threads * runsPerAccess, run / 4));
          } else {
            Value word = e.i32(0);
            for (int64_t k = 0; k < 4 / run; ++k) {
              Value bits = vector::BitCastOp::create(
                  b, loc, VectorType::get({1}, b.getIntegerType(8 * run)),
                  load(k));
              Value scalar = arith::ExtUIOp::create(
                  b, loc, i32, vector::ExtractOp::create(b, loc, bits, 0));
              word = e.bor(word, e.shl(scalar, 8 * run * k));
            }
            words = vector::BroadcastOp::create(
                b, loc, VectorType::get({1}, i32), word);
          }
          loaded.push_back(
              {words, e.add(t.buffer,
                            sharedWord(threadWordsA, step * threads *
                                                         accessBytes(run) / 4,
                                       plan.swizzleA))});
        }
      for (auto [v, index] : loaded)
        vector::StoreOp::create(b, loc, v, a, ValueRange{index}, false,
                                llvm::MaybeAlign(accessBytes(run)));
      return;
    }

    if (phase == 3) {
      // B to the destination runs.
      const int64_t run = plan.getDestRunBytes();
      const int64_t accesses = plan.getTileBytes() / accessBytes(run);
      const ThreadPart part = threadPart(/*sourceSide=*/false, run);
      const int64_t runsPerAccess = part.runsPerAccess;
      Value threadRuns = part.runs, threadOffset = part.offset;
      Value threadWordsB = part.sharedWords;
      for (const Tile &t : tiles)
        for (int64_t step = 0; step < accesses / threads; ++step) {
          Value words = vector::LoadOp::create(
              b, loc, VectorType::get({accessBytes(run) / 4}, i32), bBuffer,
              ValueRange{e.add(t.buffer,
                               sharedWord(threadWordsB,
                                          step * threads * accessBytes(run) / 4,
                                          plan.swizzleB))},
              false, llvm::MaybeAlign(accessBytes(run)));
          auto store = [&](int64_t k, Value bytes) {
            const int64_t constRuns = step * threads * runsPerAccess + k;
            Value offset = e.add(
                e.add(t.destBase, threadOffset),
                runOffset(constRuns, plan.destRunBits, plan.destPositions,
                          plan.destRowShift, plan.destPitchBytes));
            Value missing = inMissingBlock(t, threadRuns, constRuns,
                                           /*sourceSide=*/false);
            OpBuilder::InsertionGuard guard(b);
            if (missing) {
              auto ifPresent = scf::IfOp::create(
                  b, loc, arith::XOrIOp::create(
                              b, loc, missing,
                              arith::ConstantIntOp::create(b, loc, 1, 1)),
                  /*withElseRegion=*/false);
              b.setInsertionPointToStart(&ifPresent.getThenRegion().front());
            }
            vector::StoreOp::create(b, loc, bytes, dest, ValueRange{offset},
                                    false, llvm::MaybeAlign(run));
          };
          if (run >= 4) {
            store(0, vector::BitCastOp::create(
                         b, loc, VectorType::get({run}, i8), words));
            continue;
          }
          Value word = vector::ExtractOp::create(b, loc, words, 0);
          Type runInt = b.getIntegerType(8 * run);
          for (int64_t k = 0; k < 4 / run; ++k) {
            Value part = arith::TruncIOp::create(
                b, loc, runInt, e.shr(word, 8 * run * k));
            Value bytes = vector::BitCastOp::create(
                b, loc, VectorType::get({run}, i8),
                vector::BroadcastOp::create(b, loc,
                                            VectorType::get({1}, runInt), part));
            store(k, bytes);
          }
        }
      return;
    }

    // Phase 2: per tile, 8 words of A through the registers into 8 words
    // of B.
    auto threadMoves = [&](ArrayRef<int> rank) {
      SmallVector<std::pair<int, int>> moves;
      for (auto [i, j] : llvm::enumerate(plan.threadBits))
        moves.push_back({static_cast<int>(i), rank[j] - 3});
      return moves;
    };
    auto registerOffset = [&](ArrayRef<int> rank,
                              const std::array<int, kHeldBits> &state,
                              int64_t r) {
      int64_t offset = 0;
      for (int k = 0; k < 3; ++k)
        if ((r >> k) & 1)
          offset |= int64_t(1) << (rank[state[3 + k]] - 3);
      return offset;
    };
    // Swizzled, the register's address is the thread's XOR the register's
    // (both swizzles are linear and the bits are disjoint).
    Value threadA =
        swizzle(scatter(thread, threadMoves(plan.sourceRank)), plan.swizzleA);
    Value threadB =
        swizzle(scatter(thread, threadMoves(plan.destRank)), plan.swizzleB);
    auto address = [&](Value buffer, Value threadPart, int64_t registerPart,
                       const Swizzle &swizzle) {
      Value local = arith::XOrIOp::create(
          b, loc, threadPart, e.index(applySwizzle(swizzle, registerPart)));
      return e.add(buffer, local);
    };
    for (const Tile &t : tiles) {
      SmallVector<Value> regs;
      for (int64_t r = 0; r < kWordsPerThread; ++r)
        regs.push_back(memref::LoadOp::create(
            b, loc, a,
            ValueRange{address(t.buffer, threadA,
                               registerOffset(plan.sourceRank,
                                              plan.sourceState, r),
                               plan.swizzleA)}));
      if (g.sourceWordMap)
        for (Value &reg : regs)
          reg = permuteBits(reg, *g.sourceWordMap);
      std::array<int, kHeldBits> state = plan.sourceState;
      route(regs, state);
      if (g.destWordMap)
        for (Value &reg : regs)
          reg = permuteBits(reg, *g.destWordMap);
      for (int64_t r = 0; r < kWordsPerThread; ++r)
        memref::StoreOp::create(
            b, loc, regs[r], bBuffer,
            ValueRange{address(t.buffer, threadB,
                               registerOffset(plan.destRank, plan.targetState,
                                              r),
                               plan.swizzleB)});
    }
  }

  /// Byte permutes as integer operations instead of PTX (the host
  /// emulation of the kernel).
  bool onHost = false;

private:
  /// Routes the registers from `state` to plan.targetState: first the
  /// nibble bit, then the bytes.
  void route(SmallVector<Value> &regs, std::array<int, kHeldBits> &state) {
    const std::array<int, kHeldBits> &target = plan.targetState;
    if (state[0] != target[0]) {
      int p = llvm::find(state, target[0]) - state.begin();
      if (p < 3) {
        // Within each word: nibble slot i takes slot i with bits 0 and p
        // exchanged.
        std::array<int8_t, 32> map;
        for (int slot = 0; slot < 8; ++slot) {
          int low = slot & 1, high = (slot >> p) & 1;
          int to = (slot & ~1 & ~(1 << p)) | high | (low << p);
          for (int bit = 0; bit < 4; ++bit)
            map[4 * slot + bit] = static_cast<int8_t>(4 * to + bit);
        }
        for (Value &reg : regs)
          reg = permuteBits(reg, map);
      } else {
        // Between the registers that differ in register bit p - 3: the low
        // nibbles of both, then the high nibbles of both.
        const int bit = 1 << (p - 3);
        for (int r = 0; r < kWordsPerThread; ++r) {
          if (r & bit)
            continue;
          Value x = regs[r], y = regs[r | bit];
          regs[r] = selectBits(0x0F0F0F0F, x, e.shl(y, 4));
          regs[r | bit] = selectBits(0x0F0F0F0F, e.shr(x, 4), y);
        }
      }
      state[p] = state[0];
      state[0] = target[0];
    }
    // Bytes: byte b' of register r' (target positions 1-5) from the source
    // byte whose positions hold the same element bits.
    SmallVector<Value> out(kWordsPerThread);
    for (int r = 0; r < kWordsPerThread; ++r) {
      SmallVector<std::pair<int, int>> from; // (register, byte) per byte
      for (int byte = 0; byte < 4; ++byte) {
        int address = (byte << 1) | (r << 3); // target nibble address
        std::map<int, int> value;              // element bit -> 0/1
        for (int p = 1; p < kHeldBits; ++p)
          value[target[p]] = (address >> p) & 1;
        int source = 0;
        for (int p = 1; p < kHeldBits; ++p)
          source |= value[state[p]] << p;
        from.push_back({source >> 3, (source >> 1) & 3});
      }
      SmallVector<int> sources;
      for (auto [reg, byte] : from)
        if (!llvm::is_contained(sources, reg))
          sources.push_back(reg);
      // A bit permutation: the bytes come from 1, 2 or 4 registers.
      assert(sources.size() != 3 && "byte routing from three registers");
      auto selector = [&](ArrayRef<int> pair, ArrayRef<int> bytes) {
        uint32_t s = 0;
        for (int k = 0; k < 4; ++k) {
          int which = llvm::find(pair, from[bytes[k]].first) - pair.begin();
          int pick = which < static_cast<int>(pair.size())
                         ? 4 * which + from[bytes[k]].second
                         : 0;
          s |= uint32_t(pick) << (4 * k);
        }
        return s;
      };
      if (sources.size() == 1) {
        bool identity = true;
        for (int k = 0; k < 4; ++k)
          identity &= from[k].second == k;
        out[r] = identity ? regs[sources[0]]
                          : prmt(regs[sources[0]], regs[sources[0]],
                                 selector({sources[0]}, {0, 1, 2, 3}));
      } else if (sources.size() == 2) {
        out[r] = prmt(regs[sources[0]], regs[sources[1]],
                      selector({sources[0], sources[1]}, {0, 1, 2, 3}));
      } else {
        // Four registers: two pairs, each into the bytes it owns, then
        // merged.
        Value low = prmt(regs[sources[0]], regs[sources[1]],
                         selector({sources[0], sources[1]}, {0, 1, 2, 3}));
        Value high = prmt(regs[sources[2]], regs[sources[3]],
                          selector({sources[2], sources[3]}, {0, 1, 2, 3}));
        uint32_t merge = 0;
        for (int k = 0; k < 4; ++k) {
          bool fromHigh = from[k].first == sources[2] ||
                          from[k].first == sources[3];
          merge |= uint32_t(fromHigh ? 4 + k : k) << (4 * k);
        }
        out[r] = prmt(low, high, merge);
      }
    }
    regs = std::move(out);
    state = target;
  }

  OpBuilder &b;
  Location loc;
  Emitter e;
  const TilePlan &plan;
};
} // namespace

namespace {
/// Units of the per-unit kernel per piece of a gap: a warp's lanes write a
/// piece's units side by side.
constexpr int64_t kGapPieceUnits = 32;
/// Pieces per span at most (the table is a constant array in the kernel
/// module).
constexpr int64_t kMaxGapPieces = int64_t(1) << 16;

/// The destination bytes that no tile writes: the plan's span gaps, then
/// the runs of each batch's tail, cut into pieces of at most kGapPieceUnits
/// units. Each piece is an i64 of the table: its first byte from the span's
/// (the batch's, for the tail) start << 16 | 1 << 8 where it holds elements
/// | its units. Units are the per-unit kernel's store units where a piece
/// holds elements, else `zeroBytes` of zeros.
struct GapPieces {
  SmallVector<int64_t> table;
  int64_t spanPieces = 0, tailPieces = 0;
  /// Gap threads per piece of a span and of a tail (powers of two, at most
  /// kGapPieceUnits).
  int64_t spanPieceThreads = kGapPieceUnits, tailPieceThreads = kGapPieceUnits;
  int64_t elementBytes = 1, zeroBytes = 1;

  int64_t unitBytes(bool elements) const {
    return elements ? elementBytes : zeroBytes;
  }

  static std::optional<GapPieces> build(const BlockConversionPlan &plan,
                                        int64_t elementBytes) {
    GapPieces pieces;
    pieces.elementBytes = elementBytes;
    const int64_t tailStart = plan.bandsPerBatch * plan.spanBytes;
    // Padding is stored 16 bytes at a time where every gap allows it.
    auto allDivide = [&](int64_t unit) {
      if (plan.spanBytes % unit || plan.getBatchBytes() % unit ||
          tailStart % unit)
        return false;
      for (auto [gap, elements] :
           llvm::zip(plan.spanGaps, plan.spanGapHoldsElements))
        if (!elements && (gap.first % unit || gap.second % unit))
          return false;
      for (auto [run, elements] :
           llvm::zip(plan.batchTailRuns, plan.batchTailRunHoldsElements))
        if (!elements && (run.first % unit || run.second % unit))
          return false;
      return true;
    };
    pieces.zeroBytes = 16;
    while (pieces.zeroBytes > 1 && !allDivide(pieces.zeroBytes))
      pieces.zeroBytes /= 2;
    if (plan.spanBytes % elementBytes || plan.getBatchBytes() % elementBytes ||
        tailStart % elementBytes)
      return std::nullopt;
    auto cut = [&](int64_t offset, int64_t length, bool elements) {
      const int64_t unit = pieces.unitBytes(elements);
      if (offset % unit || length % unit || offset >= (int64_t(1) << 40))
        return false;
      for (int64_t u = 0; u < length / unit; u += kGapPieceUnits)
        pieces.table.push_back((offset + u * unit) << 16 |
                               int64_t(elements) << 8 |
                               std::min(kGapPieceUnits, length / unit - u));
      return true;
    };
    for (auto [gap, elements] :
         llvm::zip(plan.spanGaps, plan.spanGapHoldsElements))
      if (!cut(gap.first, gap.second, elements))
        return std::nullopt;
    pieces.spanPieces = pieces.table.size();
    for (auto [run, elements] :
         llvm::zip(plan.batchTailRuns, plan.batchTailRunHoldsElements))
      if (!cut(tailStart + run.first, run.second, elements))
        return std::nullopt;
    pieces.tailPieces = pieces.table.size() - pieces.spanPieces;
    if (static_cast<int64_t>(pieces.table.size()) > kMaxGapPieces)
      return std::nullopt;
    // Threads per piece: the most units of any piece, to a power of two
    // (blackwell_value's 96-byte row ends are 6 units: 8 threads, not 32).
    auto threadsFor = [&](int64_t begin, int64_t end) {
      int64_t units = 1;
      for (int64_t i = begin; i < end; ++i)
        units = std::max<int64_t>(units, pieces.table[i] & 0xFF);
      return static_cast<int64_t>(llvm::PowerOf2Ceil(units));
    };
    pieces.spanPieceThreads = threadsFor(0, pieces.spanPieces);
    pieces.tailPieceThreads =
        threadsFor(pieces.spanPieces, pieces.table.size());
    return pieces;
  }
};

/// The plan of a conversion the staged kernel takes, and how its tiles are
/// grouped into thread blocks.
struct StagedConversion {
  StagedConversion(StorageConversion conversion, TilePlan plan)
      : conversion(std::move(conversion)), plan(std::move(plan)) {}

  /// The conversion planned (its per-unit body converts the gap threads'
  /// elements).
  StorageConversion conversion;
  TilePlan plan;
  int64_t sourceBytes = 0, bytes = 0, groups = 1, sequence = 1, numTiles = 0;
  /// What the tiles leave, where they do not cover the destination.
  std::optional<GapPieces> gaps;

  int64_t getNumBlocks() const { return numTiles / (groups * sequence); }
  int64_t getBlockThreads() const { return groups * plan.getThreads(); }
  int64_t getSharedWords() const {
    return groups * sequence * plan.getTileBytes() / 4;
  }
  int64_t getNumBatches() const {
    return plan.geometry.numBands / plan.geometry.bandsPerBatch;
  }
  /// Threads of the gap blocks: those of each span's pieces, then those of
  /// each batch's tail pieces.
  int64_t getSpanGapThreads() const {
    return gaps ? plan.geometry.numBands * gaps->spanPieces *
                      gaps->spanPieceThreads
                : 0;
  }
  int64_t getGapThreads() const {
    return gaps ? getSpanGapThreads() + getNumBatches() * gaps->tailPieces *
                                            gaps->tailPieceThreads
                : 0;
  }
};
} // namespace

static std::optional<StagedConversion>
planStagedConversion(ConvertStorageOp op, int64_t tilesInSequence) {
  if (!op.getUnitRange().empty())
    return std::nullopt;
  StorageConversion conversion(op);
  if (conversion.bits != 4 && conversion.bits != 8)
    return std::nullopt;
  std::unique_ptr<::microscale::ref::Layout> from, to;
  if (!conversion.buildReferences(from, to))
    return std::nullopt;
  std::optional<TilePlan> plan = planTiles(*from, *to);
  if (!plan)
    return std::nullopt;
  // An edge band whose tail runs the gap table cannot hold: without it.
  if (plan->edge && !plan->geometry.coversDestination() &&
      !GapPieces::build(plan->geometry, conversion.unitBytes))
    plan = planTiles(*from, *to, /*allowEdgeBand=*/false);
  if (!plan)
    return std::nullopt;
  StagedConversion staged(std::move(conversion), std::move(*plan));
  staged.sourceBytes = from->getStorageBytes();
  staged.bytes = staged.conversion.destBytes;
  const BlockConversionPlan &g = staged.plan.geometry;
  if (!g.coversDestination()) {
    staged.gaps = GapPieces::build(g, staged.conversion.unitBytes);
    if (!staged.gaps || g.destBatchStride != g.getBatchBytes())
      return std::nullopt;
  }
  // Tiles per block: side by side up to 128 threads, then `sequence` in
  // a row (their loads issued together), as far as the tiles divide.
  staged.numTiles = staged.plan.getNumTiles();
  staged.groups =
      std::max<int64_t>(1, kMinBlockThreads / staged.plan.getThreads());
  staged.sequence = std::max<int64_t>(1, tilesInSequence);
  while (staged.numTiles % (staged.groups * staged.sequence) &&
         staged.sequence > 1)
    staged.sequence /= 2;
  while (staged.numTiles % (staged.groups * staged.sequence) &&
         staged.groups > 1)
    staged.groups /= 2;
  return staged;
}

/// The gap blocks' work for gap thread `thread`: one unit of a piece of a
/// span's gaps or of a batch's tail,
/// converted through the per-unit body where the piece holds elements, else
/// zeros (padding).
static void emitGapThread(OpBuilder &builder, Location loc,
                          const StagedConversion &staged, Value table,
                          Value source, Value dest, Value thread) {
  Emitter e(builder, loc);
  const BlockConversionPlan &g = staged.plan.geometry;
  const GapPieces &gaps = *staged.gaps;
  // Threads [0, span gap threads): band-major span pieces of
  // spanPieceThreads each; then batch-major tail pieces of tailPieceThreads.
  const int64_t spanThreads = staged.getSpanGapThreads();
  Value inSpans = e.lt(thread, spanThreads);
  Value tailThread = arith::SubIOp::create(
      builder, loc,
      arith::MaxUIOp::create(builder, loc, thread, e.index(spanThreads)),
      e.index(spanThreads));
  Value slot = e.div(thread, gaps.spanPieceThreads);
  Value tailSlot = e.div(tailThread, gaps.tailPieceThreads);
  Value lane = e.select(inSpans, e.rem(thread, gaps.spanPieceThreads),
                        e.rem(tailThread, gaps.tailPieceThreads));
  auto divOrZero = [&](Value x, int64_t y) {
    return y ? e.div(x, y) : e.index(0);
  };
  auto remOrZero = [&](Value x, int64_t y) {
    return y ? e.rem(x, y) : e.index(0);
  };
  Value band = divOrZero(slot, gaps.spanPieces);
  Value batch = e.select(inSpans, e.div(band, g.bandsPerBatch),
                         divOrZero(tailSlot, gaps.tailPieces));
  Value piece = e.select(inSpans, remOrZero(slot, gaps.spanPieces),
                         e.add(remOrZero(tailSlot, gaps.tailPieces),
                               gaps.spanPieces));
  Value start = e.add(
      e.mul(batch, g.getBatchBytes()),
      e.select(inSpans, e.mul(e.rem(band, g.bandsPerBatch), g.spanBytes),
               e.index(0)));
  Value entry = memref::LoadOp::create(builder, loc, table, ValueRange{piece});
  auto field = [&](int shift, int64_t mask) -> Value {
    auto i64 = builder.getI64Type();
    Value v = entry;
    if (shift)
      v = arith::ShRUIOp::create(
          builder, loc, v, arith::ConstantIntOp::create(builder, loc, i64, shift));
    if (mask)
      v = arith::AndIOp::create(
          builder, loc, v, arith::ConstantIntOp::create(builder, loc, i64, mask));
    return arith::IndexCastOp::create(builder, loc, builder.getIndexType(), v);
  };
  Value units = field(0, 0xFF);
  Value elements = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne,
                                         field(8, 1), e.index(0));
  Value unitBytes = e.select(elements, e.index(gaps.elementBytes),
                             e.index(gaps.zeroBytes));
  Value byte = e.add(e.add(start, field(16, 0)), e.mul(lane, unitBytes));
  Value active = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                       lane, units);
  auto ifActive = scf::IfOp::create(builder, loc, active, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&ifActive.getThenRegion().front());
  auto ifElements = scf::IfOp::create(builder, loc, elements, /*withElse=*/true);
  builder.setInsertionPointToStart(&ifElements.getThenRegion().front());
  staged.conversion.emitUnit(builder, loc, source, dest,
                             e.div(byte, gaps.elementBytes));
  builder.setInsertionPointToStart(&ifElements.getElseRegion().front());
  vector::StoreOp::create(
      builder, loc,
      arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(
              VectorType::get({gaps.zeroBytes}, builder.getI8Type()),
              builder.getI8IntegerAttr(0))),
      dest, ValueRange{byte}, false, llvm::MaybeAlign(gaps.zeroBytes));
}

bool mlir::microscale::outlineTiledConversion(ConvertStorageOp op,
                                              gpu::GPUModuleOp kernels,
                                              unsigned index,
                                              int64_t tilesInSequence) {
  std::optional<StagedConversion> staged =
      planStagedConversion(op, tilesInSequence);
  if (!staged)
    return false;
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  auto i8 = IntegerType::get(context, 8);
  auto sourceType = MemRefType::get({staged->sourceBytes}, i8);
  auto destType = MemRefType::get({staged->bytes}, i8);
  KernelSignature signature;
  signature.name = ("convert_storage_" + Twine(index)).str();
  signature.arguments = {sourceType, destType};
  signature.noAliasBuffers = 2;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder builder(context);
  MemRefType sharedType = getSharedMemRefType({staged->getSharedWords()},
                                              IntegerType::get(context, 32));
  Value a = addSharedBuffer(function, sharedType, loc, /*alignment=*/16);
  Value bBuffer = addSharedBuffer(function, sharedType, loc, /*alignment=*/16);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Value block = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value source = entry.getArgument(0), dest = entry.getArgument(1);
  auto emitTiles = [&] {
    TileEmitter(builder, loc, staged->plan)
        .run(source, dest, a, bBuffer, staged->groups, staged->sequence, block,
             thread, [&] { gpu::BarrierOp::create(builder, loc); });
  };
  // Blocks past the tiles' write what the tiles leave, one unit per
  // thread: one launch does the whole conversion. (The branch is uniform
  // per block, so the tiles' barriers stay whole-block.)
  const int64_t blockThreads = staged->getBlockThreads();
  const int64_t gapBlocks =
      llvm::divideCeil(staged->getGapThreads(), blockThreads);
  if (gapBlocks == 0) {
    emitTiles();
  } else {
    Emitter e(builder, loc);
    auto isTile = scf::IfOp::create(
        builder, loc, e.lt(block, staged->getNumBlocks()), /*withElse=*/true);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&isTile.getThenRegion().front());
    emitTiles();
    builder.setInsertionPointToStart(&isTile.getElseRegion().front());
    Value gapThread = e.add(
        e.mul(arith::SubIOp::create(builder, loc, block,
                                    e.index(staged->getNumBlocks())),
              blockThreads),
        thread);
    auto inRange = scf::IfOp::create(
        builder, loc, e.lt(gapThread, staged->getGapThreads()), false);
    builder.setInsertionPointToStart(&inRange.getThenRegion().front());
    // The gap table, a constant global of the kernel module.
    Value table = getConstantTable(builder, loc, kernels,
                                   signature.name + "_gap_table",
                                   ArrayRef(staged->gaps->table),
                                   builder.getI64Type());
    emitGapThread(builder, loc, *staged, table, source, dest, gapThread);
  }
  builder.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(builder, loc);

  // The launch: one block per `groups` x `sequence` tiles, then the gap
  // blocks.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(staged->getNumBlocks() + gapBlocks), one, one},
      gpu::KernelDim3{host.index(blockThreads), one, one}, Value(),
      ValueRange{castToArgument(builder, loc, op.getSource(), sourceType),
                 castToArgument(builder, loc, op.getDest(), destType)});
  op.erase();
  return true;
}

bool mlir::microscale::emulateTiledConversionOnHost(ConvertStorageOp op,
                                                    int64_t tilesInSequence) {
  std::optional<StagedConversion> staged =
      planStagedConversion(op, tilesInSequence);
  if (!staged)
    return false;
  // Outside a pass nothing has loaded the dialects the emulation builds.
  loadHostEmulationDialects(op.getContext());
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  // The kernel's shared tiles as host buffers, reused by every block.
  auto sharedType =
      MemRefType::get({staged->getSharedWords()}, builder.getI32Type());
  Value a = memref::AllocaOp::create(builder, loc, sharedType, ValueRange{},
                                     builder.getI64IntegerAttr(16));
  Value bBuffer = memref::AllocaOp::create(builder, loc, sharedType,
                                           ValueRange{},
                                           builder.getI64IntegerAttr(16));
  // The GPU runs the blocks in any order, and the gap blocks beside the
  // tiles: the emulation runs the gap threads first and the tiles in a
  // scattered order (block i * P mod the count, P a prime that does not
  // divide it), so that a block writing bytes another block owns shows as
  // a wrong result.
  if (staged->gaps) {
    Operation *module = op->getParentOfType<ModuleOp>();
    const std::string name =
        uniqueSymbolPrefix(module, "convert_storage_gaps_table");
    Value table = getConstantTable(builder, loc, module, name,
                                   ArrayRef(staged->gaps->table),
                                   builder.getI64Type());
    auto threads = scf::ForOp::create(builder, loc, e.index(0),
                                      e.index(staged->getGapThreads()),
                                      e.index(1));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(threads.getBody());
    emitGapThread(builder, loc, *staged, table, op.getSource(), op.getDest(),
                  threads.getInductionVar());
  }
  const int64_t numBlocks = staged->getNumBlocks();
  const int64_t stride = scatteredOrderStride(numBlocks);
  auto blocks = scf::ForOp::create(builder, loc, e.index(0),
                                   e.index(numBlocks), e.index(1));
  {
    OpBuilder::InsertionGuard blockGuard(builder);
    builder.setInsertionPointToStart(blocks.getBody());
    Value block = e.rem(e.mul(blocks.getInductionVar(), stride), numBlocks);
    TileEmitter emitter(builder, loc, staged->plan);
    emitter.onHost = true;
    // Each phase for every thread of the block in turn: a barrier is the
    // end of a loop over the threads.
    for (int phase = 1; phase <= 3; ++phase) {
      auto threads = scf::ForOp::create(builder, loc, e.index(0),
                                        e.index(staged->getBlockThreads()),
                                        e.index(1));
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(threads.getBody());
      emitter.emitPhase(phase, op.getSource(), op.getDest(), a, bBuffer,
                        staged->groups, staged->sequence, block,
                        threads.getInductionVar());
    }
  }
  op.erase();
  return true;
}
