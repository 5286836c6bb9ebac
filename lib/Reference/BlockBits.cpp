//===- BlockBits.cpp - Layouts as maps of index bits to address bits ------===//
#include "microscale/Reference/BlockBits.h"

#include <algorithm>
#include <tuple>

namespace microscale::ref {

int64_t slotAddress(const Layout &layout, const int64_t *index) {
  const unsigned bits = layout.getElementBits();
  int64_t offsets[8];
  layout.locateBeforeInterleave(index, offsets);
  if (offsets[0] < 0 || offsets[0] % bits != 0)
    return -1;
  for (unsigned i = 1; i < bits; ++i)
    if (offsets[i] != offsets[0] + i)
      return -1;
  return offsets[0] / bits;
}

namespace {

class NibbleView final : public Layout {
public:
  explicit NibbleView(const Layout &bytes)
      : Layout(doubled(bytes.getLogicalShape()), 4), bytes(bytes) {}

  std::vector<int64_t> getStorageShape() const override {
    return bytes.getStorageShape();
  }
  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    locateIn(index, bitOffsets, /*beforeInterleave=*/false);
  }
  void locateBeforeInterleave(const int64_t *index,
                              int64_t *bitOffsets) const override {
    locateIn(index, bitOffsets, /*beforeInterleave=*/true);
  }
  const int8_t *getWordInterleave() const override {
    return bytes.getWordInterleave();
  }

private:
  static std::vector<int64_t> doubled(std::vector<int64_t> shape) {
    if (!shape.empty())
      shape.back() *= 2;
    return shape;
  }
  void locateIn(const int64_t *index, int64_t *bitOffsets,
                bool beforeInterleave) const {
    std::vector<int64_t> byteIndex(index, index + logicalShape.size());
    const int64_t h = byteIndex.back() % 2;
    byteIndex.back() /= 2;
    int64_t bits[8];
    if (beforeInterleave)
      bytes.locateBeforeInterleave(byteIndex.data(), bits);
    else
      bytes.locate(byteIndex.data(), bits);
    for (int i = 0; i < 4; ++i)
      bitOffsets[i] = bits[4 * h + i];
  }
  const Layout &bytes;
};

bool isPowerOf2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int log2Floor(int64_t x) {
  int log = 0;
  while ((int64_t(1) << (log + 1)) <= x)
    ++log;
  return log;
}

/// splitmix64: a fixed, platform-independent sample of indices.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Every element when there are few, else the corners of the index space and
/// a fixed pseudo-random sample: the maps are closed forms, so a map that is
/// not linear in the index bits disagrees on most random indices.
bool agreesOnSample(const BlockBits &map, const Layout &layout) {
  const std::vector<int64_t> &shape = layout.getLogicalShape();
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  auto agrees = [&] {
    return slotAddress(layout, index.data()) == map.getSlot(index.data());
  };
  const int64_t elements = layout.getNumElements();
  if (elements <= (int64_t(1) << 16)) {
    for (int64_t e = 0; e < elements; ++e) {
      int64_t rest = e;
      for (size_t d = rank; d-- > 0;) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      if (!agrees())
        return false;
    }
    return true;
  }
  for (uint64_t corner = 0; corner < (uint64_t(1) << std::min<size_t>(rank, 10));
       ++corner) {
    for (size_t d = 0; d < rank; ++d)
      index[d] = (corner >> d) & 1 ? shape[d] - 1 : 0;
    if (!agrees())
      return false;
  }
  uint64_t state = 0x6D6963726F736361ull;
  for (int sample = 0; sample < 4096; ++sample) {
    for (size_t d = 0; d < rank; ++d)
      index[d] = static_cast<int64_t>(nextRandom(state) %
                                      static_cast<uint64_t>(shape[d]));
    if (!agrees())
      return false;
  }
  return true;
}

std::vector<int8_t> interleaveOf(const Layout &layout) {
  const int8_t *map = layout.getWordInterleave();
  return map ? std::vector<int8_t>(map, map + 32) : std::vector<int8_t>();
}

/// The runs of `padded` (whose logical shape is dense in its storage).
std::optional<BlockBits> probeRuns(const Layout &padded) {
  const std::vector<int64_t> &shape = padded.getLogicalShape();
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  if (slotAddress(padded, index.data()) != 0)
    return std::nullopt;
  BlockBits map;
  map.paddedShape = shape;
  map.elementBits = padded.getElementBits();
  map.wordInterleave = interleaveOf(padded);
  for (size_t d = 0; d < rank; ++d) {
    std::vector<IndexBitRun> runs;
    for (unsigned j = 0; j < 62 && (int64_t(1) << j) < shape[d]; ++j) {
      index[d] = int64_t(1) << j;
      const int64_t weight = slotAddress(padded, index.data());
      index[d] = 0;
      if (weight <= 0)
        return std::nullopt;
      if (!runs.empty()) {
        IndexBitRun &run = runs.back();
        if (run.stride * run.extent == weight) {
          run.extent *= 2;
          continue;
        }
      }
      runs.push_back({static_cast<unsigned>(d), j, 2, weight, false});
    }
    if (!runs.empty()) {
      IndexBitRun &last = runs.back();
      last.top = true;
      const int64_t step = int64_t(1) << last.lowBit;
      last.extent = (shape[d] + step - 1) / step;
    }
    map.runs.insert(map.runs.end(), runs.begin(), runs.end());
  }
  std::sort(map.runs.begin(), map.runs.end(),
            [](const IndexBitRun &x, const IndexBitRun &y) {
              return std::tie(x.stride, x.dim, x.lowBit) <
                     std::tie(y.stride, y.dim, y.lowBit);
            });
  // Dense mixed radix: the digits tile the slots exactly.
  int64_t expected = 1;
  for (const IndexBitRun &run : map.runs) {
    if (run.stride != expected)
      return std::nullopt;
    expected *= run.extent;
  }
  if (padded.getStorageBytes() * 8 != expected * map.elementBits)
    return std::nullopt;
  return map;
}

/// Logical shapes that could be `layout`'s padded one: the last two extents
/// rounded up so that the elements fill the storage exactly.
std::vector<std::vector<int64_t>> paddedCandidates(const Layout &layout) {
  const std::vector<int64_t> &shape = layout.getLogicalShape();
  const size_t rank = shape.size();
  const int64_t storageBits = layout.getStorageBytes() * 8;
  std::vector<std::vector<int64_t>> candidates;
  if (storageBits % layout.getElementBits())
    return candidates;
  const int64_t slots = storageBits / layout.getElementBits();
  if (slots == layout.getNumElements()) {
    candidates.push_back(shape);
    return candidates;
  }
  if (rank < 2)
    return candidates;
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    batch *= shape[d];
  for (size_t rounded : {rank - 2, rank - 1}) {
    const size_t other = rounded == rank - 1 ? rank - 2 : rank - 1;
    for (int k = 0; k < 40; ++k) {
      const int64_t step = int64_t(1) << k;
      const int64_t extent = (shape[rounded] + step - 1) / step * step;
      if (extent > slots)
        break;
      if (slots % (batch * extent))
        continue;
      const int64_t otherExtent = slots / (batch * extent);
      if (otherExtent < shape[other])
        continue;
      std::vector<int64_t> padded = shape;
      padded[rounded] = extent;
      padded[other] = otherExtent;
      if (std::find(candidates.begin(), candidates.end(), padded) ==
          candidates.end())
        candidates.push_back(padded);
    }
  }
  return candidates;
}

} // namespace

std::unique_ptr<Layout> makeNibbleView(const Layout &bytes) {
  return std::make_unique<NibbleView>(bytes);
}

std::optional<std::vector<int>> getBlockAddressBits(const Layout &layout,
                                                    int64_t blockRows,
                                                    int64_t blockCols) {
  const std::vector<int64_t> &shape = layout.getLogicalShape();
  if (!isPowerOf2(blockRows) || !isPowerOf2(blockCols) || shape.size() < 2)
    return std::nullopt;
  if (layout.getElementBits() == 8) {
    NibbleView nibbles(layout);
    return getBlockAddressBits(nibbles, blockRows, blockCols);
  }
  if (layout.getElementBits() != 4)
    return std::nullopt;
  const size_t rank = shape.size();
  if (blockRows > shape[rank - 2] || blockCols > shape[rank - 1])
    return std::nullopt;
  std::vector<int64_t> index(rank, 0);
  if (slotAddress(layout, index.data()) != 0)
    return std::nullopt;
  const int logCols = log2Floor(blockCols);
  const int blockBits = log2Floor(blockRows) + logCols;
  std::vector<int> bits;
  uint64_t used = 0;
  for (int j = 0; j < blockBits; ++j) {
    const int64_t e = int64_t(1) << j;
    index[rank - 2] = e >> logCols;
    index[rank - 1] = e & (blockCols - 1);
    const int64_t a = slotAddress(layout, index.data());
    if (!isPowerOf2(a))
      return std::nullopt;
    const int bit = log2Floor(a);
    if (bit >= 63 || (used >> bit) & 1)
      return std::nullopt;
    used |= uint64_t(1) << bit;
    bits.push_back(bit);
  }
  return bits;
}

int64_t BlockBits::getNumSlots() const {
  if (runs.empty())
    return 1;
  return runs.back().stride * runs.back().extent;
}

int64_t BlockBits::getSlot(const int64_t *index) const {
  int64_t slot = 0;
  for (const IndexBitRun &run : runs) {
    int64_t value = index[run.dim] >> run.lowBit;
    if (!run.top)
      value &= run.extent - 1;
    slot += value * run.stride;
  }
  return slot;
}

void BlockBits::getIndex(int64_t slot, int64_t *index) const {
  std::fill(index, index + paddedShape.size(), 0);
  for (const IndexBitRun &run : runs)
    index[run.dim] += (slot / run.stride % run.extent) << run.lowBit;
}

std::optional<BlockBits> analyzeBlockBits(const Layout &layout,
                                          const LayoutBuilder &rebuild) {
  if (layout.getNumElements() == 0 || layout.getLogicalShape().empty())
    return std::nullopt;
  for (const std::vector<int64_t> &padded : paddedCandidates(layout)) {
    std::unique_ptr<Layout> owned;
    const Layout *paddedLayout = &layout;
    if (padded != layout.getLogicalShape()) {
      if (!rebuild)
        continue;
      owned = rebuild(padded);
      if (!owned || owned->getElementBits() != layout.getElementBits() ||
          owned->getStorageShape() != layout.getStorageShape() ||
          interleaveOf(*owned) != interleaveOf(layout))
        continue;
      paddedLayout = owned.get();
    }
    std::optional<BlockBits> map = probeRuns(*paddedLayout);
    if (!map)
      continue;
    // The padded map must be the logical one on the logical elements, and
    // the padded layout's own map everywhere else.
    if (!agreesOnSample(*map, layout) ||
        (owned && !agreesOnSample(*map, *owned)))
      continue;
    return map;
  }
  return std::nullopt;
}

} // namespace microscale::ref
