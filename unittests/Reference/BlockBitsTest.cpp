//===- BlockBitsTest.cpp - Layouts as maps of index bits ------------------===//
//
// ref::analyzeBlockBits must find the bit map of every layout whose map is
// one (every Triton layout and the strided one, padded or not), agree with
// `locateBeforeInterleave` on every element and every padding slot, and
// refuse maps that are not (a shuffled Blackwell box of 3 bytes).
// getBlockAddressBits must give the block planner's view of the same maps.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/BlockBits.h"
#include "microscale/Reference/TritonLayouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace microscale::ref;

namespace {

using Shape = std::vector<int64_t>;
using Factory = std::function<std::unique_ptr<Layout>(const Shape &)>;

struct Case {
  std::string name;
  Factory make;
  Shape shape;
};

std::vector<Case> cases() {
  auto strided = [](unsigned bits, int64_t major) -> Factory {
    return [=](const Shape &s) { return makeStridedLayout(s, bits, major); };
  };
  auto hopperValue = [](int64_t axis, int mma) -> Factory {
    return [=](const Shape &s) { return makeHopperValueLayout(s, axis, mma); };
  };
  auto hopperScale = [](int64_t axis, int warps) -> Factory {
    return [=](const Shape &s) { return makeHopperScaleLayout(s, axis, warps); };
  };
  auto shuffled = [](int64_t k, int64_t n) -> Factory {
    return [=](const Shape &s) {
      return makeBlackwellShuffledValueLayout(s, k, n);
    };
  };
  Factory blackwellValue = [](const Shape &s) {
    return makeBlackwellValueLayout(s);
  };
  Factory blackwellScale = [](const Shape &s) {
    return makeBlackwellScaleLayout(s);
  };
  Factory cdna4 = [](const Shape &s) { return makeCDNA4ScaleLayout(s); };
  return {
      {"strided4", strided(4, -1), {2, 6, 10}},
      {"strided4_major0", strided(4, 0), {4, 3, 5}},
      {"strided6", strided(6, -2), {3, 8, 5}},
      {"strided8", strided(8, -1), {7, 5}},
      {"hopper_value_k2_mma3", hopperValue(-2, 3), {2, 64, 258}},
      {"hopper_value_k2_mma2", hopperValue(-2, 2), {2, 256, 512}},
      {"hopper_value_k1_mma3", hopperValue(-1, 3), {2, 34, 96}},
      {"hopper_value_k1_padded_192", hopperValue(-1, 2), {300, 330}},
      {"hopper_scale_w8", hopperScale(-2, 8), {2, 7, 200}},
      {"hopper_scale_w2", hopperScale(-1, 2), {70, 5}},
      {"blackwell_value", blackwellValue, {2, 64, 258}},
      {"blackwell_shuffled", shuffled(128, 256), {2, 300, 130}},
      {"blackwell_shuffled_n24", shuffled(64, 24), {2, 100, 30}},
      {"blackwell_scale", blackwellScale, {2, 7, 200}},
      {"cdna4_scale", cdna4, {3, 9, 40}},
  };
}

/// Every slot of the storage: the map's index for it must be where the
/// reference puts that element (padding: an element of the padded shape
/// outside the logical one).
void expectBijection(const BlockBits &map, const Layout &layout) {
  const size_t rank = map.paddedShape.size();
  const Shape &logical = layout.getLogicalShape();
  ASSERT_EQ(map.getNumSlots() * map.elementBits,
            layout.getStorageBytes() * 8);
  std::vector<int64_t> index(rank);
  int64_t elements = 0;
  for (int64_t slot = 0; slot < map.getNumSlots(); ++slot) {
    map.getIndex(slot, index.data());
    ASSERT_EQ(map.getSlot(index.data()), slot);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      ASSERT_LT(index[d], map.paddedShape[d]);
      inside = inside && index[d] < logical[d];
    }
    if (!inside)
      continue;
    ++elements;
    ASSERT_EQ(slotAddress(layout, index.data()), slot);
  }
  EXPECT_EQ(elements, layout.getNumElements());
}

TEST(BlockBits, EveryLayoutIsFoundAndExact) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    auto layout = c.make(c.shape);
    ASSERT_TRUE(layout);
    auto map = analyzeBlockBits(*layout, c.make);
    ASSERT_TRUE(map);
    expectBijection(*map, *layout);
    EXPECT_EQ(map->wordInterleave.empty(),
              layout->getWordInterleave() == nullptr);
  }
}

TEST(BlockBits, PaddedShapeNeedsTheLayoutForOtherShapes) {
  auto layout = makeBlackwellValueLayout({2, 64, 258});
  EXPECT_FALSE(analyzeBlockBits(*layout));
  auto unpadded = makeBlackwellValueLayout({2, 256, 258});
  auto map = analyzeBlockBits(*unpadded);
  ASSERT_TRUE(map);
  EXPECT_EQ(map->paddedShape, (Shape{2, 256, 258}));
}

TEST(BlockBits, RunsMoveTogether) {
  // Strided FP4 [R, C]: the whole of c is one run of stride 1 and r one of
  // stride C.
  auto layout = makeStridedLayout({6, 10}, 4, -1);
  auto map = analyzeBlockBits(*layout);
  ASSERT_TRUE(map);
  ASSERT_EQ(map->runs.size(), 2u);
  EXPECT_EQ(map->runs[0].dim, 1u);
  EXPECT_EQ(map->runs[0].extent, 10);
  EXPECT_EQ(map->runs[0].stride, 1);
  EXPECT_TRUE(map->runs[0].top);
  EXPECT_EQ(map->runs[1].dim, 0u);
  EXPECT_EQ(map->runs[1].stride, 10);

  // Blackwell scales: 512-byte atoms of 128 n x 4 ks, ks fastest.
  auto scales = makeBlackwellScaleLayout({8, 128});
  auto atoms = analyzeBlockBits(*scales);
  ASSERT_TRUE(atoms);
  ASSERT_GE(atoms->runs.size(), 3u);
  EXPECT_EQ(atoms->runs[0].dim, 0u); // ks % 4
  EXPECT_EQ(atoms->runs[0].extent, 4);
  EXPECT_EQ(atoms->runs[1].dim, 1u); // (n / 32) % 4
  EXPECT_EQ(atoms->runs[1].lowBit, 5u);
  EXPECT_EQ(atoms->runs[1].stride, 4);
}

TEST(BlockBits, MapsThatMoveNoBitsAreRefused) {
  // A 3-byte box: kb % 3 is not a move of index bits.
  auto layout = makeBlackwellShuffledValueLayout({2, 12, 8}, 6, 8);
  ASSERT_TRUE(layout);
  EXPECT_FALSE(analyzeBlockBits(*layout, [](const Shape &s) {
    return makeBlackwellShuffledValueLayout(s, 6, 8);
  }));
}

TEST(BlockBits, EmptyTensorsHaveNoMap) {
  auto layout = makeStridedLayout({0, 8}, 4, -1);
  EXPECT_FALSE(analyzeBlockBits(*layout));
}

TEST(BlockBits, BlockAddressBitsAreTheBlockPermutation) {
  // Strided FP4 [64, 128]: within a 2 x 4 block, column bits stay, the row
  // bit moves to the row stride (128 nibbles = bit 7).
  auto strided = makeStridedLayout({64, 128}, 4, -1);
  auto bits = getBlockAddressBits(*strided, 2, 4);
  ASSERT_TRUE(bits);
  EXPECT_EQ(*bits, (std::vector<int>{0, 1, 7}));

  // Hopper values, before the interleave: a permutation on a 256 x 128
  // block of [2, 256, 512] with mx_axis = -2.
  auto hopper = makeHopperValueLayout({2, 256, 512}, -2, 3);
  auto hopperBits = getBlockAddressBits(*hopper, 256, 128);
  ASSERT_TRUE(hopperBits);
  std::vector<int> sorted = *hopperBits;
  std::sort(sorted.begin(), sorted.end());
  for (size_t j = 1; j < sorted.size(); ++j)
    EXPECT_NE(sorted[j], sorted[j - 1]);

  // Bytes are seen as pairs of nibbles: the nibble bit stays bit 0.
  auto scales = makeStridedLayout({16, 8}, 8, -1);
  auto scaleBits = getBlockAddressBits(*scales, 2, 16);
  ASSERT_TRUE(scaleBits);
  EXPECT_EQ(*scaleBits, (std::vector<int>{0, 1, 2, 3, 4}));

  // Not a power of two.
  EXPECT_FALSE(getBlockAddressBits(*strided, 3, 4));
}

} // namespace
