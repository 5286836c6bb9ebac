//===- MatmulPlanning.h - Split-K planning the NVIDIA matmuls share -*- C++ -*-===//
//
// The decode-sized matmul kernels (the K-major mixed matmul and the
// Hopper-layout one) split K across the warps of a block; how many warps is
// chosen here from the chip model (Chip.h) and the kernel's shape.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_MATMULPLANNING_H
#define MICROSCALE_LIB_CONVERSION_NVVM_MATMULPLANNING_H

#include "microscale/Conversion/NVVM/Chip.h"

#include <cstdint>

namespace mlir::microscale::nvvm {

/// What the split-K model needs to know of a kernel.
struct SplitKProblem {
  /// K chunks of one column strip; a warp set takes a range of them.
  int64_t chunks = 1;
  /// Chunks a warp has loaded ahead at once: one memory latency covers
  /// that many chunks of its range.
  int64_t chunksInFlight = 1;
  /// Warps per warp set (side by side on columns).
  int64_t columnWarps = 1;
  /// Registers per thread (an estimate fitted to ptxas).
  int64_t registersPerThread = 0;
  /// Blocks of the grid.
  int64_t blocks = 1;
  /// Weight bytes the product reads (values and scales).
  double weightBytes = 0;
  /// When nonzero, `split * divisorStep` must divide `chunks` (kernels
  /// whose warp sets run in lock step).
  int64_t divisorStep = 0;
  /// The most warp sets to consider (0: `chunks`).
  int64_t maxSplit = 0;
};

/// The warp sets per block that split K, from a model of the time of a
/// decode-sized product in units of the memory latency L: each warp's
/// range takes about one L per `chunksInFlight` chunks and one more to
/// start; the blocks run in waves of what the SMs hold at once (by threads,
/// and registers by the estimate); and the whole weight cannot come faster
/// than the bandwidth, i.e. its bytes over the bytes in flight that cover
/// L at full bandwidth (Little's law on the chip model). The blocks an SM
/// holds are NVIDIAChip::residentBlocks: a lone block of 9 warps holds the
/// registers of 12 (the H200 sweep in docs/performance.md: 9 warps 1.8x
/// slower than 8 on 14336 x 4096), while several blocks fill the
/// schedulers' register files warp by warp. The fewest warps of the
/// cheapest time; any count, not a power of two (the warps' K ranges may
/// differ by one chunk).
int64_t chooseSplitK(const SplitKProblem &problem, const NVIDIAChip &chip,
                     int64_t smCount);

} // namespace mlir::microscale::nvvm

#endif
