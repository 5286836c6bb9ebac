//===- HopperWgmmaMatmul.h - bf16 x MXFP4 wgmma, Hopper layout -*- C++ -*-===//
//
// The Hopper-layout matmul above decode sizes (HopperWgmmaMatmulKernel.cpp),
// which outlineHopperLayoutMatmul and emulateHopperLayoutMatmulOnHost
// (HopperLayoutMatmul.h) take for more than 64 activation rows, after their
// checks of the operands.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWGMMAMATMUL_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWGMMAMATMUL_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::microscale {

/// The dense form's token tile above a few hundred rows (K not split), by
/// the work of the busiest SM: ceil(blocks / SMs) blocks of T x 64 W
/// outputs each (what every SM does at once; other blocks' work fills its
/// waits). Of the tile planned so far (`tokens` tokens, `warpgroups`
/// warpgroups), the same tokens with one warpgroup, and `wide` tokens (at
/// most 256) with one: the wide tile where that work is no more and every
/// SM gets at least 4 of its blocks (with fewer, a block's start and end
/// are not hidden by others' and they measured 13-55% slower); else one
/// warpgroup where its busiest SM has less to do than with two (on 2880^2
/// at M = 1000: 184 blocks of two warpgroups, 2 on some SMs, against 360 of
/// one, 3 on some). Measured in docs/performance.md, "Tiles by the busiest
/// SM's work". Returns 0 (keep), 1 (one warpgroup) or 2 (wide).
///
/// One rule for both callers: `Ops` computes on `Int`, plain integers
/// where the planner knows M at compile time, host IR values where the
/// host code chooses between compiled tiles from M at run time.
template <typename Ops, typename Int>
Int chooseTileByBusiestSM(Ops &ops, Int m, int64_t n, int64_t smCount,
                          int64_t tokens, int64_t wide, Int warpgroups) {
  auto work = [&](int64_t t, int64_t w) {
    Int blocks = ops.mul(ops.constant((n + 64 * w - 1) / (64 * w)),
                         ops.ceilDiv(m, t));
    Int rounds = ops.ceilDiv(blocks, smCount);
    return std::make_pair(rounds, ops.mul(rounds, ops.constant(t * w)));
  };
  Int two = ops.constant(2);
  Int planned = ops.select(ops.eq(warpgroups, two), work(tokens, 2).second,
                           work(tokens, 1).second);
  auto [wideRounds, wideWork] = work(wide, 1);
  Int takeWide = ops.both(ops.le(ops.constant(4), wideRounds),
                          ops.le(wideWork, planned));
  if (wide <= tokens)
    takeWide = ops.falseValue();
  Int takeOne = ops.both(ops.eq(warpgroups, two),
                         ops.lt(work(tokens, 1).second,
                                work(tokens, 2).second));
  return ops.select(takeWide, two,
                    ops.select(takeOne, ops.constant(1), ops.constant(0)));
}

/// chooseTileByBusiestSM on plain integers.
struct ConstantTileRuleOps {
  int64_t constant(int64_t v) { return v; }
  int64_t falseValue() { return 0; }
  int64_t mul(int64_t a, int64_t b) { return a * b; }
  int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
  int64_t eq(int64_t a, int64_t b) { return a == b; }
  int64_t le(int64_t a, int64_t b) { return a <= b; }
  int64_t lt(int64_t a, int64_t b) { return a < b; }
  int64_t both(int64_t a, int64_t b) { return a && b; }
  int64_t select(int64_t c, int64_t a, int64_t b) { return c ? a : b; }
};

/// Whether `blocks` blocks give some of `smCount` SMs fewer than `perSM`:
/// the planner's test for splitting K, which the host code of rows known
/// at run time applies to its full tiles (`Ops` as for
/// chooseTileByBusiestSM).
template <typename Ops, typename Int>
Int fewerBlocksPerSMThan(Ops &ops, Int blocks, int64_t perSM,
                         int64_t smCount) {
  return ops.lt(blocks, ops.constant(perSM * smCount));
}

/// Outlines `op` (checked by the Hopper-layout matmul) into the wgmma
/// kernel of `kernels` and replaces it with its launch; failure, with a
/// diagnostic, for a chip without wgmma or a tiling it cannot take.
LogicalResult outlineHopperWgmmaMatmul(MixedMatmulStorageOp op,
                                       gpu::GPUModuleOp kernels,
                                       unsigned index,
                                       const nvvm::NVIDIAChip &chip,
                                       int64_t smCount,
                                       const MixedMatmulOptions &options);

/// The wgmma kernel planned for `planRows` rows (the rows themselves, or
/// typical rows of a variant for rows known at run time), with the launch
/// facts the host code needs: the grid is columnBlocks x ceil(rows /
/// tokens) x split blocks of `threads`.
struct HopperWgmmaKernel {
  gpu::GPUFuncOp function;
  int64_t columnBlocks = 0, tokens = 0, threads = 0;
  /// Blocks of a cluster splitting K: the grid's z (1: no cluster).
  int64_t split = 1;
  /// With TMA copies: the rows of the activations' tensor-map box (its
  /// tokens per tile) and the dynamic shared memory the launch asks for;
  /// 0 with cp.async copies.
  int64_t tensorMapRows = 0, dynamicSharedBytes = 0;

  /// Its launch at `b` over `tokenBlocks` token tiles (ceil(rows / tokens))
  /// on `operands` (getHopperLayoutKernelArguments); with TMA copies the
  /// tensor map of the activations `lhs` (the op's rank-2 lhs) is built
  /// first and passed last.
  void launch(OpBuilder &b, Location loc, Value tokenBlocks,
              ValueRange operands, Value lhs) const;
};
FailureOr<HopperWgmmaKernel>
buildHopperWgmmaKernel(MixedMatmulStorageOp op, gpu::GPUModuleOp kernels,
                       StringRef name, const nvvm::NVIDIAChip &chip,
                       int64_t smCount, const MixedMatmulOptions &options,
                       int64_t planRows, ArrayRef<Type> argTypes);

/// Whether `op`'s rows are known at run time only (lhs or out): its
/// kernels are then variants planned for typical rows of their ranges.
bool hasDynamicRows(MixedMatmulStorageOp op);

/// The argument types of both Hopper-layout kernels (the rows last where
/// they are known at run time only).
SmallVector<Type> getHopperLayoutKernelArguments(MixedMatmulStorageOp op,
                                                 bool dynamicRows);

/// Tokens per tile of as few tiles of at most `maxTokens` as cover `rows`,
/// evened out (a multiple of 8: the wgmma's N): the planner's token tile,
/// and what the host code of rows known at run time evens M to.
inline int64_t evenTokenTiles(int64_t rows, int64_t maxTokens) {
  return llvm::alignTo(
      llvm::divideCeil(rows, llvm::divideCeil(rows, maxTokens)), 8);
}

/// K split over the blocks of a cluster: each block takes at least this
/// many of the 64-K chunks, and the planner splits while the blocks of one
/// warpgroup would give some SM fewer than two (three on tiles of at most
/// kDecodeSizeTokens): fewerBlocksPerSMThan.
constexpr int64_t kMinClusterSplitChunks = 8;
/// Dense tiles of up to 64 tokens whose split blocks still fit one wave
/// (at most one per SM) take down to this many.
constexpr int64_t kFewBlocksMinClusterSplitChunks = 4;
constexpr int64_t kDecodeSizeTokens = 16;
/// Dense tiles above 64 tokens split two ways at most, up to this many
/// tokens four ways.
constexpr int64_t kFourWaySplitTokens = 72;

/// The tile the wgmma kernel is planned with for `planRows` rows and
/// `options`, or std::nullopt where it does not plan (silently).
struct WgmmaTile {
  int64_t tokens = 0, warpgroups = 0, split = 1;
};
std::optional<WgmmaTile> planHopperWgmmaTile(MixedMatmulStorageOp op,
                                             const nvvm::NVIDIAChip &chip,
                                             int64_t smCount,
                                             const MixedMatmulOptions &options,
                                             int64_t planRows);

/// Whether the wgmma kernel plans for `planRows` rows with `options`.
bool canPlanHopperWgmma(MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip,
                        int64_t smCount, const MixedMatmulOptions &options,
                        int64_t planRows);

/// Emits at `b` the wgmma kernel's emulation (planned for `planRows`) on
/// `args` (the kernel's operands; with the rows last where they are known
/// at run time only); false, emitting nothing, where it would not apply.
bool emitHopperWgmmaEmulation(OpBuilder &b, MixedMatmulStorageOp op,
                              const nvvm::NVIDIAChip &chip, int64_t smCount,
                              const MixedMatmulOptions &options,
                              int64_t planRows, ArrayRef<Value> args);

/// The wgmma kernel's own code run on the host (per thread its copies into
/// the swizzled stages, per lane its weight words and decode, each wgmma
/// from the PTX ISA's fragment tables and the descriptor's fields, the
/// epilogue); false, changing nothing, where it would not apply.
/// Whether the ragged (experts) form takes the wgmma kernel: where the chip
/// has wgmma and no tiling key of the decode kernel (split_k, unroll,
/// chunk_k) asks for that one.
bool raggedTakesWgmma(const nvvm::NVIDIAChip &chip,
                      const MixedMatmulOptions &options);

/// The ragged form on the wgmma kernel: grid (column blocks, experts,
/// cluster split), each block walking its expert's rows in token tiles,
/// rows through the gather (cp.async per row) and the scatter.
LogicalResult outlineHopperWgmmaRagged(MixedMatmulStorageOp op,
                                       gpu::GPUModuleOp kernels,
                                       unsigned index,
                                       const nvvm::NVIDIAChip &chip,
                                       int64_t smCount,
                                       const MixedMatmulOptions &options);

/// Its host emulation (as emulateHopperWgmmaMatmulOnHost).
bool emulateHopperWgmmaRaggedOnHost(MixedMatmulStorageOp op,
                                    const nvvm::NVIDIAChip &chip,
                                    int64_t smCount,
                                    const MixedMatmulOptions &options);

bool emulateHopperWgmmaMatmulOnHost(MixedMatmulStorageOp op,
                                    const nvvm::NVIDIAChip &chip,
                                    int64_t smCount,
                                    const MixedMatmulOptions &options);

} // namespace mlir::microscale

#endif
