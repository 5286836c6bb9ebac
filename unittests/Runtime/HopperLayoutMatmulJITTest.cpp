//===- HopperLayoutMatmulJITTest.cpp - The Hopper-layout matmul on host ---===//
//
// The Hopper-layout decode kernel of mixed_matmul_storage
// (HopperLayoutMatmulKernel.cpp: the weight in
// #microscale.hopper_value<mx_axis = -2, mma_version = 3> with
// #microscale.hopper_scale) run on the host by emulateHopperLayoutMatmulOnHost:
// the kernel's own per-lane code (which image word, scale word and
// activation words each lane of each warp reads for each chunk, the decode
// as the PTX's integer operations and rounded bf16 multiplies, the warp
// vote between the folded and the exact scale path), each mma.sync
// m16n8k16 taken element by element from the lane and register the PTX
// ISA's fragment tables name, and the split warps' sums added in the
// kernel's order and stored by its epilogue. A misplaced word, slot, scale
// byte or fragment changes the result.
//
// Random FP4 codes (never zero) and E8M0 scale codes below 128 in some K
// blocks and across 128 in others (so both decode paths run), with the
// subnormal-producing codes 0..2,
// random bf16 activations, stored into the Hopper layouts by the reference
// library; against a float64 product of the reference's dequantized weight.
// The tolerance: the mma's internal summation order is not specified; the
// emulation adds each step's 16 exact products in K order in f32.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Conversion/NVVM/HopperLayoutMatmul.h"
#include "microscale/Reference/FloatFormats.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;
using ::microscale::testing::RandomWeight;
using ::microscale::testing::randomWeight;

namespace {

/// A Hopper-layout MXFP4 weight type: `shape` ("KxN" or "ExKxN") blocked
/// along `axis`, its scales in hopper_scale of `scaleWarps` warps.
std::string hopperWeight(const std::string &shape, int axis,
                         int64_t scaleWarps) {
  return "!microscale.qtensor<" + shape + ", mxfp4, axis = " +
         std::to_string(axis) +
         ", values = #microscale.hopper_value<mx_axis = -2, mma_version = "
         "3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = " +
         std::to_string(scaleWarps) + ">>";
}

/// `text` compiled for the host with its mixed_matmul_storage emulated by
/// emulateHopperLayoutMatmulOnHost for sm_90a (planned for `smCount` SMs,
/// 0: the chip's, with `tiling`); null, the reason in `error`, where it
/// does not compile or the op was not emulated.
std::unique_ptr<ExecutionEngine>
compileEmulatedOnHost(MLIRContext &context, const std::string &text,
                      std::string &error, int64_t smCount = 0,
                      const MixedMatmulOptions &tiling = {}) {
  std::optional<nvvm::NVIDIAChip> chip = nvvm::NVIDIAChip::lookup("sm_90a");
  if (!chip) {
    error = "no chip model for sm_90a";
    return nullptr;
  }
  bool emulated = false;
  auto engine = ::microscale::testing::compileForHost(
      context, text, error, [&](ModuleOp module) {
        module.walk([&](MixedMatmulStorageOp op) {
          emulated =
              emulateHopperLayoutMatmulOnHost(op, *chip, smCount, tiling);
        });
      });
  if (engine && !emulated) {
    error = "emulateHopperLayoutMatmulOnHost did not take the op";
    return nullptr;
  }
  return engine;
}

struct Case {
  int64_t m, k, n;
  int64_t scaleWarps;       // num_warps of the hopper_scale layout
  MixedMatmulOptions tiling; // split_k / warp_columns asked for (0: chosen)
  int64_t smCount;          // the part planned for (0: the chip's)
  bool dynamicRows = false; // memref<?xKxbf16>: the variant chosen at run time
  // With dynamicRows, lhs static (memref<MxKxbf16>) beside the dynamic out:
  // the kernels still take its rows as the unbounded flat array.
  bool staticLhs = false;
};

class HopperLayoutMatmulOnHost : public ::testing::TestWithParam<Case> {};

TEST_P(HopperLayoutMatmulOnHost, MatchesTheFloat64Product) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const std::string weight = hopperWeight(
      std::to_string(c.k) + "x" + std::to_string(c.n), 0, c.scaleWarps);
  auto type = dyn_cast_or_null<QTensorType>(parseType(weight, &context));
  ASSERT_TRUE(type) << weight;
  const std::string rows = c.dynamicRows ? "?" : std::to_string(c.m);
  const std::string lhs = "memref<" +
                          (c.staticLhs ? std::to_string(c.m) : rows) + "x" +
                          std::to_string(c.k) + "xbf16>";
  const std::string out =
      "memref<" + rows + "x" + std::to_string(c.n) + "xf32>";
  std::string text =
      ::microscale::testing::mixedMatmulFunction(lhs, weight, out);
  std::string compileError;
  auto engine = compileEmulatedOnHost(context, text, compileError, c.smCount,
                                      c.tiling);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(static_cast<unsigned>(c.m * 131 + c.k * 7 + c.n));
  // Codes never all zero. Every third K block has scale codes up to 135
  // (its chunks take the exact path), the others below 128 (the folded
  // one), a tenth of them the subnormal-producing 0..2.
  RandomWeight random = randomWeight(
      type, 0, rng, [&](size_t) { return static_cast<uint8_t>(1 + rng() % 15); },
      [&](size_t i) {
        return static_cast<uint8_t>(
            (i / c.n) % 3 == 2
                ? 112 + rng() % 24
                : (rng() % 10 == 0 ? rng() % 3 : 112 + rng() % 16));
      });
  const ref::QuantizedTensor &w = random.tensor;
  std::vector<uint8_t> &values = random.values, &scales = random.scales;
  std::vector<uint16_t> a =
      ::microscale::testing::randomActivations(c.m * c.k, rng);
  std::vector<float> got(c.m * c.n, std::nanf(""));
  llvm::Error error = ::microscale::testing::invokeMixedMatmul(
      *engine, c.m, c.k, c.n, a.data(), values, scales, 1.0f, got.data());
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  ::microscale::testing::expectMixedMatmulProduct(
      c.m, c.k, c.n, a, ref::dequantize(w, ref::E8M0Edges::OCP), got);
}

MixedMatmulOptions tiling(int64_t splitK, int64_t warpColumns = 0) {
  MixedMatmulOptions options;
  options.splitK = splitK;
  options.warpColumns = warpColumns;
  return options;
}

/// The wgmma kernel's tiling (above 64 rows): tokens per tile, warps per
/// block, columns per warp, stages.
MixedMatmulOptions wgmmaTiling(int64_t tokens, int64_t warps,
                               int64_t warpColumns, int64_t stages,
                               ActivationCopies copies =
                                   ActivationCopies::Chosen) {
  MixedMatmulOptions options;
  options.warpRows = tokens;
  options.columnWarps = warps;
  options.warpColumns = warpColumns;
  options.activationStages = stages;
  options.activationCopies = copies;
  return options;
}

/// `options` with K split over `blocks` blocks of a cluster (the wgmma
/// kernel).
MixedMatmulOptions clusterSplit(MixedMatmulOptions options, int64_t blocks) {
  options.clusterSplitK = blocks;
  return options;
}

/// `options` with the weight's words copied into shared memory with the
/// activations (the wgmma kernel: activations by cp.async, each chunk
/// decoded after the previous one's wgmmas).
MixedMatmulOptions sharedWeights(MixedMatmulOptions options) {
  options.weightCopies = WeightCopies::Shared;
  options.activationCopies = ActivationCopies::CpAsync;
  options.decodeOverlap = DecodeOverlap::Off;
  return options;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, HopperLayoutMatmulOnHost,
    ::testing::Values(
        // One row, one chunk, one tile.
        Case{1, 64, 16, 4, {}, 0},
        // One row of ten chunks planned for 2 SMs: light warps (one
        // 16-column tile and one chunk ahead each), 16 blocks of 3 warps
        // with K ranges of 3, 3 and 4 chunks.
        Case{1, 640, 256, 4, {}, 2},
        // K a multiple of 32 but not 64 (a half last chunk), N not a
        // multiple of 16 (a partial tile: the image's padding), M not a
        // multiple of 8; the scale layout's num_warps 8.
        Case{5, 160, 40, 8, {}, 0},
        // Ten chunks over three warps (uneven ranges: 3, 3, 4), two
        // column groups per warp, two row tiles.
        Case{16, 640, 64, 4, tiling(3, 32), 0},
        // Many row tiles (M = 33: 5; the decode kernel by its split of
        // K, else the wgmma kernel's), four column groups, 48 columns (the
        // fourth group past N), a half chunk; scales num_warps 2.
        Case{33, 96, 48, 2, tiling(1, 64), 0},
        // 64 rows (8 row tiles, the decode kernel by its split of K); the
        // scale layout's second 16W-column
        // half (N > 16 W) and its rows past 2W tiles.
        Case{64, 128, 160, 2, tiling(2), 0},
        // The planner's split on a small part (4 SMs): many warps.
        Case{2, 1024, 48, 4, {}, 4},
        // Two column groups chosen by the planner (a part of 2 SMs), the
        // activations staged, a half last chunk.
        Case{3, 224, 96, 4, {}, 2},
        // Staged light warps two chunks ahead: 47 chunks (the last a half)
        // over the 4 blocks of one SM, 5 warps one chunk ahead would have
        // ranges of 10, so 4 warps two ahead take ranges of 11 and 12.
        Case{4, 2976, 128, 4, {}, 1},
        // 8 rows: the decode kernel where its plan is light warps (the
        // same four blocks on one SM), the wgmma kernel where it is not
        // (one 40-column weight's two blocks on 132 SMs) or where its
        // blocks fill too little of their waves (four on three SMs).
        Case{8, 2976, 128, 4, {}, 1}, Case{8, 160, 40, 4, {}, 0},
        Case{8, 2976, 128, 4, {}, 3},
        // 9-16 rows, the wgmma kernel by default: one 16-token tile (4
        // past M), a half last chunk, 40 columns (a partial 64-column
        // tile), K split over a cluster on a part of 4 SMs.
        Case{12, 160, 40, 4, {}, 0}, Case{12, 1024, 40, 4, {}, 4},
        // Above 64 rows, the wgmma kernel: one 72-token tile, a half last
        // chunk (zero-filled activations, zeroed weight words), 80 columns
        // (the image's padding past N), one warpgroup (few blocks).
        Case{72, 160, 80, 4, {}, 0},
        // M = 100: one tile of 104 tokens (4 past M); scales num_warps 8,
        // more chunks than stages (the ring wraps).
        Case{100, 384, 48, 8, {}, 0},
        // Three 64-token tiles (the last has 2 tokens), two warpgroups of
        // two 64-column tiles (256 columns: past N = 200), 2 stages, 5
        // chunks; scales num_warps 2.
        Case{130, 320, 200, 2, wgmmaTiling(64, 8, 32, 2), 0},
        // Three warpgroups (192 columns, the last block's tiles clamped
        // to the image), 24-token tiles, 4 stages.
        Case{66, 256, 400, 4, wgmmaTiling(24, 12, 16, 4), 0},
        // The activations by cp.async (each thread's 16-byte copies,
        // swizzled by the kernel's own arithmetic), 3 stages, a half last
        // chunk; and by TMA on a small tile (the planner takes TMA from
        // 64 tokens up).
        Case{90, 224, 120, 4,
             wgmmaTiling(48, 4, 16, 3, ActivationCopies::CpAsync), 0},
        Case{90, 224, 120, 4,
             wgmmaTiling(48, 4, 16, 3, ActivationCopies::TMA), 0},
        // The weight's words copied into the stages with the activations
        // (weight_copies = "shared"): 3 stages over 4 chunks (the ring
        // wraps), a half last chunk, N = 120 (a partial 64-column tile);
        // two warpgroups of two 64-column tiles (one block past N = 200);
        // K split over a cluster of 3 (the sums left in the activations'
        // stages, below the weights').
        Case{90, 224, 120, 4,
             sharedWeights(wgmmaTiling(48, 4, 16, 3)), 0},
        Case{130, 320, 200, 2, sharedWeights(wgmmaTiling(64, 8, 32, 2)), 0},
        Case{72, 608, 80, 4,
             sharedWeights(clusterSplit(wgmmaTiling(72, 4, 16, 0), 3)), 0},
        // K split over the blocks of a cluster, their sums added in rank
        // order: 10 chunks over 3 (3, 3, 4: the last with the half
        // chunk), cp.async; 7 chunks over 2 with TMA copies, fewer chunks
        // per block than stages.
        Case{72, 608, 80, 4, clusterSplit({}, 3), 0},
        Case{90, 416, 120, 4,
             clusterSplit(wgmmaTiling(48, 4, 16, 4, ActivationCopies::TMA),
                          2),
             0},
        // The planner's own split on a part of 8 SMs (16 chunks: up to 4
        // blocks of at least 4 chunks).
        Case{80, 1024, 64, 4, {}, 8},
        // The planner's wide tiles on a part of 2 SMs: 7 column tiles x 2
        // token tiles of 256 (the last of 244 tokens), one warpgroup, 7
        // blocks per SM; a half last chunk.
        Case{500, 160, 400, 4, {}, 2},
        // One warpgroup of 128 tokens on a part of 5 SMs (14 blocks: 3 on
        // the busiest SM, against 2 of twice the work with two).
        Case{256, 224, 400, 2, {}, 5},
        // Rows known at run time: one compile of six variants (the decode
        // kernel for up to 1 and 7 rows, 8 where its plan is light warps
        // that fill their waves, the wgmma kernel for up to 16, 64, 256
        // and beyond), the host code's switch picking by M; 8 rows of a light plan (one SM), of
        // one that is not, and of a light plan short of its waves.
        Case{1, 160, 40, 4, {}, 0, true}, Case{7, 160, 40, 4, {}, 0, true},
        Case{8, 2976, 128, 4, {}, 1, true}, Case{8, 160, 40, 4, {}, 0, true},
        Case{8, 2976, 128, 4, {}, 3, true},
        Case{16, 96, 48, 8, {}, 0, true}, Case{11, 160, 40, 4, {}, 0, true},
        Case{50, 224, 72, 4, {}, 0, true},
        Case{100, 160, 80, 4, {}, 0, true},
        Case{50, 1024, 72, 4, {}, 8, true},
        Case{300, 96, 48, 2, {}, 0, true},
        // Above 256 rows known at run time, the host code's choice between
        // the variant's kernels (each checked to be taken with the same
        // sm-count by folding M as the lit test mixed-matmul-hopper-
        // dynamic-tiles does): where M's tiles stay full, by the busiest
        // SM's work, one warpgroup of 128 tokens (380 rows, 2 SMs), 256-
        // token tiles (500 rows, the last tile of 244), two warpgroups
        // (380 rows of 200 columns, 3 SMs) or one (7 SMs); where they even
        // out below full, the rungs: 120 tokens (350 rows: three tiles of
        // 117) and 112 (300 rows: three of 104; the last of 76).
        Case{380, 160, 400, 4, {}, 2, true},
        Case{500, 160, 400, 4, {}, 2, true},
        Case{380, 160, 200, 4, {}, 3, true},
        Case{380, 160, 200, 4, {}, 7, true},
        Case{350, 160, 200, 4, {}, 3, true},
        Case{300, 160, 200, 4, {}, 3, true},
        // The split sibling of the full tiles: 380 rows of 200 columns on
        // 7 SMs again, with K long enough to split (1056: 17 chunks, the
        // last a half), where one warpgroup's 12 blocks would give some SM
        // fewer than two: 128-token tiles, K split in two.
        Case{380, 1056, 200, 4, {}, 7, true},
        // The rungs below 256 rows, all on 2 SMs: 40 and 55 rows on the
        // 48- and 56-token tiles of the 17-64 variant; 130 rows on two
        // 80-token tiles of the 65-256 variant (the last of 50), 230 on
        // two of 120 (the last of 110).
        Case{40, 160, 400, 4, {}, 2, true},
        Case{55, 160, 400, 4, {}, 2, true},
        Case{130, 160, 400, 4, {}, 2, true},
        Case{230, 160, 400, 4, {}, 2, true},
        // Lhs rows static, out rows known at run time only: the decode
        // and wgmma variants.
        Case{7, 160, 40, 4, {}, 0, true, true},
        Case{100, 160, 80, 4, {}, 0, true, true}));

} // namespace

namespace {

/// The ragged (experts) form with the weight in the Hopper layouts, run on
/// the host by emulateHopperLayoutMatmulOnHost, on each kernel (the wgmma
/// kernel, grid y a slot of the tile map, by default; the decode kernel,
/// grid z the expert, with split_k, each block walking its expert's rows
/// in groups): slices by offsets and counts (one of 11 rows, more than a
/// group or tile; an empty one; one running past the ragged rows; a
/// negative count), a gather with an
/// out-of-range index and a scatter, K with a half last chunk, N past a
/// column tile; against a float64 reference that skips exactly the rows the
/// op documents as skipped; rows of `out` nothing writes keep their NaN.
struct RaggedCase {
  MixedMatmulOptions tiling;
  bool dynamicRows = false; // lhs, out, gather and scatter rows as `?`
};

class HopperLayoutMatmulOnHostRagged
    : public ::testing::TestWithParam<RaggedCase> {};

TEST_P(HopperLayoutMatmulOnHostRagged, ExpertsGatherScatter) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const int64_t experts = 5, k = 160, n = 40, tokens = 9, rows = 20,
                outRows = 24;
  const std::string weight = hopperWeight("5x160x40", 1, 4);
  auto type = dyn_cast_or_null<QTensorType>(parseType(weight, &context));
  ASSERT_TRUE(type);
  const bool dynamicRows = GetParam().dynamicRows;
  const std::string lhs = dynamicRows ? "memref<?x160xbf16>"
                                      : "memref<9x160xbf16>",
                    out = dynamicRows ? "memref<?x40xf32>"
                                      : "memref<24x40xf32>";
  const std::string e = "memref<5xi32>",
                    r = dynamicRows ? "memref<?xi32>" : "memref<20xi32>";
  std::string text =
      ::microscale::testing::raggedMatmulFunction(lhs, weight, out, e, r);
  std::string compileError;
  auto engine =
      compileEmulatedOnHost(context, text, compileError, 0, GetParam().tiling);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(23);
  RandomWeight random = randomWeight(
      type, 1, rng, [&](size_t) { return static_cast<uint8_t>(1 + rng() % 15); },
      [&](size_t) {
        return static_cast<uint8_t>(rng() % 7 == 0 ? 120 + rng() % 16
                                                   : 112 + rng() % 16);
      });
  const ref::QuantizedTensor &w = random.tensor;
  std::vector<uint8_t> &values = random.values, &scales = random.scales;
  std::vector<uint16_t> a =
      ::microscale::testing::randomActivations(tokens * k, rng);

  // Expert 0: rows 0-2; expert 1: rows 17-20, of which 20 is past the 20
  // ragged rows; expert 2: rows 3-13 (11 rows: two groups of the plan's 8;
  // row 5's gather index is out of range); expert 3: empty; expert 4: a
  // negative count (last, so that a lowering that took it as a large count
  // would overwrite rows).
  std::vector<int32_t> offsets = {0, 17, 3, 14, 0},
                       counts = {3, 4, 11, 0, -3};
  std::vector<int32_t> gather = {5, 0, 2, 1, 1, 99, 4, 3, 0, 2,
                                 8, 7, 6, 5, 4, 3, 2, 1, 0, 8};
  std::vector<int32_t> scatter = {23, 0, 2, 4, 6, 8, 10, 1, 3, 5,
                                  7, 9, 11, 12, 13, 14, 15, 16, 17, 18};
  std::vector<float> got(outRows * n, std::nanf(""));
  ::microscale::testing::RaggedMatmulCall call{
      experts, k,      n,      tokens, rows,   outRows, a,
      values,  scales, got,    offsets, counts, gather, scatter};
  llvm::Error error = ::microscale::testing::invokeRaggedMatmul(*engine, call);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  // Rows 0-2, 3-4 and 6-13, 17-19: 16 ragged rows written.
  EXPECT_EQ(::microscale::testing::expectRaggedProduct(
                call, ref::dequantize(w, ref::E8M0Edges::OCP)),
            16u);
  if (!dynamicRows)
    return;
  // No ragged rows at run time: the host code launches nothing (a grid of
  // 0 blocks), and out keeps its NaN.
  std::vector<float> untouched(outRows * n, std::nanf(""));
  ::microscale::testing::RaggedMatmulCall none{
      experts, k,      n,         tokens,  0,      outRows, a,
      values,  scales, untouched, offsets, counts, gather,  scatter};
  error = ::microscale::testing::invokeRaggedMatmul(*engine, none);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  for (float x : untouched)
    ASSERT_TRUE(std::isnan(x));
}

/// The wgmma kernel's tile map on 40 experts (two scans of 32) with
/// 8-token tiles (the planner's, for under one row per expert): the
/// experts with rows are 2, 31, 32 and 39, expert 31 with 19 rows (three
/// tiles, on three slots); expert 7 has a negative count, expert 20 none.
/// With `overlapping`, every expert has the same weight and the slices
/// overlap, cut at both ends of the ragged rows: eight tiles on six slots,
/// so that slots take a second tile.
struct TileMapCase {
  bool overlapping = false;
};

class HopperLayoutMatmulOnHostTileMap
    : public ::testing::TestWithParam<TileMapCase> {};

TEST_P(HopperLayoutMatmulOnHostTileMap, TilesFoundBySlot) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const bool overlapping = GetParam().overlapping;
  const int64_t experts = 40, k = 64, n = 24, tokens = 4,
                rows = overlapping ? 6 : 22, outRows = rows + 1;
  const std::string weight = hopperWeight("40x64x24", 1, 4);
  auto type = dyn_cast_or_null<QTensorType>(parseType(weight, &context));
  ASSERT_TRUE(type);
  const std::string lhs = "memref<4x64xbf16>",
                    out = "memref<" + std::to_string(outRows) + "x24xf32>";
  const std::string e = "memref<40xi32>",
                    r = "memref<" + std::to_string(rows) + "xi32>";
  std::string text =
      ::microscale::testing::raggedMatmulFunction(lhs, weight, out, e, r);
  std::string compileError;
  auto engine = compileEmulatedOnHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;
  std::mt19937 rng(41);
  RandomWeight random = randomWeight(
      type, 1, rng, [&](size_t) { return static_cast<uint8_t>(1 + rng() % 15); },
      [&](size_t) { return static_cast<uint8_t>(112 + rng() % 16); });
  std::vector<float> reference =
      ref::dequantize(random.tensor, ref::E8M0Edges::OCP);
  std::vector<int32_t> offsets(experts, 0), counts(experts, 0);
  offsets[7] = 0, counts[7] = -2;
  if (overlapping) {
    // Expert 0's weight for all: a row's product is the same whichever
    // of its experts writes it last.
    auto copyFirst = [&](auto &image) {
      const size_t each = image.size() / experts;
      for (int64_t ex = 1; ex < experts; ++ex)
        std::copy_n(image.begin(), each, image.begin() + ex * each);
    };
    copyFirst(random.values);
    copyFirst(random.scales);
    copyFirst(reference);
    // Row 0 from experts 2, 31 (rows -3 .. 0, cut to 0) and 32 .. 36;
    // rows 1 .. 5 from expert 39 alone (rows 1 .. 99, cut), the map's
    // last tile (8 tiles on 6 slots: slot 1's second).
    offsets[2] = 0, counts[2] = 1;
    offsets[31] = -3, counts[31] = 4;
    for (int64_t ex = 32; ex <= 36; ++ex)
      offsets[ex] = 0, counts[ex] = 1;
    offsets[39] = 1, counts[39] = 99;
  } else {
    // Ragged rows: 0 -> expert 2, 1 .. 19 -> expert 31, 20 -> expert 32,
    // 21 -> expert 39.
    offsets[2] = 0, counts[2] = 1;
    offsets[31] = 1, counts[31] = 19;
    offsets[32] = 20, counts[32] = 1;
    offsets[39] = 21, counts[39] = 1;
  }
  std::vector<uint16_t> a =
      ::microscale::testing::randomActivations(tokens * k, rng);
  std::vector<int32_t> gather(rows), scatter(rows);
  for (int64_t row = 0; row < rows; ++row) {
    gather[row] = static_cast<int32_t>((row * 3 + 1) % tokens);
    // Out row `rows` is written by none.
    scatter[row] = static_cast<int32_t>((row * 5 + 2) % rows);
  }
  std::vector<float> got(outRows * n, std::nanf(""));
  ::microscale::testing::RaggedMatmulCall call{
      experts, k,      n,   tokens,  rows,   outRows, a,
      random.values, random.scales, got, offsets, counts, gather, scatter};
  llvm::Error error = ::microscale::testing::invokeRaggedMatmul(*engine, call);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  // Overlapping: 7 slices of row 0 and expert 39's 5 rows.
  EXPECT_EQ(::microscale::testing::expectRaggedProduct(call, reference),
            overlapping ? 12u : 22u);
}

INSTANTIATE_TEST_SUITE_P(Slices, HopperLayoutMatmulOnHostTileMap,
                         ::testing::Values(TileMapCase{false},
                                           TileMapCase{true}));

INSTANTIATE_TEST_SUITE_P(
    Kernels, HopperLayoutMatmulOnHostRagged,
    ::testing::Values(
        // The wgmma kernel as planned: 8-token tiles (twice the 4 ragged
        // rows per expert), so expert 2's 11 rows take two tiles.
        RaggedCase{},
        // The decode kernel (a split of K is its key), 8-row groups.
        RaggedCase{tiling(2)},
        // wgmma: two warpgroups of two 64-column tiles (256 columns, all
        // but 40 past N), 16-token tiles, 2 stages.
        RaggedCase{wgmmaTiling(16, 8, 32, 2)},
        // The same with the weight's words copied into shared memory.
        RaggedCase{sharedWeights(wgmmaTiling(16, 8, 32, 2))},
        RaggedCase{sharedWeights({})},
        // wgmma with K split over a cluster of 3 (one chunk each, the last
        // the half chunk): the sums of every token tile added in rank order.
        RaggedCase{clusterSplit({}, 3)},
        // Rows known at run time (ragged, lhs and out rows as arguments):
        // the compile's six variants, the host code's switch picking the
        // one for 4 rows per expert; and with a cluster split.
        RaggedCase{{}, true}, RaggedCase{clusterSplit({}, 2), true}));

} // namespace
