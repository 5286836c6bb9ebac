//===- MixedMatmulKernel.cpp - BF16 x MXFP4 on NVIDIA tensor cores --------===//
//
// mixed_matmul_storage (bf16 activations [M, K] times an MXFP4 weight
// [K, N], or [E, K, N] experts with ragged row slices, stored K-major) as
// one kernel of mma.sync m16n8k16 (bf16 in, f32 accumulators), the weight
// dequantized in registers.
//
// Operand roles. The weight is the A operand (its 16 rows are 16 weight
// columns) and the activations are B (its 8 columns are 8 activation rows):
// the product computes out^T. At decode sizes (M <= 16) this is what keeps
// the activation traffic low: a thread holds one activation row per 8 rows
// instead of two per 16, and one decoded weight fragment feeds every 8-row
// tile of the warp.
//
// Operand order. In an m16n8k16 a thread (group g = lane / 4, q = lane % 4)
// holds A's rows g and g+8 and B's column g at the K slots 2q, 2q+1, 2q+8,
// 2q+9. Any permutation of K applied to both operands leaves the product
// unchanged, so the kernel picks one that makes every load wide and the
// decode short: in a K chunk of 128 (64 when K is not a multiple of 128)
// thread q owns the 32 (16) consecutive K values starting at 32q (16q):
// one 16-byte (8-byte) load of each of its two weight columns (the K-major
// storage), and 16-byte loads of its activation row. For step j = 2h + p
// it uses weight word h's bytes p and p+2, which already sit in the word's
// two 16-bit lanes: register a0 (a1 for column g+8) gets their low nibbles,
// K = 8h + 2p + {0, 4}; a2 (a3) their high nibbles, + {1, 5}. The B
// registers pair the same K values from the loaded activation words (a byte
// permute of two words). All 32 (16) K values of a thread share one scale.
//
// Decode: a mask and a multiply put each lane's nibble sign at bf16 bit 15
// and its exponent-mantissa bits at bits 8..6: the FP4 value times 2^-126,
// exactly. One mul.rn.bf16x2 by 2^(s-1) then gives the exact bf16 value for
// scale codes s <= 128 (scales up to 2); a warp whose chunk has a larger
// code takes the exact two-multiply path instead (2^126, then 2^(s-127); a
// warp vote keeps the choice uniform, as mma.sync needs the whole warp), so
// every code (0 and NaN included) is right: bf16 has f32's exponent range,
// and these products have two significant bits.
//
// Overlap. The K loop is software-pipelined in registers: the loads of
// stage i+1 are issued before the products of stage i, and the last stage
// is peeled, so that a warp always has a stage of loads outstanding while
// it computes. Deeper pipelines (the cp.async rings below, with more bytes
// in flight and fewer registers) measured slower on the decode shapes:
// what holds them is the K-major read pattern (about 3 TB/s even with no
// arithmetic) and the instructions per value (docs/performance.md).
//
// Any K (a multiple of 32): K is cut in chunks of 128 (or 64), the last
// one partial when K is not a multiple. Every thread's K values of a chunk
// are all in K or all past it, so a mask per thread suffices: a masked
// thread reads from K = 0 and feeds zero weights, zero activations and
// scale code 127 (staged copies zero-fill). Each warp set computes its
// last chunk first, so only its first loads, outside the loop, carry the
// mask.
//
// Split K: a block is `split` warps on the same columns and rows, each over
// its own range of K chunks (C chunks over S sets: [s C / S, (s + 1) C / S),
// any S, the ranges differing by one chunk at most); their f32 partial sums
// meet in shared memory and the first warp adds them in warp order and
// stores (a fixed order: the result does not depend on scheduling). S comes
// from a model of the chip (chooseSplit): waves of resident blocks times
// the chunks per warp, against the bandwidth bound.
//
// Rows known at run time only: one kernel per rows-per-warp variant, taking
// the row counts as arguments, and host code that picks the variant and
// the grid's rows from the rows at run time.
//
// Ragged experts (matmul_ogs' MoE form): grid z is the expert; a block
// walks its expert's row tiles (rows offsets[e] .. offsets[e] +
// counts[e]) with stride gridDim.y, reading activation row gather[r] and
// writing output row scatter[r] where those are given. Indices outside
// their tensors are never dereferenced: such rows are skipped.
//
// A weight in Triton's Hopper value layout goes to the kernel of
// HopperLayoutMatmulKernel.cpp instead (outlineMixedMatmul dispatches); the
// split-K model both use is nvvm::chooseSplitK (MatmulPlanning.h).
//
// Rows per warp: 8 or 16 at decode sizes, 32 or 64 above (each decoded
// weight fragment then feeds 4 or 8 mmas; their activations are always
// staged). Not yet: reuse of the dequantized weight across warps (a large
// M rereads the weight per 64 rows), wgmma.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"
#include "llvm/Support/MathExtras.h"

#include "microscale/Conversion/NVVM/HopperLayoutMatmul.h"
#include "HostVariantSwitch.h"
#include "MatmulPlanning.h"
#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/TranscodeBlock.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMOUTLINEMATMUL
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {

/// The kernel's shape and tiling.
struct MatmulPlan {
  int64_t m, k, n;          // m: activation rows (dense) or ragged rows
  int64_t lhsRows;          // rows of lhs (differs from m with a gather)
  int64_t outRows;          // rows of out (differs from m with a scatter)
  int64_t experts = 0;      // 0: dense
  // Rows known at run time only (any of m, lhsRows, outRows dynamic): the
  // plan is for `m` rows, the kernel takes the three counts as arguments.
  bool dynamicRows = false;
  bool gather = false, scatter = false;
  int64_t chunkK;           // K per chunk: 128, or 64
  int64_t chunks;           // K chunks, the last one partial if `tail`
  bool tail = false;        // K % chunkK != 0: the last chunk is masked
  int64_t columnGroups;     // 16-column groups per warp: 1 or 2
  int64_t rowTiles;         // 8-row tiles per warp: 1, 2, 4 or 8
  int64_t stage;            // chunks per pipeline stage
  int64_t split;            // warp sets per block, each over a K range
  int64_t columnWarps = 1;  // warps per block side by side on columns
  // Activations staged through a shared-memory ring of this many chunks
  // (cp.async; one copy serves the block's `columnWarps` warps), or 0:
  // each warp loads its own from global memory.
  int64_t activationDepth = 0;
  // The weight bytes through a per-thread cp.async ring of this depth (each
  // thread copies exactly the bytes it later reads: no barrier), with the
  // scale codes carried that far ahead in registers; or 0: loaded one
  // chunk ahead into registers.
  int64_t weightDepth = 0;

  int64_t ringDepth() const {
    return std::max(activationDepth, weightDepth);
  }
  int64_t weightUnits() const { return 2 * columnGroups; } // per thread
  int64_t weightUnitBytes() const { return chunkK / 8; }   // 16 or 8
  // One weight ring slot: every thread's units of one chunk.
  int64_t weightSlotBytes() const {
    return weightUnits() * 32 * warps() * weightUnitBytes();
  }
  int64_t weightRingBytes() const { return weightDepth * weightSlotBytes(); }

  int64_t wordsPerColumn() const { return chunkK / 32; } // per thread, chunk
  // Chunks of a warp set where they divide evenly (staged activations,
  // unrolled stages); otherwise the sets' ranges differ by one chunk.
  int64_t chunksPerWarp() const { return chunks / split; }
  bool evenSplit() const { return chunks % split == 0; }
  int64_t warpColumns() const { return 16 * columnGroups; }
  int64_t blockColumns() const { return warpColumns() * columnWarps; }
  int64_t warps() const { return split * columnWarps; }
  // The activation ring: [depth][split][warpRows][chunkK] bf16 (16-byte
  // chunks of a row swizzled, see activationChunk); one slot per chunk.
  int64_t activationSlotElements() const {
    return split * warpRows() * chunkK;
  }
  int64_t ringElements() const {
    return activationDepth * activationSlotElements();
  }
  int64_t warpRows() const { return 8 * rowTiles; }
  // Blocks along the rows: one per expert, or one per warp's rows.
  int64_t rowGroups() const {
    return experts ? experts : llvm::divideCeil(m, warpRows());
  }
  int64_t accumulators() const { return 4 * columnGroups * rowTiles; }
};

/// One chunk's loaded operands, as a thread holds them.
struct ChunkData {
  // [columnGroup][half: column g, g + 8][word]
  SmallVector<Value, 16> weight;
  // [columnGroup][half]: the E8M0 code of the thread's K block
  SmallVector<Value, 4> scale;
  // [rowTile][word]: bf16 pairs of the thread's K range
  SmallVector<Value, 32> activation;

  SmallVector<Value> flatten() const {
    SmallVector<Value> all(weight.begin(), weight.end());
    all.append(scale.begin(), scale.end());
    all.append(activation.begin(), activation.end());
    return all;
  }
  /// The inverse of flatten, for a chunk with (`withWeight`) or without
  /// its weight words.
  static ChunkData unflatten(const MatmulPlan &p, ValueRange all,
                             bool withWeight = true) {
    ChunkData d;
    const int64_t w = withWeight ? p.columnGroups * 2 * p.wordsPerColumn() : 0;
    const int64_t s = p.columnGroups * 2;
    d.weight.assign(all.begin(), all.begin() + w);
    d.scale.assign(all.begin() + w, all.begin() + w + s);
    d.activation.assign(all.begin() + w + s, all.end());
    return d;
  }
};
} // namespace

static LogicalResult checkSupported(MixedMatmulStorageOp op) {
  QTensorType rhs = op.getRhsType();
  auto lhs = cast<MemRefType>(op.getLhs().getType());
  if (!lhs.getElementType().isBF16())
    return op.emitOpError()
           << "NVIDIA lowering takes bf16 activations, got " << Type(lhs);
  if (rhs.getFormat().getReferenceFormat() != ::microscale::ref::MXFormat::mxfp4())
    return op.emitOpError() << "NVIDIA lowering takes an mxfp4 weight, got "
                            << Attribute(rhs.getFormat());
  const int64_t rank = rhs.getRank();
  auto strided = dyn_cast<StridedAttr>(rhs.getValueLayout());
  if (!strided || (strided.getMajorDim() != rank - 2 &&
                   strided.getMajorDim() != -2))
    return op.emitOpError()
           << "NVIDIA lowering needs the weight values stored K-major "
              "(#microscale.strided<major_dim = -2>), got "
           << Attribute(rhs.getValueLayout())
           << "; convert_layout first (to it, or to "
              "#microscale.hopper_value<mx_axis = -2, mma_version = 3>, "
              "which has a decode kernel of its own)";
  const int64_t k = rhs.getShape()[rank - 2], n = rhs.getShape()[rank - 1];
  if (k % 32 || n % 8 || k == 0 || n == 0)
    return op.emitOpError()
           << "NVIDIA lowering needs K a positive multiple of 32 and N of 8, "
              "got K = "
           << k << ", N = " << n;
  return success();
}

/// Half `parity` of a weight word: bytes `parity` and `parity + 2` (in the
/// word's two 16-bit lanes already) to two bf16x2 registers, the low
/// nibbles then the high nibbles, each lane the FP4 value times 2^-126
/// (sign at bit 15, exponent-mantissa bits at 8..6), then times each of
/// `multipliers` (bf16 in both lanes).
static std::pair<Value, Value>
emitDecodeWordHalf(Emitter &e, Value word, int parity,
                   ArrayRef<Value> multipliers) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  auto lanes = VectorType::get({2}, b.getBF16Type());
  auto one = VectorType::get({1}, b.getI32Type());
  Value x = parity ? e.shr(word, 8) : word;
  auto scaled = [&](Value bits) -> Value {
    Value v = vector::BitCastOp::create(
        b, loc, lanes, vector::BroadcastOp::create(b, loc, one, bits));
    for (Value multiplier : multipliers)
      v = arith::MulFOp::create(b, loc, v, multiplier);
    return vector::ExtractOp::create(
        b, loc, vector::BitCastOp::create(b, loc, one, v), 0);
  };
  // One nibble per 16-bit lane, masked, times 2^a + 2^b puts a copy at
  // each of two shifts without carries (the copies do not overlap): the
  // magnitude bits land at 8..6 and the sign at bit 15; one mask drops the
  // other bits of the two copies. Three instructions (and, imad, and)
  // where two shifts and two masked ors took four.
  auto spread = [&](int32_t nibbles, int32_t multiplier) {
    Value m = e.band(x, nibbles);
    Value copies = arith::MulIOp::create(b, loc, m, e.i32(multiplier));
    return e.band(copies, static_cast<int32_t>(0x81C081C0));
  };
  Value low = spread(0x000F000F, (1 << 6) | (1 << 12));
  Value high = spread(0x00F000F0, (1 << 2) | (1 << 8));
  return {scaled(low), scaled(high)};
}

/// A bf16 power of two from its bits, in both lanes.
static Value emitBF16Pair(Emitter &e, Value bits) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value half = arith::BitcastOp::create(
      b, loc, b.getBF16Type(),
      arith::TruncIOp::create(b, loc, b.getI16Type(), bits));
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()), half);
}

/// Registers per thread the kernel of `p` takes: its accumulators, a few
/// indices, and per chunk of loaded data (weight words, scale codes,
/// activation words) about 3.75 registers with the chunk loaded ahead
/// and the decode's temporaries. Fitted to ptxas -v on sm_90a (107, 212
/// and 168 registers at M = 1, 16 and 64; estimated 110, 219, 175); an
/// estimate only sizes the grid.
static int64_t estimateRegisters(const MatmulPlan &p, bool staged) {
  const int64_t weight =
      p.weightUnits() * p.wordsPerColumn() + p.weightUnits();
  const int64_t activations =
      staged ? 4 * p.rowTiles : p.rowTiles * p.chunkK / 8;
  return std::min<int64_t>(255, 8 + p.accumulators() +
                                    15 * (1 + p.stage) *
                                        (weight + activations) / 8);
}

/// The warps per block that split K (nvvm::chooseSplitK's model): each
/// warp has one chunk loaded ahead; staged plans take a split that
/// divides the chunks (their ring loops run in step).
static int64_t chooseSplit(const MatmulPlan &p, bool staged, int64_t blocks,
                           const nvvm::NVIDIAChip &chip, int64_t smCount) {
  nvvm::SplitKProblem problem;
  problem.chunks = p.chunks;
  problem.chunksInFlight = 1;
  problem.columnWarps = p.columnWarps;
  problem.registersPerThread = estimateRegisters(p, staged);
  problem.blocks = blocks;
  problem.weightBytes = static_cast<double>(p.n) * (p.k / 2 + p.k / 32) *
                        std::max<int64_t>(1, p.experts);
  problem.divisorStep = staged || p.stage > 1 ? p.stage : 0;
  return nvvm::chooseSplitK(problem, chip, smCount);
}

/// Chooses the tiling (options of 0 are chosen from the shape) or reports
/// why the requested one cannot be used.
/// Rows per warp for `typicalRows` rows per expert (dense: M): more rows
/// per warp reuse each decoded weight fragment in more mmas (the sweep
/// behind these thresholds: docs/performance.md). Row tiles of 8 rows:
/// 1 up to the first limit, doubling past each.
static constexpr int64_t kRowTileLimits[] = {8, 32, 255};
static int64_t rowTilesFor(int64_t typicalRows) {
  int64_t tiles = 1;
  for (int64_t limit : kRowTileLimits)
    if (typicalRows > limit)
      tiles *= 2;
  return tiles;
}

/// Plans the kernel of `op`; with rows known at run time only, for
/// `rowsHint` ragged rows (dense: M).
static FailureOr<MatmulPlan> planMatmul(MixedMatmulStorageOp op,
                                        const MixedMatmulOptions &options,
                                        const nvvm::NVIDIAChip &chip,
                                        int64_t smCount,
                                        int64_t rowsHint = 0) {
  // The rings stay within a budget of the static shared memory by default,
  // and must leave room for the split sums in any case.
  const int64_t ringBudget = chip.staticSharedMemoryPerBlock * 5 / 6;
  const int64_t ringLimit = chip.staticSharedMemoryPerBlock - (2 << 10);
  const int64_t maxWarps = chip.maxThreadsPerBlock / 32;
  QTensorType rhs = op.getRhsType();
  const int64_t rank = rhs.getRank();
  MatmulPlan p;
  p.k = rhs.getShape()[rank - 2];
  p.n = rhs.getShape()[rank - 1];
  p.experts = rank == 3 ? rhs.getShape()[0] : 0;
  p.lhsRows = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  p.outRows = cast<MemRefType>(op.getOut().getType()).getShape()[0];
  p.gather = static_cast<bool>(op.getGatherIndices());
  p.scatter = static_cast<bool>(op.getScatterIndices());
  p.m = p.gather    ? cast<MemRefType>(op.getGatherIndices().getType())
                          .getShape()[0]
        : p.scatter ? cast<MemRefType>(op.getScatterIndices().getType())
                          .getShape()[0]
                    : p.lhsRows;
  if (ShapedType::isDynamic(p.m) || ShapedType::isDynamic(p.lhsRows) ||
      ShapedType::isDynamic(p.outRows)) {
    p.dynamicRows = true;
    p.m = rowsHint;
  }
  // Chunks of 128 (64-wide ones measured slower on every decode shape);
  // a K that is not a multiple ends in one partial chunk whose missing
  // K values are masked to zero (K is a multiple of 32: each thread's part
  // of a chunk is either all in K or all past it).
  p.chunkK = 128;
  if (options.chunkK) {
    if (options.chunkK != 64 && options.chunkK != 128)
      return op.emitOpError() << "tiling chunk_k = " << options.chunkK
                              << " must be 64 or 128";
    p.chunkK = options.chunkK;
  }
  p.chunks = llvm::divideCeil(p.k, p.chunkK);
  p.tail = p.k % p.chunkK != 0;
  // Rows per expert are only known at run time; a ragged product is sized
  // for its mean (matmul_ogs' decode-sized expert slices).
  const int64_t typicalRows =
      p.experts ? std::max<int64_t>(1, p.m / std::max<int64_t>(1, p.experts))
                : p.m;
  p.rowTiles = rowTilesFor(typicalRows);
  // With more than 8 rows, a second column group shares each loaded (or
  // staged) activation between twice the weight; with at most 8, one
  // group (fewer registers) measured faster (docs/performance.md).
  p.columnGroups = p.rowTiles > 1 && p.n % 32 == 0 ? 2 : 1;
  if (options.warpColumns) {
    if (options.warpColumns != 16 && options.warpColumns != 32)
      return op.emitOpError() << "tiling warp_columns = "
                              << options.warpColumns << " must be 16 or 32";
    p.columnGroups = options.warpColumns / 16;
  }
  if (options.warpRows) {
    if (options.warpRows < 8 || options.warpRows > 64 ||
        !llvm::isPowerOf2_64(options.warpRows))
      return op.emitOpError() << "tiling warp_rows = " << options.warpRows
                              << " must be 8, 16, 32 or 64";
    p.rowTiles = options.warpRows / 8;
  }
  const int64_t chunks = p.chunks;
  p.stage = 1;
  if (options.unroll) {
    if (options.unroll < 0 || chunks % options.unroll || (options.unroll > 1 && p.tail))
      return op.emitOpError()
             << "tiling unroll = " << options.unroll << " does not divide the "
             << chunks << " K chunks of " << p.chunkK
             << (p.tail ? " (the last one partial: unroll 1 only)" : "");
    p.stage = options.unroll;
  }
  // Activations staged once per block where each warp would otherwise read
  // several rows of them per weight byte (more than 8 rows, or experts):
  // reading them from L2 once per 16 columns is what bounded those shapes.
  // Staging needs enough blocks of two 32-column warps to fill the GPU;
  // for a dense product it measured faster only on weights wider than
  // deep, for experts always (docs/performance.md).
  const int64_t stagedBlocks = ((p.n + 63) / 64) * p.rowGroups();
  // More than 16 rows per warp always stage: their activations would not
  // fit in registers.
  const bool stage =
      options.activationStages
          ? options.activationStages > 1
          : p.rowTiles > 2 || ((p.experts || (p.rowTiles > 1 && p.n > p.k)) &&
                               stagedBlocks >= 128);
  if (options.activationStages < 0 || options.activationStages > 4)
    return op.emitOpError() << "tiling activation_stages = "
                            << options.activationStages
                            << " must be 0 (chosen), 1 (no staging) or a "
                               "ring depth of 2 to 4";
  if (!stage && p.rowTiles > 2)
    return op.emitOpError() << "tiling warp_rows = " << p.warpRows()
                            << " needs staged activations "
                               "(activation_stages 2 to 4)";
  p.columnWarps = 1;
  if (stage) {
    // Two warps side by side (64 columns with two column groups) measured
    // best; four leave too few blocks on 4096-wide weights.
    p.columnWarps = p.columnGroups == 2 ? 2 : 4;
    while (p.columnWarps > 1 && p.blockColumns() / 2 >= p.n)
      p.columnWarps /= 2;
  }
  if (options.columnWarps) {
    if (options.columnWarps < 0 || options.columnWarps > 8 ||
        !llvm::isPowerOf2_64(options.columnWarps))
      return op.emitOpError() << "tiling column_warps = "
                              << options.columnWarps
                              << " must be a power of two up to 8";
    p.columnWarps = options.columnWarps;
  }
  const int64_t blocks =
      (llvm::divideCeil(p.n, p.blockColumns())) * p.rowGroups();
  p.split = options.splitK ? options.splitK
                           : chooseSplit(p, stage, blocks, chip, smCount);
  if (options.splitK &&
      (options.splitK < 0 || options.splitK > 32 || options.splitK > chunks ||
       ((stage || p.stage > 1) && chunks % (options.splitK * p.stage))))
    return op.emitOpError()
           << "tiling split_k = " << options.splitK
           << " must be at most 32 and at most the " << chunks
           << " K chunks of " << p.chunkK
           << (stage || p.stage > 1
                   ? ", and its product with the unroll (" +
                         std::to_string(p.stage) +
                         ") must divide them (staged or unrolled)"
                   : "");
  // Staged: at least two activation stages must fit in the budget (and
  // the sets' ranges stay even).
  while (stage && !options.splitK && p.split > 1 &&
         (2 * p.activationSlotElements() * 2 > ringBudget || !p.evenSplit()))
    --p.split;
  if (p.warps() > maxWarps)
    return op.emitOpError() << "a block of " << p.warps()
                            << " warps (split K " << p.split << " x column "
                            << "warps " << p.columnWarps << ") exceeds "
                            << chip.maxThreadsPerBlock << " threads";
  if (stage && p.stage != 1)
    return op.emitOpError() << "tiling unroll = " << p.stage
                            << " applies to unstaged activations only "
                               "(activation_stages = 1)";
  // Shared memory: the rings fit in the budget by default, in the limit
  // at most (static shared memory less the split sums).
  const int64_t activationStage = p.activationSlotElements() * 2;
  const int64_t weightStage = p.weightSlotBytes();
  if (options.weightStages < 0 || options.weightStages > 8 ||
      (options.weightStages > 1 && stage && options.activationStages > 1 &&
       options.weightStages != options.activationStages))
    return op.emitOpError()
           << "tiling weight_stages = " << options.weightStages
           << " must be 0 (chosen), 1 (no ring) or a ring depth of 2 to 8, "
              "and equal to activation_stages when both are rings";
  if (stage) {
    // As deep as the budget allows, at least 2 and at most 3 (three stages
    // measured faster than four on the MoE case: docs/performance.md); the
    // weight ring joins at the same depth where both fit.
    p.activationDepth = options.activationStages > 1
                            ? options.activationStages
                            : std::clamp<int64_t>(ringBudget / activationStage,
                                                  2, 3);
    if (options.weightStages > 1 ||
        (!options.weightStages &&
         p.activationDepth * (activationStage + weightStage) <= ringBudget))
      p.weightDepth = p.activationDepth;
  } else if (options.weightStages > 1) {
    p.weightDepth = options.weightStages;
  }
  // The rings' loops run the same steps on every warp set (their barriers):
  // even ranges only.
  if (p.weightDepth && !p.evenSplit()) {
    if (options.splitK)
      return op.emitOpError()
             << "tiling split_k = " << options.splitK << " does not divide the "
             << chunks << " K chunks of " << p.chunkK
             << ", which a weight ring needs";
    while (!p.evenSplit())
      --p.split;
  }
  // By default the weight goes one chunk ahead through registers: the ring
  // measured slower on every decode shape once the decode took fewer
  // registers (docs/performance.md).
  if (p.weightDepth && p.stage != 1)
    return op.emitOpError() << "tiling unroll = " << p.stage
                            << " applies without the weight ring only "
                               "(weight_stages = 1)";
  // A split chosen here gives way to the rings asked for (their slots
  // hold every warp's chunk), keeping the ranges even.
  auto ringsOf = [&] {
    return p.activationDepth * p.activationSlotElements() * 2 +
           p.weightDepth * p.weightSlotBytes();
  };
  while (!options.splitK && p.split > 1 && ringsOf() > ringLimit) {
    --p.split;
    while (p.split > 1 && !p.evenSplit())
      --p.split;
  }
  const int64_t ringBytes = ringsOf();
  if (ringBytes > ringLimit)
    return op.emitOpError()
           << "rings of " << ringBytes << " bytes (activations: "
           << p.activationDepth << " stages of " << p.activationSlotElements() * 2
           << " bytes; weights: " << p.weightDepth << " of " << p.weightSlotBytes()
           << ") exceed the " << (ringLimit >> 10)
           << " KiB of static shared memory the kernel may use on "
           << chip.name << "; lower split_k or the stages";
  return p;
}

namespace {
/// Emits the kernel body of one plan.
class MatmulKernelEmitter {
public:
  MatmulKernelEmitter(const MatmulPlan &plan, QTensorType rhs, OpBuilder &b,
                      Location loc)
      : p(plan), rhs(rhs), b(b), loc(loc), e(b, loc) {}

  void emit(gpu::GPUFuncOp function, Value partials, Value ring,
            Value weightRing);

private:
  /// The thread's weight words and scale codes of chunk `chunk` (and its
  /// activation words, unless they are staged). With `mask` (the chunk may
  /// be the partial last one), a thread whose K values lie past K gets
  /// zero weights and activations and scale code 127 (1.0), read from
  /// K = 0 instead: nothing past K is read.
  ChunkData load(Emitter &at, Value chunk, bool weight = true,
                 bool activations = true, bool mask = false);
  /// The thread's first K value of chunk `chunk`, and with `mask` whether
  /// it is inside K (null without).
  std::pair<Value, Value> threadK(Emitter &at, Value chunk, bool mask);
  /// The chunk a warp set computes at step `step` of its range: in order,
  /// except with a partial last chunk, which every set takes first (the
  /// last set's last chunk is the partial one): only the first step's
  /// loads (outside the loop) then need the mask.
  Value chunkAt(Emitter &at, Value step);
  /// Weight ring: the thread's cp.async copies of its weight bytes of chunk
  /// `chunk` into ring slot `slot` (with `mask`: zero-filled past K), and
  /// its words read back.
  void copyWeights(Emitter &at, Value chunk, Value slot, bool mask = false);
  SmallVector<Value> readWeights(Emitter &at, Value slot);
  /// The weight column of the thread's unit `unit` (column group, half):
  /// columns past N (N % 16 == 8) read column N - 1 and are never stored.
  Value unitColumn(Emitter &at, int64_t unit);
  /// The thread's byte offset of weight unit `unit` of chunk `chunk` in the
  /// values buffer.
  Value weightOffset(Emitter &at, Value kFirst, int64_t unit);
  /// Staged activations: the block's cp.async copies of every warp set's
  /// chunk at step `step` into ring slot `slot` (with `mask`: zero-filled
  /// past K).
  void copyActivations(Emitter &at, Value step, Value slot, bool mask = false);
  /// Staged activations: the thread's activation words of part `part` (16
  /// bytes of each of its rows) of ring slot `slot`, by row tile.
  SmallVector<Value> readActivations(Emitter &at, Value slot, int64_t part);
  SmallVector<Value> products(OpBuilder &rb, Location rl, const ChunkData &d,
                              ValueRange acc, bool folded);
  SmallVector<Value> compute(Emitter &at, const ChunkData &d,
                             SmallVector<Value> acc);
  SmallVector<Value> emitDirectLoop();
  SmallVector<Value> emitRingLoop();
  void emitTile(Value tile);

  const MatmulPlan &p;
  QTensorType rhs;
  OpBuilder &b;
  Location loc;
  Emitter e;
  // Kernel arguments and per-thread indices.
  Value lhs, values, scales, out, globalScale, offsets, counts, gatherIdx,
      scatterIdx;
  Value warp, lane, group, quad, firstColumn, expert, partials, ring,
      weightRing;
  Value splitWarp;                // the warp's K range (0 .. split - 1)
  Value firstChunk, chunkCount;   // the warp set's range of K chunks
  Value columnWarp;               // the warp's columns (0 .. columnWarps - 1)
  Value thread;
  Value rowBase;                  // the expert slice's first ragged row
  Value rowCount;                 // rows in the slice (dense: M)
  Value raggedRows, lhsRows, outRows; // the row counts (M, of lhs, of out)
  SmallVector<Value, 2> loadRow;  // per row tile: the activation row
  // Staged: per copy unit of the thread, the source row's first element,
  // the unit's ring offset (slot 0) and whether the unit exists.
  // A unit whose row is past the tile's rows (or skipped by the gather)
  // copies nothing and zero-fills (copyRowValid): its clamped row would
  // otherwise be read by every such unit, all from one L2 line.
  SmallVector<Value, 4> copySource, copyRowValid, copyK, copyDest, copyValid;
  Value bias;
  Value currentSlot; // staged: the ring slot that products() reads
};
} // namespace

/// The position of 16-byte chunk `c` (0 .. chunkK / 8 - 1) of ring row `r`:
/// thread (g, q) reads chunks 4q .. 4q + 3 of row g one after the other, so
/// the chunk index within each group of four is rotated by q + r: every
/// 8-thread phase of a 16-byte shared load then hits 32 distinct banks.
static Value activationChunk(Emitter &e, Value c, Value r) {
  Value base = e.mul(e.div(c, 4), 4);
  Value rotated = e.rem(e.add(e.add(c, e.div(c, 4)), r), 4);
  return e.add(base, rotated);
}

Value MatmulKernelEmitter::unitColumn(Emitter &at, int64_t unit) {
  return arith::MinUIOp::create(
      at.builder(), at.location(),
      at.add(firstColumn, at.add(group, 16 * (unit / 2) + 8 * (unit % 2))),
      at.index(p.n - 1));
}

std::pair<Value, Value> MatmulKernelEmitter::threadK(Emitter &at, Value chunk,
                                                    bool mask) {
  Value kFirst = at.add(at.mul(chunk, p.chunkK), at.mul(quad, p.chunkK / 4));
  if (!mask || !p.tail)
    return {kFirst, Value()};
  Value inside = at.lt(kFirst, p.k);
  return {arith::SelectOp::create(at.builder(), at.location(), inside, kFirst,
                                  at.index(0)),
          inside};
}

Value MatmulKernelEmitter::chunkAt(Emitter &at, Value step) {
  if (!p.tail)
    return at.add(firstChunk, step);
  OpBuilder &ab = at.builder();
  Location al = at.location();
  Value last = arith::SubIOp::create(ab, al, chunkCount, at.index(1));
  return at.add(firstChunk, arith::RemUIOp::create(
                                ab, al, at.add(step, last), chunkCount));
}

Value MatmulKernelEmitter::weightOffset(Emitter &at, Value kFirst,
                                        int64_t unit) {
  Value column = unitColumn(at, unit);
  if (p.experts)
    column = at.add(at.mul(expert, p.n), column);
  return at.add(at.mul(column, p.k / 2), at.div(kFirst, 2));
}

ChunkData MatmulKernelEmitter::load(Emitter &at, Value chunk, bool weight,
                                    bool activations, bool mask) {
  OpBuilder &ab = at.builder();
  Location al = at.location();
  Type i8 = ab.getI8Type(), i32 = ab.getI32Type(), bf16 = ab.getBF16Type();
  ChunkData d;
  const int64_t words = p.wordsPerColumn();
  const int64_t quadK = p.chunkK / 4; // K values a thread owns per chunk
  Value kFirst, inside;
  std::tie(kFirst, inside) = threadK(at, chunk, mask);
  auto masked = [&](Value v, int32_t otherwise) -> Value {
    if (!inside)
      return v;
    return arith::SelectOp::create(ab, al, inside, v, at.i32(otherwise));
  };
  SmallVector<int64_t> scaleShape = rhs.getScaleShape();
  LayoutAttrInterface scaleLayout = rhs.getScaleLayout();
  Value block = at.div(kFirst, 32);
  for (int64_t unit = 0; unit < p.weightUnits(); ++unit) {
    if (weight) {
      Value bytes = vector::LoadOp::create(
          ab, al, VectorType::get({4 * words}, i8), values,
          ValueRange{weightOffset(at, kFirst, unit)}, false,
          llvm::MaybeAlign(4 * words));
      Value w = vector::BitCastOp::create(
          ab, al, VectorType::get({words}, i32), bytes);
      for (int64_t i = 0; i < words; ++i)
        d.weight.push_back(
            masked(vector::ExtractOp::create(ab, al, w, i), 0));
    }
    Value column = unitColumn(at, unit);
    SmallVector<Value, 3> index;
    if (p.experts)
      index.push_back(expert);
    index.append({block, column});
    d.scale.push_back(masked(
        scaleLayout.emitLoadElement(ab, al, scales, scaleShape, 8, index),
        127));
  }
  for (int64_t rt = 0; rt < p.rowTiles && activations && !p.activationDepth;
       ++rt) {
    Value offset = at.add(at.mul(loadRow[rt], p.k), kFirst);
    for (int64_t part = 0; part < quadK / 8; ++part) {
      Value v = vector::LoadOp::create(ab, al, VectorType::get({8}, bf16), lhs,
                                       ValueRange{at.add(offset, 8 * part)},
                                       false, llvm::MaybeAlign(16));
      Value w = vector::BitCastOp::create(ab, al, VectorType::get({4}, i32), v);
      for (int64_t i = 0; i < 4; ++i)
        d.activation.push_back(
            masked(vector::ExtractOp::create(ab, al, w, i), 0));
    }
  }
  return d;
}

/// An LLVM pointer in address space `space` to element `elementOffset`
/// (of `bytes` bytes) of `memref`: cp.async takes raw pointers.
static Value pointerTo(Emitter &at, Value memref, Value elementOffset,
                       int64_t bytes, unsigned space) {
  return pointerToByte(at.builder(), at.location(), memref,
                       at.mul(elementOffset, bytes), space);
}

/// The byte offset of weight unit `unit` of ring slot `slot` for `thread`:
/// [slot][unit][thread] units, so that the 8 threads of each phase of a
/// 16-byte shared access read 128 contiguous bytes.
static Value weightRingOffset(Emitter &at, const MatmulPlan &p, Value slot,
                              int64_t unit, Value thread) {
  const int64_t threads = 32 * p.warps();
  return at.mul(at.add(at.mul(at.add(at.mul(slot, p.weightUnits()), unit),
                              threads),
                       thread),
                p.weightUnitBytes());
}

/// cp.async's source size: `bytes`, or 0 (the destination zero-filled)
/// where `inside` is false; none without a mask.
static Value copySize(Emitter &at, Value inside, int64_t bytes) {
  if (!inside)
    return Value();
  return arith::SelectOp::create(at.builder(), at.location(), inside,
                                 at.i32(static_cast<int32_t>(bytes)),
                                 at.i32(0));
}

void MatmulKernelEmitter::copyWeights(Emitter &at, Value chunk, Value slot,
                                      bool mask) {
  auto [kFirst, inside] = threadK(at, chunk, mask);
  for (int64_t unit = 0; unit < p.weightUnits(); ++unit)
    NVVM::CpAsyncOp::create(
        at.builder(), at.location(),
        pointerTo(at, weightRing, weightRingOffset(at, p, slot, unit, thread),
                  1, 3),
        pointerTo(at, values, weightOffset(at, kFirst, unit), 1, 1),
        p.weightUnitBytes(),
        p.weightUnitBytes() == 16 ? NVVM::LoadCacheModifierKind::CG
                                  : NVVM::LoadCacheModifierKind::CA,
        copySize(at, inside, p.weightUnitBytes()));
}

SmallVector<Value> MatmulKernelEmitter::readWeights(Emitter &at, Value slot) {
  OpBuilder &ab = at.builder();
  Location al = at.location();
  const int64_t words = p.wordsPerColumn();
  SmallVector<Value> all;
  for (int64_t unit = 0; unit < p.weightUnits(); ++unit) {
    Value bytes = vector::LoadOp::create(
        ab, al, VectorType::get({4 * words}, ab.getI8Type()), weightRing,
        ValueRange{weightRingOffset(at, p, slot, unit, thread)}, false,
        llvm::MaybeAlign(4 * words));
    Value w = vector::BitCastOp::create(
        ab, al, VectorType::get({words}, ab.getI32Type()), bytes);
    for (int64_t i = 0; i < words; ++i)
      all.push_back(vector::ExtractOp::create(ab, al, w, i));
  }
  return all;
}

void MatmulKernelEmitter::copyActivations(Emitter &at, Value step,
                                          Value slot, bool mask) {
  OpBuilder &ab = at.builder();
  Location al = at.location();
  const int64_t slotElements = p.activationSlotElements();
  // The sets' ranges are even here: the chunk offset within a set's range.
  Value relative = p.tail ? at.rem(at.add(step, p.chunksPerWarp() - 1),
                                   p.chunksPerWarp())
                          : step;
  for (size_t u = 0; u < copySource.size(); ++u) {
    // copyK[u] holds the unit's first K in its warp set's first chunk;
    // copySource[u] its row's first element.
    auto copy = [&](OpBuilder &cb, Location cl) {
      Emitter ce(cb, cl);
      Value k = ce.add(copyK[u], ce.mul(relative, p.chunkK));
      Value inside = copyRowValid[u];
      if (mask && p.tail) {
        Value inK = ce.lt(k, p.k);
        k = arith::SelectOp::create(cb, cl, inK, k, ce.index(0));
        inside = ce.andI1(inside, inK);
      }
      Value source = ce.add(copySource[u], k);
      Value dest = ce.add(copyDest[u], ce.mul(slot, slotElements));
      NVVM::CpAsyncOp::create(cb, cl, pointerTo(ce, ring, dest, 2, 3),
                              pointerTo(ce, lhs, source, 2, 1), 16,
                              NVVM::LoadCacheModifierKind::CG,
                              copySize(ce, inside, 16));
    };
    if (copyValid[u]) {
      auto guarded = scf::IfOp::create(ab, al, copyValid[u], false);
      OpBuilder::InsertionGuard guard(ab);
      ab.setInsertionPointToStart(&guarded.getThenRegion().front());
      copy(ab, al);
    } else {
      copy(ab, al);
    }
  }
}

SmallVector<Value> MatmulKernelEmitter::readActivations(Emitter &at,
                                                       Value slot,
                                                       int64_t part) {
  OpBuilder &ab = at.builder();
  Location al = at.location();
  Type i32 = ab.getI32Type(), bf16 = ab.getBF16Type();
  const int64_t slotElements = p.activationSlotElements();
  const int64_t parts = p.chunkK / 32; // 16-byte chunks per thread and row
  SmallVector<Value> words;
  for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
    Value row = at.add(group, 8 * rt);
    Value rowStart =
        at.add(at.mul(slot, slotElements),
               at.mul(at.add(at.mul(splitWarp, p.warpRows()), row), p.chunkK));
    Value chunk = activationChunk(at, at.add(at.mul(quad, parts), part), row);
    Value v = vector::LoadOp::create(
        ab, al, VectorType::get({8}, bf16), ring,
        ValueRange{at.add(rowStart, at.mul(chunk, 8))}, false,
        llvm::MaybeAlign(16));
    Value w = vector::BitCastOp::create(ab, al, VectorType::get({4}, i32), v);
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(vector::ExtractOp::create(ab, al, w, i));
  }
  return words;
}

SmallVector<Value> MatmulKernelEmitter::products(OpBuilder &rb, Location rl,
                                                 const ChunkData &d,
                                                 ValueRange acc, bool folded) {
  Emitter region(rb, rl);
  MLIRContext *context = rb.getContext();
  Type f32 = rb.getF32Type();
  auto accType = LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  SmallVector<Value> sums(acc.begin(), acc.end());
  // Per column (group, half): the scale multipliers.
  SmallVector<SmallVector<Value, 2>> multipliers;
  for (Value code : d.scale) {
    if (folded) // 2^(s-1) as bf16: exponent field s + 126.
      multipliers.push_back({emitBF16Pair(
          region, region.shl(region.add(code, region.i32(126)), 7))});
    else // 2^126, then 2^(s-127) as bf16: the high half of its f32 bits.
      multipliers.push_back(
          {bias, emitBF16Pair(region,
                              region.shr(emitE8M0Bits(region, code), 16))});
  }
  const int64_t words = p.wordsPerColumn();
  const int64_t actWords = p.chunkK / 8; // per row tile
  SmallVector<Value> staged;
  for (int64_t h = 0; h < words; ++h)
    for (int64_t parity = 0; parity < 2; ++parity) {
      // Step (h, parity): K = 8h + 2 parity + {0, 4} in the low registers,
      // + {1, 5} in the high ones. The B registers pair the same K from the
      // thread's activation words 4h + parity and 4h + parity + 2 (words of
      // (k, k+1)): a byte permute.
      const int64_t first = 4 * h + parity, second = first + 2;
      // Staged: words 4h .. 4h + 3 of each row are one 16-byte shared load,
      // issued just before the two steps that use them (fewer live
      // registers than reading the whole chunk first).
      if (p.activationDepth && parity == 0)
        staged = readActivations(region, currentSlot, h);
      SmallVector<std::pair<Value, Value>, 2> bRegs;
      for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
        Value w0 = p.activationDepth ? staged[rt * 4 + parity]
                                     : d.activation[rt * actWords + first];
        Value w1 = p.activationDepth ? staged[rt * 4 + parity + 2]
                                     : d.activation[rt * actWords + second];
        Value even = region.bor(region.band(w0, 0xFFFF), region.shl(w1, 16));
        Value odd = region.bor(region.shr(w0, 16),
                               region.band(w1, static_cast<int32_t>(0xFFFF0000)));
        bRegs.push_back({even, odd});
      }
      for (int64_t cg = 0; cg < p.columnGroups; ++cg) {
        auto [lowG, highG] =
            emitDecodeWordHalf(region, d.weight[(2 * cg) * words + h], parity,
                               multipliers[2 * cg]);
        auto [lowG8, highG8] =
            emitDecodeWordHalf(region, d.weight[(2 * cg + 1) * words + h],
                               parity, multipliers[2 * cg + 1]);
        SmallVector<Value, 4> a = {lowG, lowG8, highG, highG8};
        for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
          const int64_t base = 4 * (cg * p.rowTiles + rt);
          SmallVector<Value, 4> c(sums.begin() + base, sums.begin() + base + 4);
          SmallVector<Value, 2> bPair = {bRegs[rt].first, bRegs[rt].second};
          Value result = NVVM::MmaOp::create(
              rb, rl, accType, a, bPair, c, ArrayRef<int64_t>{16, 8, 16},
              std::nullopt, std::nullopt,
              std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                            NVVM::MMATypes::bf16},
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col});
          for (int64_t i = 0; i < 4; ++i)
            sums[base + i] = LLVM::ExtractValueOp::create(rb, rl, result, i);
        }
      }
    }
  return sums;
}

SmallVector<Value> MatmulKernelEmitter::compute(Emitter &at, const ChunkData &d,
                                                SmallVector<Value> acc) {
  // The folded scale (one multiply) when every code of the warp's chunk is
  // <= 128, else the exact two multiplies; per chunk, so that only one
  // chunk's registers are live in either branch.
  OpBuilder &ab = at.builder();
  Location al = at.location();
  Value fast = arith::ConstantIntOp::create(ab, al, 1, 1);
  for (Value code : d.scale)
    fast = at.andI1(fast, arith::CmpIOp::create(ab, al,
                                                arith::CmpIPredicate::ule, code,
                                                at.i32(128)));
  fast = NVVM::VoteSyncOp::create(ab, al, ab.getI1Type(), at.i32(-1), fast,
                                  NVVM::VoteSyncKind::all);
  auto branch = scf::IfOp::create(
      ab, al, fast,
      [&](OpBuilder &rb, Location rl) {
        scf::YieldOp::create(rb, rl, products(rb, rl, d, acc, true));
      },
      [&](OpBuilder &rb, Location rl) {
        scf::YieldOp::create(rb, rl, products(rb, rl, d, acc, false));
      });
  return SmallVector<Value>(branch.getResults());
}

/// The ragged row `r` of the tile (`tileRow` rows past `rowBase`) mapped
/// through `indices` (a gather or scatter; none: the ragged row itself),
/// and whether it is in the slice and in [0, bound). `raggedRows` and
/// `bound` are at least 1 (no kernel runs otherwise).
static std::pair<Value, Value> mapRow(Emitter &e, Value rowBase, Value rowCount,
                                      Value tileRow, Value indices,
                                      Value raggedRows, Value bound) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  auto below = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  };
  auto last = [&](Value extent) {
    return arith::SubIOp::create(b, loc, extent, e.index(1));
  };
  Value inSlice = below(tileRow, rowCount);
  Value ragged = e.add(rowBase, tileRow);
  Value valid = e.andI1(inSlice, below(ragged, raggedRows));
  Value safe = arith::MinUIOp::create(b, loc, ragged, last(raggedRows));
  if (!indices)
    return {safe, valid};
  Value mapped = e.toIndex(memref::LoadOp::create(b, loc, indices, safe));
  // An index outside [0, bound) (unsigned: negatives too) is not followed.
  valid = e.andI1(valid, below(mapped, bound));
  return {arith::MinUIOp::create(b, loc, mapped, last(bound)), valid};
}

SmallVector<Value> MatmulKernelEmitter::emitDirectLoop() {
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> acc(p.accumulators(), zero);
  // The chunks of steps `firstStep` .. + stage - 1; only the first step's
  // chunk (loaded before the loop) may be the partial one.
  auto loadStage = [&](Emitter &at, Value firstStep, bool mask) {
    SmallVector<Value> all;
    for (int64_t u = 0; u < p.stage; ++u)
      all.append(load(at, chunkAt(at, at.add(firstStep, u)), true, true,
                      mask && u == 0)
                     .flatten());
    return all;
  };
  auto computeStage = [&](Emitter &at, ValueRange all,
                          SmallVector<Value> running) {
    const int64_t perChunk = static_cast<int64_t>(all.size()) / p.stage;
    for (int64_t u = 0; u < p.stage; ++u)
      running = compute(
          at, ChunkData::unflatten(p, all.slice(u * perChunk, perChunk)),
          running);
    return running;
  };
  // Prologue: the first stage's loads. Loop: the next stage's loads, then
  // this stage's products. Epilogue: the last stage's products. (Unrolled
  // stages only on even ranges: chunkCount / stage stages.)
  SmallVector<Value> first = loadStage(e, e.index(0), /*mask=*/true);
  SmallVector<Value> carried(acc);
  carried.append(first);
  const int64_t accumulators = p.accumulators();
  Value stages = p.stage == 1 ? chunkCount : e.div(chunkCount, p.stage);
  auto loop = scf::ForOp::create(
      b, loc, e.index(0), arith::SubIOp::create(b, loc, stages, e.index(1)),
      e.index(1), carried,
      [&](OpBuilder &lb, Location ll, Value s, ValueRange args) {
        Emitter body(lb, ll);
        SmallVector<Value> loaded =
            loadStage(body, body.mul(body.add(s, 1), p.stage), false);
        SmallVector<Value> running(args.take_front(accumulators));
        running = computeStage(body, args.drop_front(accumulators), running);
        running.append(loaded);
        scf::YieldOp::create(lb, ll, running);
      });
  SmallVector<Value> results(loop.getResults());
  return computeStage(
      e, ValueRange(results).drop_front(accumulators),
      SmallVector<Value>(ValueRange(results).take_front(accumulators)));
}

SmallVector<Value> MatmulKernelEmitter::emitRingLoop() {
  // Rings need even ranges (the planner's check): the count is static.
  const int64_t chunksPerWarp = p.chunksPerWarp();
  const int64_t depth = p.ringDepth();
  const bool weightRinged = p.weightDepth > 0;
  const bool activationsRinged = p.activationDepth > 0;
  // What is loaded into registers ahead of its step: the scale codes (and
  // the weight words when they are not ringed), `ahead` steps ahead. The
  // scales go as far ahead as the weight ring so that their latency hides
  // as well; unringed weights only one step (their registers).
  const int64_t ahead = weightRinged ? depth - 1 : 1;
  // Only step 0's chunk may be the partial one (`mask`).
  auto registerEntry = [&](Emitter &at, Value step, bool mask) {
    Value chunk = chunkAt(
        at, arith::MinUIOp::create(at.builder(), at.location(), step,
                                   at.index(chunksPerWarp - 1)));
    return load(at, chunk, /*weight=*/!weightRinged, /*activations=*/false,
                mask)
        .flatten();
  };
  auto issueCopies = [&](Emitter &at, Value step, Value slot, bool mask) {
    if (activationsRinged)
      copyActivations(at, step, slot, mask);
    if (weightRinged)
      copyWeights(at, chunkAt(at, step), slot, mask);
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> carried(p.accumulators(), zero);
  // Prologue: the copies of the first depth - 1 steps, one group each (a
  // group is committed even when empty, so that the wait below counts the
  // same groups on every thread and step), and the register entries of the
  // first `ahead` steps.
  for (int64_t step = 0; step + 1 < depth; ++step) {
    if (step < chunksPerWarp)
      issueCopies(e, e.index(step), e.index(step), step == 0);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  int64_t entrySize = 0;
  for (int64_t step = 0; step < ahead; ++step) {
    SmallVector<Value> entry = registerEntry(e, e.index(step), step == 0);
    entrySize = static_cast<int64_t>(entry.size());
    carried.append(entry);
  }
  const int64_t accumulators = p.accumulators();
  auto loop = scf::ForOp::create(
      b, loc, e.index(0), e.index(chunksPerWarp), e.index(1), carried,
      [&](OpBuilder &lb, Location ll, Value s, ValueRange args) {
        Emitter body(lb, ll);
        // Step s's copies are done on this thread (all but the depth - 2
        // latest groups). Ringed activations are copied by other threads:
        // the barrier makes theirs visible too, and ends every warp's reads
        // of step s - 1, whose slot the copies issued next overwrite. (A
        // thread reads only the weight bytes it copied itself.)
        NVVM::CpAsyncWaitGroupOp::create(lb, ll, depth - 2);
        if (activationsRinged)
          gpu::BarrierOp::create(lb, ll);
        Value next = body.add(s, depth - 1);
        auto issue = scf::IfOp::create(lb, ll, body.lt(next, chunksPerWarp),
                                       /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard guard(lb);
          lb.setInsertionPointToStart(&issue.getThenRegion().front());
          Emitter inIssue(lb, ll);
          issueCopies(inIssue, next, inIssue.rem(next, depth), false);
        }
        NVVM::CpAsyncCommitGroupOp::create(lb, ll);
        // The entry `ahead` steps on (past the end: the last step's again,
        // an L1 hit, and no branch in the loop).
        SmallVector<Value> entry =
            registerEntry(body, body.add(s, ahead), false);
        ValueRange entries = args.drop_front(accumulators);
        ChunkData current = ChunkData::unflatten(
            p, entries.take_front(entrySize), /*withWeight=*/!weightRinged);
        Value slot = body.rem(s, depth);
        if (weightRinged)
          current.weight = readWeights(body, slot);
        if (activationsRinged)
          currentSlot = slot;
        else
          current.activation =
              load(body, chunkAt(body, s), false, true, /*mask=*/true)
                  .activation;
        SmallVector<Value> running = compute(
            body, current, SmallVector<Value>(args.take_front(accumulators)));
        running.append(entries.drop_front(entrySize).begin(),
                       entries.drop_front(entrySize).end());
        running.append(entry);
        scf::YieldOp::create(lb, ll, running);
      });
  return SmallVector<Value>(loop.getResults().take_front(accumulators));
}

void MatmulKernelEmitter::emitTile(Value tile) {
  Value tileFirstRow = e.mul(tile, p.warpRows());
  // Per row tile: the activation row of this thread's B column g.
  loadRow.clear();
  for (int64_t rt = 0; rt < p.rowTiles; ++rt)
    loadRow.push_back(mapRow(e, rowBase, rowCount,
                             e.add(tileFirstRow, e.add(group, 8 * rt)),
                             gatherIdx, raggedRows, lhsRows)
                          .first);
  // The warp set's chunks: [s C / S, (s + 1) C / S), C chunks over S sets
  // (ranges differ by at most one chunk; static where they are even).
  if (p.evenSplit()) {
    firstChunk = e.mul(splitWarp, p.chunksPerWarp());
    chunkCount = e.index(p.chunksPerWarp());
  } else {
    firstChunk = e.div(e.mul(splitWarp, p.chunks), p.split);
    Value end = e.div(e.mul(e.add(splitWarp, 1), p.chunks), p.split);
    chunkCount = arith::SubIOp::create(b, loc, end, firstChunk);
  }
  SmallVector<Value> sums;
  if (!p.activationDepth && !p.weightDepth) {
    sums = emitDirectLoop();
  } else {
    // The thread's copy units: 16 bytes of one row of one warp set's chunk.
    const int64_t perRow = p.chunkK / 8;
    const int64_t units =
        p.activationDepth ? p.split * p.warpRows() * perRow : 0;
    const int64_t threads = 32 * p.warps();
    copySource.clear();
    copyRowValid.clear();
    copyK.clear();
    copyDest.clear();
    copyValid.clear();
    for (int64_t i = 0; i * threads < units; ++i) {
      Value unit = e.add(thread, i * threads);
      Value part = e.rem(unit, perRow);
      Value row = e.rem(e.div(unit, perRow), p.warpRows());
      Value set = e.div(unit, perRow * p.warpRows());
      auto [source, rowValid] =
          mapRow(e, rowBase, rowCount, e.add(tileFirstRow, row), gatherIdx,
                 raggedRows, lhsRows);
      copySource.push_back(e.mul(source, p.k));
      copyRowValid.push_back(rowValid);
      copyK.push_back(
          e.add(e.mul(set, p.chunksPerWarp() * p.chunkK), e.mul(part, 8)));
      copyDest.push_back(e.add(
          e.mul(e.add(e.mul(set, p.warpRows()), row), p.chunkK),
          e.mul(activationChunk(e, part, row), 8)));
      copyValid.push_back((i + 1) * threads <= units ? Value()
                                                     : e.lt(unit, units));
    }
    sums = emitRingLoop();
  }
  const int64_t accumulators = p.accumulators();

  // The split warps' sums meet in shared memory; warp 0 adds them in warp
  // order and stores.
  if (p.split > 1) {
    Value slot = e.mul(e.add(e.mul(warp, 32), lane), accumulators);
    for (int64_t i = 0; i < accumulators; ++i)
      memref::StoreOp::create(b, loc, sums[i], partials,
                              ValueRange{e.add(slot, i)});
    gpu::BarrierOp::create(b, loc);
  }
  auto firstWarp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, splitWarp,
                            e.index(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&firstWarp.getThenRegion().front());
    Type outElement = cast<MemRefType>(out.getType()).getElementType();
    // c0, c1: weight column g, rows 2q, 2q+1 of the row tile; c2, c3:
    // column g + 8.
    for (int64_t cg = 0; cg < p.columnGroups; ++cg)
      for (int64_t rt = 0; rt < p.rowTiles; ++rt)
        for (int64_t i = 0; i < 4; ++i) {
          const int64_t accumulator = 4 * (cg * p.rowTiles + rt) + i;
          Value total = sums[accumulator];
          for (int64_t w = 1; w < p.split; ++w) {
            Value other = e.add(columnWarp, w * p.columnWarps);
            total = arith::AddFOp::create(
                b, loc, total,
                memref::LoadOp::create(
                    b, loc, partials,
                    ValueRange{e.add(
                        e.mul(e.add(e.mul(other, 32), lane), accumulators),
                        accumulator)}));
          }
          Value tileRow = e.add(tileFirstRow,
                                e.add(e.mul(quad, 2), 8 * rt + i % 2));
          auto [row, rowValid] = mapRow(e, rowBase, rowCount, tileRow,
                                        scatterIdx, raggedRows, outRows);
          Value column = e.add(firstColumn, e.add(group, 16 * cg + 8 * (i / 2)));
          Value value = arith::MulFOp::create(b, loc, total, globalScale);
          if (value.getType() != outElement)
            value = arith::TruncFOp::create(b, loc, outElement, value);
          auto store = scf::IfOp::create(
              b, loc, e.andI1(rowValid, e.lt(column, p.n)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(&store.getThenRegion().front());
          memref::StoreOp::create(b, loc, value, out,
                                  ValueRange{e.add(e.mul(row, p.n), column)});
        }
  }
  // The next tile's partial sums and ring copies must not overwrite these
  // before every warp has read them.
  if ((p.split > 1 || p.activationDepth) && p.experts)
    gpu::BarrierOp::create(b, loc);
}

void MatmulKernelEmitter::emit(gpu::GPUFuncOp function, Value partialsBuffer,
                               Value ringBuffer, Value weightRingBuffer) {
  Block &entry = function.getBody().front();
  partials = partialsBuffer;
  ring = ringBuffer;
  weightRing = weightRingBuffer;
  lhs = entry.getArgument(0);
  values = entry.getArgument(1);
  scales = entry.getArgument(2);
  out = entry.getArgument(3);
  globalScale = entry.getArgument(4);
  unsigned next = 5;
  if (p.experts) {
    offsets = entry.getArgument(next++);
    counts = entry.getArgument(next++);
  }
  if (p.gather)
    gatherIdx = entry.getArgument(next++);
  if (p.scatter)
    scatterIdx = entry.getArgument(next++);
  if (p.dynamicRows) {
    raggedRows = entry.getArgument(next++);
    lhsRows = entry.getArgument(next++);
    outRows = entry.getArgument(next++);
  } else {
    raggedRows = e.index(p.m);
    lhsRows = e.index(p.lhsRows);
    outRows = e.index(p.outRows);
  }

  thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = e.rem(thread, 32);
  warp = e.div(thread, 32);
  columnWarp = e.rem(warp, p.columnWarps);
  splitWarp = e.div(warp, p.columnWarps);
  group = e.div(lane, 4);
  quad = e.rem(lane, 4);
  Value blockN = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockM = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  firstColumn = e.add(e.mul(blockN, p.blockColumns()),
                      e.mul(columnWarp, p.warpColumns()));
  auto lanes = VectorType::get({2}, b.getBF16Type());
  bias = arith::ConstantOp::create(
      b, loc, lanes,
      DenseElementsAttr::get(lanes, b.getFloatAttr(b.getBF16Type(), 0x1p126)));

  if (!p.experts) {
    // Dense: one tile per block row.
    rowBase = e.index(0);
    rowCount = raggedRows;
    emitTile(blockM);
    return;
  }
  // Ragged: expert blockIdx.z's slice, its tiles strided by gridDim.y. A
  // slice outside [0, m) is clipped by mapRow; a negative count is empty.
  expert = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value tileStride = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  Value count = memref::LoadOp::create(b, loc, counts, expert);
  count = arith::MaxSIOp::create(b, loc, count, e.i32(0));
  rowCount = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
  rowBase = e.toIndex(arith::MaxSIOp::create(
      b, loc, memref::LoadOp::create(b, loc, offsets, expert), e.i32(0)));
  Value tiles = e.div(e.add(rowCount, p.warpRows() - 1), p.warpRows());
  auto tileLoop = scf::ForOp::create(b, loc, blockM, tiles, tileStride);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  emitTile(tileLoop.getInductionVar());
}

/// The kernel of plan `p` for `op`, named `name`, in `kernels`.
static gpu::GPUFuncOp buildMatmulKernel(MixedMatmulStorageOp op,
                                        const MatmulPlan &p,
                                        gpu::GPUModuleOp kernels,
                                        StringRef name,
                                        const MixedMatmulOptions &options,
                                        ArrayRef<Type> argTypes) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Type i8 = IntegerType::get(context, 8);
  Type bf16 = BFloat16Type::get(context), f32 = Float32Type::get(context);
  KernelSignature signature;
  signature.name = name.str();
  signature.arguments.assign(argTypes.begin(), argTypes.end());
  signature.noAliasBuffers = 4;
  signature.blockSize = static_cast<int32_t>(32 * p.warps());
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder builder(context);
  if (options.maxRegisters)
    function->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      builder.getI32IntegerAttr(
                          static_cast<int32_t>(options.maxRegisters)));
  // The split warps' partial sums: [warp][lane][accumulator].
  Value partials = addSharedBuffer(
      function, getSharedMemRefType({p.warps() * 32 * p.accumulators()}, f32),
      loc);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  // cp.async and the 16-byte shared loads need 16-byte alignment.
  auto addRing = [&](MemRefType type) {
    return addSharedBuffer(function, type, loc, /*alignment=*/16);
  };
  Value ring, weightRing;
  if (p.activationDepth)
    ring = addRing(getSharedMemRefType({p.ringElements()}, bf16));
  if (p.weightDepth)
    weightRing = addRing(getSharedMemRefType({p.weightRingBytes()}, i8));
  MatmulKernelEmitter(p, op.getRhsType(), builder, loc)
      .emit(function, partials, ring, weightRing);
  builder.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(builder, loc);
  return function;
}

/// Blocks along the rows for `rows` ragged rows (dense: M): one per warp's
/// rows; ragged, blocks for twice the mean rows per expert, so that the
/// second tile of a larger-than-average expert runs beside its first (its
/// weight then comes from L2) instead of after it; the tile walk covers
/// the rest.
static Value rowBlocks(Emitter &host, const MatmulPlan &p, Value rows) {
  OpBuilder &b = host.builder();
  Location loc = host.location();
  if (!p.dynamicRows)
    return host.index(
        p.experts ? std::max<int64_t>(1, (2 * p.m / p.experts +
                                          p.warpRows() - 1) /
                                             p.warpRows())
                  : llvm::divideCeil(p.m, p.warpRows()));
  Value perRows = rows;
  if (p.experts)
    perRows = host.div(host.mul(rows, 2), p.experts);
  Value blocks = host.div(host.add(perRows, p.warpRows() - 1), p.warpRows());
  if (p.experts)
    blocks = arith::MaxUIOp::create(b, loc, blocks, host.index(1));
  return blocks;
}

LogicalResult mlir::microscale::outlineMixedMatmul(
    MixedMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  // A weight in Triton's Hopper value layout has a kernel of its own
  // (HopperLayoutMatmulKernel.cpp), which takes it or says what to do.
  if (hasHopperLayoutWeight(op))
    return outlineHopperLayoutMatmul(op, kernels, index, chip, smCount,
                                     options);
  if (failed(checkSupported(op)))
    return failure();
  if (!chip.hasCpAsync)
    return op.emitOpError() << "the mixed_matmul kernel needs cp.async and "
                               "bf16 mma.sync (sm_80 and newer); "
                            << chip.name << " has neither";
  const int64_t sms = smCount ? smCount : chip.defaultSMCount;
  FailureOr<MatmulPlan> planned = planMatmul(op, options, chip, sms);
  if (failed(planned))
    return failure();
  if (planned->dynamicRows)
    for (Value buffer : {op.getLhs(), op.getOut()})
      if (!cast<MemRefType>(buffer.getType()).getLayout().isIdentity())
        return op.emitOpError()
               << "NVIDIA lowering with rows known at run time needs "
                  "row-major lhs and out buffers (identity layout), got "
               << buffer.getType();
  QTensorType rhs = op.getRhsType();
  const MatmulPlan &first = *planned;
  // Nothing to compute (no experts, or statically no rows), or nothing a
  // row could read or write: no kernel, no launch.
  if ((rhs.getRank() == 3 && first.experts == 0) ||
      (!first.dynamicRows &&
       (first.m == 0 || first.lhsRows == 0 || first.outRows == 0))) {
    op.erase();
    return success();
  }
  // Rows known at run time: one kernel per rows-per-warp variant (each
  // planned for the typical rows of its range), chosen by the host code
  // from the rows at run time; an explicit warp_rows leaves one.
  SmallVector<MatmulPlan> plans;
  SmallVector<int64_t> limits; // variant i: typical rows <= limits[i]
  if (!first.dynamicRows || options.warpRows) {
    plans.push_back(first);
  } else {
    const int64_t perExpert = std::max<int64_t>(1, first.experts);
    // Each variant is planned (split, staging) for rows typical of its
    // range's decode end: 8, 16 and 64 rows, and 4096 past 255.
    static constexpr int64_t kPlanRows[] = {8, 16, 64, 4096};
    static_assert(std::size(kPlanRows) == std::size(kRowTileLimits) + 1);
    for (size_t i = 0; i < std::size(kPlanRows); ++i) {
      FailureOr<MatmulPlan> variant =
          planMatmul(op, options, chip, sms, kPlanRows[i] * perExpert);
      if (failed(variant))
        return failure();
      plans.push_back(*variant);
      if (i < std::size(kRowTileLimits))
        limits.push_back(kRowTileLimits[i]);
    }
  }

  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Type i8 = IntegerType::get(context, 8);
  Type bf16 = BFloat16Type::get(context), f32 = Float32Type::get(context);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  // Kernels take static-shaped buffers (the bare-pointer convention of
  // the NVVM pipeline): a buffer of rows known at run time only is passed
  // as one of kDynamicRowsBound elements, a bound that no device memory
  // reaches and that nothing in the kernel reads (its rows come as
  // arguments).
  constexpr int64_t kDynamicRowsBound = int64_t(1) << 40;
  auto flatType = [&](int64_t rows, int64_t columns, Type element) {
    return MemRefType::get({ShapedType::isDynamic(rows) ? kDynamicRowsBound
                                                        : rows * columns},
                           element);
  };
  SmallVector<Type> argTypes = {
      flatType(first.dynamicRows ? ShapedType::kDynamic : first.lhsRows,
               first.k, bf16),
      MemRefType::get({ShapedType::getNumElements(rhs.getValueStorageShape())},
                      i8),
      MemRefType::get({ShapedType::getNumElements(rhs.getScaleStorageShape())},
                      i8),
      flatType(first.dynamicRows ? ShapedType::kDynamic : first.outRows,
               first.n, outElement),
      f32};
  SmallVector<Value> indexOperands;
  if (first.experts)
    indexOperands.append({op.getExpertOffsets(), op.getExpertCounts()});
  if (first.gather)
    indexOperands.push_back(op.getGatherIndices());
  if (first.scatter)
    indexOperands.push_back(op.getScatterIndices());
  for (Value operand : indexOperands) {
    auto type = cast<MemRefType>(operand.getType());
    argTypes.push_back(type.isDynamicDim(0)
                           ? flatType(ShapedType::kDynamic, 1,
                                      type.getElementType())
                           : type);
  }
  if (first.dynamicRows)
    argTypes.append(3, IndexType::get(context));

  SmallVector<gpu::GPUFuncOp> functions;
  for (size_t i = 0; i < plans.size(); ++i) {
    std::string name = ("mixed_matmul_" + Twine(index)).str();
    if (plans.size() > 1)
      name += ("_rows" + Twine(plans[i].warpRows())).str();
    functions.push_back(
        buildMatmulKernel(op, plans[i], kernels, name, options, argTypes));
  }

  // The launches: (column strips, row blocks or one for each expert's tile
  // walk, experts) of the plan's warps.
  OpBuilder builder(op);
  Emitter host(builder, loc);
  auto flat = [&](Value buffer, Type type) {
    return flattenToArgument(builder, loc, buffer, type);
  };
  SmallVector<Value> operands = {flat(op.getLhs(), argTypes[0]),
                                 flat(op.getRhsValues(), argTypes[1]),
                                 flat(op.getRhsScales(), argTypes[2]),
                                 flat(op.getOut(), argTypes[3]),
                                 op.getRhsGlobalScale()};
  for (auto [i, operand] : llvm::enumerate(indexOperands))
    operands.push_back(flat(operand, argTypes[5 + i]));
  auto extent = [&](Value buffer) -> Value {
    return memref::DimOp::create(builder, loc, buffer, 0);
  };
  Value rows;
  if (first.dynamicRows) {
    rows = extent(first.gather    ? op.getGatherIndices()
                  : first.scatter ? op.getScatterIndices()
                                  : op.getLhs());
    operands.append({rows, extent(op.getLhs()), extent(op.getOut())});
  } else {
    rows = host.index(first.m);
  }
  auto launch = [&](OpBuilder &lb, Location ll, size_t i) {
    Emitter at(lb, ll);
    const MatmulPlan &p = plans[i];
    gpu::LaunchFuncOp::create(
        lb, ll, functions[i],
        gpu::KernelDim3{at.index(llvm::divideCeil(p.n, p.blockColumns())),
                        rowBlocks(at, p, rows),
                        at.index(p.experts ? p.experts : 1)},
        gpu::KernelDim3{at.index(32 * p.warps()), at.index(1), at.index(1)},
        Value(), operands);
  };
  if (!first.dynamicRows) {
    launch(builder, loc, 0);
    op.erase();
    return success();
  }
  // No launch without rows to read or write (a grid of 0 blocks is a
  // launch error); otherwise the variant of the typical rows per expert.
  emitIfAllNonZero(
      builder, loc, ValueRange(operands).take_back(3),
      [&](OpBuilder &ib, Location il) {
        if (plans.size() == 1)
          return launch(ib, il, 0);
        Emitter at(ib, il);
        emitSwitchOnLimits(ib, il,
                           first.experts ? at.div(rows, first.experts) : rows,
                           limits, launch);
      });
  op.erase();
  return success();
}

namespace {
struct OutlineMatmulPass
    : public mlir::microscale::impl::MicroscaleNVVMOutlineMatmulBase<OutlineMatmulPass> {
  using MicroscaleNVVMOutlineMatmulBase::MicroscaleNVVMOutlineMatmulBase;
  void runOnOperation() override {
    std::optional<nvvm::NVIDIAChip> target =
        lookupChip(getOperation(), chip, getArgument());
    if (!target)
      return signalPassFailure();
    if (smCount < 0) {
      mlir::emitError(getOperation()->getLoc())
          << getArgument() << ": sm-count must be positive (or 0: the chip "
          << "model's " << target->defaultSMCount << "), got "
          << smCount.getValue();
      return signalPassFailure();
    }
    if (failed(reportNoNVIDIALowering<ScaledMatmulStorageOp>(getOperation())))
      return signalPassFailure();
    SmallVector<MixedMatmulStorageOp> ops =
        collectOpsToOutline<MixedMatmulStorageOp>(getOperation());
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kNVVMKernelModule);
    for (MixedMatmulStorageOp op : ops) {
      FailureOr<MixedMatmulOptions> tiling = getMatmulTiling(op);
      if (failed(tiling))
        return signalPassFailure();
      op->removeAttr(kTilingAttrName);
      if (failed(outlineMixedMatmul(op, kernels, getNextKernelIndex(kernels),
                                    *target, smCount, *tiling)))
        return signalPassFailure();
    }
  }
};
} // namespace
