//===- BlockConversion.cpp - FP4 layout conversion in vector blocks -------===//
//
// Planning (compile time, from the reference layouts) and IR emission of
// the block routing described in BlockConversion.h.
//
// Register addresses. A block of 2^n elements lives in 2^(n-1-L) vectors of
// W = 2^L bytes. Element e sits at register nibble address
//   sum over the set bits j of e of 2^pos[j],
// where pos[j] = 0 is the nibble-within-byte bit, 1..L are lane bits and
// L+1.. vector-index bits. A state is such a `pos`; loads give the source's,
// stores need the destination's, and the routing goes from one to the other
// with nibble swaps (position 0 <-> a vector bit) and shuffles (any lane
// permutation that draws each output vector from at most two inputs).
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"
#include "microscale/Dialect/Microscale/Utils/WordBitMap.h"

#include "microscale/Dialect/Microscale/Utils/BandCopy.h"
#include "microscale/Reference/BlockBits.h"

#include "microscale/Reference/Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

/// Up to 2^14 elements (8 KiB) per block: enough for every routing we know
/// (a 128 x 128 nibble transpose is the largest) at a code size LLVM
/// compiles in well under a second.
constexpr int kMaxBlockBits = 14;
/// Narrower runs would be loaded a few bytes at a time: not worth it.
constexpr int64_t kMinRunBytes = 4;
/// Routing stages emitted together per group of vectors (see
/// BlockEmitter::scheduleSteps).
constexpr int kStagesPerPhase = 3;
/// How many blocks ahead the source is prefetched.
constexpr int64_t kPrefetchBlocks = 2;
/// The largest band written through a buffer before it streams to the
/// destination (writesBandsThroughBuffer): it must stay in the core's
/// cache.
constexpr int64_t kMaxBounceBytes = int64_t(256) << 10;
/// Bands through buffers walked together (emitBlockConversion).
constexpr int64_t kBandsPerGroup = 2;
/// Bands that read the same source lines (bandsWalkedTogether) are walked
/// together where the source rows are at least this far apart and each
/// band reads less of a row than this (else band after band): a line at a
/// time would already read each line from memory once, but rows a
/// multiple of 1 KiB apart then read one line per row, in an order of DRAM
/// pages that measured up to twice as slow as a kilobyte per row
/// (docs/performance.md).
constexpr int64_t kGroupRowBytes = 1024;
/// The least part of the tensor that blocks which do not divide it must
/// cover (the rest goes through the generic per-unit code).
constexpr double kMinCoverage = 0.9;
/// The same with edge blocks, which take the rest with masks: their masked
/// lanes are wasted work, no more than the blocks' own at this coverage.
constexpr double kMinCoverageWithEdges = 0.6;
/// Padding runs shorter than this next to elements are written with them.
constexpr int64_t kMinPaddingRunBytes = 64;

/// The logical tensor as [batch, rows, cols].
struct Tensor {
  std::vector<int64_t> shape;
  int64_t batch = 1, rows = 0, cols = 0;

  explicit Tensor(const std::vector<int64_t> &s) : shape(s) {
    for (size_t d = 0; d + 2 < s.size(); ++d)
      batch *= s[d];
    rows = s[s.size() - 2];
    cols = s.back();
  }

  std::vector<int64_t> index(int64_t b, int64_t r, int64_t c) const {
    std::vector<int64_t> out(shape.size(), 0);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 3; d >= 0; --d) {
      out[d] = b % shape[d];
      b /= shape[d];
    }
    out[shape.size() - 2] = r;
    out.back() = c;
    return out;
  }
};

/// The address (in nibbles, before any word interleave) of one element, or
/// -1 when its four bits are not one aligned nibble.
int64_t nibbleAddress(const ref::Layout &layout,
                      const std::vector<int64_t> &index) {
  int64_t bits[4];
  layout.locateBeforeInterleave(index.data(), bits);
  if (bits[0] % 4 != 0)
    return -1;
  for (int i = 1; i < 4; ++i)
    if (bits[i] != bits[0] + i)
      return -1;
  return bits[0] / 4;
}

/// Element e of a block is at (row e >> logCols, column e & (2^logCols - 1))
/// of the block.
struct BlockShape {
  int logRows, logCols;
  int bits() const { return logRows + logCols; }
  int64_t rows() const { return int64_t(1) << logRows; }
  int64_t cols() const { return int64_t(1) << logCols; }
};

/// Bit j of `e` moved to bit positions[j] (the positions are distinct): a
/// block-relative nibble address for a layout's address bits, a register
/// nibble address for a register state.
int64_t spreadBits(ArrayRef<int> positions, int64_t e) {
  int64_t spread = 0;
  for (size_t j = 0; j < positions.size(); ++j)
    if ((e >> j) & 1)
      spread |= int64_t(1) << positions[j];
  return spread;
}

/// The bits j whose position is a vector lane (1..laneBits).
SmallVector<int> bitsOnLanes(ArrayRef<int> positions, int laneBits) {
  SmallVector<int> lanes;
  for (size_t j = 0; j < positions.size(); ++j)
    if (positions[j] >= 1 && positions[j] <= laneBits)
      lanes.push_back(j);
  return lanes;
}

/// The address bits of `layout` on the block at the tensor's origin, or
/// std::nullopt when single-bit probes already show it is not a bit
/// permutation there (within the storage's rows).
std::optional<BlockAddressBits> probe(const ref::Layout &layout, const Tensor &t,
                                 BlockShape block) {
  if (nibbleAddress(layout, t.index(0, 0, 0)) != 0)
    return std::nullopt;
  BlockAddressBits bits;
  std::vector<int64_t> storage = layout.getStorageShape();
  if (!storage.empty() && storage.back() > 0) {
    bits.pitch = 2 * storage.back();
    bits.rowShift = llvm::Log2_64_Ceil(static_cast<uint64_t>(bits.pitch));
  }
  uint64_t used = 0;
  int64_t columnSpan = 0;
  for (int j = 0; j < block.bits(); ++j) {
    int64_t e = int64_t(1) << j;
    int64_t a = nibbleAddress(layout, t.index(0, e >> block.logCols,
                                              e & (block.cols() - 1)));
    if (a <= 0)
      return std::nullopt;
    int bit;
    if (a < bits.pitch && llvm::isPowerOf2_64(a)) {
      bit = llvm::Log2_64(a);
      columnSpan += a;
    } else if (a % bits.pitch == 0 && llvm::isPowerOf2_64(a / bits.pitch)) {
      bit = bits.rowShift + llvm::Log2_64(a / bits.pitch);
    } else {
      return std::nullopt;
    }
    if (bit >= 62 || (used >> bit) & 1)
      return std::nullopt;
    used |= uint64_t(1) << bit;
    bits.push_back(bit);
  }
  // The block's columns must stay inside one storage row.
  if (columnSpan >= bits.pitch)
    return std::nullopt;
  return bits;
}

/// A register state (see the file comment) with the runs it is loaded from
/// or stored to.
struct State {
  SmallVector<int> pos;
  int64_t runBytes = 0;
};

/// The state in which a layout's runs land in registers: nibble bit at
/// position 0, the run's byte bits on the low lanes, further lanes (when a
/// run is narrower than a vector) taken from `preferred` bits first and never
/// from `avoid` unless nothing else is left, the remaining bits on vector
/// positions in address order.
std::optional<State> registerState(const BlockAddressBits &bits, int laneBits,
                                   ArrayRef<int> preferred,
                                   ArrayRef<int> avoid) {
  const int n = bits.size();
  int contiguous = 0;
  while (llvm::is_contained(bits, contiguous))
    ++contiguous;
  if (contiguous == 0)
    return std::nullopt;
  State state;
  state.runBytes = int64_t(1) << (contiguous - 1);
  if (state.runBytes < kMinRunBytes)
    return std::nullopt;
  state.pos.assign(n, -1);
  const int nativeLanes = std::min(contiguous - 1, laneBits);
  for (int j = 0; j < n; ++j)
    if (bits[j] <= nativeLanes)
      state.pos[j] = bits[j];
  int nextLane = nativeLanes + 1;
  auto fill = [&](auto accept) {
    for (int j = 0; j < n && nextLane <= laneBits; ++j)
      if (state.pos[j] < 0 && accept(j))
        state.pos[j] = nextLane++;
  };
  fill([&](int j) { return llvm::is_contained(preferred, j); });
  fill([&](int j) { return !llvm::is_contained(avoid, j); });
  fill([](int) { return true; });
  if (nextLane <= laneBits)
    return std::nullopt;
  SmallVector<int> rest;
  for (int j = 0; j < n; ++j)
    if (state.pos[j] < 0)
      rest.push_back(j);
  llvm::sort(rest, [&](int x, int y) { return bits[x] < bits[y]; });
  for (size_t k = 0; k < rest.size(); ++k)
    state.pos[rest[k]] = laneBits + 1 + k;
  return state;
}

/// The element at each register nibble address of a state.
SmallVector<int64_t> elementsAt(ArrayRef<int> pos) {
  SmallVector<int64_t> at(int64_t(1) << pos.size());
  for (int64_t e = 0; e < static_cast<int64_t>(at.size()); ++e)
    at[spreadBits(pos, e)] = e;
  return at;
}

/// Builds the register program of a plan.
class Router {
public:
  Router(BlockConversionPlan &plan, int n, int laneBits)
      : plan(plan), n(n), laneBits(laneBits),
        numVectors(int64_t(1) << (n - 1 - laneBits)) {}

  void load(const State &source, const BlockAddressBits &bits) {
    cur = source.pos;
    plan.loads = accesses(source, bits, /*firstValue=*/0);
    for (int64_t v = 0; v < numVectors; ++v)
      vec.push_back(v);
    plan.numValues = numVectors;
  }

  /// Routes to `target`; false when the planned sequence does not get there.
  bool route(const State &target) {
    const int h = llvm::find(cur, 0) - cur.begin();
    const int wantH = llvm::find(target.pos, 0) - target.pos.begin();
    auto isLane = [&](int p) { return p >= 1 && p <= laneBits; };
    auto isVector = [&](int p) { return p > laneBits; };
    if (h != wantH) {
      if (isLane(cur[wantH])) {
        // Move it to a vector bit first, in exchange for a bit the target
        // wants on a lane if there is one.
        int partner = -1;
        for (int j = 0; j < n && partner < 0; ++j)
          if (isVector(cur[j]) && isLane(target.pos[j]))
            partner = j;
        for (int j = 0; j < n && partner < 0; ++j)
          if (isVector(cur[j]))
            partner = j;
        if (partner < 0)
          return false;
        SmallVector<int> next = cur;
        std::swap(next[wantH], next[partner]);
        if (!shuffleTo(next))
          return false;
      }
      if (!isVector(cur[wantH]))
        return false;
      nibbleSwap(cur[wantH]);
    }
    SmallVector<int> incoming, outgoing;
    for (int j = 0; j < n; ++j) {
      if (isLane(target.pos[j]) && isVector(cur[j]))
        incoming.push_back(j);
      if (isLane(cur[j]) && isVector(target.pos[j]))
        outgoing.push_back(j);
    }
    if (incoming.size() != outgoing.size())
      return false;
    // All swaps but the last as plain stages; the last one, the final lane
    // permutation and the vectors' renaming in one shuffle per vector.
    for (size_t k = 0; k + 1 < incoming.size(); ++k) {
      SmallVector<int> next = cur;
      std::swap(next[incoming[k]], next[outgoing[k]]);
      if (!shuffleTo(next))
        return false;
    }
    return shuffleTo(target.pos);
  }

  void store(const State &dest, const BlockAddressBits &bits) {
    plan.stores = accesses(dest, bits, /*firstValue=*/-1);
    for (auto [v, access] : llvm::enumerate(plan.stores))
      access.value = vec[v];
  }

private:
  /// The runs of each vector of `state`, for a layout with `bits`.
  SmallVector<BlockConversionPlan::Access>
  accesses(const State &state, const BlockAddressBits &bits, int firstValue) {
    SmallVector<int64_t> at = elementsAt(state.pos);
    const int64_t w = int64_t(1) << laneBits;
    const int64_t run = std::min(state.runBytes, w);
    SmallVector<BlockConversionPlan::Access> result;
    for (int64_t v = 0; v < numVectors; ++v) {
      BlockConversionPlan::Access access;
      access.value = firstValue < 0 ? -1 : firstValue + v;
      access.runBytes = run;
      for (int64_t lane = 0; lane < w; lane += run) {
        int64_t e = at[(v << (laneBits + 1)) | (lane << 1)];
        access.offsets.push_back(bits.physical(spreadBits(bits, e)) / 2);
      }
      result.push_back(std::move(access));
    }
    return result;
  }

  /// One shuffle per vector from `cur` to `next` (the nibble bit staying
  /// put); false if some vector of `next` needs more than two inputs.
  bool shuffleTo(ArrayRef<int> next) {
    const int64_t w = int64_t(1) << laneBits;
    SmallVector<int64_t> at = elementsAt(next);
    SmallVector<BlockConversionPlan::Step> steps;
    SmallVector<int> newVec(numVectors);
    int values = plan.numValues;
    for (int64_t v = 0; v < numVectors; ++v) {
      SmallVector<int64_t> inputs;
      SmallVector<int64_t> mask(w);
      for (int64_t lane = 0; lane < w; ++lane) {
        int64_t e = at[(v << (laneBits + 1)) | (lane << 1)];
        int64_t address = spreadBits(cur, e);
        if (address & 1)
          return false;
        int64_t from = address >> (laneBits + 1);
        auto it = llvm::find(inputs, from);
        if (it == inputs.end()) {
          if (inputs.size() == 2)
            return false;
          inputs.push_back(from);
          it = inputs.end() - 1;
        }
        mask[lane] = (it - inputs.begin()) * w + ((address >> 1) & (w - 1));
      }
      bool identity = inputs.size() == 1;
      for (int64_t lane = 0; identity && lane < w; ++lane)
        identity = mask[lane] == lane;
      if (identity) {
        newVec[v] = vec[inputs[0]];
        continue;
      }
      BlockConversionPlan::Step step;
      step.kind = BlockConversionPlan::Step::Kind::Shuffle;
      step.a = vec[inputs[0]];
      step.b = vec[inputs.back()];
      step.mask = std::move(mask);
      step.result0 = values++;
      step.result1 = -1;
      step.stage = stage;
      newVec[v] = step.result0;
      steps.push_back(std::move(step));
    }
    llvm::append_range(plan.steps, steps);
    plan.numValues = values;
    ++stage;
    cur.assign(next.begin(), next.end());
    vec = std::move(newVec);
    return true;
  }

  /// Exchanges the nibble bit with vector position `position`.
  void nibbleSwap(int position) {
    const int64_t bit = int64_t(1) << (position - laneBits - 1);
    SmallVector<int> newVec(numVectors);
    for (int64_t v = 0; v < numVectors; ++v) {
      if (v & bit)
        continue;
      BlockConversionPlan::Step step;
      step.kind = BlockConversionPlan::Step::Kind::NibbleSwap;
      step.a = vec[v];
      step.b = vec[v | bit];
      step.result0 = plan.numValues++;
      step.result1 = plan.numValues++;
      step.stage = stage;
      newVec[v] = step.result0;
      newVec[v | bit] = step.result1;
      plan.steps.push_back(std::move(step));
    }
    vec = std::move(newVec);
    int h = llvm::find(cur, 0) - cur.begin();
    int j = llvm::find(cur, position) - cur.begin();
    cur[h] = position;
    cur[j] = 0;
    ++stage;
  }

  BlockConversionPlan &plan;
  int n, laneBits;
  int64_t numVectors;
  int stage = 0;
  SmallVector<int> cur;
  SmallVector<int> vec;
};

/// The stack accesses of a block whose vectors outgrow `registerFileBytes`:
/// the emitter runs the routing stages in phases of kStagesPerPhase
/// (scheduleSteps), each on a group of vectors, and a block that does not
/// fit the registers keeps the rest in the stack in between.
int64_t spilledVectorAccesses(const BlockConversionPlan &plan,
                              int64_t registerFileBytes) {
  if (registerFileBytes == 0 || plan.steps.empty())
    return 0;
  // A few registers go to the shuffles' masks and results.
  constexpr int64_t kScratchRegisters = 4;
  const int64_t vectors = plan.getBlockBytes() / plan.vectorBytes;
  const int64_t held =
      std::max<int64_t>(registerFileBytes / plan.vectorBytes -
                            kScratchRegisters,
                        1);
  if (vectors <= held)
    return 0;
  int stages = 0;
  for (const auto &step : plan.steps)
    stages = std::max(stages, step.stage + 1);
  const int64_t phases = llvm::divideCeil(stages, kStagesPerPhase);
  // Each vector that does not fit is stored and loaded once per phase.
  return 2 * (vectors - held) * phases;
}

/// Operations per block, roughly as the host executes them (with
/// `registerFileBytes`, the spills of a block that outgrows the registers).
int64_t estimateCost(const BlockConversionPlan &plan,
                     int64_t registerFileBytes = 0) {
  int64_t cost = spilledVectorAccesses(plan, registerFileBytes);
  auto accessCost = [](const BlockConversionPlan::Access &a) {
    return 2 * static_cast<int64_t>(a.offsets.size()) - 1;
  };
  for (const auto &a : plan.loads)
    cost += accessCost(a);
  for (const auto &a : plan.stores)
    cost += accessCost(a);
  for (const auto &s : plan.steps)
    cost += s.kind == BlockConversionPlan::Step::Kind::Shuffle ? 2 : 8;
  if (plan.sourceWordMap)
    cost += plan.loads.size() * 3 * shiftMasks(*plan.sourceWordMap).size();
  if (plan.destWordMap)
    cost += plan.stores.size() * 3 * shiftMasks(*plan.destWordMap).size();
  return cost;
}

std::optional<std::array<int8_t, 32>> wordMap(const ref::Layout &layout,
                                              bool inverse) {
  const int8_t *map = layout.getWordInterleave();
  if (!map)
    return std::nullopt;
  std::array<int8_t, 32> result;
  for (int b = 0; b < 32; ++b) {
    if (inverse)
      result[map[b]] = static_cast<int8_t>(b);
    else
      result[b] = map[b];
  }
  return result;
}

/// The register program for one block shape, without the iteration.
std::optional<BlockConversionPlan>
routeBlock(const ref::Layout &from, const ref::Layout &to,
           const BlockAddressBits &sourceBits, const BlockAddressBits &destBits,
           BlockShape block, int laneBits) {
  const int n = block.bits();
  if (n < laneBits + 1)
    return std::nullopt;
  const int sourceH = llvm::find(sourceBits, 0) - sourceBits.begin();
  const int destH = llvm::find(destBits, 0) - destBits.begin();
  if (sourceH == n || destH == n)
    return std::nullopt;
  auto source = registerState(sourceBits, laneBits,
                              bitsOnLanes(destBits, laneBits), {destH});
  if (!source)
    return std::nullopt;
  auto dest = registerState(destBits, laneBits,
                            bitsOnLanes(source->pos, laneBits), {sourceH});
  if (!dest)
    return std::nullopt;

  BlockConversionPlan plan;
  plan.vectorBytes = int64_t(1) << laneBits;
  plan.blockRows = block.rows();
  plan.blockCols = block.cols();
  plan.sourceWordMap = wordMap(from, /*inverse=*/true);
  plan.destWordMap = wordMap(to, /*inverse=*/false);
  Router router(plan, n, laneBits);
  router.load(*source, sourceBits);
  if (!router.route(*dest))
    return std::nullopt;
  router.store(*dest, destBits);
  plan.sourceRegisterBits = source->pos;
  plan.destRegisterBits = dest->pos;
  // Word maps work on whole aligned words.
  auto wordAligned = [](ArrayRef<BlockConversionPlan::Access> accesses) {
    return llvm::all_of(accesses, [](const BlockConversionPlan::Access &a) {
      return a.runBytes % 4 == 0 &&
             llvm::all_of(a.offsets, [](int64_t o) { return o % 4 == 0; });
    });
  };
  if ((plan.sourceWordMap && !wordAligned(plan.loads)) ||
      (plan.destWordMap && !wordAligned(plan.stores)))
    return std::nullopt;
  return plan;
}

/// Where block `inner` of band `band` starts, for one of the two ways of
/// grouping blocks into bands.
struct Banding {
  bool innerAlongCols;
  int64_t blocksDown, blocksAcross; // blocks per batch along rows, cols

  std::vector<int64_t> origin(const Tensor &t, BlockShape block, int64_t band,
                              int64_t inner) const {
    int64_t perBatch = innerAlongCols ? blocksDown : blocksAcross;
    int64_t b = band / perBatch, outer = band % perBatch;
    int64_t br = innerAlongCols ? outer : inner;
    int64_t bc = innerAlongCols ? inner : outer;
    return t.index(b, br * block.rows(), bc * block.cols());
  }
};

/// Checks the plan's maps and strides against the reference on sampled
/// blocks, and that the destination is, per batch, one span per band (its
/// blocks writing inside it) and a tail; records the spans' gaps.
bool verifyBands(const ref::Layout &from, const ref::Layout &to,
                 const Tensor &t, BlockShape block,
                 const BlockAddressBits &sourceBits, const BlockAddressBits &destBits,
                 const Banding &banding, BlockConversionPlan &plan,
                 bool edges) {
  const int64_t perBatch =
      banding.innerAlongCols ? banding.blocksDown : banding.blocksAcross;
  // Edge blocks (BlockConversionPlan::innerEdge, bandEdge): the blocks that
  // stick out of the tensor where the block does not divide it.
  const bool rowEdge = edges && t.rows % block.rows() != 0;
  const bool colEdge = edges && t.cols % block.cols() != 0;
  const bool innerCut = banding.innerAlongCols ? colEdge : rowEdge;
  const bool bandCut = banding.innerAlongCols ? rowEdge : colEdge;
  plan.innerEdge.reset();
  plan.bandEdge.reset();
  plan.cornerEdge.reset();
  plan.numBands = t.batch * perBatch;
  plan.bandsPerBatch = perBatch;
  plan.blocksPerBand =
      banding.innerAlongCols ? banding.blocksAcross : banding.blocksDown;
  if (plan.numBands == 0 || plan.blocksPerBand == 0)
    return false;
  const int64_t blockNibbles = int64_t(1) << block.bits();
  const int64_t bandNibbles = plan.blocksPerBand * blockNibbles;
  if (bandNibbles > (int64_t(1) << 26))
    return false;
  plan.bandBytes = bandNibbles / 2;
  auto base = [&](const ref::Layout &layout, int64_t band, int64_t inner) {
    return nibbleAddress(layout, banding.origin(t, block, band, inner));
  };
  // The block at (band `outer`, `inner`) of batch `batch`, edge blocks
  // (outer == perBatch, inner == blocksPerBand) included.
  auto originAt = [&](int64_t batch, int64_t outer, int64_t inner) {
    int64_t br = banding.innerAlongCols ? outer : inner;
    int64_t bc = banding.innerAlongCols ? inner : outer;
    return t.index(batch, br * block.rows(), bc * block.cols());
  };
  // Strides in nibbles: [batch, band, inner].
  auto strides = [&](const ref::Layout &layout) {
    return std::array<int64_t, 3>{
        t.batch > 1 ? base(layout, perBatch, 0) : 0,
        perBatch > 1 ? base(layout, 1, 0)
        : bandCut    ? nibbleAddress(layout, originAt(0, 1, 0))
                     : 0,
        plan.blocksPerBand > 1 ? base(layout, 0, 1)
        : innerCut             ? nibbleAddress(layout, originAt(0, 0, 1))
                               : 0};
  };
  const std::array<int64_t, 3> source = strides(from), dest = strides(to);
  auto expected = [&](const std::array<int64_t, 3> &s, int64_t band,
                      int64_t inner) {
    return band / perBatch * s[0] + band % perBatch * s[1] + inner * s[2];
  };
  for (int64_t s : source)
    if (s < 0 || s % 8)
      return false;
  for (int64_t s : dest)
    if (s < 0 || s % 8)
      return false;
  // The destination: per batch, perBatch spans and a tail.
  const int64_t destNibbles = to.getStorageBytes() * 2;
  if (destNibbles % t.batch)
    return false;
  const int64_t batchNibbles = destNibbles / t.batch;
  if (t.batch > 1 && dest[0] != batchNibbles)
    return false;
  const int64_t spanNibbles =
      perBatch > 1 || bandCut ? dest[1] : batchNibbles;
  const int64_t tailNibbles = batchNibbles - perBatch * spanNibbles;
  if (spanNibbles < bandNibbles || tailNibbles < 0 || spanNibbles % 8 ||
      tailNibbles % 8 || spanNibbles > (int64_t(1) << 27))
    return false;

  // Sampled blocks: the first ones, the last ones, both sides of a batch
  // boundary and the middle. First their corners (cheap), then every
  // element.
  const int64_t lastBand = plan.numBands - 1, lastInner = plan.blocksPerBand - 1;
  std::vector<std::pair<int64_t, int64_t>> samples = {
      {0, 0},        {0, 1},           {1, 0},
      {1, 1},        {lastBand, 0},    {0, lastInner},
      {lastBand, lastInner}, {lastBand / 2, lastInner / 2}, {perBatch, 0},
      {perBatch - 1, lastInner}};
  llvm::erase_if(samples, [&](auto sample) {
    return sample.first > lastBand || sample.second > lastInner;
  });
  auto matches = [&](int64_t band, int64_t inner, int64_t e) {
    int64_t r = e >> block.logCols, c = e & (block.cols() - 1);
    std::vector<int64_t> index = banding.origin(t, block, band, inner);
    index[index.size() - 2] += r;
    index.back() += c;
    return nibbleAddress(from, index) ==
               expected(source, band, inner) +
                   sourceBits.physical(spreadBits(sourceBits, e)) &&
           nibbleAddress(to, index) ==
               expected(dest, band, inner) +
                   destBits.physical(spreadBits(destBits, e));
  };
  for (auto [band, inner] : samples)
    if (!matches(band, inner, 0) || !matches(band, inner, blockNibbles - 1))
      return false;
  // Every band's first and last block, and every block of the first and the
  // last band, at the block's origin, its last element and each index bit:
  // layouts whose tiles repeat with a period (Hopper's mma_version 2, say)
  // are affine over some bands only.
  auto checkBlock = [&](int64_t band, int64_t inner) {
    if (!matches(band, inner, 0) || !matches(band, inner, blockNibbles - 1))
      return false;
    for (int j = 0; j < block.bits(); ++j)
      if (!matches(band, inner, int64_t(1) << j))
        return false;
    return true;
  };
  for (int64_t band = 0; band <= lastBand; ++band)
    if (!checkBlock(band, 0) || !checkBlock(band, lastInner))
      return false;
  for (int64_t inner = 0; inner <= lastInner; ++inner)
    if (!checkBlock(0, inner) || !checkBlock(lastBand, inner))
      return false;

  // The band's blocks write inside its span, each nibble once; what they
  // leave are the span's gaps (whole bytes).
  std::vector<bool> covered(spanNibbles, false);
  for (int64_t inner = 0; inner < plan.blocksPerBand; ++inner)
    for (int64_t e = 0; e < blockNibbles; ++e) {
      int64_t a = inner * dest[2] + destBits.physical(spreadBits(destBits, e));
      if (a >= spanNibbles || covered[a])
        return false;
      covered[a] = true;
    }
  // Edge blocks: their elements where the plan's strides put them (every
  // edge block of the first and last batch at its origin, last element and
  // each index bit, some element by element), their masks, and what they
  // write: inside the band's span (inner edge) or the batch's tail.
  std::vector<bool> tailCovered(tailNibbles, false);
  if (innerCut || bandCut) {
    const int64_t rowsLeft = t.rows - banding.blocksDown * block.rows();
    const int64_t colsLeft = t.cols - banding.blocksAcross * block.cols();
    // Valid extent of an edge block cut on the inner or band axis (or both).
    auto extent = [&](bool cutInner, bool cutBand) {
      bool cutRows = banding.innerAlongCols ? cutBand : cutInner;
      bool cutCols = banding.innerAlongCols ? cutInner : cutBand;
      return std::make_pair(cutRows ? rowsLeft : block.rows(),
                            cutCols ? colsLeft : block.cols());
    };
    auto matchesAt = [&](int64_t batch, int64_t outer, int64_t inner,
                         int64_t e) {
      int64_t r = e >> block.logCols, c = e & (block.cols() - 1);
      std::vector<int64_t> index = originAt(batch, outer, inner);
      index[index.size() - 2] += r;
      index.back() += c;
      return nibbleAddress(from, index) ==
                 batch * source[0] + outer * source[1] + inner * source[2] +
                     sourceBits.physical(spreadBits(sourceBits, e)) &&
             nibbleAddress(to, index) ==
                 batch * dest[0] + outer * dest[1] + inner * dest[2] +
                     destBits.physical(spreadBits(destBits, e));
    };
    const int laneBits = llvm::Log2_64(plan.vectorBytes);
    const SmallVector<int64_t> sourceAt = elementsAt(plan.sourceRegisterBits);
    const SmallVector<int64_t> destAt = elementsAt(plan.destRegisterBits);
    // Checks the edge blocks of one kind and marks what they write; false
    // where they do not fit.
    auto edgeKind = [&](bool cutInner, bool cutBand,
                        std::optional<BlockConversionPlan::EdgeMasks> &out,
                        ArrayRef<std::pair<int64_t, int64_t>> blocks,
                        bool markFirstOnly) {
      const std::pair<int64_t, int64_t> valid = extent(cutInner, cutBand);
      const int64_t validRows = valid.first, validCols = valid.second;
      auto present = [&](int64_t e) {
        return (e >> block.logCols) < validRows &&
               (e & (block.cols() - 1)) < validCols;
      };
      // Masks: a load lane where either nibble is an element, a store lane
      // where both are (a lane with one is not supported).
      BlockConversionPlan::EdgeMasks masks;
      const int64_t w = plan.vectorBytes;
      auto lanes = [&](ArrayRef<int64_t> at, int64_t v, bool store,
                       SmallVector<bool> &result) {
        bool all = true;
        for (int64_t lane = 0; lane < w; ++lane) {
          int64_t address = (v << (laneBits + 1)) | (lane << 1);
          bool low = present(at[address]), high = present(at[address | 1]);
          if (store && low != high)
            return false;
          result.push_back(low || high);
          all &= low || high;
        }
        if (all)
          result.clear();
        return true;
      };
      for (size_t v = 0; v < plan.loads.size(); ++v)
        if (!lanes(sourceAt, v, false, masks.loadLanes.emplace_back()))
          return false;
      for (size_t v = 0; v < plan.stores.size(); ++v)
        if (!lanes(destAt, v, true, masks.storeLanes.emplace_back()))
          return false;
      int64_t lastPresent = ((validRows - 1) << block.logCols) | (validCols - 1);
      for (auto [outer, inner] : blocks)
        for (int64_t batch : {int64_t(0), t.batch - 1}) {
          if (!matchesAt(batch, outer, inner, 0) ||
              !matchesAt(batch, outer, inner, lastPresent))
            return false;
          for (int j = 0; j < block.bits(); ++j)
            if (present(int64_t(1) << j) &&
                !matchesAt(batch, outer, inner, int64_t(1) << j))
              return false;
        }
      // The first and the last edge block of the kind, element by element.
      for (auto [outer, inner] : {blocks.front(), blocks.back()})
        for (int64_t e = 0; e < blockNibbles; ++e)
          if (present(e) && !matchesAt(t.batch - 1, outer, inner, e))
            return false;
      // What they write (the bytes of their elements, each once).
      for (auto [outer, inner] :
           blocks.take_front(markFirstOnly ? 1 : blocks.size()))
        for (int64_t e = 0; e < blockNibbles; ++e) {
          if (!present(e))
            continue;
          int64_t a = outer * dest[1] + inner * dest[2] +
                      destBits.physical(spreadBits(destBits, e));
          if (outer < perBatch) {
            a -= outer * spanNibbles;
            if (a < 0 || a >= spanNibbles || covered[a])
              return false;
            covered[a] = true;
          } else {
            a -= perBatch * spanNibbles;
            if (a < 0 || a >= tailNibbles || tailCovered[a])
              return false;
            tailCovered[a] = true;
          }
        }
      out = std::move(masks);
      return true;
    };
    if (innerCut) {
      // The same for every band: the first band's is marked, all are
      // checked.
      std::vector<std::pair<int64_t, int64_t>> blocks;
      for (int64_t outer = 0; outer < perBatch; ++outer)
        blocks.push_back({outer, plan.blocksPerBand});
      if (!edgeKind(true, false, plan.innerEdge, blocks,
                    /*markFirstOnly=*/true))
        return false;
    }
    if (bandCut) {
      std::vector<std::pair<int64_t, int64_t>> blocks;
      for (int64_t inner = 0; inner < plan.blocksPerBand; ++inner)
        blocks.push_back({perBatch, inner});
      if (!edgeKind(false, true, plan.bandEdge, blocks,
                    /*markFirstOnly=*/false))
        return false;
      if (innerCut &&
          !edgeKind(true, true, plan.cornerEdge,
                    {{perBatch, plan.blocksPerBand}},
                    /*markFirstOnly=*/false))
        return false;
    }
    // Store lanes of missing elements only, that land on the destination's
    // padding (bytes nothing else writes: every element is written by the
    // blocks) and hold zeros (their source bytes were not loaded), are
    // stored too: the masked loads' zeros are the padding, and the edge
    // blocks' runs stay whole where the padding completes them.
    auto padLanes = [&](bool cutInner, bool cutBand,
                        BlockConversionPlan::EdgeMasks &masks,
                        ArrayRef<std::pair<int64_t, int64_t>> blocks) {
      const std::pair<int64_t, int64_t> valid = extent(cutInner, cutBand);
      const int64_t validRows = valid.first, validCols = valid.second;
      auto present = [&](int64_t e) {
        return (e >> block.logCols) < validRows &&
               (e & (block.cols() - 1)) < validCols;
      };
      auto zeroSourced = [&](int64_t e) {
        return !present(sourceAt[spreadBits(plan.sourceRegisterBits, e) ^ 1]);
      };
      for (auto [v, lanes] : llvm::enumerate(masks.storeLanes)) {
        if (lanes.empty())
          continue;
        for (int64_t lane = 0; lane < plan.vectorBytes; ++lane) {
          if (lanes[lane])
            continue;
          int64_t address = (int64_t(v) << (laneBits + 1)) | (lane << 1);
          int64_t e0 = destAt[address], e1 = destAt[address | 1];
          if (!zeroSourced(e0) || !zeroSourced(e1))
            continue;
          int64_t nibble = destBits.physical(spreadBits(destBits, e0)) & ~1;
          SmallVector<std::pair<std::vector<bool> *, int64_t>> marks;
          bool fits = true;
          for (auto [outer, inner] : blocks) {
            int64_t a = outer * dest[1] + inner * dest[2] + nibble;
            std::vector<bool> *region = &covered;
            int64_t size = spanNibbles;
            if (outer < perBatch) {
              a -= outer * spanNibbles;
            } else {
              a -= perBatch * spanNibbles;
              region = &tailCovered;
              size = tailNibbles;
            }
            if (a < 0 || a + 1 >= size || (*region)[a] || (*region)[a + 1]) {
              fits = false;
              break;
            }
            marks.push_back({region, a});
          }
          if (!fits)
            continue;
          for (auto [region, a] : marks)
            (*region)[a] = (*region)[a + 1] = true;
          lanes[lane] = true;
        }
        if (llvm::all_of(lanes, [](bool x) { return x; }))
          lanes.clear();
      }
    };
    if (innerCut)
      padLanes(true, false, *plan.innerEdge, {{0, plan.blocksPerBand}});
    if (bandCut) {
      std::vector<std::pair<int64_t, int64_t>> blocks;
      for (int64_t inner = 0; inner < plan.blocksPerBand; ++inner)
        blocks.push_back({perBatch, inner});
      padLanes(false, true, *plan.bandEdge, blocks);
      if (innerCut)
        padLanes(true, true, *plan.cornerEdge,
                 {{perBatch, plan.blocksPerBand}});
    }
  }
  // The sampled blocks element by element, before the gaps' classification
  // below, which maps every edge element and is wasted on a plan that fails.
  for (auto [band, inner] : samples)
    for (int64_t e = 0; e < blockNibbles; ++e)
      if (!matches(band, inner, e))
        return false;
  // Which gap bytes hold elements (those outside the blocks, on shapes that
  // are not multiples of the block), in any span of the first batch or in
  // its tail; the rest of the gaps is padding. The batches repeat it.
  // (Edge blocks write the elements past the full blocks.)
  const int64_t rowsInBlocks =
      rowEdge ? t.rows : banding.blocksDown * block.rows();
  const int64_t colsInBlocks =
      colEdge ? t.cols : banding.blocksAcross * block.cols();
  std::vector<bool> spanElements(spanNibbles / 2, false),
      tailElements(tailNibbles / 2, false);
  auto markElement = [&](int64_t r, int64_t c) {
    const int64_t a = nibbleAddress(to, t.index(0, r, c));
    if (a < 0 || a >= batchNibbles)
      return false;
    if (a < perBatch * spanNibbles)
      spanElements[a % spanNibbles / 2] = true;
    else
      tailElements[(a - perBatch * spanNibbles) / 2] = true;
    return true;
  };
  // (Past 2^24 edge elements, every gap is taken to hold some: correct,
  // and cheaper to plan.)
  if (int64_t(t.rows - rowsInBlocks) * t.cols +
          rowsInBlocks * int64_t(t.cols - colsInBlocks) >
      (int64_t(1) << 24)) {
    spanElements.assign(spanElements.size(), true);
    tailElements.assign(tailElements.size(), true);
  } else {
    for (int64_t r = rowsInBlocks; r < t.rows; ++r)
      for (int64_t c = 0; c < t.cols; ++c)
        if (!markElement(r, c))
          return false;
    for (int64_t r = 0; r < rowsInBlocks; ++r)
      for (int64_t c = colsInBlocks; c < t.cols; ++c)
        if (!markElement(r, c))
          return false;
  }
  // Short stretches of padding between elements go with the elements (the
  // per-unit writer writes padding too): cutting gaps into many short runs
  // costs more than it saves.
  auto absorbShortPadding = [](std::vector<bool> &elements,
                               const std::vector<bool> *writable) {
    const int64_t n = elements.size();
    for (int64_t a = 0; a < n;) {
      if (elements[a] || (writable && !(*writable)[a])) {
        ++a;
        continue;
      }
      int64_t end = a;
      while (end < n && !elements[end] && (!writable || (*writable)[end]))
        ++end;
      const bool afterElements = a > 0 && elements[a - 1];
      const bool beforeElements = end < n && elements[end];
      if (end - a < kMinPaddingRunBytes && (afterElements || beforeElements))
        for (int64_t i = a; i < end; ++i)
          elements[i] = true;
      a = end;
    }
  };
  std::vector<bool> inGap(spanNibbles / 2);
  for (int64_t i = 0; i < spanNibbles / 2; ++i)
    inGap[i] = !covered[2 * i] || !covered[2 * i + 1];
  absorbShortPadding(spanElements, &inGap);
  absorbShortPadding(tailElements, nullptr);
  // The gaps: maximal runs of bytes no block writes that are all elements'
  // or all padding.
  plan.spanGaps.clear();
  plan.spanGapHoldsElements.clear();
  for (int64_t a = 0; a < spanNibbles;) {
    if (covered[a]) {
      ++a;
      continue;
    }
    if (a % 2)
      return false;
    const bool elements = spanElements[a / 2];
    int64_t end = a;
    while (end < spanNibbles && !covered[end] &&
           spanElements[end / 2] == elements)
      ++end;
    if (end % 2)
      return false;
    plan.spanGaps.push_back({a / 2, (end - a) / 2});
    plan.spanGapHoldsElements.push_back(elements);
    a = end;
  }
  plan.spanBytes = spanNibbles / 2;
  plan.batchTailBytes = tailNibbles / 2;
  plan.batchTailRuns.clear();
  plan.batchTailRunHoldsElements.clear();
  // The tail: what the band edge blocks do not write.
  for (int64_t a = 0; a < plan.batchTailBytes;) {
    if (tailCovered[2 * a] != tailCovered[2 * a + 1])
      return false;
    if (tailCovered[2 * a]) {
      ++a;
      continue;
    }
    const bool elements = tailElements[a];
    int64_t end = a;
    while (end < plan.batchTailBytes && tailElements[end] == elements &&
           !tailCovered[2 * end])
      ++end;
    plan.batchTailRuns.push_back({a, end - a});
    plan.batchTailRunHoldsElements.push_back(elements);
    a = end;
  }

  plan.sourceBatchStride = source[0] / 2;
  plan.sourceBandStride = source[1] / 2;
  plan.sourceInnerStride = source[2] / 2;
  plan.destBatchStride = dest[0] / 2;
  plan.destBandStride = dest[1] / 2;
  plan.destInnerStride = dest[2] / 2;
  return true;
}

/// The alignment streaming stores would need for this plan (see
/// BlockConversionPlan::streamingAlignment), or 0.
int64_t streamingAlignment(const BlockConversionPlan &plan) {
  auto aligned = [&](int64_t alignment) {
    for (int64_t stride : {plan.destBatchStride, plan.destBandStride,
                           plan.destInnerStride})
      if (stride % alignment)
        return false;
    for (const auto &access : plan.stores) {
      if (access.runBytes % alignment)
        return false;
      for (int64_t o : access.offsets)
        if (o % alignment)
          return false;
    }
    return true;
  };
  if (aligned(64))
    return 64;
  if (!aligned(16))
    return 0;
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (const auto &access : plan.stores)
    for (int64_t o : access.offsets)
      runs.push_back({o, access.runBytes});
  llvm::sort(runs);
  int64_t end = 0;
  for (auto [offset, bytes] : runs) {
    if (offset != end)
      return 0;
    end += bytes;
  }
  return end == plan.getBlockBytes() ? 16 : 0;
}

} // namespace

std::optional<BlockConversionPlan>
mlir::microscale::planBlockConversion(const ref::Layout &from,
                                      const ref::Layout &to,
                                      int64_t vectorBytes,
                                      int64_t minBytesWithGaps,
                                      int minBlockBits, bool edgeBlocks,
                                      int64_t registerFileBytes) {
  if (vectorBytes != 16 && vectorBytes != 32 && vectorBytes != 64)
    return std::nullopt;
  // Bytes (scales, FP8) are routed as pairs of nibbles that stay together.
  if (from.getElementBits() == 8 && to.getElementBits() == 8 &&
      !from.getLogicalShape().empty()) {
    // A byte's two nibbles keep address bit 0 on both sides, so the route
    // moves whole bytes.
    std::unique_ptr<ref::Layout> fromNibbles = ref::makeNibbleView(from);
    std::unique_ptr<ref::Layout> toNibbles = ref::makeNibbleView(to);
    return planBlockConversion(*fromNibbles, *toNibbles, vectorBytes,
                               minBytesWithGaps, minBlockBits, edgeBlocks,
                               registerFileBytes);
  }
  if (from.getElementBits() != 4 || to.getElementBits() != 4 ||
      from.getLogicalShape() != to.getLogicalShape() ||
      from.getLogicalShape().size() < 2)
    return std::nullopt;
  const Tensor t(from.getLogicalShape());
  const int64_t elements = from.getNumElements();
  if (elements == 0 || t.rows == 0 || t.cols == 0)
    return std::nullopt;
  const int laneBits = llvm::Log2_64(vectorBytes);
  // Blocks up to 2^12 along a dim; those that divide the extents first.
  auto largest = [](int64_t extent) {
    return std::min<int>(llvm::Log2_64(static_cast<uint64_t>(extent)), 12);
  };
  auto divides = [&](BlockShape block) {
    return t.rows % block.rows() == 0 && t.cols % block.cols() == 0;
  };
  // The part of the tensor the blocks cover.
  auto coverage = [&](BlockShape block) {
    return double(t.rows / block.rows() * block.rows()) *
           double(t.cols / block.cols() * block.cols()) /
           (double(t.rows) * double(t.cols));
  };

  struct Candidate {
    BlockShape block;
    BlockAddressBits sourceBits, destBits;
    BlockConversionPlan plan;
    int64_t cost; // per 64 bytes
    // The band direction tried first (with a register model, the one whose
    // blocks continue each other's runs, where one does), and the share of
    // each cache line the block uses along it (computed once: the sort
    // compares it often).
    bool alongColsFirst = true;
    int64_t lineUse = 0;
  };
  std::vector<Candidate> candidates;
  for (int logRows = 0; logRows <= largest(t.rows); ++logRows)
    for (int logCols = 0; logCols <= largest(t.cols); ++logCols) {
      BlockShape block{logRows, logCols};
      if (block.bits() < std::max(laneBits + 1, minBlockBits) ||
          block.bits() > kMaxBlockBits)
        continue;
      // Elements outside the blocks are converted one by one, or by masked
      // edge blocks: the blocks must cover nearly all of the tensor, or
      // most of it.
      if (!divides(block) &&
          coverage(block) <
              (edgeBlocks ? kMinCoverageWithEdges : kMinCoverage))
        continue;
      auto sourceBits = probe(from, t, block);
      auto destBits = sourceBits ? probe(to, t, block) : std::nullopt;
      if (!destBits)
        continue;
      auto plan = routeBlock(from, to, *sourceBits, *destBits, block, laneBits);
      if (!plan)
        continue;
      int64_t cost = estimateCost(*plan, registerFileBytes) * 64 /
                     plan->getBlockBytes();
      candidates.push_back(
          {block, *sourceBits, *destBits, std::move(*plan), cost});
    }
  // Whole cache lines first: a block that reads or writes half lines leaves
  // the other halves to a band that comes much later, by which time they
  // have left the caches, and DRAM serves each line twice. Then the fewest
  // operations, then the smallest block.
  // (On the host, a store run counts as far as the storage's rows keep it
  // aligned: 64-byte runs on rows 1440 bytes apart write halves of two lines
  // on every other row, each line then read before being written, and
  // measured slower than aligned 32-byte runs.)
  auto storeAlignment = [&](const Candidate &c) {
    int64_t alignment = 64;
    auto keep = [&](int64_t x) {
      while (alignment > 1 && x % alignment)
        alignment /= 2;
    };
    if (c.destBits.pitch < (int64_t(1) << 62))
      keep(c.destBits.pitch / 2);
    for (const auto &access : c.plan.stores)
      for (int64_t o : access.offsets)
        keep(o);
    return alignment;
  };
  // With a register model (the host), a load run that the band's next
  // block continues counts as whole lines: the band completes them while
  // they are in the core's cache. (Not a store run: a store into part of a
  // line reads the line first and cannot stream; ranking such runs as
  // whole lines measured slower, docs/performance.md.) The next block
  // along the columns or the rows: its byte offset on a side (-1 where
  // there is none or it is no whole byte).
  auto neighbourBytes = [&](const ref::Layout &layout, BlockShape block,
                            bool alongCols) -> int64_t {
    if (alongCols ? t.cols <= block.cols() : t.rows <= block.rows())
      return -1;
    const int64_t nibble = nibbleAddress(
        layout, t.index(0, alongCols ? 0 : block.rows(),
                        alongCols ? block.cols() : 0));
    return nibble < 0 || nibble % 2 ? -1 : nibble / 2;
  };
  // Only routings compete on it: blocks that only move bytes need no
  // registers beyond their own, and keep whole lines (or a band copy,
  // BandCopy.h).
  auto loadUse = [&](const Candidate &c,
                     const BlockConversionPlan::Access &access,
                     int64_t neighbour) {
    const int64_t run = access.runBytes;
    return registerFileBytes && !c.plan.steps.empty() && run < 64 &&
                   64 % run == 0 && neighbour == run
               ? int64_t(64)
               : run;
  };
  auto lineUseAlong = [&](const Candidate &c, bool alongCols) {
    return std::min<int64_t>(
        {loadUse(c, c.plan.loads[0], neighbourBytes(from, c.block, alongCols)),
         c.plan.stores[0].runBytes,
         edgeBlocks ? storeAlignment(c) : int64_t(64)});
  };
  for (Candidate &c : candidates) {
    const int64_t alongCols = lineUseAlong(c, true);
    const int64_t alongRows =
        registerFileBytes ? lineUseAlong(c, false) : int64_t(0);
    c.alongColsFirst = alongCols >= alongRows;
    c.lineUse = std::max(alongCols, alongRows);
  }
  llvm::stable_sort(candidates, [&](const Candidate &x, const Candidate &y) {
    // Blocks that divide the tensor leave no elements to the generic path
    // (nor do the others, with edge blocks: then a block that divides only
    // wins a tie on line use).
    if (!edgeBlocks) {
      if (divides(x.block) != divides(y.block))
        return divides(x.block);
      if (!divides(x.block) && coverage(x.block) != coverage(y.block))
        return coverage(x.block) > coverage(y.block);
    }
    if (x.lineUse != y.lineUse)
      return x.lineUse > y.lineUse;
    if (edgeBlocks && divides(x.block) != divides(y.block))
      return divides(x.block);
    return x.cost != y.cost ? x.cost < y.cost
                            : x.block.bits() < y.block.bits();
  });
  for (Candidate &c : candidates) {
    const int64_t down = t.rows / c.block.rows();
    const int64_t across = t.cols / c.block.cols();
    // With edge blocks where asked for, then without them where they do not
    // fit.
    for (int attempt = 0; attempt < 4; ++attempt) {
      const bool innerAlongCols = (attempt % 2 == 0) == c.alongColsFirst;
      const bool edges = attempt < 2 && edgeBlocks;
      if (attempt >= 2 && (!edgeBlocks || divides(c.block) ||
                           coverage(c.block) < kMinCoverage))
        continue;
      BlockConversionPlan plan = c.plan;
      if (verifyBands(from, to, t, c.block, c.sourceBits, c.destBits,
                      Banding{innerAlongCols, down, across}, plan, edges)) {
        plan.gapsHoldElements =
            llvm::is_contained(plan.batchTailRunHoldsElements, true) ||
            llvm::is_contained(plan.spanGapHoldsElements, true);
        plan.sourceAddress = c.sourceBits;
        plan.destAddress = c.destBits;
        plan.innerAlongCols = innerAlongCols;
        if (!plan.coversDestination() &&
            to.getStorageBytes() < minBytesWithGaps)
          return std::nullopt;
        plan.streamingAlignment = streamingAlignment(plan);
        return plan;
      }
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

namespace {
class BlockEmitter {
public:
  BlockEmitter(OpBuilder &b, Location loc, const BlockConversionPlan &plan)
      : b(b), loc(loc), plan(plan),
        byteVector(VectorType::get({plan.vectorBytes}, b.getI8Type())),
        wordVector(VectorType::get({plan.vectorBytes / 4}, b.getI32Type())) {}

  /// `streaming` (an i1, or null): store with non-temporal stores when
  /// true (the plan writes each block's destination as one aligned range).
  /// `masks`: an edge block's (regular stores then).
  void emitBlock(Value source, Value dest, Value sourceBase, Value destBase,
                 Value streaming = Value(),
                 const BlockConversionPlan::EdgeMasks *masks = nullptr) {
    this->masks = masks;
    // Blocks of a band usually walk across the source's rows, which the
    // hardware prefetchers (that follow runs within a page) do not foresee:
    // ask for the source lines of the block kPrefetchBlocks ahead in the
    // walk (the band's next blocks, or where bands are walked together the
    // next bands' blocks). A prefetch past the buffer's end does not fault.
    if (plan.blocksPerBand > 1 || walkAlongBands) {
      Value ahead = offset(sourceBase, kPrefetchBlocks * sourceStep());
      llvm::SmallDenseSet<int64_t> lines;
      for (const auto &access : plan.loads)
        for (int64_t o : access.offsets)
          for (int64_t line = o / 64; line * 64 < o + access.runBytes; ++line)
            if (lines.insert(line).second)
              memref::PrefetchOp::create(b, loc, source,
                                         ValueRange{offset(ahead, line * 64)},
                                         /*isWrite=*/false,
                                         /*localityHint=*/3,
                                         /*isDataCache=*/true);
    }
    // Where the stores do not stream, each store that misses waits for its
    // line to be read first (a read for ownership), and a block's stores
    // usually go to lines in as many rows of the destination (a transpose
    // writes 64 rows 1440 bytes apart, 32 bytes each): ask for the
    // destination lines of the block kPrefetchBlocks ahead, for writing.
    // Measured on 2 cores, [8, 2880, 5760] strided -> strided<-2>: 1.6x
    // faster; plans that stream do not ask (their lines are never read).
    if (plan.blocksPerBand > 1 && !masks && !plan.streamingAlignment &&
        prefetchDestination) {
      // Blocks start only as aligned as the strides keep them (32 bytes on
      // those rows): one prefetch per run where it stays inside an aligned
      // chunk of that size, else one per line it may touch.
      int64_t alignment = 64;
      for (int64_t stride : {plan.destBatchStride, plan.destBandStride,
                             plan.destInnerStride})
        while (alignment > 1 && stride % alignment)
          alignment /= 2;
      Value ahead = offset(destBase, kPrefetchBlocks * destStep());
      llvm::SmallDenseSet<int64_t> asked;
      auto prefetch = [&](int64_t at) {
        if (asked.insert(at).second)
          memref::PrefetchOp::create(b, loc, dest,
                                     ValueRange{offset(ahead, at)},
                                     /*isWrite=*/true, /*localityHint=*/3,
                                     /*isDataCache=*/true);
      };
      for (const auto &access : plan.stores)
        for (int64_t o : access.offsets) {
          const int64_t end = o + access.runBytes;
          if (alignment == 64) {
            for (int64_t line = o / 64; line * 64 < end; ++line)
              prefetch(line * 64);
            continue;
          }
          prefetch(o);
          if (o % alignment + access.runBytes > alignment) {
            for (int64_t at = o + 64; at < end; at += 64)
              prefetch(at);
            prefetch(end - 1);
          }
        }
    }
    this->source = source;
    this->sourceBase = sourceBase;
    values.assign(plan.numValues, Value());
    producer.assign(plan.numValues, -1);
    loadOf.assign(plan.numValues, -1);
    for (auto [i, step] : llvm::enumerate(plan.steps)) {
      producer[step.result0] = i;
      if (step.result1 >= 0)
        producer[step.result1] = i;
    }
    for (auto [i, access] : llvm::enumerate(plan.loads))
      loadOf[access.value] = i;
    // Steps in the phased order of scheduleSteps, loads on first use.
    // (Computing each store's cone depth-first instead measured slower
    // for the Hopper routing: docs/performance.md.)
    for (int i : scheduleSteps())
      get(plan.steps[i].result0);
    SmallVector<Value> results;
    for (const auto &access : plan.stores) {
      Value v = get(access.value);
      if (plan.destWordMap)
        v = mapWordBits(v, *plan.destWordMap);
      results.push_back(v);
    }
    auto storeAll = [&](bool nontemporal) {
      for (auto [i, v, access] : llvm::enumerate(results, plan.stores))
        store(v, dest, destBase, access, nontemporal,
              masks ? ArrayRef<bool>(masks->storeLanes[i]) : ArrayRef<bool>());
    };
    if (!streaming) {
      storeAll(false);
      return;
    }
    auto branch = scf::IfOp::create(b, loc, streaming, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    storeAll(true);
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    storeAll(false);
  }

private:
  /// The steps in phases of kStagesPerPhase stages; within a phase, one
  /// connected group of steps (vectors that exchange bytes within it) after
  /// the other. Three stages pair vectors along three bits, so a group is 8
  /// vectors: it fits the registers, where a whole stage of a 64-vector
  /// block does not.
  SmallVector<int> scheduleSteps() {
    const int n = plan.steps.size();
    SmallVector<int> parent = llvm::to_vector(llvm::seq<int>(0, n));
    auto find = [&](int x) {
      while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
      return x;
    };
    SmallVector<int> lastUser(plan.numValues, -1);
    auto phase = [](const BlockConversionPlan::Step &s) {
      return s.stage / kStagesPerPhase;
    };
    for (int i = 0; i < n; ++i) {
      const auto &step = plan.steps[i];
      for (int input : {step.a, step.b}) {
        int p = producer[input];
        if (p >= 0 && phase(plan.steps[p]) == phase(step))
          parent[find(p)] = find(i);
        int u = lastUser[input];
        if (u >= 0 && phase(plan.steps[u]) == phase(step))
          parent[find(u)] = find(i);
        lastUser[input] = i;
      }
    }
    // Order: phase, then the group's first step, then the planned order.
    SmallVector<int> firstOfGroup(n, n);
    for (int i = 0; i < n; ++i)
      firstOfGroup[find(i)] = std::min(firstOfGroup[find(i)], i);
    SmallVector<int> order = llvm::to_vector(llvm::seq<int>(0, n));
    llvm::stable_sort(order, [&](int x, int y) {
      auto key = [&](int i) {
        return std::make_pair(phase(plan.steps[i]), firstOfGroup[find(i)]);
      };
      return key(x) < key(y);
    });
    return order;
  }

  Value get(int value) {
    if (values[value])
      return values[value];
    if (loadOf[value] >= 0) {
      Value v = load(source, sourceBase, plan.loads[loadOf[value]],
                     masks ? ArrayRef<bool>(masks->loadLanes[loadOf[value]])
                           : ArrayRef<bool>());
      if (plan.sourceWordMap)
        v = mapWordBits(v, *plan.sourceWordMap);
      return values[value] = v;
    }
    const auto &step = plan.steps[producer[value]];
    Value a = get(step.a), c = get(step.b);
    if (step.kind == BlockConversionPlan::Step::Kind::Shuffle) {
      values[step.result0] = vector::ShuffleOp::create(b, loc, a, c, step.mask);
    } else {
      // Low nibbles of a and b, then their high nibbles.
      values[step.result0] = arith::OrIOp::create(
          b, loc, arith::AndIOp::create(b, loc, a, splat(byteVector, 0x0F)),
          arith::ShLIOp::create(b, loc, c, splat(byteVector, 4)));
      values[step.result1] = arith::OrIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, a, splat(byteVector, 4)),
          arith::AndIOp::create(b, loc, c, splat(byteVector, 0xF0)));
    }
    return values[value];
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  Value splat(VectorType type, int64_t v) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type,
                               b.getIntegerAttr(type.getElementType(), v)));
  }

  Value offset(Value base, int64_t delta) {
    return delta ? arith::AddIOp::create(b, loc, base, index(delta)).getResult()
                 : base;
  }

  /// The lanes (bytes) of one run that `lanes` (all when empty) keeps:
  /// all, none, or the mask of a masked access.
  enum class Kept { All, None, Some };
  Kept kept(ArrayRef<bool> lanes, int64_t run, int64_t bytes,
            Value &mask) {
    if (lanes.empty())
      return Kept::All;
    ArrayRef<bool> part = lanes.slice(run * bytes, bytes);
    if (llvm::all_of(part, [](bool x) { return x; }))
      return Kept::All;
    if (llvm::none_of(part, [](bool x) { return x; }))
      return Kept::None;
    auto type = VectorType::get({bytes}, b.getI1Type());
    mask = arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, part));
    return Kept::Some;
  }

  Value load(Value memory, Value base,
             const BlockConversionPlan::Access &access,
             ArrayRef<bool> lanes = {}) {
    auto pieceType = VectorType::get({access.runBytes}, b.getI8Type());
    SmallVector<Value> pieces;
    for (auto [i, o] : llvm::enumerate(access.offsets)) {
      Value mask;
      switch (kept(lanes, i, access.runBytes, mask)) {
      case Kept::All:
        pieces.push_back(vector::LoadOp::create(b, loc, pieceType, memory,
                                                ValueRange{offset(base, o)}));
        break;
      case Kept::None:
        pieces.push_back(splat(pieceType, 0));
        break;
      case Kept::Some:
        // Masked lanes are not read (no fault past the buffer) and give 0.
        pieces.push_back(vector::MaskedLoadOp::create(
            b, loc, pieceType, memory, ValueRange{offset(base, o)}, mask,
            splat(pieceType, 0)));
        break;
      }
    }
    // Concatenate pairwise until one vector is left.
    while (pieces.size() > 1) {
      SmallVector<Value> joined;
      int64_t width = cast<VectorType>(pieces[0].getType()).getNumElements();
      SmallVector<int64_t> mask = llvm::to_vector(llvm::seq<int64_t>(0, 2 * width));
      for (size_t i = 0; i < pieces.size(); i += 2)
        joined.push_back(
            vector::ShuffleOp::create(b, loc, pieces[i], pieces[i + 1], mask));
      pieces = std::move(joined);
    }
    return pieces[0];
  }

  /// Non-temporal stores bypass the caches (no read for ownership of the
  /// destination lines); they need 16-byte aligned addresses.
  void store(Value v, Value memory, Value base,
             const BlockConversionPlan::Access &access, bool nontemporal,
             ArrayRef<bool> lanes = {}) {
    llvm::MaybeAlign align = nontemporal
                                 ? llvm::MaybeAlign(plan.streamingAlignment)
                                 : llvm::MaybeAlign();
    if (!lanes.empty()) {
      // An edge block's: each run whole, masked or not at all.
      for (auto [i, o] : llvm::enumerate(access.offsets)) {
        Value mask;
        Kept k = kept(lanes, i, access.runBytes, mask);
        if (k == Kept::None)
          continue;
        Value piece = v;
        if (access.offsets.size() > 1)
          piece = vector::ExtractStridedSliceOp::create(
              b, loc, v,
              ArrayRef<int64_t>{static_cast<int64_t>(i) * access.runBytes},
              ArrayRef<int64_t>{access.runBytes}, ArrayRef<int64_t>{1});
        if (k == Kept::All)
          vector::StoreOp::create(b, loc, piece, memory,
                                  ValueRange{offset(base, o)});
        else
          vector::MaskedStoreOp::create(b, loc, memory,
                                        ValueRange{offset(base, o)}, mask,
                                        piece);
      }
      return;
    }
    if (access.offsets.size() == 1) {
      vector::StoreOp::create(b, loc, v, memory,
                              ValueRange{offset(base, access.offsets[0])},
                              nontemporal, align);
      return;
    }
    for (auto [i, o] : llvm::enumerate(access.offsets)) {
      Value piece = vector::ExtractStridedSliceOp::create(
          b, loc, v, ArrayRef<int64_t>{static_cast<int64_t>(i) * access.runBytes},
          ArrayRef<int64_t>{access.runBytes}, ArrayRef<int64_t>{1});
      vector::StoreOp::create(b, loc, piece, memory,
                              ValueRange{offset(base, o)}, nontemporal, align);
    }
  }

  /// Moves bit i of every 32-bit word to bit map[i]: one mask and shift per
  /// distinct distance, or GF(2) affine byte transforms.
  Value mapWordBits(Value v, const std::array<int8_t, 32> &map) {
    if (target)
      if (Value mapped = target->emitWordBitMap(b, loc, v, map))
        return mapped;
    Value words = vector::BitCastOp::create(b, loc, wordVector, v);
    Value result;
    for (auto [shift, mask] : shiftMasks(map)) {
      Value part = arith::AndIOp::create(
          b, loc, words, splat(wordVector, static_cast<int32_t>(mask)));
      if (shift > 0)
        part = arith::ShLIOp::create(b, loc, part, splat(wordVector, shift));
      else if (shift < 0)
        part = arith::ShRUIOp::create(b, loc, part, splat(wordVector, -shift));
      result = result ? arith::OrIOp::create(b, loc, result, part).getResult()
                      : part;
    }
    return vector::BitCastOp::create(b, loc, byteVector, result);
  }

public:
  const BlockConversionTarget *target = nullptr;
  /// Whether to prefetch the destination lines of the blocks ahead (not
  /// where the blocks write a band buffer, which stays in the cache).
  bool prefetchDestination = true;
  /// Whether the blocks come band after band at one inner index (bands
  /// walked together), so that the block after this one is the next
  /// band's: what the prefetches ask for.
  bool walkAlongBands = false;

private:
  int64_t sourceStep() const {
    return walkAlongBands ? plan.sourceBandStride : plan.sourceInnerStride;
  }
  int64_t destStep() const {
    return walkAlongBands ? plan.destBandStride : plan.destInnerStride;
  }

  OpBuilder &b;
  Location loc;
  const BlockConversionPlan &plan;
  VectorType byteVector, wordVector;
  Value source, sourceBase;
  const BlockConversionPlan::EdgeMasks *masks = nullptr;
  SmallVector<Value> values;
  SmallVector<int> producer, loadOf;
};
} // namespace

/// Writes `length` destination bytes from `start` (an index) that no block
/// writes: zeros, in vectors, where they are padding; else unit by unit.
static void writeGap(OpBuilder &b, Location loc,
                     const BlockConversionPlan &plan, const GapWriter &gaps,
                     Value dest, Value start, int64_t length,
                     bool holdsElements) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  if (holdsElements) {
    Value first = arith::DivUIOp::create(b, loc, start,
                                         constant(gaps.unitBytes));
    Value last = arith::AddIOp::create(
        b, loc, first, constant(length / gaps.unitBytes));
    scf::ForOp::create(b, loc, first, last, constant(1), ValueRange{},
                       [&](OpBuilder &inner, Location l, Value unit,
                           ValueRange) {
                         gaps.emitUnit(inner, l, unit);
                         scf::YieldOp::create(inner, l);
                       });
    return;
  }
  auto zeros = [&](int64_t bytes) -> Value {
    auto type = VectorType::get({bytes}, b.getI8Type());
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getI8IntegerAttr(0)));
  };
  const int64_t width = plan.vectorBytes, whole = length / width;
  if (whole > 0) {
    Value zero = zeros(width);
    scf::ForOp::create(
        b, loc, constant(0), constant(whole), constant(1), ValueRange{},
        [&](OpBuilder &inner, Location l, Value i, ValueRange) {
          Value at = arith::AddIOp::create(
              inner, l, start,
              arith::MulIOp::create(inner, l, i,
                                    arith::ConstantIndexOp::create(inner, l,
                                                                   width)));
          vector::StoreOp::create(inner, l, zero, dest, ValueRange{at});
          scf::YieldOp::create(inner, l);
        });
  }
  if (int64_t rest = length % width) {
    Value at = arith::AddIOp::create(b, loc, start, constant(whole * width));
    vector::StoreOp::create(b, loc, zeros(rest), dest, ValueRange{at});
  }
}

/// The gaps of the span of band `outer` of batch `batch`, and the batch's
/// tail after its last band.
static void emitGaps(OpBuilder &b, Location loc,
                     const BlockConversionPlan &plan, const GapWriter &gaps,
                     Value dest, Value batch, Value outer) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value batchStart =
      arith::MulIOp::create(b, loc, batch, constant(plan.getBatchBytes()));
  Value spanStart = arith::AddIOp::create(
      b, loc, batchStart,
      arith::MulIOp::create(b, loc, outer, constant(plan.spanBytes)));
  // Gaps of one length and kind share one body: a loop over their offsets,
  // read from a constant vector (a span may have a gap per storage row, a
  // tail one per edge block).
  auto writeRuns = [&](Value start,
                       ArrayRef<std::pair<int64_t, int64_t>> runs,
                       ArrayRef<bool> holdElements) {
    std::map<std::pair<int64_t, bool>, SmallVector<int64_t>> offsetsByLength;
    for (auto [gap, elements] : llvm::zip(runs, holdElements))
      offsetsByLength[{gap.second, elements}].push_back(gap.first);
    for (auto &[key, offsets] : offsetsByLength) {
      const auto [length, elements] = key;
      if (offsets.size() == 1) {
        writeGap(b, loc, plan, gaps, dest,
                 arith::AddIOp::create(b, loc, start, constant(offsets[0])),
                 length, elements);
        continue;
      }
      auto tableType = VectorType::get({static_cast<int64_t>(offsets.size())},
                                       b.getI64Type());
      Value table = arith::ConstantOp::create(
          b, loc, tableType,
          DenseElementsAttr::get(tableType, ArrayRef<int64_t>(offsets)));
      const int64_t length_ = length;
      const bool elements_ = elements;
      scf::ForOp::create(
          b, loc, constant(0), constant(offsets.size()), constant(1),
          ValueRange{}, [&](OpBuilder &inner, Location l, Value g, ValueRange) {
            Value offset = arith::IndexCastOp::create(
                inner, l, inner.getIndexType(),
                vector::ExtractOp::create(inner, l, table, OpFoldResult(g))
                    .getResult());
            writeGap(inner, l, plan, gaps, dest,
                     arith::AddIOp::create(inner, l, start, offset), length_,
                     elements_);
            scf::YieldOp::create(inner, l);
          });
    }
  };
  writeRuns(spanStart, plan.spanGaps, plan.spanGapHoldsElements);
  if (plan.batchTailRuns.empty())
    return;
  Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, outer,
                                     constant(plan.bandsPerBatch - 1));
  auto ifLast = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifLast.getThenRegion().front());
  writeRuns(arith::AddIOp::create(
                b, loc, batchStart,
                constant(plan.bandsPerBatch * plan.spanBytes)),
            plan.batchTailRuns, plan.batchTailRunHoldsElements);
}

/// The bytes a block reads of each source row it touches, where that is
/// one range of the same width in every such row (`pitch` bytes apart),
/// else 0.
static int64_t sourceRowWidth(const BlockConversionPlan &plan,
                              int64_t pitch) {
  struct RowRead {
    int64_t begin, end, bytes;
  };
  std::map<int64_t, RowRead> rows;
  for (const BlockConversionPlan::Access &access : plan.loads)
    for (int64_t o : access.offsets) {
      const int64_t row = llvm::divideFloorSigned(o, pitch);
      const int64_t begin = o - row * pitch, end = begin + access.runBytes;
      if (end > pitch)
        return 0;
      RowRead &read = rows.try_emplace(row, RowRead{begin, end, 0})
                          .first->second;
      read.begin = std::min(read.begin, begin);
      read.end = std::max(read.end, end);
      read.bytes += access.runBytes;
    }
  int64_t width = 0;
  for (const auto &[row, read] : rows) {
    const int64_t w = read.end - read.begin;
    if (w != read.bytes || (width && w != width))
      return 0;
    width = w;
  }
  return width;
}

/// Whether emitBlockConversion writes `plan`'s bands through a buffer
/// with `target`: the plan allows it and the target streams the buffer out.
static bool bandsThroughBuffer(const BlockConversionPlan &plan,
                               const BlockConversionTarget *target) {
  return target && target->hasStreamingStores() &&
         writesBandsThroughBuffer(plan);
}

int64_t
mlir::microscale::bandsWalkedTogether(const BlockConversionPlan &plan,
                                      const BlockConversionTarget *target) {
  if (bandsThroughBuffer(plan, target))
    return kBandsPerGroup;
  // Rows closer than kGroupRowBytes lie in few pages, and the next band's
  // blocks find their lines in the L2 (walked together, scale transposes of
  // 64- to 224-byte rows measured slower). A source without rows (one
  // range) was not measured: band after band, as before.
  const int64_t pitch = plan.sourceAddress.pitch;
  if (plan.loads.empty() || pitch == BlockAddressBits().pitch ||
      pitch / 2 < kGroupRowBytes)
    return 1;
  // Band b + 1's block i reads the bytes of each row that follow band b's.
  const int64_t width = sourceRowWidth(plan, pitch / 2);
  if (!width || width >= kGroupRowBytes || plan.sourceBandStride != width)
    return 1;
  return plan.bandsPerBatch;
}

void mlir::microscale::emitBlockConversion(OpBuilder &builder, Location loc,
                                           const BlockConversionPlan &plan,
                                           Value source, Value dest,
                                           Value bandBegin, Value bandEnd,
                                           const BlockConversionTarget *target,
                                           const GapWriter *gaps) {
  assert((plan.coversDestination() || gaps) &&
         "a plan that leaves destination bytes needs a GapWriter");
  auto constant = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mul = [&](OpBuilder &b, Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, loc, x, constant(b, y));
  };
  // Whether `dest` starts on a multiple of `alignment` bytes (i1).
  auto destAlignedTo = [&](int64_t alignment) -> Value {
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, dest);
    return arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(builder, loc, pointer,
                               constant(builder, alignment)),
        constant(builder, 0));
  };
  // Band `band`'s batch, index within it, and first source and
  // destination bytes.
  struct Band {
    Value batch, outer, source, dest;
  };
  auto bandAt = [&](OpBuilder &b, Value band) {
    Band at;
    Value perBatch = constant(b, plan.bandsPerBatch);
    at.batch = arith::DivUIOp::create(b, loc, band, perBatch);
    at.outer = arith::RemUIOp::create(b, loc, band, perBatch);
    at.source =
        arith::AddIOp::create(b, loc, mul(b, at.batch, plan.sourceBatchStride),
                              mul(b, at.outer, plan.sourceBandStride));
    at.dest =
        arith::AddIOp::create(b, loc, mul(b, at.batch, plan.destBatchStride),
                              mul(b, at.outer, plan.destBandStride));
    return at;
  };
  // Plans whose blocks only move bytes and cannot stream them: each band's
  // span as copies of its source ranges in whole lines (BandCopy.h),
  // streaming where the destination is aligned.
  if (target && target->hasStreamingStores()) {
    SmallVector<BandCopyPiece> pieces = planBandCopy(plan);
    if (!pieces.empty()) {
      Value aligned = destAlignedTo(64);
      scf::ForOp::create(
          builder, loc, bandBegin, bandEnd, constant(builder, 1), ValueRange{},
          [&](OpBuilder &b, Location, Value band, ValueRange) {
            Band at = bandAt(b, band);
            auto copy = [&](bool nontemporal) {
              return [&, nontemporal](OpBuilder &cb, Location) {
                emitBandCopy(cb, loc, pieces, plan.spanBytes, source, dest,
                             at.source, at.dest, nontemporal);
                scf::YieldOp::create(cb, loc);
              };
            };
            scf::IfOp::create(b, loc, aligned, copy(true), copy(false));
            scf::YieldOp::create(b, loc);
          });
      target->emitStreamingFence(builder, loc);
      return;
    }
  }
  // Streaming stores where each block writes one aligned destination range
  // (plans whose blocks write scattered runs measured slower with them:
  // docs/performance.md), when the target has them and the buffer is
  // 16-byte aligned (checked at run time: MOVNTDQ faults otherwise).
  Value streaming;
  if (plan.streamingAlignment && target && target->hasStreamingStores())
    streaming = destAlignedTo(plan.streamingAlignment);
  // Bands whose stores cannot stream (runs that are not whole aligned
  // lines: a transpose's 32-byte runs on rows 1440 bytes apart, whose lines
  // are each read before they are written) but whose blocks fill one
  // contiguous destination range: the blocks write a buffer of the band's
  // bytes, which stays in the cache, and the buffer then goes to the
  // destination as whole lines, streaming where the destination is aligned
  // (checked at run time). Bands through buffers go in groups of
  // kBandsPerGroup, their blocks interleaved (block i of each band of the
  // group, then block i + 1): neighbouring bands read the same source lines
  // and pages (a transpose's band reads 32 bytes of each of its 2880 rows,
  // the next band the other 32 bytes of the same lines), so a group walks
  // them once.
  const bool bounce = bandsThroughBuffer(plan, target);
  const int64_t group = bandsWalkedTogether(plan, target);
  // One buffer for the group's bands, band j's span at j * spanBytes.
  Value bandBuffer, bounceStreaming;
  if (bounce) {
    bandBuffer = memref::AllocOp::create(
        builder, loc,
        MemRefType::get({group * plan.spanBytes}, builder.getI8Type()),
        builder.getI64IntegerAttr(64));
    bounceStreaming = destAlignedTo(64);
  }
  // The band's part of the buffer, from `from`, to the band's destination
  // range at `destBand`.
  auto copyOut = [&](OpBuilder &b, Value from, Value destBand) {
    auto vectorType = VectorType::get({plan.vectorBytes}, b.getI8Type());
    auto copy = [&](bool nontemporal) {
      return [&, nontemporal](OpBuilder &cb, Location) {
        scf::ForOp::create(
            cb, loc, constant(cb, 0), constant(cb, plan.spanBytes),
            constant(cb, plan.vectorBytes), ValueRange{},
            [&](OpBuilder &lb, Location, Value at, ValueRange) {
              Value bytes = vector::LoadOp::create(
                  lb, loc, vectorType, bandBuffer,
                  ValueRange{arith::AddIOp::create(lb, loc, from, at)});
              vector::StoreOp::create(
                  lb, loc, bytes, dest,
                  ValueRange{arith::AddIOp::create(lb, loc, destBand, at)},
                  nontemporal,
                  nontemporal ? llvm::MaybeAlign(plan.vectorBytes)
                              : llvm::MaybeAlign());
              scf::YieldOp::create(lb, loc);
            });
        scf::YieldOp::create(cb, loc);
      };
    };
    scf::IfOp::create(b, loc, bounceStreaming, copy(true), copy(false));
  };
  // Edge blocks, masked (regular stores: they write parts of lines).
  auto edgeBlock = [&](OpBuilder &bb, Value sourceAt, Value destAt,
                       const BlockConversionPlan::EdgeMasks &masks,
                       Value into) {
    BlockEmitter emitter(bb, loc, plan);
    emitter.target = target;
    emitter.emitBlock(source, into, sourceAt, destAt, Value(), &masks);
  };
  auto innerOffset = [&](OpBuilder &bb, Value at, int64_t stride) {
    return arith::AddIOp::create(bb, loc, at,
                                 constant(bb, plan.blocksPerBand * stride))
        .getResult();
  };
  // What a band writes after its full blocks: its inner edge block (into
  // its part of the buffer too, from `buffered`, before that goes out),
  // the batch's edge band with the batch's last band, and the gaps.
  auto finishBand = [&](OpBuilder &b, const Band &at, Value buffered) {
    if (plan.innerEdge)
      edgeBlock(b, innerOffset(b, at.source, plan.sourceInnerStride),
                bounce ? innerOffset(b, buffered, plan.destInnerStride)
                       : innerOffset(b, at.dest, plan.destInnerStride),
                *plan.innerEdge, bounce ? bandBuffer : dest);
    if (bounce)
      copyOut(b, buffered, at.dest);
    if (plan.bandEdge) {
      // The batch's edge band, with its last band.
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         at.outer,
                                         constant(b, plan.bandsPerBatch - 1));
      auto ifLast = scf::IfOp::create(b, loc, last, /*withElse=*/false);
      OpBuilder eb =
          OpBuilder::atBlockTerminator(&ifLast.getThenRegion().front());
      Value sourceEdge = arith::AddIOp::create(
          eb, loc, mul(eb, at.batch, plan.sourceBatchStride),
          constant(eb, plan.bandsPerBatch * plan.sourceBandStride));
      Value destEdge = arith::AddIOp::create(
          eb, loc, mul(eb, at.batch, plan.destBatchStride),
          constant(eb, plan.bandsPerBatch * plan.destBandStride));
      scf::ForOp::create(
          eb, loc, constant(eb, 0), constant(eb, plan.blocksPerBand),
          constant(eb, 1), ValueRange{},
          [&](OpBuilder &bb, Location, Value inner, ValueRange) {
            edgeBlock(bb,
                      arith::AddIOp::create(
                          bb, loc, sourceEdge,
                          mul(bb, inner, plan.sourceInnerStride)),
                      arith::AddIOp::create(
                          bb, loc, destEdge,
                          mul(bb, inner, plan.destInnerStride)),
                      *plan.bandEdge, dest);
            scf::YieldOp::create(bb, loc);
          });
      if (plan.cornerEdge)
        edgeBlock(eb, innerOffset(eb, sourceEdge, plan.sourceInnerStride),
                  innerOffset(eb, destEdge, plan.destInnerStride),
                  *plan.cornerEdge, dest);
    }
    if (!plan.coversDestination())
      emitGaps(b, loc, plan, *gaps, dest, at.batch, at.outer);
  };
  // `body` for each band j of the group that starts at band `first` (one
  // loop over the bands the range still has; no loop without groups).
  auto forEachBand = [&](OpBuilder &b, Value first,
                         function_ref<void(OpBuilder &, Value, Value)> body) {
    if (group == 1) {
      body(b, first, constant(b, 0));
      return;
    }
    Value count = arith::MinUIOp::create(
        b, loc, constant(b, group), arith::SubIOp::create(b, loc, bandEnd, first));
    scf::ForOp::create(b, loc, constant(b, 0), count, constant(b, 1),
                       ValueRange{},
                       [&](OpBuilder &jb, Location, Value j, ValueRange) {
                         body(jb, arith::AddIOp::create(jb, loc, first, j), j);
                         scf::YieldOp::create(jb, loc);
                       });
  };
  scf::ForOp::create(
      builder, loc, bandBegin, bandEnd, constant(builder, group), ValueRange{},
      [&](OpBuilder &b, Location, Value first, ValueRange) {
        // Block i of each band of the group, then block i + 1.
        scf::ForOp::create(
            b, loc, constant(b, 0), constant(b, plan.blocksPerBand),
            constant(b, 1), ValueRange{},
            [&](OpBuilder &bb, Location, Value inner, ValueRange) {
              forEachBand(bb, first, [&](OpBuilder &jb, Value band, Value j) {
                Band at = bandAt(jb, band);
                Value sourceBase = arith::AddIOp::create(
                    jb, loc, at.source, mul(jb, inner, plan.sourceInnerStride));
                BlockEmitter emitter(jb, loc, plan);
                emitter.target = target;
                emitter.walkAlongBands = group > 1 && !bounce;
                if (bounce) {
                  emitter.prefetchDestination = false;
                  emitter.emitBlock(
                      source, bandBuffer, sourceBase,
                      arith::AddIOp::create(
                          jb, loc, mul(jb, j, plan.spanBytes),
                          mul(jb, inner, plan.destInnerStride)));
                  return;
                }
                Value destBase = arith::AddIOp::create(
                    jb, loc, at.dest, mul(jb, inner, plan.destInnerStride));
                emitter.emitBlock(source, dest, sourceBase, destBase,
                                  streaming);
              });
              scf::YieldOp::create(bb, loc);
            });
        forEachBand(b, first, [&](OpBuilder &jb, Value band, Value j) {
          finishBand(jb, bandAt(jb, band),
                     bounce ? mul(jb, j, plan.spanBytes) : Value());
        });
        scf::YieldOp::create(b, loc);
      });
  // Non-temporal stores are weakly ordered: make them visible before
  // anything the caller stores next.
  if (streaming || bounce)
    target->emitStreamingFence(builder, loc);
  if (bandBuffer)
    memref::DeallocOp::create(builder, loc, bandBuffer);
}

bool mlir::microscale::writesBandsThroughBuffer(
    const BlockConversionPlan &plan) {
  if (plan.streamingAlignment || plan.blocksPerBand < 2 ||
      !plan.spanGaps.empty() || plan.spanBytes > kMaxBounceBytes ||
      plan.spanBytes % 64 || plan.destBandStride % 64 ||
      plan.destBatchStride % 64)
    return false;
  // The band's blocks, its inner edge block included, must write every
  // byte of the span (each byte once: planBlockConversion checks that no
  // two write the same one), or the buffer's garbage would reach the
  // destination.
  int64_t written = plan.blocksPerBand * plan.getBlockBytes();
  if (plan.innerEdge)
    for (auto [i, access] : llvm::enumerate(plan.stores)) {
      const auto &lanes = plan.innerEdge->storeLanes;
      written += i < lanes.size() && !lanes[i].empty()
                     ? static_cast<int64_t>(llvm::count(lanes[i], true))
                     : static_cast<int64_t>(access.offsets.size()) *
                           access.runBytes;
    }
  return written == plan.spanBytes;
}

BlockConversionTarget::~BlockConversionTarget() = default;
