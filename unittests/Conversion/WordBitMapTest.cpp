//===- WordBitMapTest.cpp - Multiply terms of word bit maps ---------------===//
//
// planWordBitMap against the map it plans: Hopper's Step B interleave and its
// inverse (the maps the staged GPU kernel applies), every 16-bit-lane map
// built from random nibble bit orders, and random permutations; each on
// random words and on every single bit. The kernels themselves are checked
// byte-exact by the host emulation (CompiledConversionTest) and on the H200.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/Utils/WordBitMap.h"
#include "microscale/Reference/TritonLayouts.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

uint32_t applyMap(const std::array<int8_t, 32> &map, uint32_t word) {
  uint32_t result = 0;
  for (int i = 0; i < 32; ++i)
    result |= (word >> i & 1) << map[i];
  return result;
}

/// Checks the plan on every single bit and on random words; returns the
/// number of multiply terms.
int checkPlan(const std::array<int8_t, 32> &map, std::mt19937 &rng) {
  std::vector<WordBitMapTerm> terms = planWordBitMap(map);
  uint32_t covered = 0;
  for (const WordBitMapTerm &term : terms) {
    EXPECT_EQ(covered & term.sourceMask, 0u) << "a bit in two terms";
    covered |= term.sourceMask;
  }
  EXPECT_EQ(covered, 0xffffffffu);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(applyWordBitMap(terms, 1u << i), 1u << map[i]) << "bit " << i;
  for (int n = 0; n < 20000; ++n) {
    uint32_t word = rng();
    EXPECT_EQ(applyWordBitMap(terms, word), applyMap(map, word))
        << std::hex << word;
  }
  return static_cast<int>(std::count_if(
      terms.begin(), terms.end(),
      [](const WordBitMapTerm &term) { return term.multiplier != 0; }));
}

std::array<int8_t, 32> hopperInterleave() {
  std::unique_ptr<ref::Layout> layout =
      ref::makeHopperValueLayout({256, 64}, -2, 3);
  const int8_t *interleave = layout->getWordInterleave();
  EXPECT_NE(interleave, nullptr);
  std::array<int8_t, 32> map{};
  std::copy(interleave, interleave + 32, map.begin());
  return map;
}

TEST(WordBitMap, HopperStepBAndItsInverse) {
  std::mt19937 rng(11);
  std::array<int8_t, 32> interleave = hopperInterleave();
  std::array<int8_t, 32> inverse{};
  for (int i = 0; i < 32; ++i)
    inverse[interleave[i]] = static_cast<int8_t>(i);
  // Both directions group some of their 8 distances into multiplies (the
  // point of the plan): a plan of shifts only would still pass the checks.
  EXPECT_GE(checkPlan(interleave, rng), 1);
  EXPECT_GE(checkPlan(inverse, rng), 1);
  EXPECT_LT(planWordBitMap(interleave).size(), 8u);
  EXPECT_LT(planWordBitMap(inverse).size(), 8u);
}

TEST(WordBitMap, LaneMapsAndRandomPermutations) {
  std::mt19937 rng(12);
  int multiplies = 0;
  for (int n = 0; n < 200; ++n) {
    // The same permutation of 16 bits in both lanes (Step B's form).
    std::array<int8_t, 16> lane;
    std::iota(lane.begin(), lane.end(), 0);
    std::shuffle(lane.begin(), lane.end(), rng);
    std::array<int8_t, 32> map{};
    for (int i = 0; i < 32; ++i)
      map[i] = static_cast<int8_t>(16 * (i / 16) + lane[i % 16]);
    multiplies += checkPlan(map, rng);
  }
  for (int n = 0; n < 50; ++n) {
    // Up to 32 distances: beyond the searched count, shifts only.
    std::array<int8_t, 32> map;
    std::iota(map.begin(), map.end(), 0);
    std::shuffle(map.begin(), map.end(), rng);
    checkPlan(map, rng);
  }
  EXPECT_GT(multiplies, 0);
}

} // namespace
