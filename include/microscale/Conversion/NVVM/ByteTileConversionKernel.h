//===- ByteTileConversionKernel.h - The byte tile kernel's grid -*- C++ -*-===//
//
// The NVIDIA kernel of a ByteTilePlan (Utils/ByteTileConversion.h) and its
// grid. By default one block converts one tile: it copies the tile's
// source into shared memory, reads its gather tables while the copy lands,
// and gathers the destination. The alternative is a persistent grid: P
// blocks, a few per SM, each converting the full tiles block, block + P,
// ..., with the next tile's source copied (cp.async) into a second buffer
// while this one's destination is gathered and the gather tables read
// once per block; the edge tiles (where the long dim is not a multiple of
// the tile) then take one block per outer index (batch and split) of their
// own. The persistent
// grid was built because the blocks of the default load, gather and store
// in lockstep; on the H200 it measured no faster (docs/performance.md), so
// it is an option for sweeps.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_BYTETILECONVERSIONKERNEL_H
#define MICROSCALE_CONVERSION_NVVM_BYTETILECONVERSIONKERNEL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Dialect/Microscale/Utils/ByteTileConversion.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <cstdint>

namespace mlir::microscale {

struct ByteTilePlan;

/// Choices of the byte tile kernel.
struct ByteTileKernelOptions {
  /// Threads per block (a multiple of 32).
  int64_t threads = 256;
  /// Word reads and byte permutes where a destination chunk's bytes lie in
  /// a few shared words (ByteTileGather); false: byte reads.
  bool wordGather = true;
  /// The copy-in may transpose the source chunks in groups of four rows
  /// where that turns the gather's byte reads into word reads
  /// (ByteTilePlan::transposedQuads). Off by default: measured slower on
  /// the H100 than the byte reads it replaces (docs/performance.md).
  bool transposedCopies = false;
  /// Persistent blocks per SM, bounded by what an SM holds (0: one block
  /// per tile, no persistent grid).
  int64_t blocksPerSM = 0;
  /// Persistent grid: shared buffers per block, 2 (the next tile copied in
  /// while this one is gathered) or 1 (after it); 0 or 2 take two where
  /// they fit in a block's static shared memory.
  int64_t buffers = 0;
  /// SMs the grid is planned for (0: the chip model's default).
  int64_t smCount = 0;
  /// Read a persistent block's gather tables once, before its first tile
  /// (registers), rather than for each tile (cached loads).
  bool hoistTables = true;
  /// Plan batches above kByteTileMaxBatchBytes as blocks of columns or rows
  /// (planByteTileConversion). The outline pass tries this after the
  /// staged kernel, which is faster on the pairs it takes at that size.
  bool blocksOfLargeBatches = true;
  /// Tiles under this many bytes count as small to the planner
  /// (planByteTileConversion).
  int64_t minTileBytes = kByteTileMinBytes;
  /// Load runs shorter than this keep the planner searching
  /// (planByteTileConversion's `minRun`; 0: off).
  int64_t minRun = kByteTileMinRun;
};

/// How the kernel's blocks share a plan's tiles.
struct ByteTileGrid {
  /// Tiles of kind 0 (the full ones): `fullGroups` per outer index (batch
  /// and split: ByteTilePlan), tile t at outer t / fullGroups, group t %
  /// fullGroups.
  int64_t fullGroups = 0, fullTiles = 0;
  /// Blocks looping over the full tiles, then one block per outer index's
  /// edge tile (kind 1), if the plan has one.
  int64_t persistentBlocks = 0, edgeBlocks = 0;
  /// Shared buffers per block and the bytes of each.
  int64_t buffers = 1, bufferBytes = 0;
  /// Registers per thread that keep the persistent blocks resident
  /// together (nvvm.maxnreg), and whether the gather tables are read once.
  int64_t maxRegisters = 0;
  bool hoistTables = true;

  int64_t getNumBlocks() const { return persistentBlocks + edgeBlocks; }
};

/// The grid for `plan` on `chip`: one block per tile, or with
/// `options.blocksPerSM` the persistent grid of that many blocks per SM
/// (within the SM's threads and shared memory, on `options.smCount` SMs).
ByteTileGrid planByteTileGrid(const ByteTilePlan &plan,
                              const nvvm::NVIDIAChip &chip,
                              const ByteTileKernelOptions &options);

/// Outlines a whole convert_storage of 8-bit elements (scales, FP8) into
/// the byte tile kernel for `chip` and replaces it with its launch.
/// Returns false, changing nothing, where no plan exists.
bool outlineByteTileConversion(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                               unsigned index, const nvvm::NVIDIAChip &chip,
                               const ByteTileKernelOptions &options);

/// For tests without a GPU: replaces `op` by the byte tile kernel's own
/// code run on the host with `persistentBlocks` persistent blocks (so that
/// each loops over several tiles), the blocks in a scattered order, each
/// phase a loop over the block's threads, each buffer poisoned before a
/// copy into it. False, changing nothing, where outlineByteTileConversion
/// would not apply.
bool emulateByteTileConversionOnHost(ConvertStorageOp op,
                                     const ByteTileKernelOptions &options,
                                     int64_t persistentBlocks = 5);

} // namespace mlir::microscale

#endif
