//===- WordBitMap.h - A 32-bit word's bit permutation as terms -*- C++ -*-===//
//
// Layouts that interleave bits within 32-bit words (Hopper's Step B) are
// applied in the kernels by moving every bit by its distance map[i] - i. One
// term per distance (a mask, a shift and an or) is the plain form
// (shiftMasks). Several distances of one sign can share a term when one
// integer multiply moves them all: (x & sourceMask) * (2^d1 + 2^d2 + ...)
// shifts copies of the masked bits by every d at once, and when no two
// partial products fall on the same bit (no carry anywhere; then no stray
// copy falls on a wanted bit either), `& destMask` keeps exactly the wanted
// ones.
// Right moves take the high word of the 64-bit product (distances 32 + d).
// On NVIDIA GPUs the multiply issues on the multiply-add pipe, so a term of
// k distances costs two integer-pipe instructions instead of k or 2k.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_WORDBITMAP_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_WORDBITMAP_H

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace mlir::microscale {

/// A word bit map (bit i moves to bit map[i]) as one mask of source bits
/// per distance map[i] - i: applying it costs a mask, a shift and an or per
/// entry.
std::map<int, uint32_t> shiftMasks(const std::array<int8_t, 32> &map);

/// One term of a word bit map: the bits `sourceMask` move by `distance`
/// (single-distance terms, multiplier 0) or, with `multiplier` set, by the
/// product (x & sourceMask) * multiplier, its low word or, with `highWord`,
/// its high word; `destMask` keeps the moved bits.
struct WordBitMapTerm {
  uint32_t sourceMask = 0;
  uint32_t destMask = 0;
  int distance = 0;
  uint32_t multiplier = 0;
  bool highWord = false;
};

/// The terms that move bit i of a word to bit map[i] (map must be a
/// permutation of 0..31) with the fewest integer-pipe instructions: the
/// distances grouped into multiply terms where that is exact, else one term
/// per distance. The terms' results are disjoint; their or is the word.
std::vector<WordBitMapTerm> planWordBitMap(const std::array<int8_t, 32> &map);

/// Applies the terms to one word (the reference the emitters follow).
uint32_t applyWordBitMap(const std::vector<WordBitMapTerm> &terms,
                         uint32_t word);

} // namespace mlir::microscale

#endif // MICROSCALE_DIALECT_MICROSCALE_UTILS_WORDBITMAP_H
