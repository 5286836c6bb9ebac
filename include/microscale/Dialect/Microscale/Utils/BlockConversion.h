//===- BlockConversion.h - FP4 layout conversion in vector blocks -*- C++ -*-===//
//
// The fast path for convert_storage of packed FP4 values (and bytes, seen as
// pairs of nibbles): the host lowering emits it, the GPU staged kernel plans
// its tiles from it. Where both layouts, on a block of the logical tensor,
// place each element's nibble at an address whose bits are a permutation of
// the element's index bits within a storage row, the rows being any pitch
// apart (true of every Triton value layout), a conversion is a fixed routing
// of the block's nibbles through vector registers:
//
//   load the block's source runs into W-byte vectors,
//   [undo the source's word interleave (Hopper's Step B)],
//   swap the nibble-within-byte bit with a vector bit (shifts and masks),
//   swap lane bits with vector bits, one two-input byte shuffle per vector
//   and stage (vpermt2b on a host with AVX-512 VBMI),
//   [apply the destination's word interleave],
//   store the vectors as the block's destination runs.
//
// The plan is computed at compile time from the layouts' reference maps
// (`locateBeforeInterleave`), so it has no per-layout code: a new layout of
// this kind is converted fast as soon as its reference is right. It is
// verified against the reference before use (every band's and block's
// origin, and sampled blocks element by element); layouts it
// does not fit (6-bit codes, maps that are no permutation on any block of
// at least a vector) keep the generic per-unit loop.
//
// Blocks are grouped into bands: all blocks of one band write inside one
// span of destination bytes, band b of a batch the span [b, b+1) *
// spanBytes, so a range of destination store units (convert_storage's
// `units`) maps to whole bands plus generic edges. What the blocks do not
// write (a layout's padding, and the elements outside the blocks where the
// shape is not a multiple of the block) is the spans' gaps and each batch's
// tail, written with the band: zeros for padding, else unit by unit. On the
// host, the elements outside the blocks are instead converted by edge
// blocks: the same routing with masked loads and stores, one more block per
// band and/or one more band per batch (`edgeBlocks`).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_BLOCKCONVERSION_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_BLOCKCONVERSION_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <map>
#include <cstdint>
#include <optional>

namespace microscale::ref {
class Layout;
} // namespace microscale::ref

namespace mlir::microscale {

/// How a layout places a block: element e (row e >> log2(cols), column
/// e & (cols - 1) of the block) at the block's base plus
/// physical(sum_j bit(e, j) << (*this)[j]) nibbles. The positions are those
/// of a virtual address whose rows are 2^rowShift nibbles apart; the
/// storage's rows are `pitch` nibbles apart, which need not be a power of
/// two (2880 bytes, say): a block may span rows of the storage as long as,
/// within a row, its nibbles are a permutation of index bits.
struct BlockAddressBits : llvm::SmallVector<int> {
  int rowShift = 62;
  int64_t pitch = int64_t(1) << 62;
  int64_t physical(int64_t virtualAddress) const {
    const int64_t column = virtualAddress & ((int64_t(1) << rowShift) - 1);
    return column + (virtualAddress >> rowShift) * pitch;
  }
};

struct BlockConversionPlan {
  /// One vector register's worth of storage: `offsets` are the byte offsets
  /// (relative to the block's base) of its runs of `runBytes` bytes, in lane
  /// order.
  struct Access {
    int value;
    llvm::SmallVector<int64_t> offsets;
    int64_t runBytes;
  };
  /// One register operation. `Shuffle`: result0 = bytes of a and b picked
  /// by `mask` (0..W-1 from a, W..2W-1 from b). `NibbleSwap`: result0 holds
  /// the low nibbles of a (low) and b (high), result1 their high nibbles.
  struct Step {
    enum class Kind { Shuffle, NibbleSwap } kind;
    int a, b, result0, result1;
    llvm::SmallVector<int64_t> mask;
    /// The routing stage (nibble swap or shuffle stage) it belongs to.
    int stage = 0;
  };

  int64_t vectorBytes = 64;
  /// Logical extent of one block in the last two dims.
  int64_t blockRows = 0, blockCols = 0;
  int64_t numBands = 0, blocksPerBand = 0, bandBytes = 0;
  /// The destination, per batch: `bandsPerBatch` spans of `spanBytes` (band
  /// b's blocks write inside span b; spanBytes == bandBytes where they fill
  /// it), then `batchTailBytes`. What the blocks do not write is the span's
  /// `spanGaps` ([offset, offset + length) bytes from the span's start) and
  /// the tail: the layout's padding, and where the blocks do not cover the
  /// logical tensor (`gapsHoldElements`: shapes that are not multiples of
  /// the block), the elements outside them.
  int64_t spanBytes = 0, batchTailBytes = 0;
  llvm::SmallVector<std::pair<int64_t, int64_t>> spanGaps;
  /// Per span gap: whether it holds elements (written unit by unit) or only
  /// padding (zeros). The tail, likewise, as runs ([offset, offset +
  /// length) from the tail's start) of one kind each. gapsHoldElements: any
  /// gap or run does.
  llvm::SmallVector<bool> spanGapHoldsElements;
  llvm::SmallVector<std::pair<int64_t, int64_t>> batchTailRuns;
  llvm::SmallVector<bool> batchTailRunHoldsElements;
  bool gapsHoldElements = false;
  /// Band b is band b % bandsPerBatch of batch b / bandsPerBatch; block i of
  /// it starts at byte batch * batchStride + band * bandStride +
  /// i * innerStride, on either side.
  int64_t bandsPerBatch = 0;
  /// Whether a band's blocks lie along the columns (the bands then step
  /// down the rows), else along the rows.
  bool innerAlongCols = true;
  int64_t sourceBatchStride = 0, sourceBandStride = 0, sourceInnerStride = 0;
  int64_t destBatchStride = 0, destBandStride = 0, destInnerStride = 0;

  /// Where each layout places the elements of a block (the bits of the
  /// element's index within the block, rows then columns).
  BlockAddressBits sourceAddress, destAddress;
  /// The register states of the loads and the stores: element index bit j
  /// at register nibble address bit pos[j] (see BlockConversion.cpp).
  llvm::SmallVector<int> sourceRegisterBits, destRegisterBits;

  llvm::SmallVector<Access> loads;
  /// Word bit maps (bit b of a 32-bit word moves to bit map[b]) applied to
  /// every loaded vector and every vector before its store.
  std::optional<std::array<int8_t, 32>> sourceWordMap, destWordMap;
  llvm::SmallVector<Step> steps;
  llvm::SmallVector<Access> stores;
  int numValues = 0;
  /// Where the stores may stream past the caches (non-temporal), the
  /// alignment they need, or 0: 16 where each block's stores cover one
  /// 16-byte aligned destination range, 64 where every store is whole
  /// aligned cache lines.
  int64_t streamingAlignment = 0;

  /// Edge blocks (planned with `edgeBlocks`, host only): where a block does
  /// not divide the tensor, the blocks that stick out of it run the same
  /// routing with masked runs: a load lane (byte) is read only where it
  /// holds an element (zeros elsewhere), a store lane is written only where
  /// both of its nibbles are elements. Per access, one flag per lane; an
  /// empty list: every lane.
  struct EdgeMasks {
    llvm::SmallVector<llvm::SmallVector<bool>> loadLanes, storeLanes;
  };
  /// `innerEdge`: each band has one more block, at inner index
  /// blocksPerBand, writing inside the band's span. `bandEdge`: each batch
  /// has one more band (outer index bandsPerBatch, at the same strides),
  /// run by the batch's last band and writing inside the batch's tail;
  /// `cornerEdge` is its block at inner index blocksPerBand where both
  /// edges are there. What they write is not in spanGaps / batchTailRuns.
  std::optional<EdgeMasks> innerEdge, bandEdge, cornerEdge;

  int64_t getBlockBytes() const { return blockRows * blockCols / 2; }
  bool hasEdgeBlocks() const { return innerEdge || bandEdge; }
  /// Whether the (full) blocks write every destination byte.
  bool coversDestination() const {
    return spanGaps.empty() && batchTailBytes == 0 && !hasEdgeBlocks();
  }
  /// Destination bytes of one batch.
  int64_t getBatchBytes() const {
    return bandsPerBatch * spanBytes + batchTailBytes;
  }
};

/// Plans that leave destination bytes to write apart (padding, edges) cost
/// code per gap and a JIT compile far longer than the per-unit loop's: by
/// default they are taken for destinations of at least this many bytes.
inline constexpr int64_t kDefaultMinBytesWithGaps = int64_t(1) << 20;

/// The plan for converting the storage of `from` into that of `to` (the
/// same logical FP4 tensor, or 8-bit tensor: then the plan's block and
/// element bits are those of the tensor seen as nibbles, [..., R, 2C]) with
/// `vectorBytes`-byte registers (16, 32 or 64), or std::nullopt where no
/// block routing applies. Plans that do not cover the destination are
/// returned only for destinations of at least `minBytesWithGaps` bytes.
/// Blocks have at least 2^minBlockBits elements (the GPU's tiles need a warp
/// of threads), and at least two vectors' worth. With `edgeBlocks` (the
/// host's lowering: emitBlockConversion runs them), blocks that do not
/// divide the tensor take its edges as masked edge blocks
/// (BlockConversionPlan::innerEdge, bandEdge) instead of leaving the
/// elements there to the per-unit writer, and rank with those that divide.
///
/// `registerFileBytes` (the host's vector registers, e.g. 32 x 64 bytes
/// with AVX-512; 0: no register model, the GPU's tiles) ranks blocks as a
/// core runs them: a block whose vectors outgrow the registers spills them
/// between routing phases, and that traffic counts in its cost; and a load
/// run shorter than a cache line counts as a whole line when the band's
/// next block continues it (the line is then completed while it is still in
/// the core's cache), so that smaller blocks, which route with fewer steps per
/// byte and no spills, compete with the large ones that alone have whole
/// lines in one block.
std::optional<BlockConversionPlan>
planBlockConversion(const ::microscale::ref::Layout &from,
                    const ::microscale::ref::Layout &to,
                    int64_t vectorBytes = 64,
                    int64_t minBytesWithGaps = kDefaultMinBytesWithGaps,
                    int minBlockBits = 0, bool edgeBlocks = false,
                    int64_t registerFileBytes = 0);

/// What a target adds to the block route: instructions that the
/// target-neutral dialects (arith, vector, memref, scf) do not have. The
/// route is correct without any of them; a target that has them (the host
/// CPU's, lib/Conversion/CPU) makes it faster.
class BlockConversionTarget {
public:
  virtual ~BlockConversionTarget();
  /// Moves bit i of every 32-bit word of the byte vector `bytes` to bit
  /// map[i] with the target's own instructions; null to take the generic
  /// shifts and masks.
  virtual Value emitWordBitMap(OpBuilder &builder, Location loc, Value bytes,
                               const std::array<int8_t, 32> &map) const {
    return {};
  }
  /// Whether plans that allow it may store with non-temporal stores: the
  /// target must then order them with `emitStreamingFence`.
  virtual bool hasStreamingStores() const { return false; }
  /// Makes the non-temporal stores emitted before it visible to whatever
  /// the caller does next.
  virtual void emitStreamingFence(OpBuilder &builder, Location loc) const {}
};

/// How the destination bytes that no block writes are written: zeros where
/// they are padding only; else unit by unit through `emitUnit` (destination
/// store units of `unitBytes` bytes, by index).
struct GapWriter {
  int64_t unitBytes = 1;
  function_ref<void(OpBuilder &, Location, Value)> emitUnit;
};

/// Whether each band's blocks write a buffer of the band's bytes (in the
/// cache) that then goes to the destination as whole lines, streaming
/// where the destination is aligned, when the target has streaming stores:
/// plans whose own stores cannot stream (runs that are not whole aligned
/// lines, each line read before it is written) and whose bands' blocks,
/// with the band's inner edge block, fill the band's span: one contiguous,
/// line-aligned destination range of at most 256 KiB.
bool writesBandsThroughBuffer(const BlockConversionPlan &plan);

/// How many neighbouring bands emitBlockConversion walks together with
/// `target` (may be null): block i of each, then block i + 1. Bands through
/// buffers (writesBandsThroughBuffer), two at a time. Otherwise, on source
/// rows at least 1 KiB apart, bands that read the same source rows one
/// after the other: where a block reads one range of the same width w
/// (under 1 KiB) of each source row it touches and band b + 1's block i
/// reads the w bytes that follow, every band of a batch, so that block i
/// of the batch's bands reads its source rows' range from end to end in
/// order (and a line shared by several bands, w < 64, is completed while
/// it is in the core's caches); the blocks then prefetch the next bands'
/// lines, not the band's next blocks'. Walked band after band, they would
/// come back to a row only after a whole band of blocks (thousands of
/// lines); on rows a multiple of 1 KiB apart those lines crowd a few cache
/// sets and have left even the L2 by then, DRAM serves each line 64 / w
/// times, and each 128-byte visit to a row costs a DRAM page. (Groups
/// reading 1 KiB of each row ran 1.3-1.4x slower than whole batches on
/// hopper_value(mx=-2) -> strided: docs/performance.md, thirty-eighth
/// session.) 1 where neither applies.
int64_t bandsWalkedTogether(const BlockConversionPlan &plan,
                            const BlockConversionTarget *target);
/// Emits loops over bands [bandBegin, bandEnd) that convert `source` into
/// `dest` (1-D i8 memrefs) as `plan` says, with what `target` (may be null)
/// adds. Each band also writes its span's gaps, and the last band of a batch
/// the batch's tail, through `gaps` (needed unless the plan covers the
/// destination).
void emitBlockConversion(OpBuilder &builder, Location loc,
                         const BlockConversionPlan &plan, Value source,
                         Value dest, Value bandBegin, Value bandEnd,
                         const BlockConversionTarget *target = nullptr,
                         const GapWriter *gaps = nullptr);

} // namespace mlir::microscale

#endif
