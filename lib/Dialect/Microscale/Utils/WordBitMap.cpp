//===- WordBitMap.cpp - A 32-bit word's bit permutation as terms ----------===//
#include "microscale/Dialect/Microscale/Utils/WordBitMap.h"

using namespace mlir::microscale;

namespace {

/// Beyond this many distinct distances the subset search (3^n) is not run
/// and every distance keeps its own term.
constexpr int kMaxSearchedDistances = 12;

struct DistanceClass {
  int distance;
  uint32_t bits;
};

/// The multiply term that moves every class in `group` at once, if it is
/// exact: no two partial products on one bit, so no carries. A stray copy
/// on a wanted bit would meet that bit's own partial product, so the same
/// check keeps strays off the wanted bits.
bool multiplyTerm(const std::vector<DistanceClass> &group,
                  WordBitMapTerm &term) {
  bool high = group.front().distance < 0;
  for (const DistanceClass &c : group)
    if ((c.distance < 0) != high)
      return false;
  uint32_t sourceMask = 0, destMask = 0;
  uint64_t multiplier = 0;
  for (const DistanceClass &c : group) {
    int exponent = high ? 32 + c.distance : c.distance;
    if (exponent < 0 || exponent > 31)
      return false;
    multiplier |= uint64_t(1) << exponent;
    sourceMask |= c.bits;
    destMask |= c.distance >= 0 ? c.bits << c.distance : c.bits >> -c.distance;
  }
  uint64_t seen = 0; // product bits 0..62
  for (const DistanceClass &owner : group)
    for (int bit = 0; bit < 32; ++bit) {
      if (!(owner.bits >> bit & 1))
        continue;
      for (const DistanceClass &c : group) {
        int position = bit + (high ? 32 + c.distance : c.distance);
        if (!high && position >= 32)
          continue; // dropped from the low word, carries cannot come back
        uint64_t flag = uint64_t(1) << position;
        if (seen & flag)
          return false;
        seen |= flag;
      }
    }
  term.sourceMask = sourceMask;
  term.destMask = destMask;
  term.multiplier = static_cast<uint32_t>(multiplier);
  term.highWord = high;
  term.distance = 0;
  return true;
}

WordBitMapTerm shiftTerm(const DistanceClass &c) {
  WordBitMapTerm term;
  term.sourceMask = c.bits;
  term.distance = c.distance;
  term.destMask =
      c.distance >= 0 ? c.bits << c.distance : c.bits >> -c.distance;
  return term;
}

/// Integer-pipe instructions first, then multiply-add-pipe ones (left
/// shifts become multiplies on NVIDIA GPUs); the instruction that merges a
/// term into the word (an or, or a select) is counted with each term.
int shiftCost(int distance) {
  if (distance == 0)
    return 16;
  return distance > 0 ? 16 + 1 : 32;
}
constexpr int kMultiplyCost = 32 + 1;

} // namespace

std::vector<WordBitMapTerm>
mlir::microscale::planWordBitMap(const std::array<int8_t, 32> &map) {
  std::vector<DistanceClass> classes;
  for (auto [distance, bits] : shiftMasks(map))
    classes.push_back({distance, bits});
  const int n = static_cast<int>(classes.size());
  std::vector<WordBitMapTerm> terms;
  if (n > kMaxSearchedDistances) {
    for (const DistanceClass &c : classes)
      terms.push_back(shiftTerm(c));
    return terms;
  }
  // Cost and term of every subset as one term (-1: no exact term).
  const uint32_t all = (uint32_t(1) << n) - 1;
  std::vector<int> groupCost(all + 1, -1);
  std::vector<WordBitMapTerm> groupTerm(all + 1);
  for (uint32_t set = 1; set <= all; ++set) {
    std::vector<DistanceClass> group;
    for (int i = 0; i < n; ++i)
      if (set >> i & 1)
        group.push_back(classes[i]);
    if (group.size() == 1) {
      groupCost[set] = shiftCost(group[0].distance);
      groupTerm[set] = shiftTerm(group[0]);
    } else if (multiplyTerm(group, groupTerm[set])) {
      groupCost[set] = kMultiplyCost;
    }
  }
  // Cheapest partition: the group of the lowest class left, then the rest.
  std::vector<int> best(all + 1, 0);
  std::vector<uint32_t> choice(all + 1, 0);
  for (uint32_t set = 1; set <= all; ++set) {
    uint32_t lowest = set & -set;
    best[set] = -1;
    uint32_t rest = set & ~lowest;
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
      uint32_t group = sub | lowest;
      if (groupCost[group] >= 0) {
        int cost = groupCost[group] + best[set & ~group];
        if (best[set] < 0 || cost < best[set]) {
          best[set] = cost;
          choice[set] = group;
        }
      }
      if (sub == 0)
        break;
    }
  }
  for (uint32_t set = all; set; set &= ~choice[set])
    terms.push_back(groupTerm[choice[set]]);
  return terms;
}

std::map<int, uint32_t>
mlir::microscale::shiftMasks(const std::array<int8_t, 32> &map) {
  std::map<int, uint32_t> masks;
  for (int i = 0; i < 32; ++i)
    masks[map[i] - i] |= uint32_t(1) << i;
  return masks;
}

uint32_t mlir::microscale::applyWordBitMap(
    const std::vector<WordBitMapTerm> &terms, uint32_t word) {
  uint32_t result = 0;
  for (const WordBitMapTerm &term : terms) {
    uint32_t masked = word & term.sourceMask;
    uint32_t moved;
    if (term.multiplier) {
      uint64_t product = uint64_t(masked) * term.multiplier;
      moved = static_cast<uint32_t>(term.highWord ? product >> 32 : product);
    } else {
      moved = term.distance >= 0 ? masked << term.distance
                                 : masked >> -term.distance;
    }
    result |= moved & term.destMask;
  }
  return result;
}
