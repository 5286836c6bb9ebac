//===- HopperWgmmaMatmulKernel.cpp - bf16 x MXFP4 above decode sizes ------===//
//
// mixed_matmul_storage above decode sizes (more than 64 activation rows)
// with the weight [K, N] in #microscale.hopper_value<mx_axis = -2,
// mma_version = 3> and its scales in #microscale.hopper_scale<mx_axis = -2>:
// one kernel of wgmma.mma_async m64nTk16 (bf16 in, f32 accumulators) with
// the weight as the A operand from registers and the activations as B from
// shared memory; the output D[n][m] is the product transposed, stored
// element by element.
//
// Why A comes from registers: the PTX ISA gives the A register fragment of
// wgmma m64nNk16 (.bf16) per warp of the warpgroup as the A fragment of
// mma.sync m16n8k16 for rows 16 w .. 16 w + 15 (section "Register
// fragments" of wgmma). The Hopper value layout puts a lane's mma.sync A
// fragment of a 64-K chunk in one 16-byte load (HopperLayoutMatmulKernel.cpp
// says how), so warp w of a warpgroup loads and decodes the 16-column tile
// 4 t + w of the warpgroup's 64-column tile t exactly as the decode kernel
// does (HopperLayoutMatmulEmitter.h): the weight is decoded once per block
// tile and feeds T tokens (the wgmma's N) per instruction.
//
// Activations: a block's T tokens x 64 K of a chunk (T x 128 bytes) are
// copied into one of S stages of shared memory in the 128-byte swizzle
// (16-byte unit u of row r at 16 (u ^ (r % 8))): by TMA on tiles of 128
// tokens or more (thread 0's cp.async.bulk.tensor.2d of one box on the
// tensor map the host code builds, completing on the stage's mbarrier;
// the stages in dynamic shared memory; TensorMapCopies.h), else by every
// thread's cp.async into static shared memory. K-major: the
// layout the wgmma descriptor with swizzle mode 1 (128B), stride byte
// offset 1024 (8 rows of 128 bytes) reads, the 16-K step j at start + 32 j
// (the swizzle is a function of the address bits, and each stage starts on
// 1024 bytes). Tokens past M and K past K are zero-filled (TMA's out of
// bounds fill, cp.async's source size 0), and the weight words past K are
// selected to zero, so partial token tiles and a half last chunk need no
// other path.
//
// The pipeline, per chunk i: wait for stage i's copies (TMA: phase i / S
// of the stage's mbarrier; cp.async: at most S - 2 groups pending) and
// barrier (every warpgroup's wgmmas of chunk i - 1 are
// complete: each waited before it); cp.async: copy chunk i + S - 1 into
// chunk i - 1's stage; load chunk i + D + 1's weight words (D chunks of
// words queue in registers); fence, 4 x ct wgmmas on chunk i's decoded A
// registers, commit; decode chunk i + 1's words into a second set of
// fragments while they run, then wait for them (or, where the plan does not
// overlap the decode, wait first and decode after); TMA: thread 0 copies
// chunk i + S - 1 into chunk i - 1's stage here, off the path to its
// warpgroup's wgmmas. The global scale and the bf16 rounding are
// applied in the epilogue.
//
// Tiling: W warpgroups per block (the block's tokens shared), ct 64-column
// tiles per warpgroup, T tokens per block tile (a multiple of 8 up to 256),
// S stages in static shared memory; the grid is column tiles x token
// tiles x Z, column tiles fastest (blocks in flight share their
// activations in L2). Z > 1 splits K over the Z blocks of a thread block
// cluster: block z takes chunks [z C / Z, (z + 1) C / Z); the blocks
// leave their sums in their stages and each adds, in rank order, and
// stores its Z-th of the tile through distributed shared memory
// (ClusterSharedMemory.h). The chunk loop is unrolled by the weight queue's
// depth, so that the queue's slots keep their registers.
//
// The ragged (experts) form (HopperRaggedForm.h): grid y is a slot of the
// tile map (every expert's rows in token tiles, in expert order); a block
// takes its slot's tiles, finding each one's expert by a warp scan of the
// experts' tile counts, so that an expert with many rows spreads over many
// blocks. It runs the whole pipeline per token tile, activation rows
// through the gather (cp.async per row: no TMA), out rows through the
// scatter. Rows known at run time: one kernel per typical rows per expert,
// the host code choosing (HostVariantSwitch.h).
//
//===----------------------------------------------------------------------===//
#include "HopperWgmmaMatmul.h"

#include "ClusterSharedMemory.h"
#include "HopperLayoutMatmulEmitter.h"
#include "HopperRaggedForm.h"
#include "HostEmulation.h"
#include "HostVariantSwitch.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"
#include "TensorMapCopies.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
using namespace mlir::microscale::hopperlayout;

namespace {

/// The token tiles that take their weight's words from shared memory by
/// default, where it measured faster: the ragged form's of 32-64 tokens
/// (its 16-token tiles ran slower, 8-token ones the same; larger tiles
/// leave too few stages in the 48 KiB of static shared memory), and the
/// dense form's decode-size tiles of 9-16 tokens (its 32-token tiles ran
/// slower on large weights).
constexpr int64_t kRaggedSharedWeightsMinTokens = 32;
constexpr int64_t kRaggedSharedWeightsMaxTokens = 64;
constexpr int64_t kDenseSharedWeightsMinTokens = 9;
/// Bytes of one token's 64 K values: one swizzle row.
constexpr int64_t kRowBytes = 128;
/// The 128-byte swizzle repeats every 8 rows.
constexpr int64_t kSwizzleAtomBytes = 8 * kRowBytes;

struct WgmmaPlan {
  HopperMatmulPlan base; // one 16-column tile per warp, activations staged
  int64_t tokens;        // T: the wgmma's N, tokens per block tile
  int64_t warpgroups;    // W
  int64_t groupTiles;    // ct: 64-column tiles per warpgroup
  int64_t stages;        // S
  int64_t weightDepth;   // chunks of weight words in registers ahead
  int64_t split = 1;     // blocks of a cluster splitting K (grid z)
  int64_t maxRegisters = 0; // per thread, 0: ptxas's choice
  // The ragged form: grid y is a slot of the tile map (one per expert
  // that can have rows): the planner counts the blocks of this many
  // experts with rows.
  int64_t experts = 1;
  // The activations by TMA into dynamic shared memory (mbarrier per
  // stage); else by cp.async into static shared memory.
  bool tensorMapCopies;
  // The next chunk's weight decoded while this chunk's wgmmas run (two
  // sets of A fragments live), else after waiting for them.
  bool overlapDecode = false;
  // The weight's words copied by each thread's cp.async into the stages
  // (after the activations' S stages, S more of weightStageBytes), in the
  // activations' copy groups, and read back before their decode; else
  // queued weightDepth chunks ahead in registers.
  bool stagedWeights = false;
  // Staged weights: the chunk loop in groups of the stages, each group's
  // stages known to the emission (MixedMatmulOptions::chunkGroups).
  bool chunkGroups = false;

  int64_t stageWords() const {
    return stages * (stageBytes() + weightStageBytes()) / 4;
  }
  /// Bytes of one stage of staged weights: per thread and warpgroup tile,
  /// its 16 bytes of values (a run of threads() * groupTiles of them), then
  /// its 4 scale codes.
  int64_t weightStageBytes() const {
    return stagedWeights ? threads() * groupTiles * (16 + 4) : 0;
  }
  /// Bytes of dynamic shared memory the launch asks for (0: static).
  int64_t dynamicSharedBytes() const {
    return tensorMapCopies
               ? tma::dynamicSharedBytes(4 * stageWords(), kSwizzleAtomBytes)
               : 0;
  }

  int64_t threads() const { return 128 * warpgroups; }
  int64_t blockColumns() const { return 64 * groupTiles * warpgroups; }
  int64_t columnBlocks() const {
    return llvm::divideCeil(base.n, blockColumns());
  }
  int64_t tokenBlocks() const { return llvm::divideCeil(base.m, tokens); }
  int64_t stageBytes() const { return tokens * kRowBytes; }
  int64_t accumulators() const { return groupTiles * tokens / 2; }
  /// Bytes of one block's sums, which a split's blocks leave in their
  /// stages for each other to add (the reduce-scatter).
  int64_t partialBytes() const { return 4 * accumulators() * threads(); }
  // 16-column tiles of the value image (N padded to 256).
  int64_t imageTiles() const { return llvm::alignTo(base.n, 256) / 16; }
};
} // namespace

/// The chunks of split `z` (the block of that cluster rank): [first, first +
/// count) with first = z C / S, the kernel's and its emulation's.
static std::pair<Value, Value> splitChunks(Emitter &e, const WgmmaPlan &w,
                                           Value z) {
  const int64_t chunks = w.base.chunks;
  Value first = e.div(e.mul(z, chunks), w.split);
  Value end = e.div(e.mul(e.add(z, 1), chunks), w.split);
  return {first, arith::SubIOp::create(e.builder(), e.location(), end, first)
                     .getResult()};
}

/// The first of the `count` sums per thread that cluster rank `r` of
/// `split` adds and stores (rank r: [r count / S, (r + 1) count / S)).
static int64_t splitShareBegin(int64_t count, int64_t split, int64_t r) {
  return r * count / split;
}

static FailureOr<WgmmaPlan>
planWgmmaMatmul(MixedMatmulStorageOp op, const MixedMatmulOptions &options,
                const nvvm::NVIDIAChip &chip, int64_t smCount,
                int64_t planRows, const RaggedForm *ragged = nullptr,
                int64_t activeExperts = 0) {
  QTensorType rhs = op.getRhsType();
  auto scales = cast<HopperScaleAttr>(rhs.getScaleLayout());
  WgmmaPlan w;
  HopperMatmulPlan &p = w.base;
  p.k = rhs.getShape()[rhs.getRank() - 2];
  p.n = rhs.getShape()[rhs.getRank() - 1];
  p.m = planRows;
  p.rowTiles = 1;
  p.columnGroups = 1;
  p.depth = 1;
  p.split = 1;
  p.staged = true;
  p.chunks = llvm::divideCeil(p.k, kChunkK);
  p.tail = p.k % kChunkK != 0;
  p.rowBytes = 4 * llvm::alignTo(p.k / 2, 64);
  p.scaleRowBytes = 32 * llvm::alignTo(p.k / 32, 2);
  p.scaleWarps = scales.getNumWarps();
  if (ragged)
    w.experts = activeExperts ? activeExperts : ragged->experts;
  if (rhs.getValueStorageShape().back() != p.rowBytes ||
      rhs.getScaleStorageShape().back() != p.scaleRowBytes)
    return op.emitOpError() << "unexpected Hopper storage shapes";
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"unroll", options.unroll},
        {"split_k", options.splitK},
        {"chunk_k", options.chunkK}})
    if (value)
      return op.emitOpError()
             << "tiling " << name
             << " does not apply to the Hopper-layout wgmma matmul (above "
                "64 rows: warp_rows = tokens per block tile, column_warps = "
                "warps per block, warp_columns, activation_stages, "
                "weight_stages, cluster_split_k and max_registers do)";
  // Tokens: as few 128-token tiles as cover M, evened out (M = 100 takes
  // one tile of 104, not 128 with 28 rows of zeros).
  w.tokens = evenTokenTiles(p.m, 128);
  // An explicit token tile comes first: the split below is chosen for it.
  if (options.warpRows) {
    if (options.warpRows % 8 || options.warpRows < 8 ||
        options.warpRows > 256)
      return op.emitOpError() << "tiling warp_rows = " << options.warpRows
                              << " (tokens per wgmma tile) must be a multiple "
                                 "of 8 from 8 to 256";
    w.tokens = options.warpRows;
  }
  // A block's chunks follow one another, so the blocks in flight are what
  // hides their latency at a few hundred rows: while the blocks of one
  // warpgroup would not give every SM two, split K over the blocks of a
  // cluster (each decodes its share of the weight once; the sums meet in
  // distributed shared memory), at least kMinClusterSplitChunks chunks
  // each; then smaller token tiles (each decodes the whole weight again).
  auto blocksOfOneWarpgroup = [&] {
    return static_cast<int64_t>(llvm::divideCeil(p.n, 64) *
                                llvm::divideCeil(p.m, w.tokens)) *
           w.experts * w.split;
  };
  // Tiles above 64 tokens split in two at most: three ran 30-40% slower
  // than two on tiles of 104 and 128 tokens, and still do at 128 with the
  // sums' reduce-scatter (docs/performance.md, "Measurements behind
  // defaults", "The split's sums"). The dense form's tiles of up to
  // kFourWaySplitTokens, where the blocks are few, ran faster split three
  // or four ways (M = 130 on eight shapes, same section).
  // Decode-size tiles (dense, 16 tokens or fewer) stream the weight as
  // the decode kernel does, their blocks in flight all that hides its
  // latency: they split until the blocks give every SM three
  // (docs/performance.md, "The matmul's edges": the sweep of the split at
  // 16 tokens on seven shapes).
  ConstantTileRuleOps rule;
  const int64_t maxSplit = w.tokens <= 64                               ? 8
                           : !ragged && w.tokens <= kFourWaySplitTokens ? 4
                                                                        : 2;
  const int64_t splitBlocksPerSM =
      !ragged && w.tokens <= kDecodeSizeTokens ? 3 : 2;
  // A split block takes kMinClusterSplitChunks or more; dense tiles of up
  // to 64 tokens whose split blocks still fit one wave (one per SM) take
  // down to kFewBlocksMinClusterSplitChunks: there SMs left idle cost more
  // than a block's short run of chunks (docs/performance.md, "Few blocks").
  auto canSplitFurther = [&] {
    const int64_t next = w.split + 1;
    if (p.chunks / next >= kMinClusterSplitChunks)
      return true;
    return !ragged && w.tokens <= 64 &&
           p.chunks / next >= kFewBlocksMinClusterSplitChunks &&
           blocksOfOneWarpgroup() / w.split * next <= smCount;
  };
  while (w.split < maxSplit &&
         fewerBlocksPerSMThan(rule, blocksOfOneWarpgroup(), splitBlocksPerSM,
                              smCount) &&
         canSplitFurther())
    ++w.split;
  // With K split, not below 64 tokens (104-token tiles split in two ran
  // faster than 56-token ones split in three); else down to 32 or below.
  while (!options.warpRows &&
         fewerBlocksPerSMThan(rule, blocksOfOneWarpgroup(), 2, smCount)) {
    const int64_t half = llvm::alignTo(llvm::divideCeil(w.tokens, 2), 8);
    if (w.split > 1 ? half < 64 : w.tokens <= 32)
      break;
    w.tokens = half;
  }
  w.groupTiles = 1;
  // The ragged form's small token tiles (up to 32: 163 registers with the
  // queue unrolled; 64-token tiles would take 246) leave registers for two
  // 64-column tiles per warpgroup (one barrier, copy and descriptor set per
  // chunk for twice the weight) where the blocks still give every SM four.
  if (ragged && w.tokens <= 32 &&
      static_cast<int64_t>(llvm::divideCeil(p.n, 128)) * w.experts * w.split >=
          4 * smCount)
    w.groupTiles = 2;
  if (options.warpColumns) {
    if (options.warpColumns != 16 && options.warpColumns != 32)
      return op.emitOpError() << "tiling warp_columns = "
                              << options.warpColumns
                              << " must be 16 or 32 for the Hopper-layout "
                                 "wgmma matmul (one or two 64-column tiles "
                                 "per warpgroup)";
    w.groupTiles = options.warpColumns / 16;
  }
  // Two warpgroups share a block's activations (half the L2 reads per
  // product of one) on tiles of 128 tokens or more where the blocks still
  // cover every SM; else one (on the H200, 64-token tiles ran 15-17%
  // faster with one: docs/performance.md).
  // With K split, two warpgroups only where their blocks still give every
  // SM two (a split block's few chunks leave less to hide latency with).
  w.warpgroups = 2;
  if (w.tokens < 128 ||
      w.columnBlocks() * w.tokenBlocks() * w.experts * w.split <
          (w.split > 1 ? 2 : 1) * smCount)
    w.warpgroups = 1;
  // Above a few hundred rows (K not split, M known at compile time), the
  // tile by the work of the busiest SM (chooseTileByBusiestSM). Rows known
  // at run time: the host code applies the same rule to M between the
  // tiles it has (outlineDynamicRows).
  if (!ragged && !hasDynamicRows(op) && w.split == 1 && w.tokens >= 128 &&
      w.groupTiles == 1 && !options.warpRows && !options.columnWarps) {
    ConstantTileRuleOps ops;
    const int64_t wide = evenTokenTiles(p.m, 256);
    switch (chooseTileByBusiestSM(ops, p.m, p.n, smCount, w.tokens, wide,
                                  w.warpgroups)) {
    case 2:
      w.tokens = wide;
      w.warpgroups = 1;
      break;
    case 1:
      w.warpgroups = 1;
      break;
    default:
      break;
    }
  }
  if (options.columnWarps) {
    if (options.columnWarps % 4 || options.columnWarps > 16)
      return op.emitOpError() << "tiling column_warps = "
                              << options.columnWarps
                              << " must be 4, 8, 12 or 16 (whole warpgroups) "
                                 "for the Hopper-layout wgmma matmul";
    w.warpgroups = options.columnWarps / 4;
  }
  // The ragged form's 8-token tiles (decode steps: a few rows per expert)
  // are latency-bound, their blocks in flight what hides it: ptxas gives
  // them 141-145 registers (3 blocks of 128 threads per SM); capped so
  // that 4 fit, without spills (docs/performance.md, "Measurements behind
  // defaults in the code").
  if (ragged && w.tokens <= 8)
    w.maxRegisters = chip.registersPerSM / (4 * w.threads()) / 8 * 8;
  // Copies: TMA on tiles of 64 tokens or more where the chip has it (one
  // thread's instruction per chunk instead of every thread's 16-byte
  // copies and their addressing, and the decode under the wgmmas below),
  // cp.async on smaller ones. On 64-token tiles TMA alone measured slower;
  // with the overlapped decode it ran 3-20% faster, or the same
  // (docs/performance.md, "The next chunk's decode under the wgmmas").
  // The ragged form gathers its rows, which sm_90's tensor copies cannot.
  if (ragged && options.activationCopies == ActivationCopies::TMA)
    return op.emitOpError()
           << "tiling activation_copies = \"tma\" does not apply to the "
              "ragged (experts) form: its rows come through the gather "
              "(cp.async per row)";
  w.tensorMapCopies =
      !ragged && chip.hasTMA &&
      (options.activationCopies == ActivationCopies::TMA ||
       (options.activationCopies == ActivationCopies::Chosen &&
        w.tokens >= 64));
  if (options.activationCopies == ActivationCopies::TMA && !chip.hasTMA)
    return op.emitOpError() << "tiling activation_copies = \"tma\": "
                            << chip.name << " has no TMA";
  // Stages: as many as the shared memory holds (each one more chunk of
  // activations in flight), at most 8; at least 2. TMA: dynamic shared
  // memory, sized so that as many blocks share an SM as its registers
  // allow (per thread about the accumulators and 64 more: fragments,
  // queued weight words, addresses), each less the 1 KiB the system keeps
  // per block, the mbarriers' static bytes (which ptxas pads to the
  // dynamic window's 1024-byte alignment) and the rounding of the window's
  // start; cp.async: the 48 KiB of static shared memory.
  const int64_t blocksPerSM = std::max<int64_t>(
      1, chip.registersPerSM / (w.threads() * (w.accumulators() + 64)));
  const int64_t shared =
      w.tensorMapCopies
          ? std::min(chip.maxSharedMemoryPerBlock - kSwizzleAtomBytes,
                     chip.sharedMemoryPerSM / blocksPerSM - 1024 -
                         kSwizzleAtomBytes) -
                kSwizzleAtomBytes
          : chip.staticSharedMemoryPerBlock;
  // TMA: at most 4, which measured faster than 6 (docs/performance.md,
  // "Measurements behind defaults in the code").
  // The ragged form: 4 as well (its blocks are many and short of
  // registers, not of activations in flight; docs/performance.md, "MoE on
  // the wgmma kernel").
  w.stages = std::min<int64_t>(w.tensorMapCopies || ragged ? 4 : 8,
                               shared / w.stageBytes());
  if (options.activationStages) {
    if (options.activationStages < 2 || options.activationStages > 8)
      return op.emitOpError() << "tiling activation_stages = "
                              << options.activationStages
                              << " must be 2 to 8 for the Hopper-layout "
                                 "wgmma matmul";
    w.stages = options.activationStages;
  }
  // Weight words a few chunks ahead in registers (5 per 16-column tile
  // and chunk): a chunk's loads have that many iterations to land. Small
  // token tiles (short iterations) take 4, large ones 2 (their registers
  // are the accumulators').
  // The ragged form's large tiles read each expert's weight once, from
  // device memory rather than L2: 6 chunks ahead (docs/performance.md,
  // "Measurements behind defaults in the code").
  w.weightDepth = w.tokens <= 64 ? 4 : ragged ? 6 : 2;
  if (options.weightStages) {
    if (options.weightStages < 1 || options.weightStages > 8)
      return op.emitOpError() << "tiling weight_stages = "
                              << options.weightStages
                              << " must be 1 to 8 for the Hopper-layout "
                                 "wgmma matmul (chunks of weight words "
                                 "loaded ahead)";
    w.weightDepth = options.weightStages;
  }
  // The decode under the wgmmas: where the activations come by TMA (one
  // thread's copy per chunk), and on the ragged form's tiles of 128 tokens
  // or more (prefill), whose chunks are long enough to hide it. With every
  // thread's cp.async copies on dense tiles, and on the ragged form's
  // small tiles (whose second set of fragments costs an SM a block), it
  // measured slower (docs/performance.md, "The next chunk's decode under
  // the wgmmas").
  // Its second set of fragments must not cost a block per SM: on the dense
  // form's tiles of 128 tokens or more, where the estimate above is what
  // ptxas takes (117-126 registers without the overlap), the registers are
  // capped at the residency it gives. Smaller tiles take fewer registers
  // than it says, the ragged form's more (the gather's and the tile map's
  // addressing), and capped there they spill.
  w.overlapDecode = options.decodeOverlap == DecodeOverlap::On ||
                    (options.decodeOverlap == DecodeOverlap::Chosen &&
                     (w.tensorMapCopies || (ragged && w.tokens >= 128)));
  if (w.overlapDecode && !w.maxRegisters && !ragged && w.tokens >= 128)
    w.maxRegisters = std::min<int64_t>(
        255, chip.registersPerSM / (blocksPerSM * w.threads()) / 8 * 8);
  // The weight's words: in shared memory with the activations on the
  // ragged form's mid-sized tiles whose decode waits for the wgmmas, with
  // registers capped so that four blocks of one warpgroup share an SM
  // (without its register queue the kernel fits 128 with a few spilled
  // bytes; the queued kernel capped so ran slower than uncapped), and on
  // the dense form's decode-size tiles (8 stages of weight words in
  // flight instead of a queue of 4); in registers elsewhere (dense
  // cp.async tiles of 32 tokens ran up to 24% slower from shared memory).
  // docs/performance.md, "The weight's words in shared memory".
  const bool raggedShared = ragged &&
                            w.tokens >= kRaggedSharedWeightsMinTokens &&
                            w.tokens <= kRaggedSharedWeightsMaxTokens &&
                            w.warpgroups == 1;
  const bool denseShared = !ragged &&
                           w.tokens >= kDenseSharedWeightsMinTokens &&
                           w.tokens <= kDecodeSizeTokens;
  // A queue depth asked for (weight_stages) keeps the queue.
  const bool sharedByDefault = !w.tensorMapCopies && !w.overlapDecode &&
                               !options.weightStages &&
                               (raggedShared || denseShared);
  if (options.weightCopies == WeightCopies::Chosen && raggedShared &&
      sharedByDefault && !options.maxRegisters && !w.maxRegisters)
    w.maxRegisters = chip.registersPerSM / (4 * w.threads()) / 8 * 8;
  if (options.weightCopies == WeightCopies::Shared ||
      (options.weightCopies == WeightCopies::Chosen && sharedByDefault)) {
    if (w.tensorMapCopies || w.overlapDecode)
      return op.emitOpError()
             << "tiling weight_copies = \"shared\" needs the activations by "
                "cp.async (activation_copies = \"cp.async\") and the decode "
                "after the wgmmas (decode_overlap = \"off\")";
    if (options.weightStages)
      return op.emitOpError()
             << "tiling weight_stages = " << options.weightStages
             << " sets the depth of the weight words' register queue, which "
                "weight_copies = \"shared\" replaces (the activation_stages "
                "hold the words)";
    w.stagedWeights = true;
    w.weightDepth = 0;
    if (!options.activationStages)
      w.stages = std::min(w.stages,
                          shared / (w.stageBytes() + w.weightStageBytes()));
  }
  // Chunk groups: on the dense form's staged plans, where they measured
  // faster; not on the ragged form's, where gpt-oss mlp1 and mlp2
  // measured slower with them (docs/performance.md, "Chunk groups timed").
  if (options.chunkGroups.value_or(false) && !w.stagedWeights)
    return op.emitOpError()
           << "tiling chunk_groups needs the weight's words in shared "
              "memory (weight_copies = \"shared\"), which this plan keeps "
              "in registers";
  w.chunkGroups =
      w.stagedWeights && options.chunkGroups.value_or(ragged == nullptr);
  if (w.stages < 2 ||
      w.stages * (w.stageBytes() + w.weightStageBytes()) > shared)
    return op.emitOpError()
           << "the Hopper-layout wgmma matmul needs at least 2 stages of "
           << w.stageBytes() + w.weightStageBytes() << " bytes (" << w.tokens
           << " tokens) in its " << shared
           << " bytes of shared memory; ask for fewer tokens per "
              "tile (tiling warp_rows) or fewer stages";
  // The split's partner blocks leave their sums in their stages: the
  // chosen split gives way where they do not fit.
  if (!options.clusterSplitK && w.partialBytes() > w.stages * w.stageBytes())
    w.split = 1;
  if (options.clusterSplitK) {
    w.split = options.clusterSplitK;
    if (w.split > p.chunks || w.partialBytes() > w.stages * w.stageBytes())
      return op.emitOpError()
             << "tiling cluster_split_k = " << w.split
             << " needs at most " << p.chunks
             << " (the 64-K chunks) and the block's sums ("
             << w.partialBytes() << " bytes) within its stages ("
             << w.stages * w.stageBytes() << " bytes)";
  }
  return w;
}

namespace {
/// The shared byte offset `stage` x `stageBytes` + `extra` of a copy
/// addressed from the thread's own slot (copyAsyncToShared): a constant
/// where the stage is one (its immediate), else computed.
Value stageOffset(Emitter &at, Value stage, int64_t stageBytes, int64_t extra) {
  if (std::optional<int64_t> constant = getConstantIntValue(stage))
    return at.index(*constant * stageBytes + extra);
  return at.add(at.mul(stage, stageBytes), extra);
}

/// The kernel's parts beyond the per-lane weight: the activation copies,
/// the wgmma descriptors, the wgmma and the epilogue.
class WgmmaEmitter {
public:
  WgmmaEmitter(const WgmmaPlan &w, Value lhs, Value out, Value globalScale,
               Value stages, bool onHost)
      : w(w), p(w.base), lhs(lhs), out(out), globalScale(globalScale),
        stages(stages), onHost(onHost) {}

  /// The 16-column tile warp `warp` of the block (column block `block`)
  /// loads for its warpgroup's tile `c`, clamped to the image (columns past
  /// the image's are never stored).
  Value columnTile(Emitter &at, Value block, Value warp, int64_t c) const {
    Value group = at.div(warp, 4);
    Value tile = at.add(
        at.mul(at.add(at.add(at.mul(block, w.warpgroups * w.groupTiles),
                             at.mul(group, w.groupTiles)),
                      c),
               4),
        at.rem(warp, 4));
    return arith::MinUIOp::create(at.builder(), at.location(), tile,
                                  at.index(w.imageTiles() - 1));
  }

  /// Byte offset in the stages of token row `row`'s 16-byte unit `unit` of
  /// stage `stage`: the 128-byte swizzle.
  Value swizzled(Emitter &at, Value stage, Value row, Value unit) const {
    OpBuilder &b = at.builder();
    Value x = arith::XOrIOp::create(b, at.location(), unit, at.rem(row, 8));
    return at.add(at.add(at.mul(stage, w.stageBytes()), at.mul(row, kRowBytes)),
                  at.mul(x, 16));
  }

  /// Local row `row` of token tile `tokenBlock` as an lhs row (safe to
  /// address) and whether it is read; as an out row and whether it is
  /// written.
  std::pair<Value, Value> lhsRowOf(Emitter &at, Value tokenBlock,
                                   Value row) const {
    return mapRow(at, lhsRow, tokenBlock, row);
  }
  std::pair<Value, Value> outRowOf(Emitter &at, Value tokenBlock,
                                   Value row) const {
    return mapRow(at, outRow, tokenBlock, row);
  }

  /// The copies' units per thread: unit u = thread + threads i.
  int64_t unitsPerThread() const {
    return llvm::divideCeil(w.tokens * 8, w.threads());
  }

  /// Thread `thread`'s source rows of its copies (unit i's lhs row times K
  /// and whether it is read), computed once per token tile where a row
  /// map reads index buffers (the ragged form's gather); empty otherwise.
  struct CopyRows {
    SmallVector<Value> base, inside;
  };
  CopyRows copyRows(Emitter &at, Value tokenBlock, Value thread) const {
    CopyRows rows;
    if (!lhsRow)
      return rows;
    for (int64_t i = 0; i < unitsPerThread(); ++i) {
      // Units past the tile's (the last i) read its last row's map, unused.
      Value row = arith::MinUIOp::create(
          at.builder(), at.location(),
          at.div(at.add(thread, w.threads() * i), 8), at.index(w.tokens - 1));
      auto [token, inside] = lhsRowOf(at, tokenBlock, row);
      rows.base.push_back(at.mul(token, p.k));
      rows.inside.push_back(inside);
    }
    return rows;
  }

  /// Thread `thread`'s copies of chunk `chunk`'s activations (token block
  /// `tokenBlock`, or the rows of `rows` where given) into stage `stage`:
  /// 16-byte units, unit u = thread + threads i of token row u / 8, K 8
  /// (u % 8). Tokens past M and K past K copy nothing and zero-fill
  /// (source clamped to element 0). `stageOffsets`: each unit's shared
  /// byte as the thread's own (unit 0's in stage 0) plus an offset of the
  /// stage and the unit (copyAsyncToShared: an immediate where `stage` is
  /// a constant), which the swizzle allows: the threads are a multiple of
  /// 64, so unit i's row is thread / 8 + threads / 8 i, the same modulo 8.
  void copyChunk(Emitter &at, Value tokenBlock, Value thread, Value chunk,
                 Value stage, const CopyRows &rows = {},
                 bool stageOffsets = false) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    const int64_t units = w.tokens * 8;
    static_assert(kRowBytes == 128, "a swizzle row of 8 units");
    assert(w.threads() % 64 == 0 && "unit offsets keep the swizzle's rows");
    Value ownDest;
    if (stageOffsets)
      ownDest = swizzled(at, at.index(0), at.div(thread, 8), at.rem(thread, 8));
    for (int64_t i = 0; i * w.threads() < units; ++i) {
      Value unit = at.add(thread, w.threads() * i);
      std::optional<OpBuilder::InsertionGuard> guard;
      if ((i + 1) * w.threads() > units) {
        auto inRange = scf::IfOp::create(b, loc, at.lt(unit, units),
                                         /*withElseRegion=*/false);
        guard.emplace(b);
        b.setInsertionPointToStart(&inRange.getThenRegion().front());
      }
      Value row = at.div(unit, 8), part = at.rem(unit, 8);
      Value k = at.add(at.mul(chunk, kChunkK), at.mul(part, 8));
      Value rowBase, inside;
      if (rows.base.empty()) {
        auto [token, read] = lhsRowOf(at, tokenBlock, row);
        rowBase = at.mul(token, p.k);
        inside = read;
      } else {
        rowBase = rows.base[i];
        inside = rows.inside[i];
      }
      // Outside, element k of row 0 (never read: source size 0), so that
      // without a partial last chunk the select is the tile's, not the
      // chunk's, and leaves the chunk loop.
      Value source;
      if (p.tail) {
        inside = at.andI1(inside, at.lt(k, p.k));
        source = at.select(inside, at.add(rowBase, k), at.index(0));
      } else {
        source = at.add(at.select(inside, rowBase, at.index(0)), k);
      }
      if (stageOffsets) {
        copyActivationUnit(at, stages, ownDest, lhs, source, inside, onHost,
                           stageOffset(at, stage, w.stageBytes(),
                                       w.threads() * i * kRowBytes / 8));
        continue;
      }
      Value dest = swizzled(at, stage, row, part);
      copyActivationUnit(at, stages, dest, lhs, source, inside, onHost);
    }
  }

  /// The host's stand-in for the TMA copy of chunk `chunk`'s box (T tokens
  /// from token tile `tokenBlock`, 64 K) into stage `stage`, written from
  /// the tensor map's side: element (k, token) of the box at byte 2 k +
  /// 128 row of the stage, then the 128-byte swizzle as a function of the
  /// shared address (bits 4-6 XOR bits 7-9; the stages' address is 0 here
  /// and each stage starts on 1024 bytes), zeros outside the matrix.
  void emulateTensorBox(Emitter &at, Value tokenBlock, Value chunk,
                        Value stage) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    OpBuilder::InsertionGuard guard(b);
    auto rowsLoop = scf::ForOp::create(b, loc, at.index(0),
                                       at.index(w.tokens), at.index(1));
    b.setInsertionPointToStart(rowsLoop.getBody());
    Value row = rowsLoop.getInductionVar();
    auto units = scf::ForOp::create(b, loc, at.index(0),
                                    at.index(kRowBytes / 16), at.index(1));
    b.setInsertionPointToStart(units.getBody());
    Value unit = units.getInductionVar();
    Value token = at.add(tileStart(at, tokenBlock), row);
    Value k = at.add(at.mul(chunk, kChunkK), at.mul(unit, 8));
    Value inside = at.andI1(below(at, token, rowCount(at)), at.lt(k, p.k));
    Value source =
        at.select(inside, at.add(at.mul(token, p.k), k), at.index(0));
    Value address = at.add(at.add(at.mul(stage, w.stageBytes()),
                                  at.mul(row, kRowBytes)),
                           at.mul(unit, 16));
    Value swizzled = arith::XOrIOp::create(
        b, loc, address, at.mul(at.rem(at.div(address, 128), 8), 16));
    copyActivationUnit(at, stages, swizzled, lhs, source, inside,
                       /*onHost=*/true);
  }

  /// The wgmma shared-memory descriptor (PTX ISA, "Matrix Descriptor
  /// Format", sm_90) of the stages' start: start address >> 4 in bits 0-13,
  /// leading byte offset (unused by a swizzled K-major operand; 16) >> 4 in
  /// bits 16-29, stride byte offset 1024 >> 4 in bits 32-45, base offset 0
  /// (stages start on 1024 bytes), swizzle mode 1 (128B) in bits 62-63.
  /// `sharedBase`: the stages' shared address (i64).
  Value descriptorBase(Emitter &at, Value sharedBase) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Type i64 = b.getI64Type();
    auto constant = [&](uint64_t v) {
      return arith::ConstantIntOp::create(b, loc, i64,
                                          static_cast<int64_t>(v));
    };
    Value field = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, sharedBase, constant(4)),
        constant(0x3FFF));
    const uint64_t fixed = (uint64_t{16 >> 4} << 16) |
                           (uint64_t{kSwizzleAtomBytes >> 4} << 32) |
                           (uint64_t{1} << 62);
    return arith::OrIOp::create(b, loc, field, constant(fixed));
  }

  /// The descriptor of 16-K step `j` of stage `stage`: `base`
  /// (descriptorBase) with the start address advanced by the stage's and
  /// the step's bytes (32 j) >> 4. An add on the whole descriptor: the
  /// stages' shared addresses stay below 2^18, so the 14-bit field does not
  /// carry.
  Value descriptor(Emitter &at, Value base, Value stage, int64_t j) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Value offset = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        at.add(at.mul(stage, w.stageBytes() / 16), 2 * j));
    return arith::AddIOp::create(b, loc, base, offset);
  }

  /// wgmma.mma_async m64nTk16 with A from the four registers `a` and B
  /// from `descriptor`, accumulating into `acc` (T / 2 f32); inline PTX
  /// (MLIR's NVVM op takes A from shared memory only).
  SmallVector<Value> mma(OpBuilder &b, Location loc, ValueRange acc,
                         ValueRange a, Value descriptor) const {
    MLIRContext *context = b.getContext();
    const int64_t n = w.tokens / 2;
    std::string ptx;
    llvm::raw_string_ostream os(ptx);
    os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * n + 5
       << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << w.tokens
       << "k16.f32.bf16.bf16 {";
    for (int64_t i = 0; i < n; ++i)
      os << (i ? ", " : "") << "$" << i;
    os << "}, {$" << 2 * n << ", $" << 2 * n + 1 << ", $" << 2 * n + 2
       << ", $" << 2 * n + 3 << "}, $" << 2 * n + 4 << ", p, 1, 1, 0;\n}";
    std::string constraints;
    for (int64_t i = 0; i < n; ++i)
      constraints += "=f,";
    for (int64_t i = 0; i < n; ++i)
      constraints += std::to_string(i) + ",";
    constraints += "r,r,r,r,l,r";
    SmallVector<Type> types(n, b.getF32Type());
    auto result = LLVM::LLVMStructType::getLiteral(context, types);
    SmallVector<Value> operands(acc.begin(), acc.end());
    operands.append(a.begin(), a.end());
    operands.push_back(descriptor);
    operands.push_back(arith::ConstantIntOp::create(b, loc, 1, 32));
    auto asmOp = inlinePtx(b, loc, result, operands, ptx, constraints);
    SmallVector<Value> sums;
    for (int64_t i = 0; i < n; ++i)
      sums.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                                  ArrayRef<int64_t>{i}));
    return sums;
  }

  /// Stores lane `lane` of warp `warp`'s sums of its warpgroup's tile `c`
  /// (PTX ISA wgmma D fragment: register i is row 16 (warp % 4) + g +
  /// 8 ((i / 2) % 2), column 8 (i / 4) + 2 q + i % 2), times the global
  /// scale: rows are weight columns, columns tokens. Null sums are left
  /// to another block (a split's reduce-scatter).
  void store(Emitter &at, Value block, Value tokenBlock, Value warp,
             Value lane, int64_t c, ArrayRef<Value> sums) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Type outElement = cast<MemRefType>(out.getType()).getElementType();
    Value g = at.div(lane, 4), q = at.rem(lane, 4);
    Value group = at.div(warp, 4);
    Value tile64 = at.add(at.add(at.mul(block, w.warpgroups * w.groupTiles),
                                 at.mul(group, w.groupTiles)),
                          c);
    Value column0 =
        at.add(at.add(at.mul(tile64, 64), at.mul(at.rem(warp, 4), 16)), g);
    // The lane's tokens: 2 q + 8 (i / 4) + i % 2 (each mapped once).
    SmallVector<std::pair<Value, Value>> tokens;
    for (int64_t t = 0; t < w.tokens / 4; ++t)
      tokens.push_back(outRowOf(at, tokenBlock,
                                at.add(at.mul(q, 2), 8 * (t / 2) + t % 2)));
    for (int64_t i = 0; i < w.tokens / 2; ++i) {
      if (!sums[i])
        continue;
      Value column = at.add(column0, 8 * ((i / 2) % 2));
      auto [token, written] = tokens[2 * (i / 4) + i % 2];
      Value value = arith::MulFOp::create(b, loc, sums[i], globalScale);
      if (value.getType() != outElement)
        value = arith::TruncFOp::create(b, loc, outElement, value);
      auto inside = scf::IfOp::create(
          b, loc, at.andI1(written, at.lt(column, p.n)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&inside.getThenRegion().front());
      memref::StoreOp::create(b, loc, value, out,
                              ValueRange{at.add(at.mul(token, p.n), column)});
    }
  }

  /// Whether the last token tile backs up to end at the rows: with TMA
  /// copies on dense tiles, where the rows may not be a multiple of the
  /// tile. A box whose rows lie past the tensor's (TMA fills them with
  /// zeros) copied slowly: 8192 x 8192 at M = 130 in 80-token tiles, 30 of
  /// the last box's rows past M, ran 61.3 us where the same kernel with
  /// the tensor map's rows padded to whole boxes ran 43.8
  /// (docs/performance.md, "Token tiles past the rows"). Backed up, the
  /// last tile repeats the previous one's last rows instead, and leaves
  /// them to it to store.
  bool backsUpLastTile() const {
    return w.tensorMapCopies && !lhsRow && (rows || p.m % w.tokens != 0);
  }
  /// The first token of token tile `tokenBlock`: tokenBlock T, except for
  /// a backed-up last tile (backsUpLastTile), where rows - T (where the
  /// rows are at least T).
  Value tileStart(Emitter &at, Value tokenBlock) const {
    Value start = at.mul(tokenBlock, w.tokens);
    if (!backsUpLastTile())
      return start;
    if (!rows) {
      if (p.m < w.tokens)
        return start;
      return arith::MinUIOp::create(at.builder(), at.location(), start,
                                    at.index(p.m - w.tokens));
    }
    Value last = arith::MinUIOp::create(
        at.builder(), at.location(), start,
        arith::SubIOp::create(at.builder(), at.location(), rows,
                              at.index(w.tokens)));
    return at.select(atMost(at, at.index(w.tokens), rows), last, start);
  }

  /// The activation rows: `rows` where known at run time only.
  Value rowCount(Emitter &at) const { return rows ? rows : at.index(p.m); }
  Value rows;
  /// The ragged form: the token tile's local rows through the gather and
  /// the scatter (HopperMatmulEmitter::RowMap); null: dense tiles.
  HopperMatmulEmitter::RowMap lhsRow, outRow;

private:
  /// The ragged form's `map` of a local row, else the tile's token and
  /// whether it is below the rows.
  std::pair<Value, Value> mapRow(Emitter &at,
                                 const HopperMatmulEmitter::RowMap &map,
                                 Value tokenBlock, Value row) const {
    if (map)
      return map(at, row);
    Value token = at.add(tileStart(at, tokenBlock), row);
    Value inside = below(at, token, rowCount(at));
    // A backed-up last tile's first rows are the previous tile's.
    if (backsUpLastTile())
      inside = at.andI1(inside, atMost(at, at.mul(tokenBlock, w.tokens), token));
    return {token, inside};
  }

  const WgmmaPlan &w;
  const HopperMatmulPlan &p;
  Value lhs, out, globalScale;
  Value stages; // the blocks' stages (i32 words)
  bool onHost;
};

/// One chunk's weight of a warp: per warpgroup tile, the lane's words.
SmallVector<ChunkWords, 2> loadChunk(const WgmmaPlan &w,
                                  const HopperMatmulEmitter &weights,
                                  const WgmmaEmitter &emitter, Emitter &at,
                                  Value block, Value warp, Value lane,
                                  Value chunk) {
  SmallVector<ChunkWords, 2> words;
  for (int64_t c = 0; c < w.groupTiles; ++c)
    words.push_back(weights.loadWeight(
        at, emitter.columnTile(at, block, warp, c), lane, chunk));
  return words;
}

/// Staged weights: the byte offsets in the stages of thread `thread`'s 16
/// value bytes and 4 scale codes of its warpgroup's tile `c` in stage
/// `stage`. Each thread reads back only what it copied, so its own copy
/// group's wait is all the order it needs; the layout keeps a warp's
/// 16-byte reads in whole 128-byte rows (no bank conflicts).
std::pair<Value, Value> weightSlots(const WgmmaPlan &w, Emitter &at,
                                    Value stage, Value thread, int64_t c) {
  Value base = at.add(at.index(w.stages * w.stageBytes()),
                      at.mul(stage, w.weightStageBytes()));
  Value unit = at.add(thread, c * w.threads());
  return {at.add(base, at.mul(unit, 16)),
          at.add(at.add(base, w.threads() * w.groupTiles * 16),
                 at.mul(unit, 4))};
}

/// Staged weights: thread `thread`'s copies of its words of chunk `chunk`
/// (absolute) into stage `stage`. `stageOffsets`: the shared bytes as the
/// thread's slots in stage 0 of tile 0 plus an offset of the stage and the
/// tile (copyAsyncToShared: an immediate where `stage` is a constant).
void copyWeightChunk(const WgmmaPlan &w, const HopperMatmulEmitter &weights,
                     const WgmmaEmitter &emitter, Emitter &at, Value stages,
                     Value block, Value thread, Value chunk, Value stage,
                     bool onHost, bool stageOffsets = false) {
  Value warp = at.div(thread, 32), lane = at.rem(thread, 32);
  if (!stageOffsets) {
    for (int64_t c = 0; c < w.groupTiles; ++c) {
      Value tile = emitter.columnTile(at, block, warp, c);
      auto [values, scales] = weightSlots(w, at, stage, thread, c);
      copyBytes(at, stages, values, weights.valueImage(),
                weights.valueOffset(at, tile, lane, chunk), 16, onHost);
      copyBytes(at, stages, scales, weights.scaleImage(),
                weights.scaleOffset(at, tile, lane, chunk), 4, onHost);
    }
    return;
  }
  // weightSlots is linear in the stage and the tile.
  auto [ownValues, ownScales] = weightSlots(w, at, at.index(0), thread, 0);
  for (int64_t c = 0; c < w.groupTiles; ++c) {
    Value tile = emitter.columnTile(at, block, warp, c);
    copyBytes(
        at, stages, ownValues, weights.valueImage(),
        weights.valueOffset(at, tile, lane, chunk), 16, onHost,
        stageOffset(at, stage, w.weightStageBytes(), c * 16 * w.threads()));
    copyBytes(
        at, stages, ownScales, weights.scaleImage(),
        weights.scaleOffset(at, tile, lane, chunk), 4, onHost,
        stageOffset(at, stage, w.weightStageBytes(), c * 4 * w.threads()));
  }
}

/// Staged weights: thread `thread`'s words of chunk `chunk` (absolute),
/// read back from stage `stage` (words past K zeroed, as loadChunk's).
SmallVector<ChunkWords, 2> readWeightChunk(const WgmmaPlan &w,
                                           const HopperMatmulEmitter &weights,
                                           Emitter &at, Value stages,
                                           Value thread, Value chunk,
                                           Value stage) {
  OpBuilder &b = at.builder();
  Location loc = at.location();
  Value upperInK = weights.upperHalfInK(at, chunk);
  SmallVector<ChunkWords, 2> words;
  for (int64_t c = 0; c < w.groupTiles; ++c) {
    auto [values, scales] = weightSlots(w, at, stage, thread, c);
    Value four = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()), stages,
        ValueRange{at.div(values, 4)}, false, llvm::MaybeAlign(16));
    ChunkWords d;
    weights.appendWeightWords(at, d, four, upperInK);
    d.scale.push_back(
        memref::LoadOp::create(b, loc, stages, ValueRange{at.div(scales, 4)}));
    words.push_back(d);
  }
  return words;
}

/// Whether every tile's scale codes of `words` allow the folded decode.
Value chunkFolds(const HopperMatmulEmitter &weights, Emitter &at,
                 ArrayRef<ChunkWords> words) {
  Value all = weights.folds(at, words.front());
  for (const ChunkWords &d : words.drop_front())
    all = at.andI1(all, weights.folds(at, d));
  return all;
}

SmallVector<Value> flattenChunk(ArrayRef<ChunkWords> words) {
  SmallVector<Value> all;
  for (const ChunkWords &d : words)
    llvm::append_range(all, d.flatten());
  return all;
}

SmallVector<ChunkWords, 2> unflattenChunk(const WgmmaPlan &w, ValueRange all) {
  SmallVector<ChunkWords, 2> words;
  const int64_t size = w.base.chunkValues();
  for (int64_t c = 0; c < w.groupTiles; ++c)
    words.push_back(ChunkWords::unflatten(w.base, all.slice(c * size, size)));
  return words;
}
} // namespace

/// The ragged form's tile loop: tiles slot, slot + slots, ... of the map
/// over the kernel's index arguments `indices`, carrying each tile's expert
/// and index. On return the builder is inside it, `weights`' images and
/// row maps the tile's; endRaggedTileLoop ends the iteration.
struct RaggedTileLoop {
  scf::ForOp loop;
  RaggedTileMap map;
  Value slots, lane;
};
static RaggedTileLoop beginRaggedTileLoop(Emitter &e, const WgmmaPlan &w,
                                          const RaggedForm &ragged,
                                          ValueRange indices, Value slot,
                                          Value slots, Value lane, bool onHost,
                                          HopperMatmulEmitter &weights) {
  OpBuilder &b = e.builder();
  RaggedTileLoop tiles;
  tiles.map = RaggedTileMap::get(e, ragged, w.tokens, indices, onHost);
  tiles.slots = slots;
  tiles.lane = lane;
  RaggedTile first = tiles.map.find(e, slot, lane);
  tiles.loop = scf::ForOp::create(b, e.location(), slot, first.tiles, slots,
                                  ValueRange{first.expert, first.tile});
  b.setInsertionPointToStart(tiles.loop.getBody());
  RaggedSlice slice = beginRaggedSlice(e, weights, w.tokens, ragged,
                                       tiles.loop.getRegionIterArgs()[0],
                                       indices);
  enterRaggedGroup(e, weights, slice, tiles.loop.getRegionIterArgs()[1]);
  return tiles;
}

/// Ends an iteration of `tiles`: yields the next tile's expert and index,
/// read from the map only where there is one (rarely: the slots are the
/// experts with rows), so that a block with one tile reads it once.
static void endRaggedTileLoop(Emitter &e, const RaggedTileLoop &tiles) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  scf::ForOp loop = tiles.loop;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(loop.getBody());
  Value next = e.add(loop.getInductionVar(), tiles.slots);
  auto more = scf::IfOp::create(b, loc, TypeRange(loop.getRegionIterArgs()),
                                below(e, next, loop.getUpperBound()),
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&more.getThenRegion().front());
    RaggedTile found = tiles.map.find(e, next, tiles.lane);
    scf::YieldOp::create(b, loc, ValueRange{found.expert, found.tile});
    b.setInsertionPointToStart(&more.getElseRegion().front());
    scf::YieldOp::create(b, loc, loop.getRegionIterArgs());
  }
  scf::YieldOp::create(b, loc, more.getResults());
}

static gpu::GPUFuncOp buildWgmmaKernel(MixedMatmulStorageOp op,
                                       const WgmmaPlan &w,
                                       gpu::GPUModuleOp kernels,
                                       StringRef name, ArrayRef<Type> argTypes,
                                       const MixedMatmulOptions &options,
                                       const RaggedForm *ragged) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  const HopperMatmulPlan &p = w.base;
  KernelSignature signature;
  signature.name = name.str();
  signature.arguments.assign(argTypes.begin(), argTypes.end());
  if (w.tensorMapCopies)
    signature.arguments.push_back(tma::getTensorMapArgumentType(context));
  signature.noAliasBuffers = 4;
  signature.blockSize = static_cast<int32_t>(w.threads());
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder b(context);
  if (const int64_t registers =
          options.maxRegisters ? options.maxRegisters : w.maxRegisters)
    function->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      b.getI32IntegerAttr(static_cast<int32_t>(registers)));
  // The swizzle is a function of the address: stages start on 1024 bytes.
  Block &entry = function.getBody().front();
  Value stages, barriers;
  if (w.tensorMapCopies) {
    // One mbarrier per stage: its phases complete as the TMA copies of
    // chunks s, s + S, ... land.
    barriers = addSharedBuffer(
        function, getSharedMemRefType({w.stages}, b.getI64Type()), loc, 8);
    b.setInsertionPointToStart(&entry);
  } else {
    stages = addSharedBuffer(
        function, getSharedMemRefType({w.stageWords()}, b.getI32Type()), loc,
        /*alignment=*/kSwizzleAtomBytes);
    b.setInsertionPointToStart(&entry);
  }
  Emitter e(b, loc);
  Value lhs = entry.getArgument(0), values = entry.getArgument(1),
        scales = entry.getArgument(2), out = entry.getArgument(3),
        globalScale = entry.getArgument(4);
  HopperMatmulEmitter weights(p, lhs, values, scales, out, globalScale,
                              Value(), /*onHost=*/false);
  WgmmaEmitter emitter(w, lhs, out, globalScale, stages, /*onHost=*/false);
  if (argTypes.size() > 5 && !ragged)
    weights.rows = emitter.rows = entry.getArgument(5);
  // Programmatic dependent launch, as the decode kernel's: what the
  // previous kernel may write (activations, routing) is read, and the
  // output written, only after griddepcontrol.wait; the ragged form waits
  // first, before its routing.
  if (ragged)
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = e.rem(thread, 32), warp = e.div(thread, 32);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  // Grid y: the token tile; in the ragged form the expert, whose rows the
  // block walks in token tiles (local rows through the row maps).
  Value tokenBlock = ragged ? e.index(0)
                            : gpu::BlockIdOp::create(b, loc,
                                                     gpu::Dimension::y)
                                  .getResult();
  // The block's share of the chunks, [firstChunk, firstChunk + chunkCount):
  // split z of the cluster (grid z) takes chunks [z C / S, (z + 1) C / S).
  Value firstChunk = e.index(0), chunkCount = e.index(p.chunks);
  Value splitIndex;
  if (w.split > 1) {
    splitIndex = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    std::tie(firstChunk, chunkCount) = splitChunks(e, w, splitIndex);
    function->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                      b.getDenseI32ArrayAttr(
                          {1, 1, static_cast<int32_t>(w.split)}));
  }
  // Whether relative chunk `r` is one of the block's.
  auto ownsChunk = [&](Emitter &at, Value r) -> Value {
    return arith::CmpIOp::create(at.builder(), at.location(),
                                 arith::CmpIPredicate::ult, r, chunkCount);
  };
  // The stages' shared address: dynamic shared memory with TMA (the kernel
  // touches the stages by address only: TMA writes, wgmma reads).
  Value stagesAddress =
      w.tensorMapCopies
          ? tma::alignedDynamicSharedAddress(b, loc, function,
                                             kSwizzleAtomBytes)
          : memref::ExtractAlignedPointerAsIndexOp::create(b, loc, stages)
                .getResult();
  Value sharedBase =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), stagesAddress);
  const Value descriptorBase = emitter.descriptorBase(e, sharedBase);
  const int64_t chunks = p.chunks, depth = w.stages;
  auto chunkAt = [&](Emitter &at, Value step) -> Value {
    return arith::MinUIOp::create(at.builder(), at.location(), step,
                                  at.index(chunks - 1));
  };
  // TMA: the tensor map (the last argument), the stages' and mbarriers'
  // shared addresses, and thread 0's copy of chunk `chunk` into its stage.
  // (Chunks below are relative to the block's first: chunk r goes to
  // stage r % S.)
  Value tensorMap, barriersAddress, thread0;
  auto copyByTensorMap = [&](Emitter &at, Value chunk) {
    Value stage = at.rem(chunk, depth);
    tma::loadTensorBox(
        at.builder(), at.location(), tensorMap,
        at.toI32(at.add(stagesAddress, at.mul(stage, w.stageBytes()))),
        at.toI32(at.add(barriersAddress, at.mul(stage, 8))),
        at.toI32(at.mul(at.add(firstChunk, chunk), kChunkK)),
        at.toI32(emitter.tileStart(at, tokenBlock)), w.stageBytes());
  };
  // `body` where relative chunk `s` (static) is one of the block's: none
  // past the chunks; without a split, all the others.
  auto ifOwned = [&](int64_t s, function_ref<void()> body) {
    if (s >= chunks)
      return;
    if (w.split == 1)
      return body();
    auto owned = scf::IfOp::create(b, loc, ownsChunk(e, e.index(s)),
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&owned.getThenRegion().front());
    body();
  };
  // The ragged form: a loop over the tile map's tiles, slot (grid y) and
  // then every slots-th, everything below per tile: the tile's expert,
  // its images and rows (the cluster's blocks of a split share the slot,
  // so they run the same tiles).
  std::optional<RaggedTileLoop> tiles;
  if (ragged) {
    Value slot = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value slots = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
    tiles = beginRaggedTileLoop(e, w, *ragged,
                                entry.getArguments().drop_front(5), slot,
                                slots, lane, /*onHost=*/false, weights);
    emitter.lhsRow = weights.lhsRow;
    emitter.outRow = weights.outRow;
  }
  const WgmmaEmitter::CopyRows copyRows =
      emitter.copyRows(e, tokenBlock, thread);
  if (w.tensorMapCopies) {
    tensorMap = entry.getArgument(function.getNumArguments() - 1);
    barriersAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, barriers);
    thread0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                                    e.index(0));
    {
      auto first = scf::IfOp::create(b, loc, thread0, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      tma::prefetchTensorMap(b, loc, tensorMap);
      tma::initMbarriers(b, loc, barriersAddress, depth);
    }
    gpu::BarrierOp::create(b, loc);
  }
  // Weight words in registers: chunk 0's, and the queue of chunks 1 .. D,
  // oldest first, carried by the loop; staged weights: none (each chunk's
  // words come from its stage). Loaded first, before the wait for the
  // previous kernel: no kernel writes the weight.
  SmallVector<Value> fragments, queue;
  SmallVector<ChunkWords, 2> first;
  if (!w.stagedWeights) {
    first = loadChunk(w, weights, emitter, e, block, warp, lane, firstChunk);
    for (int64_t d = 1; d <= w.weightDepth; ++d)
      llvm::append_range(queue, flattenChunk(loadChunk(
                                    w, weights, emitter, e, block, warp, lane,
                                    chunkAt(e, e.add(firstChunk, d)))));
  }
  // (Staged weights are copied with each chunk's activations, in that
  // chunk's cp.async group: issued before the wait, they would all join
  // chunk 0's group, whose wait would then take them all.)
  if (!ragged)
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  // Prologue: chunks 0 .. S - 2 into their stages (cp.async: one group
  // each, empty groups past the chunks so that every thread counts the
  // same); then chunk 0's weight decoded.
  if (w.tensorMapCopies) {
    auto first = scf::IfOp::create(b, loc, thread0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    for (int64_t s = 0; s + 1 < depth; ++s)
      ifOwned(s, [&] { copyByTensorMap(e, e.index(s)); });
  } else {
    for (int64_t s = 0; s + 1 < depth; ++s) {
      ifOwned(s, [&] {
        emitter.copyChunk(e, tokenBlock, thread,
                          e.add(firstChunk, e.index(s)), e.index(s),
                          copyRows);
        if (w.stagedWeights)
          copyWeightChunk(w, weights, emitter, e, stages, block, thread,
                          e.add(firstChunk, e.index(s)), e.index(s),
                          /*onHost=*/false);
      });
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
  }
  auto vote = [&](OpBuilder &at, Location l, Value folds) -> Value {
    Emitter x(at, l);
    return NVVM::VoteSyncOp::create(at, l, at.getI1Type(), x.i32(-1), folds,
                                    NVVM::VoteSyncKind::all);
  };
  if (!w.stagedWeights)
    fragments = weights.decodeByVote(
        b, loc, vote(b, loc, chunkFolds(weights, e, first)), first);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  const int64_t accumulators = w.accumulators();
  SmallVector<Value> carried(accumulators, zero);
  carried.append(fragments);
  carried.append(queue);
  const int64_t queued =
      w.stagedWeights ? 0 : w.base.chunkValues() * w.groupTiles;
  const int64_t fragmentCount = w.stagedWeights ? 0 : 16 * w.groupTiles;
  // One stage: the wgmmas of a chunk on its decoded A registers, then,
  // unless the plan overlaps the next chunk's decode with them, the wait
  // for them. Overlapped, the decode (its vote's branch included) lies
  // between the commit and the wait, and the wait (inline PTX) takes the
  // fragments the wgmmas read as operands: live until it, they cannot
  // share registers with the fragments the decode writes, which ptxas
  // (13.0) would otherwise answer by serializing every wgmma of the kernel
  // (advisory C7513: "non wgmma instructions defining input registers of a
  // wgmma between start and end of the pipeline stage").
  auto wgmmaStage = [&](OpBuilder &sb, Location sl, ArrayRef<Value> start,
                        ValueRange fragments, ArrayRef<Value> descriptors) {
    SmallVector<Value> a(fragments);
    SmallVector<Value> sums(start);
    NVVM::WgmmaFenceAlignedOp::create(sb, sl);
    const int64_t n = w.tokens / 2;
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t c = 0; c < w.groupTiles; ++c) {
        SmallVector<Value> updated = emitter.mma(
            sb, sl, ArrayRef<Value>(sums).slice(c * n, n),
            ArrayRef<Value>(a).slice(16 * c + 4 * j, 4), descriptors[j]);
        std::copy(updated.begin(), updated.end(), sums.begin() + c * n);
      }
    NVVM::WgmmaGroupSyncAlignedOp::create(sb, sl);
    if (!w.overlapDecode)
      NVVM::WgmmaWaitGroupSyncOp::create(sb, sl, 0);
    return sums;
  };
  // The descriptors' base the chunks use: in the chunk groups a copy
  // made in each group, so that LLVM does not hoist the S x 4 descriptors
  // of a group out of the loop, each live in its registers throughout.
  Value stepDescriptorBase = descriptorBase;
  // Chunk `i` (relative) of the loop on the carried values `args`,
  // returning the next ones. `staticStage`: i % S, where the emission
  // knows it (the chunk groups below).
  auto chunkStep = [&](OpBuilder &lb, Location ll, Value i,
                       std::optional<int64_t> staticStage,
                       ValueRange args) -> SmallVector<Value> {
    Emitter body(lb, ll);
    SmallVector<Value> sums(args.take_front(accumulators));
    ValueRange fragments = args.slice(accumulators, fragmentCount);
    ValueRange queue = args.drop_front(accumulators + fragmentCount);
    SmallVector<ChunkWords, 2> next;
    if (!w.stagedWeights)
      next = unflattenChunk(w, queue.take_front(queued));
    // Stage i has landed (TMA: phase i / S of its mbarrier; cp.async:
    // at most S - 2 later groups pending) and every warpgroup is done
    // with chunk i - 1's stage.
    if (w.tensorMapCopies)
      tma::waitParity(lb, ll,
                      body.toI32(body.add(barriersAddress,
                                          body.mul(body.rem(i, depth), 8))),
                      body.band(body.toI32(body.div(i, depth)), 1));
    else
      NVVM::CpAsyncWaitGroupOp::create(lb, ll, depth - 2);
    gpu::BarrierOp::create(lb, ll);
    // Chunk i + S - 1 into chunk i - 1's stage (free since the
    // barrier): cp.async here, every thread's share; TMA after this
    // chunk's wgmmas and decode, so that thread 0's issue is not on
    // the path to its warpgroup's wgmmas.
    auto issueCopies = [&] {
      Value ahead = body.add(i, depth - 1);
      Value copies = ownsChunk(body, ahead);
      if (w.tensorMapCopies)
        copies = body.andI1(copies, thread0);
      auto copy = scf::IfOp::create(lb, ll, copies,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(lb);
      lb.setInsertionPointToStart(&copy.getThenRegion().front());
      Emitter in(lb, ll);
      if (w.tensorMapCopies) {
        copyByTensorMap(in, ahead);
      } else {
        Value aheadStage = staticStage
                               ? in.index((*staticStage + depth - 1) % depth)
                               : in.rem(ahead, depth);
        emitter.copyChunk(in, tokenBlock, thread, in.add(firstChunk, ahead),
                          aheadStage, copyRows, staticStage.has_value());
        if (w.stagedWeights)
          copyWeightChunk(w, weights, emitter, in, stages, block, thread,
                          in.add(firstChunk, ahead), aheadStage,
                          /*onHost=*/false, staticStage.has_value());
      }
    };
    if (!w.tensorMapCopies) {
      issueCopies();
      NVVM::CpAsyncCommitGroupOp::create(lb, ll);
    }
    // Every wgmma input is defined before the fence: ptxas serializes
    // the wgmmas of a stage whose inputs other instructions define
    // between them.
    Value stage = staticStage ? body.index(*staticStage) : body.rem(i, depth);
    SmallVector<Value, 4> descriptors;
    for (int64_t j = 0; j < 4; ++j)
      descriptors.push_back(
          emitter.descriptor(body, stepDescriptorBase, stage, j));
    // Staged weights: this chunk's words from its stage, decoded, then
    // its wgmmas (and the wait for them).
    if (w.stagedWeights) {
      SmallVector<ChunkWords, 2> words = readWeightChunk(
          w, weights, body, stages, thread, body.add(firstChunk, i), stage);
      SmallVector<Value> a = weights.decodeByVote(
          lb, ll, vote(lb, ll, chunkFolds(weights, body, words)), words);
      return wgmmaStage(lb, ll, sums, a, descriptors);
    }
    // Chunk i + D + 1's words load while the wgmmas run (past the last
    // chunk: the last again, unused).
    SmallVector<ChunkWords, 2> after = loadChunk(
        w, weights, emitter, body, block, warp, lane,
        chunkAt(body, body.add(body.add(firstChunk, i), w.weightDepth + 1)));
    sums = wgmmaStage(lb, ll, sums, fragments, descriptors);
    SmallVector<Value> decoded = weights.decodeByVote(
        lb, ll, vote(lb, ll, chunkFolds(weights, body, next)), next);
    if (w.overlapDecode) {
      std::string constraints;
      for (size_t f = 0; f < fragments.size(); ++f)
        constraints += f ? ",r" : "r";
      inlinePtx(lb, ll, Type(), fragments, "wgmma.wait_group.sync.aligned 0;",
                constraints);
    }
    if (w.tensorMapCopies)
      issueCopies();
    SmallVector<Value> yielded = sums;
    yielded.append(decoded);
    llvm::append_range(yielded, queue.drop_front(queued));
    yielded.append(flattenChunk(after));
    return yielded;
  };
  auto chunkLoop = [&](Value from, ValueRange initial) {
    return scf::ForOp::create(
        b, loc, from, chunkCount, e.index(1), initial,
        [&](OpBuilder &lb, Location ll, Value i, ValueRange args) {
          scf::YieldOp::create(lb, ll,
                               chunkStep(lb, ll, i, std::nullopt, args));
        });
  };
  // Chunk groups (staged weights copied by cp.async, tiling chunk_groups):
  // the chunks in groups of S, each group's stages known to the emission,
  // so that the shared addresses of the copies are each thread's own plus
  // immediates (copyAsyncToShared); then the rest one by one (with the
  // chunks known, unrolled whole below).
  scf::ForOp loop;
  std::optional<int64_t> knownChunks = getConstantIntValue(chunkCount);
  if (w.chunkGroups) {
    Value groups =
        knownChunks ? e.index(*knownChunks / depth) : e.div(chunkCount, depth);
    auto grouped = scf::ForOp::create(
        b, loc, e.index(0), groups, e.index(1), carried,
        [&](OpBuilder &lb, Location ll, Value g, ValueRange args) {
          Emitter x(lb, ll);
          SmallVector<Value> values(args);
          stepDescriptorBase =
              inlinePtx(lb, ll, lb.getI64Type(), descriptorBase,
                        "mov.b64 $0, $1;", "=l,l")
                  .getResult(0);
          for (int64_t s = 0; s < depth; ++s)
            values = chunkStep(lb, ll, x.add(x.mul(g, depth), s), s, values);
          stepDescriptorBase = descriptorBase;
          scf::YieldOp::create(lb, ll, values);
        });
    if (knownChunks && *knownChunks % depth == 0)
      loop = grouped;
    else
      loop = chunkLoop(knownChunks ? e.index(*knownChunks / depth * depth)
                                   : e.mul(groups, depth),
                       grouped.getResults());
  } else {
    loop = chunkLoop(e.index(0), carried);
  }
  SmallVector<Value> sums(loop.getResults().take_front(accumulators));
  const int64_t n = w.tokens / 2;
  auto storeSums = [&](Emitter &at, ArrayRef<Value> all) {
    for (int64_t c = 0; c < w.groupTiles; ++c)
      emitter.store(at, block, tokenBlock, warp, lane, c,
                    all.slice(c * n, n));
  };
  if (w.split == 1) {
    storeSums(e, sums);
    // The next token tile's copies refill the stages: every warpgroup is
    // past its last wgmma first.
    if (ragged)
      gpu::BarrierOp::create(b, loc);
  } else {
    // The cluster's blocks add their sums as a reduce-scatter: each leaves
    // its sums in its own stages (every warpgroup has waited for its wgmmas
    // and no copy is in flight: the stages are free after the barrier);
    // after a cluster barrier, rank r adds the r-th S-th of the sums (its
    // own from registers, the others' through distributed shared memory),
    // in rank order as a single adder would, and stores that part of the
    // tile; the second cluster barrier keeps every block's shared memory
    // until the others have read it. One adding and storing block left the
    // others waiting for its S - 1 reads per sum and its whole tile's
    // stores (docs/performance.md, "The split's sums").
    gpu::BarrierOp::create(b, loc);
    Value partials = e.toI32(stagesAddress);
    auto slot = [&](Emitter &at, Value base, int64_t i) {
      return at.toI32(at.add(at.toIndex(base),
                             at.mul(at.add(thread, i * w.threads()), 4)));
    };
    for (int64_t i = 0; i < accumulators; ++i)
      cluster::storeSharedF32(b, loc, slot(e, partials, i), sums[i]);
    cluster::barrier(b, loc);
    for (int64_t r = 0; r < w.split; ++r) {
      auto share = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, splitIndex,
                                e.index(r)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&share.getThenRegion().front());
      SmallVector<Value> remote(w.split);
      for (int64_t q = 0; q < w.split; ++q)
        if (q != r)
          remote[q] = cluster::mapShared(b, loc, partials, e.i32(q));
      // Null where another rank stores: WgmmaEmitter::store skips them.
      SmallVector<Value> total(accumulators);
      for (int64_t i = splitShareBegin(accumulators, w.split, r);
           i < splitShareBegin(accumulators, w.split, r + 1); ++i)
        for (int64_t q = 0; q < w.split; ++q) {
          Value part =
              q == r ? sums[i]
                     : cluster::loadSharedF32(b, loc, slot(e, remote[q], i));
          total[i] =
              q ? arith::AddFOp::create(b, loc, total[i], part).getResult()
                : part;
        }
      storeSums(e, total);
    }
    cluster::barrier(b, loc);
  }
  if (tiles)
    endRaggedTileLoop(e, *tiles);
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
  // The weight words queue D chunks deep and move up one slot per chunk:
  // unrolled D times, the slots' registers stay in place (no moves). An
  // overlapped decode's fragments alternate between two sets of registers:
  // unrolled at least twice, they too stay in place. So must they in the
  // remainder: a loop of single chunks there, its fragments moved at the
  // back edge, and ptxas serializes every wgmma of the kernel (C7513). The
  // remainder is unrolled whole where its trip count is known, else by two
  // (leaving a loop of at most one chunk, which ptxas takes).
  const int64_t unroll =
      w.overlapDecode ? std::max<int64_t>(2, w.weightDepth) : w.weightDepth;
  if (w.chunkGroups) {
    if (knownChunks && *knownChunks % depth)
      (void)loopUnrollFull(loop);
  } else if (unroll > 1) {
    FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, unroll);
    if (w.overlapDecode && succeeded(unrolled) && unrolled->epilogueLoopOp) {
      scf::ForOp remainder = *unrolled->epilogueLoopOp;
      if (remainder.getStaticTripCount())
        (void)loopUnrollFull(remainder);
      else if (unroll > 2)
        (void)loopUnrollByFactor(remainder, 2);
    }
  }
  return function;
}

static LogicalResult checkWgmmaChip(MixedMatmulStorageOp op,
                                    const nvvm::NVIDIAChip &chip) {
  if (chip.hasWGMMA)
    return success();
  return op.emitOpError()
         << "the Hopper-layout matmul above 64 rows uses wgmma (sm_90a); "
         << chip.name
         << " has none: convert_layout the weight to "
            "#microscale.strided<major_dim = -2> for the K-major kernel";
}

void HopperWgmmaKernel::launch(OpBuilder &b, Location loc, Value tokenBlocks,
                               ValueRange operands, Value lhs) const {
  Emitter at(b, loc);
  SmallVector<Value> arguments(operands);
  Value sharedBytes;
  if (tensorMapRows) {
    arguments.push_back(tma::createSwizzled128TensorMap(
        b, loc, lhs, tensorMapRows, kRowBytes / 2));
    sharedBytes = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                               dynamicSharedBytes);
  }
  gpu::LaunchFuncOp::create(
      b, loc, function,
      gpu::KernelDim3{at.index(columnBlocks), tokenBlocks, at.index(split)},
      gpu::KernelDim3{at.index(threads), at.index(1), at.index(1)},
      sharedBytes, arguments);
}

/// The kernel of plan `w` and what its launch needs.
static HopperWgmmaKernel makeWgmmaKernel(MixedMatmulStorageOp op,
                                         const WgmmaPlan &w,
                                         gpu::GPUModuleOp kernels,
                                         StringRef name,
                                         ArrayRef<Type> argTypes,
                                         const MixedMatmulOptions &options,
                                         const RaggedForm *ragged) {
  HopperWgmmaKernel kernel;
  kernel.function =
      buildWgmmaKernel(op, w, kernels, name, argTypes, options, ragged);
  kernel.columnBlocks = w.columnBlocks();
  kernel.tokens = w.tokens;
  kernel.threads = w.threads();
  kernel.split = w.split;
  if (w.tensorMapCopies) {
    kernel.tensorMapRows = w.tokens;
    kernel.dynamicSharedBytes = w.dynamicSharedBytes();
  }
  return kernel;
}

FailureOr<HopperWgmmaKernel> mlir::microscale::buildHopperWgmmaKernel(
    MixedMatmulStorageOp op, gpu::GPUModuleOp kernels, StringRef name,
    const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options, int64_t planRows,
    ArrayRef<Type> argTypes) {
  if (failed(checkWgmmaChip(op, chip)))
    return failure();
  FailureOr<WgmmaPlan> planned = planWgmmaMatmul(
      op, options, chip, smCount ? smCount : chip.defaultSMCount, planRows);
  if (failed(planned))
    return failure();
  return makeWgmmaKernel(op, *planned, kernels, name, argTypes, options,
                         nullptr);
}

SmallVector<Type>
mlir::microscale::getHopperLayoutKernelArguments(MixedMatmulStorageOp op,
                                                 bool dynamicRows) {
  HopperMatmulPlan p;
  p.k = op.getRhsType().getShape()[0];
  p.n = op.getRhsType().getShape()[1];
  p.m = dynamicRows ? 0 : cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  return kernelArguments(op, p, dynamicRows);
}

LogicalResult mlir::microscale::outlineHopperWgmmaMatmul(
    MixedMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  const int64_t m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  SmallVector<Type> types = getHopperLayoutKernelArguments(op, false);
  FailureOr<HopperWgmmaKernel> kernel = buildHopperWgmmaKernel(
      op, kernels, ("mixed_matmul_wgmma_" + Twine(index)).str(), chip,
      smCount, options, m, types);
  if (failed(kernel))
    return failure();
  OpBuilder builder(op);
  Emitter host(builder, op.getLoc());
  kernel->launch(builder, op.getLoc(),
                 host.index(llvm::divideCeil(m, kernel->tokens)),
                 kernelOperands(builder, op, types), op.getLhs());
  op.erase();
  return success();
}

/// The token tile the ragged form is planned for: twice `meanRows` ragged
/// rows per expert (routing is uneven: with random top-k routing most
/// experts then fit one tile), from 8 to 256.
static int64_t raggedPlanRows(int64_t meanRows) {
  return std::clamp<int64_t>(2 * meanRows, 8, 256);
}

namespace {
/// Rows known at run time in the ragged form: one kernel per variant,
/// variant i planned for kRaggedMeanLimits[i] rows per expert (the last one
/// for kRaggedLastMean) and taken while the ragged rows per expert (rounded
/// up) are at most that.
constexpr int64_t kRaggedMeanLimits[] = {1, 4, 8, 16, 32, 64};
constexpr int64_t kRaggedLastMean = 128;
} // namespace

bool mlir::microscale::raggedTakesWgmma(const nvvm::NVIDIAChip &chip,
                                        const MixedMatmulOptions &options) {
  return chip.hasWGMMA && !options.splitK && !options.unroll &&
         !options.chunkK;
}

/// The ragged form's plans: one for static rows, kRaggedVariants for rows
/// known at run time (diagnostics at the op where `report`).
static FailureOr<SmallVector<WgmmaPlan>>
planRaggedVariants(MixedMatmulStorageOp op, const RaggedForm &ragged,
                   const nvvm::NVIDIAChip &chip, int64_t smCount,
                   const MixedMatmulOptions &options) {
  // (rows per expert, experts with rows) of each plan. Static rows: at
  // most one expert per ragged row has any. Rows known at run time: at
  // most one row per expert is a decode step's few tokens routed top-k,
  // planned as kFewActiveExperts experts with rows.
  constexpr int64_t kFewActiveExperts = 8;
  SmallVector<std::pair<int64_t, int64_t>> means;
  if (!ragged.dynamicRows) {
    means.push_back({ragged.meanRows(),
                     std::min(ragged.experts, ragged.raggedRows)});
  } else {
    for (int64_t mean : kRaggedMeanLimits)
      means.push_back({mean, mean <= 1 ? std::min(ragged.experts,
                                                  kFewActiveExperts)
                                       : ragged.experts});
    means.push_back({kRaggedLastMean, ragged.experts});
  }
  SmallVector<WgmmaPlan> plans;
  for (auto [mean, active] : means) {
    FailureOr<WgmmaPlan> planned =
        planWgmmaMatmul(op, options, chip,
                        smCount ? smCount : chip.defaultSMCount,
                        raggedPlanRows(mean), &ragged, active);
    if (failed(planned))
      return failure();
    plans.push_back(*planned);
  }
  return plans;
}

/// Emits at `b`, for rows known at run time: nothing when any of the three
/// counts (the last three `operands`) is 0, else a switch on the ragged
/// rows per expert (rounded up), case i emitted by `emitVariant`.
static void switchOnRaggedRows(OpBuilder &b, Location loc,
                               const RaggedForm &ragged,
                               ArrayRef<Value> operands,
                               function_ref<void(OpBuilder &, Location,
                                                 size_t)>
                                   emitVariant) {
  ValueRange counts = ValueRange(operands).take_back(3);
  emitIfAllNonZero(b, loc, counts, [&](OpBuilder &ib, Location il) {
    Emitter host(ib, il);
    Value mean = host.div(host.add(counts[0], ragged.experts - 1),
                          ragged.experts);
    emitSwitchOnLimits(ib, il, mean, kRaggedMeanLimits, emitVariant);
  });
}

LogicalResult mlir::microscale::outlineHopperWgmmaRagged(
    MixedMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  if (failed(checkWgmmaChip(op, chip)))
    return failure();
  const RaggedForm ragged = getRaggedForm(op);
  if (ragged.empty()) {
    op.erase();
    return success();
  }
  FailureOr<SmallVector<WgmmaPlan>> plans =
      planRaggedVariants(op, ragged, chip, smCount, options);
  if (failed(plans))
    return failure();
  // Every variant takes the same arguments (they depend on K and N only).
  SmallVector<Type> types =
      raggedKernelArguments(op, plans->front().base, ragged);
  SmallVector<HopperWgmmaKernel> variants;
  for (auto [i, plan] : llvm::enumerate(*plans)) {
    std::string name = ("mixed_matmul_wgmma_" + Twine(index)).str();
    if (ragged.dynamicRows)
      name += "_mean" + std::to_string(i < std::size(kRaggedMeanLimits)
                                           ? kRaggedMeanLimits[i]
                                           : kRaggedLastMean);
    variants.push_back(
        makeWgmmaKernel(op, plan, kernels, name, types, options, &ragged));
  }
  OpBuilder builder(op);
  SmallVector<Value> operands =
      raggedKernelOperands(builder, op, types, ragged);
  // Grid y: the slots of the tile map (each block takes every slots-th
  // tile: experts without rows cost no blocks, experts with many rows
  // many).
  auto launch = [&](OpBuilder &b, Location loc, size_t i) {
    Emitter host(b, loc);
    variants[i].launch(b, loc, countRaggedSlots(host, ragged, operands),
                       operands, op.getLhs());
  };
  if (ragged.dynamicRows)
    switchOnRaggedRows(builder, op.getLoc(), ragged, operands, launch);
  else
    launch(builder, op.getLoc(), 0);
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Host emulation
//===----------------------------------------------------------------------===//

/// One wgmma m64nTk16 of a warpgroup on the host, written from the
/// element's side of the PTX ISA: A(r, k) is half k % 2 of register
/// (r % 16) / 8 + 2 (k / 8) of lane 4 (r % 8) + (k % 8) / 2 of warp r / 16
/// (the mma.sync m16n8k16 table per warp); B(k, t) is read at the address
/// the descriptor gives (start + (t / 8) SBO + (t % 8) 128 + 2 k, then the
/// 128-byte swizzle: bits 4-6 XOR bits 7-9), decoding the descriptor's
/// fields, not the kernel's arithmetic; D(r, t) is register
/// 4 (t / 8) + 2 ((r % 16) / 8) + t % 2 of lane 4 (r % 8) + (t % 8) / 2.
/// `a`: [warp][tile][32 lanes][16] i32 (tile `c`'s step `j` at 4 j),
/// `acc`: [split][warp][tile][32 lanes][T / 2] f32 (the block of split
/// `split`'s), `stages`: i32 words.
static void emulateWgmma(OpBuilder &b, Location loc, const WgmmaPlan &w,
                         Value a, Value acc, Value stages, Value split,
                         Value group, int64_t c, int64_t j,
                         Value descriptor) {
  Emitter e(b, loc);
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  auto field = [&](int64_t shift, int64_t mask) {
    Value v = arith::ShRUIOp::create(
        b, loc, descriptor, arith::ConstantIntOp::create(b, loc, i64, shift));
    v = arith::AndIOp::create(b, loc, v,
                              arith::ConstantIntOp::create(b, loc, i64, mask));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  Value start = e.mul(field(0, 0x3FFF), 16);
  Value strideBytes = e.mul(field(32, 0x3FFF), 16);
  // Swizzle mode 1 (128B) is the only one the kernel uses; anything else
  // reads garbage here, as the hardware would read another layout.
  Value swizzle128 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           field(62, 3), e.index(1));
  auto half = [&](Emitter &x, Value word, Value which) {
    Value bits = x.shl(x.band(x.shrV(word, x.toI32(x.mul(which, 16))), 0xFFFF),
                       16);
    return arith::BitcastOp::create(x.builder(), x.location(), f32, bits)
        .getResult();
  };
  auto rows = scf::ForOp::create(b, loc, e.index(0), e.index(64), e.index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rows.getBody());
  Value r = rows.getInductionVar();
  auto tokens =
      scf::ForOp::create(b, loc, e.index(0), e.index(w.tokens), e.index(1));
  b.setInsertionPointToStart(tokens.getBody());
  Value t = tokens.getInductionVar();
  Value warp = e.add(e.mul(group, 4), e.div(r, 16));
  Value laneD = e.add(e.mul(e.rem(r, 8), 4), e.div(e.rem(t, 8), 2));
  Value regD = e.add(e.add(e.mul(e.div(t, 8), 4), e.mul(e.div(e.rem(r, 16), 8), 2)),
                     e.rem(t, 2));
  Value startSum = memref::LoadOp::create(
      b, loc, acc, ValueRange{split, warp, e.index(c), laneD, regD});
  auto sum = scf::ForOp::create(
      b, loc, e.index(0), e.index(16), e.index(1), ValueRange{startSum},
      [&](OpBuilder &kb, Location kl, Value k, ValueRange partial) {
        Emitter x(kb, kl);
        Value laneA = x.add(x.mul(x.rem(r, 8), 4), x.div(x.rem(k, 8), 2));
        Value regA = x.add(x.add(x.div(x.rem(r, 16), 8), x.mul(x.div(k, 8), 2)),
                           4 * j);
        Value av = half(x,
                        memref::LoadOp::create(
                            kb, kl, a, ValueRange{warp, x.index(c), laneA, regA}),
                        x.rem(k, 2));
        Value address =
            x.add(x.add(x.add(start, x.mul(x.div(t, 8), strideBytes)),
                        x.mul(x.rem(t, 8), kRowBytes)),
                  x.mul(k, 2));
        Value swizzled = arith::XOrIOp::create(
            kb, kl, address, x.mul(x.rem(x.div(address, 128), 8), 16));
        address = x.select(swizzle128, swizzled, address);
        // The stages' shared address is 0 here: the buffer's own offsets.
        Value word = memref::LoadOp::create(kb, kl, stages,
                                            ValueRange{x.div(address, 4)});
        Value bv = half(x, word, x.rem(x.div(address, 2), 2));
        Value product = arith::MulFOp::create(kb, kl, av, bv);
        scf::YieldOp::create(
            kb, kl,
            ValueRange{arith::AddFOp::create(kb, kl, partial[0], product)});
      });
  memref::StoreOp::create(b, loc, sum.getResult(0), acc,
                          ValueRange{split, warp, e.index(c), laneD, regD});
}

std::optional<WgmmaTile> mlir::microscale::planHopperWgmmaTile(
    MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options, int64_t planRows) {
  ScopedDiagnosticHandler silence(op.getContext(),
                                  [](Diagnostic &) { return success(); });
  if (!chip.hasWGMMA)
    return std::nullopt;
  FailureOr<WgmmaPlan> planned =
      planWgmmaMatmul(op, options, chip,
                      smCount ? smCount : chip.defaultSMCount, planRows);
  if (failed(planned))
    return std::nullopt;
  return WgmmaTile{planned->tokens, planned->warpgroups, planned->split};
}

bool mlir::microscale::canPlanHopperWgmma(MixedMatmulStorageOp op,
                                          const nvvm::NVIDIAChip &chip,
                                          int64_t smCount,
                                          const MixedMatmulOptions &options,
                                          int64_t planRows) {
  return planHopperWgmmaTile(op, chip, smCount, options, planRows)
      .has_value();
}

static void emitWgmmaEmulation(OpBuilder &b, MixedMatmulStorageOp op,
                               const WgmmaPlan &w, ArrayRef<Value> args,
                               const RaggedForm *ragged);

bool mlir::microscale::emitHopperWgmmaEmulation(
    OpBuilder &b, MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip,
    int64_t smCount, const MixedMatmulOptions &options, int64_t planRows,
    ArrayRef<Value> args) {
  FailureOr<WgmmaPlan> planned;
  {
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (!chip.hasWGMMA)
      return false;
    planned = planWgmmaMatmul(op, options, chip,
                              smCount ? smCount : chip.defaultSMCount,
                              planRows);
    if (failed(planned))
      return false;
  }
  emitWgmmaEmulation(b, op, *planned, args, nullptr);
  return true;
}

/// The emulation of plan `w`'s kernel at `b` on the kernel's operands
/// `args` (the ragged form's where `ragged` is given).
static void emitWgmmaEmulation(OpBuilder &b, MixedMatmulStorageOp op,
                               const WgmmaPlan &w, ArrayRef<Value> args,
                               const RaggedForm *ragged) {
  loadHostEmulationDialects(op.getContext());
  const HopperMatmulPlan &p = w.base;
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard outer(b);
  Emitter e(b, loc);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value stages = memref::AllocaOp::create(
      b, loc, MemRefType::get({w.stageWords()}, i32),
      ValueRange{}, b.getI64IntegerAttr(kSwizzleAtomBytes));
  HopperMatmulEmitter weights(p, args[0], args[1], args[2], args[3], args[4],
                              Value(), /*onHost=*/true);
  WgmmaEmitter emitter(w, args[0], args[3], args[4], stages, /*onHost=*/true);
  Value rows = args.size() > 5 && !ragged ? args[5] : Value();
  weights.rows = emitter.rows = rows;
  const int64_t warps = 4 * w.warpgroups, n = w.tokens / 2;
  // Each split's block's sums, added in rank order at the end as the
  // cluster's blocks add them.
  Value acc = memref::AllocaOp::create(
      b, loc, MemRefType::get({w.split, warps, w.groupTiles, 32, n}, f32));
  Value aRegs = memref::AllocaOp::create(
      b, loc, MemRefType::get({warps, w.groupTiles, 32, 16}, i32));
  auto loop = [&](Value lo, Value hi) {
    auto forOp = scf::ForOp::create(b, loc, lo, hi, e.index(1));
    b.setInsertionPointToStart(forOp.getBody());
    return forOp.getInductionVar();
  };
  auto upTo = [&](int64_t count) { return loop(e.index(0), e.index(count)); };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value tokenBlock;
  std::optional<RaggedTileLoop> tiles;
  if (ragged) {
    // Grid y, a slot of the tile map's, and the kernel's loop over its
    // tiles.
    Value slots = countRaggedSlots(e, *ragged, args);
    Value slot = loop(e.index(0), slots);
    tiles = beginRaggedTileLoop(e, w, *ragged, args.drop_front(5), slot,
                                slots, Value(), /*onHost=*/true, weights);
    emitter.lhsRow = weights.lhsRow;
    emitter.outRow = weights.outRow;
    tokenBlock = e.index(0);
  } else {
    tokenBlock =
        rows ? loop(e.index(0), e.div(e.add(rows, w.tokens - 1), w.tokens))
             : upTo(w.tokenBlocks());
  }
  Value block = upTo(w.columnBlocks());
  {
    OpBuilder::InsertionGuard guard(b);
    Value z = upTo(w.split), warp = upTo(warps), c = upTo(w.groupTiles),
          lane = upTo(32), i = upTo(n);
    memref::StoreOp::create(b, loc, zero, acc,
                            ValueRange{z, warp, c, lane, i});
  }
  {
    OpBuilder::InsertionGuard guard(b);
    // Split z's block takes chunks [z C / S, (z + 1) C / S) and copies its
    // r-th into stage r % S.
    Value z = upTo(w.split);
    auto [firstChunk, chunkCount] = splitChunks(e, w, z);
    Value relative = loop(e.index(0), chunkCount);
    Value chunk = e.add(firstChunk, relative);
    Value stage = e.rem(relative, w.stages);
    if (w.tensorMapCopies) {
      emitter.emulateTensorBox(e, tokenBlock, chunk, stage);
    } else {
      OpBuilder::InsertionGuard inner(b);
      Value thread = upTo(w.threads());
      // The copies' shared bytes as the chunk groups address them (each
      // thread's own plus offsets of the stage, the unit and the tile):
      // the same bytes as the rolled loop's, checked here.
      emitter.copyChunk(e, tokenBlock, thread, chunk, stage,
                        emitter.copyRows(e, tokenBlock, thread),
                        /*stageOffsets=*/true);
      if (w.stagedWeights)
        copyWeightChunk(w, weights, emitter, e, stages, block, thread, chunk,
                        stage, /*onHost=*/true, /*stageOffsets=*/true);
    }
    {
      OpBuilder::InsertionGuard inner(b);
      Value warp = upTo(warps);
      // A lane's words: from the stage it copied them into (staged
      // weights), else loaded.
      auto wordsOf = [&](Emitter &x, Value lane) {
        if (w.stagedWeights)
          return readWeightChunk(w, weights, x, stages,
                                 x.add(x.mul(warp, 32), lane), chunk, stage);
        return loadChunk(w, weights, emitter, x, block, warp, lane, chunk);
      };
      auto vote = scf::ForOp::create(
          b, loc, e.index(0), e.index(32), e.index(1),
          ValueRange{arith::ConstantIntOp::create(b, loc, 1, 1)},
          [&](OpBuilder &lb, Location ll, Value lane, ValueRange all) {
            Emitter x(lb, ll);
            SmallVector<ChunkWords, 2> words = wordsOf(x, lane);
            scf::YieldOp::create(
                lb, ll,
                ValueRange{x.andI1(all[0], chunkFolds(weights, x, words))});
          });
      Value lane = upTo(32);
      SmallVector<ChunkWords, 2> words = wordsOf(e, lane);
      SmallVector<Value> fragments =
          weights.decodeByVote(b, loc, vote.getResult(0), words);
      for (int64_t f = 0; f < 16 * w.groupTiles; ++f)
        memref::StoreOp::create(
            b, loc, fragments[f], aRegs,
            ValueRange{warp, e.index(f / 16), lane, e.index(f % 16)});
    }
    // The kernel's wgmmas in its order: step j, then tile, per warpgroup.
    Value group = upTo(w.warpgroups);
    Value sharedBase =
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t c = 0; c < w.groupTiles; ++c)
        emulateWgmma(b, loc, w, aRegs, acc, stages, z, group, c, j,
                     emitter.descriptor(
                         e, emitter.descriptorBase(e, sharedBase), stage, j));
  }
  Value warp = upTo(warps), lane = upTo(32);
  // Rank r of a split stores its share of the sums (the kernel's
  // reduce-scatter), the rest left null: a share missing a sum leaves its
  // output unwritten here as on the GPU.
  const int64_t accumulators = w.accumulators();
  for (int64_t r = 0; r < w.split; ++r)
    for (int64_t c = 0; c < w.groupTiles; ++c) {
      SmallVector<Value> sums(n);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t flat = c * n + i;
        if (flat < splitShareBegin(accumulators, w.split, r) ||
            flat >= splitShareBegin(accumulators, w.split, r + 1))
          continue;
        for (int64_t z = 0; z < w.split; ++z) {
          Value part = memref::LoadOp::create(
              b, loc, acc,
              ValueRange{e.index(z), warp, e.index(c), lane, e.index(i)});
          sums[i] = z ? arith::AddFOp::create(b, loc, sums[i], part).getResult()
                      : part;
        }
      }
      emitter.store(e, block, tokenBlock, warp, lane, c, sums);
    }
  if (tiles)
    endRaggedTileLoop(e, *tiles);
}

bool mlir::microscale::emulateHopperWgmmaRaggedOnHost(
    MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  const RaggedForm ragged = getRaggedForm(op);
  FailureOr<SmallVector<WgmmaPlan>> plans;
  {
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (!chip.hasWGMMA)
      return false;
    plans = planRaggedVariants(op, ragged, chip, smCount, options);
    if (failed(plans))
      return false;
  }
  loadHostEmulationDialects(op.getContext());
  OpBuilder b(op);
  if (!ragged.empty()) {
    SmallVector<Value> args = raggedKernelOperands(
        b, op, raggedKernelArguments(op, plans->front().base, ragged),
        ragged);
    auto emulate = [&](OpBuilder &vb, Location, size_t i) {
      emitWgmmaEmulation(vb, op, (*plans)[i], args, &ragged);
    };
    if (ragged.dynamicRows)
      switchOnRaggedRows(b, op.getLoc(), ragged, args, emulate);
    else
      emulate(b, op.getLoc(), 0);
  }
  op.erase();
  return true;
}

bool mlir::microscale::emulateHopperWgmmaMatmulOnHost(
    MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  OpBuilder b(op);
  SmallVector<Value> args =
      kernelOperands(b, op, getHopperLayoutKernelArguments(op, false));
  if (!emitHopperWgmmaEmulation(
          b, op, chip, smCount, options,
          cast<MemRefType>(op.getLhs().getType()).getShape()[0], args)) {
    // Nothing changed: the operands' casts go again.
    for (Value arg : llvm::reverse(args))
      if (Operation *def = arg.getDefiningOp(); def && def->use_empty())
        def->erase();
    return false;
  }
  op.erase();
  return true;
}
