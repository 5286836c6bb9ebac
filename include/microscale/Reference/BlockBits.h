//===- BlockBits.h - Layouts as maps of index bits to address bits -*- C++ -*-===//
//
// Every Triton layout, and the strided one, places the elements of a block of
// the logical tensor by permuting the bits of their index: on a block of
// 2^a x 2^b elements, an element's address (in element-sized slots) is the
// block's base plus its in-block index with each bit moved to another
// position. The blocks themselves sit on a strided grid over the padded
// storage. This header finds that structure from a layout's reference map
// alone (`Layout::locateBeforeInterleave`), so that code generators (the IR
// emitters of the dialect, the block planner) need no per-layout code.
//
// Two views of the same structure:
//  * `getBlockAddressBits`: on one block at the tensor's origin, where each
//    bit of the in-block element index goes (the block planner's view);
//  * `analyzeBlockBits`: the whole tensor, as runs of index bits that each
//    move as one piece: the slot address of an element is the sum over runs
//    of (its index bits in the run) * (the run's stride). A run of power-of-
//    two stride inside a block is part of the block's bit permutation; the
//    top run of a dim, of any stride, is the block grid (or the batch).
//
// Layouts that interleave bits within 32-bit words (Hopper's Step B) are
// analysed before the interleave, which is reported separately.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_BLOCKBITS_H
#define MICROSCALE_REFERENCE_BLOCKBITS_H

#include "microscale/Reference/Layout.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace microscale::ref {

/// The slot address (bit offset / element bits) of the element at `index`,
/// before any word interleave, or -1 when its bits are not one aligned run
/// of elementBits consecutive bits.
int64_t slotAddress(const Layout &layout, const int64_t *index);

/// An 8-bit layout seen as a 4-bit one: logical [..., R, C] bytes become
/// [..., R, 2C] nibbles, nibble h of byte (r, c) being element (r, 2c + h).
/// `bytes` must outlive the view.
std::unique_ptr<Layout> makeNibbleView(const Layout &bytes);

/// The nibble-address bits of `layout` (4-bit, or 8-bit seen as nibbles) on
/// the block of blockRows x blockCols elements (powers of two) at the
/// tensor's origin, over the last two dims: element e of the block
/// (row-major) lies at bit j of e moved to bit bits[j], in nibbles after the
/// block's base, before any word interleave. std::nullopt where that is not
/// so (single-bit probes only; callers verify what they rely on).
std::optional<std::vector<int>> getBlockAddressBits(const Layout &layout,
                                                    int64_t blockRows,
                                                    int64_t blockCols);

/// Bits [lowBit, lowBit + log2(extent)) of index dim `dim` (all of its bits
/// from lowBit up when `top`), moving as one piece to slot address
/// value * stride.
struct IndexBitRun {
  unsigned dim = 0;
  unsigned lowBit = 0;
  /// The values the run takes: 2^bits, or for a dim's top run
  /// ceil(paddedExtent / 2^lowBit), which need not be a power of two.
  int64_t extent = 1;
  int64_t stride = 0;
  bool top = false;
};

/// A layout whose slot addresses are linear in the bits of the logical index
/// (each index bit adds its own constant), and dense: every slot of the
/// storage holds one element of the padded logical shape.
struct BlockBits {
  /// The logical shape with the layout's padding included: storage that the
  /// layout leaves to padding holds the elements of this shape that lie
  /// outside the logical one.
  std::vector<int64_t> paddedShape;
  unsigned elementBits = 0;
  /// The slot address's digits, by increasing stride: runs[0].stride is 1
  /// and runs[k + 1].stride = runs[k].stride * runs[k].extent, so a slot
  /// address splits back into the runs' values by division and remainder.
  std::vector<IndexBitRun> runs;
  /// Bit b of every little-endian 32-bit word moves to wordInterleave[b]
  /// after the slots are placed; empty for none.
  std::vector<int8_t> wordInterleave;

  int64_t getNumSlots() const;
  /// The slot address of `index` (before the interleave).
  int64_t getSlot(const int64_t *index) const;
  /// The index (rank entries, of the padded shape) of slot `slot`.
  void getIndex(int64_t slot, int64_t *index) const;
};

/// Builds the same layout for another logical shape (null when the layout
/// refuses it); used to find the padded shape.
using LayoutBuilder =
    std::function<std::unique_ptr<Layout>(const std::vector<int64_t> &)>;

/// The BlockBits of `layout`, or std::nullopt where its map is not of that
/// form (or the tensor is empty). `rebuild`, when given, lets the analysis
/// look at the padded shape, so that padded layouts are analysed too.
/// The result is checked against `layout` on every element of small tensors
/// and on a deterministic sample of large ones.
std::optional<BlockBits> analyzeBlockBits(const Layout &layout,
                                          const LayoutBuilder &rebuild = {});

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_BLOCKBITS_H
