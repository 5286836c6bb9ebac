//===- BandCopy.h - Bands of the block route written as range copies -*- C++ -*-===//
//
// Some conversions only move bytes: the two layouts hold the same bytes in
// the same order along rows and differ in the rows' pitch (blackwell_value,
// whose K rows are padded to a multiple of 1536 bytes, back into gpt-oss's
// K-major rows of 1440 bytes). Their block plan has no register steps and
// no bit maps, but its blocks are sized to the narrower side's alignment:
// on rows 1440 bytes apart that is 32-byte runs in two rows, stores that
// cannot stream, and every destination line read before it is written.
//
// Such a band's destination span is a few source ranges laid end to end
// (here two rows of 1440 bytes). It is written as those copies instead:
// each 64-byte destination line from one unaligned source load, or, where
// a line holds the end of one range and the start of the next, from the
// pieces of both; streaming where the destination is aligned.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_BANDCOPY_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_BANDCOPY_H

#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"

namespace mlir::microscale {

/// `bytes` bytes of a band's destination span, from `destOffset` (relative
/// to the span's start), copied from the band's source at `sourceOffset`
/// (relative to the band's first block).
struct BandCopyPiece {
  int64_t destOffset, sourceOffset, bytes;
};

/// The most pieces a band is copied as: beyond this the code per band
/// grows and the blocks are the better route.
inline constexpr int64_t kMaxBandCopyPieces = 16;

/// The pieces, in destination order, that write a band of `plan` by range
/// copies, or none where the plan does not allow it: its blocks must only
/// move bytes (no steps, no word bit maps), cover the destination (no gaps,
/// tail or edge blocks), fill each band's span exactly in at most
/// kMaxBandCopyPieces source ranges, and the spans must be whole, aligned
/// 64-byte lines of at most 256 KiB. Plans whose own stores already stream
/// whole lines get none (their blocks are a copy already).
llvm::SmallVector<BandCopyPiece> planBandCopy(const BlockConversionPlan &plan);

/// Emits one band's span of `spanBytes` bytes, written at `destBand` of
/// `dest` line by line from `source` at `sourceBand` by the copies `pieces`
/// (planBandCopy's), with non-temporal stores where `nontemporal` (the
/// caller checks the alignment and fences). emitBlockConversion runs it
/// for each band of a plan that has pieces.
void emitBandCopy(OpBuilder &builder, Location loc,
                  llvm::ArrayRef<BandCopyPiece> pieces, int64_t spanBytes,
                  Value source, Value dest, Value sourceBand, Value destBand,
                  bool nontemporal);

} // namespace mlir::microscale

#endif
