//===- ByteTileConversionKernel.h - The byte tile kernel's grid -*- C++ -*-===//
//
// The NVIDIA kernel of a ByteTilePlan (Utils/ByteTileConversion.h) runs a
// persistent grid: P blocks, a few per SM, each converting the full tiles
// block, block + P, ... with the next tile's source copied into shared
// memory (cp.async) while this one's destination is gathered, and one more
// block per batch for its edge tile where the long dim is not a multiple
// of the tile. A block reads its gather tables once for all its tiles.
// Scale tensors are small (gpt-oss's are 8-16 MiB): with one block per
// tile, the blocks loaded, gathered and stored in lockstep, and the last
// wave ran with the SMs half empty.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_BYTETILECONVERSIONKERNEL_H
#define MICROSCALE_CONVERSION_NVVM_BYTETILECONVERSIONKERNEL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <cstdint>

namespace mlir::microscale {

struct ByteTilePlan;

/// Choices of the byte tile kernel (0: chosen from the chip model).
struct ByteTileKernelOptions {
  /// Threads per block (a multiple of 32).
  int64_t threads = 256;
  /// Word reads and byte permutes where a destination chunk's bytes lie in
  /// a few shared words (ByteTileGather); false: byte reads.
  bool wordGather = true;
  /// Persistent blocks per SM.
  int64_t blocksPerSM = 0;
  /// Shared buffers per block: 2 copies the next tile in while this one is
  /// gathered, 1 after it. Two are taken only where they fit in a block's
  /// static shared memory.
  int64_t buffers = 0;
  /// SMs the grid is planned for (0: the chip model's default).
  int64_t smCount = 0;
  /// Read a persistent block's gather tables once, before its first tile
  /// (registers), rather than for each tile (cached loads).
  bool hoistTables = true;
};

/// How the kernel's blocks share a plan's tiles.
struct ByteTileGrid {
  /// Tiles of kind 0 (the full ones): `fullGroups` per batch, tile t at
  /// batch t / fullGroups, group t % fullGroups.
  int64_t fullGroups = 0, fullTiles = 0;
  /// Blocks looping over the full tiles, then one block per batch's edge
  /// tile (kind 1), if the plan has one.
  int64_t persistentBlocks = 0, edgeBlocks = 0;
  /// Shared buffers per block and the bytes of each.
  int64_t buffers = 1, bufferBytes = 0;
  /// Registers per thread that keep the persistent blocks resident
  /// together (nvvm.maxnreg), and whether the gather tables are read once.
  int64_t maxRegisters = 0;
  bool hoistTables = true;

  int64_t getNumBlocks() const { return persistentBlocks + edgeBlocks; }
};

/// The grid for `plan` on `chip`: enough persistent blocks per SM that one
/// tile in flight per block covers the memory latency at full bandwidth
/// (Chip.h's bytes in flight), within the SM's threads and shared memory.
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
