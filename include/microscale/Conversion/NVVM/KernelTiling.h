//===- KernelTiling.h - Explicit tilings of the NVIDIA kernels --*- C++ -*-===//
//
// Each NVIDIA kernel family plans its own tiling from the chip model and the
// shape. Sweeps and tests may fix one instead: it travels on the op as the
// discardable dictionary attribute `microscale.tiling` (written by
// `microscale-nvvm-set-tiling`, or by hand), read and checked here, with
// diagnostics at the op.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_KERNELTILING_H
#define MICROSCALE_CONVERSION_NVVM_KERNELTILING_H

#include "microscale/Dialect/Microscale/Utils/ByteTileConversion.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::microscale {

/// The discardable attribute that carries an explicit tiling.
inline constexpr llvm::StringLiteral kTilingAttrName = "microscale.tiling";

/// How the threads of a per-unit kernel walk the destination's rows.
enum class Traversal {
  RowMajor,   // consecutive threads along a row
  ColumnMajor // consecutive threads down the rows (whole conversions only)
};

/// Which rows consecutive tiles of the staged Hopper dequantization follow.
enum class TileOrder { Output, Image };

/// The tiling of a convert_storage kernel.
struct ConversionTiling {
  /// The staged (shared-memory tile) kernel where it applies.
  bool staged = true;
  /// 8-bit elements (scales): the whole-axis byte tile kernel where it
  /// applies (ByteTileConversion.h), before the staged kernel.
  bool byteTiles = true;
  /// Byte tile kernel: word reads and byte permutes where a destination
  /// chunk's bytes lie in a few shared words (ByteTileGather).
  bool wordGather = true;
  /// Byte tile kernel: the copy-in may transpose the source chunks in
  /// groups of four rows (ByteTilePlan::transposedQuads).
  bool transposedCopies = false;
  /// Byte tile kernel: persistent blocks per SM (0: one block per tile),
  /// shared buffers per block (0: chosen) and whether the gather tables
  /// are read once per block (ByteTileKernelOptions).
  int64_t residentBlocks = 0;
  int64_t buffers = 0;
  bool hoistTables = true;
  /// Byte tile kernel: the tile size below which the planner prefers a
  /// larger group (planByteTileConversion's `minTileBytes`).
  int64_t minTileBytes = kByteTileMinBytes;
  /// Byte tile kernel: load runs shorter than this keep the planner
  /// searching (planByteTileConversion's `minRun`; 0: off).
  int64_t minRun = kByteTileMinRun;
  /// Staged kernel: tiles a block converts one after the other, their loads
  /// issued together (1, 2, 4 or 8).
  int64_t tilesPerBlock = 1;
  /// Per-unit kernel: threads per block, consecutive units per thread, and
  /// how threads walk the rows.
  int64_t blockSize = 256;
  int64_t unitsPerThread = 4;
  Traversal traversal = Traversal::RowMajor;
};

/// How dequantize_storage from the Hopper layouts is lowered.
struct HopperDequantizeOptions {
  /// Stage each block's tile in shared memory and store whole output rows
  /// with 16-byte stores (true), or one thread per word storing its eight
  /// bf16 values one by one (false).
  bool staged = true;
  /// Staged kernel only: tiles per block (a power of two; their loads are
  /// issued together), and whether consecutive tiles follow the output's
  /// rows (true) or the Hopper image's (false).
  int64_t tilesPerBlock = 4;
  bool outputOrder = true;
  /// Per-word kernel only: threads per block, and whether consecutive
  /// threads take consecutive image rows (column-major) or words.
  int64_t blockSize = 256;
  bool columnMajor = false;
  /// Fold the 2^126 bias into the scale for words whose codes are <= 128.
  bool foldScaleBias = true;
};

/// How the wgmma matmul copies its activations into shared memory: TMA (a
/// tensor map the host code builds, dynamic shared memory) or each
/// thread's cp.async (static shared memory; no tensor map, for host code
/// that cannot call MLIR's CUDA runtime to build one).
enum class ActivationCopies { Chosen, TMA, CpAsync };

/// Whether the wgmma matmul decodes the next chunk's weight while this
/// chunk's wgmmas run (two sets of A fragments live) or after waiting for
/// them.
enum class DecodeOverlap { Chosen, On, Off };

/// Where the wgmma matmul queues the weight's words ahead of their decode:
/// in registers (each thread's loads a few chunks ahead) or in shared
/// memory (each thread's cp.async into the activations' stages, in the
/// same copy groups).
enum class WeightCopies { Chosen, Registers, Shared };

/// The tiling of the mixed_matmul kernel; 0 everywhere is chosen from the
/// shape and the chip.
struct MixedMatmulOptions {
  int64_t splitK = 0;           // warps per block splitting K
  int64_t unroll = 0;           // K chunks per software-pipeline stage
  int64_t warpColumns = 0;      // weight columns per warp: 16 or 32
  int64_t warpRows = 0;         // activation rows per warp: 8 to 64
  int64_t columnWarps = 0;      // warps of a block side by side on columns
  int64_t activationStages = 0; // 1: direct loads; 2-4: ring depth
  int64_t weightStages = 0;     // 1: register prefetch; 2-8: ring depth
  int64_t chunkK = 0;           // K per chunk: 64 or 128
  int64_t maxRegisters = 0;     // nvvm.maxnreg (0: the backend chooses)
  /// wgmma kernel: how the activations reach shared memory.
  ActivationCopies activationCopies = ActivationCopies::Chosen;
  /// wgmma kernel: the next chunk's decode under this chunk's wgmmas.
  DecodeOverlap decodeOverlap = DecodeOverlap::Chosen;
  /// wgmma kernel: where the weight's words wait for their decode.
  WeightCopies weightCopies = WeightCopies::Chosen;
  /// wgmma kernel: blocks of a thread block cluster that split K, their
  /// sums added in rank order through distributed shared memory (1-8).
  int64_t clusterSplitK = 0;

  /// Whether any key above is set (else every choice is the planner's).
  bool hasTiling() const {
    return splitK || unroll || warpColumns || warpRows || columnWarps ||
           activationStages || weightStages || chunkK || maxRegisters ||
           clusterSplitK || activationCopies != ActivationCopies::Chosen ||
           decodeOverlap != DecodeOverlap::Chosen ||
           weightCopies != WeightCopies::Chosen;
  }

  /// wgmma kernel with the weight's words in shared memory by cp.async:
  /// the chunk loop in groups of its stages, each copy's shared address
  /// the thread's own plus an immediate (true), or rolled (false); unset:
  /// groups on the dense form, rolled on the ragged one (docs/
  /// performance.md, "Chunk groups timed"). Code generation only, not a
  /// tiling (hasTiling leaves the plan to the planner).
  std::optional<bool> chunkGroups;
};

/// The explicit tiling on `op`, or the defaults where it has none; failure,
/// with a diagnostic at `op`, for unknown keys, wrong types and values out of
/// range.
FailureOr<ConversionTiling> getConversionTiling(Operation *op);
FailureOr<HopperDequantizeOptions> getDequantizeTiling(Operation *op);
FailureOr<MixedMatmulOptions> getMatmulTiling(Operation *op);

/// The tiling of the sm_100a tcgen05 scaled_matmul kernel.
struct ScaledMatmulTiling {
  /// The operand tiles' 16-byte units by `cp.async.bulk` (one per lane,
  /// each issued through an elect loop: 32 per warp) instead of 16-byte
  /// loads and shared stores. Off by default: the bulk copies' SASS per K
  /// step is 1.5-1.9x the loads' (docs/blackwell.md); kept for the day a
  /// Blackwell GPU measures both.
  bool bulkCopies = false;
  /// The operand tiles of K-major rows (not Triton's boxes; the FP4 kinds)
  /// by TMA: one thread's cp.async.bulk.tensor of a 3-D box per tile, on a
  /// tensor map the host code builds (nvgpu.tma.create.descriptor).
  bool tensorMaps = true;
};

/// The scaled_matmul kernel's tiling on `op`, or the defaults.
FailureOr<ScaledMatmulTiling> getScaledMatmulTiling(Operation *op);

} // namespace mlir::microscale

#endif
