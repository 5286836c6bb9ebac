//===- HopperLayoutMatmulKernel.cpp - bf16 x MXFP4 from the Hopper layout -===//
//
// mixed_matmul_storage at decode sizes (at most 64 activation rows) with the
// weight [K, N] in #microscale.hopper_value<mx_axis = -2, mma_version = 3>
// and its scales in #microscale.hopper_scale<mx_axis = -2, num_warps = W>:
// one kernel of mma.sync m16n8k16 (bf16 in, f32 accumulators), the weight
// as the A operand (its rows are weight columns), the activations as B.
//
// Why this layout feeds mma.sync with no permute (layouts.md section 3).
// Weight column n, byte kb = k / 2 of K sits in image row
// 4 (n / 16) + (n / 2) % 4, word 32 (kb / 32) + 16 (n % 2) + 4 (kb % 4) +
// (kb / 8) % 4, slot 2 ((kb / 4) % 2) + (n / 8) % 2. So the word of lane
// (g, q) = (lane / 4, lane % 4) of 16-column tile t, 64-K chunk c and
// 16-K step j holds columns n = 16 t + g and n + 8 at K = 64 c + 16 j +
// 2 q + {0, 1} and + 8: exactly the lane's A fragment of that step, and
// seed 000's decode (HopperWordDecode.h) puts its slots 0..3 in the order
// of a0..a3. The lane's four words of a chunk (j = 0..3) are consecutive:
// one 16-byte load at byte 128 c + 64 (g % 2) + 16 q of image row
// 4 t + g / 2, and a warp's load is 4 whole 128-byte lines (4 image rows).
//
// Scales: the four codes a lane needs per chunk (K blocks 2c, 2c + 1 of
// columns n, n + 8) are one aligned word of the hopper_scale image, bytes
// (2c, n), (2c, n + 8), (2c + 1, n), (2c + 1, n + 8), at column
// 64 c + 32 ((t / W) % 2) + 4 g of row W (t / 2W) + t % W.
//
// Activations: the B fragment of step j pairs the same K, i.e. the bf16
// pairs 32 c + 8 j + q and + 4 of the lane's activation row: 4-byte loads
// (the four lanes of a row read 16 consecutive bytes; rows past M read
// row M - 1, whose products land in output rows never stored).
//
// Decode and scale: one mul.rn.bf16x2 per pair by 2^(s-1) (the bias folded
// into the scale, exact for codes <= 128: HopperWordDecode.h). The matmul
// takes that path for a chunk when every scale code of the warp's chunk is
// below 128 (one AND per scale word, then a warp vote: mma.sync needs the
// whole warp), else the exact two multiplies; both are exact.
//
// Bytes in flight: a warp keeps `depth` chunks loaded ahead in registers
// (512 bytes of weight per 16 columns per chunk), so that few registers
// (no accumulator tiles past the tokens) carry many loads.
//
// Split K: a block is `split` warps on the same columns, warp s over chunks
// [s C / S, (s + 1) C / S) (any S up to C); their f32 sums meet in shared
// memory and warp 0 adds them in warp order and stores (deterministic). S
// comes from the chip model (nvvm::chooseSplitK, MatmulPlanning.h). The
// grid is one block per `columnGroups` 16-column tiles. Columns past N are
// the image's padding (the layout pads N to 256): read, never stored. K a
// multiple of 32 but not of 64 ends in a half chunk: its upper words and
// activations are selected to zero (nothing past K is read).
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/HopperLayoutMatmul.h"
#include "microscale/Conversion/NVVM/Passes.h"

#include "HopperLayoutMatmulEmitter.h"
#include "HopperRaggedForm.h"
#include "HopperWgmmaMatmul.h"
#include "HostEmulation.h"
#include "HostVariantSwitch.h"
#include "MatmulPlanning.h"
#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
using namespace mlir::microscale::hopperlayout;

namespace {
/// The most activation rows the decode kernel takes (8 row tiles).
constexpr int64_t kMaxRows = 64;
/// The most rows it takes by default: from 8 rows the wgmma kernel (8- and
/// 16-token tiles) is faster on most shapes, its time nearly flat in M
/// where the decode kernel's grows with its staged activations; at 5 and 6
/// rows the two are even, and the decode kernel keeps narrow weights
/// (docs/performance.md, "The decode rows' threshold").
constexpr int64_t kDecodeRows = 7;
/// And at 8 rows where its plan is light warps that fill their waves of
/// SMs, which beat the wgmma kernel there, where 8-row plans without them
/// lost to it (docs/performance.md, "Light warps at 8 rows").
constexpr int64_t kLightDecodeRows = 8;
/// The least share of its waves' block slots (one per SM per wave) that a
/// light plan fills to take kLightDecodeRows rows: where many SMs hold one
/// block while the others run two, the wgmma kernel was faster; plans of
/// at most one block per SM, or of nearly two on every SM, ran faster than
/// it (docs/performance.md, "Light warps at 8 rows: whole waves").
constexpr double kLightDecodeMinWaveFill = 0.8;
/// One row: the K ranges short enough (in 64-K chunks per warp) for light
/// warps (one 16-column tile, one chunk ahead), and the shortest range
/// they take (docs/performance.md, "Light warps at one row").
constexpr int64_t kLightWarpMaxChunks = 8;
constexpr int64_t kLightWarpMinChunks = 3;
/// Staged rows (2 to 8, one row tile): light warps hold two 16-column
/// tiles (each staged activation word then serves twice the weight) and
/// load one chunk ahead, two where their ranges are longer than
/// kLightWarpMaxChunks. Their residency is judged by the registers ptxas
/// gives them one and two chunks ahead, which estimateRegisters' linear
/// model undercounts by about a third (docs/performance.md, "Light warps at
/// staged rows").
constexpr int64_t kStagedLightColumnGroups = 2;
constexpr int64_t kStagedLightRegisters[] = {96, 128};
/// The ragged form's decode kernel (a split_k tiling) walks an expert's
/// rows in groups of at most this many.
constexpr int64_t kRaggedDecodeGroupRows = 16;
} // namespace

bool mlir::microscale::hasHopperLayoutWeight(MixedMatmulStorageOp op) {
  return isa<HopperValueAttr>(op.getRhsType().getValueLayout());
}

/// Whether the kernel takes `op`; the diagnostics name what to do instead.
static LogicalResult checkHopperLayoutMatmul(MixedMatmulStorageOp op,
                                             const nvvm::NVIDIAChip &chip) {
  QTensorType rhs = op.getRhsType();
  const int64_t rank = rhs.getRank();
  auto values = cast<HopperValueAttr>(rhs.getValueLayout());
  auto scales = dyn_cast<HopperScaleAttr>(rhs.getScaleLayout());
  auto lhs = cast<MemRefType>(op.getLhs().getType());
  auto isKAxis = [&](int64_t axis) { return axis == -2 || axis == rank - 2; };
  if (!lhs.getElementType().isBF16())
    return op.emitOpError()
           << "NVIDIA lowering takes bf16 activations, got " << Type(lhs);
  if (rhs.getFormat().getReferenceFormat() !=
      ::microscale::ref::MXFormat::mxfp4())
    return op.emitOpError() << "NVIDIA lowering takes an mxfp4 weight, got "
                            << Attribute(rhs.getFormat());
  if (values.getMmaVersion() != 3 || !isKAxis(values.getMxAxis()))
    return op.emitOpError()
           << "the Hopper-layout matmul reads "
              "#microscale.hopper_value<mx_axis = -2, mma_version = 3> (one "
              "word per mma.sync A fragment), got "
           << Attribute(values)
           << "; convert_layout to it (or to #microscale.strided<major_dim "
              "= -2> for the K-major kernel)";
  if (!scales || !isKAxis(scales.getMxAxis()))
    return op.emitOpError()
           << "the Hopper-layout matmul reads its scales in "
              "#microscale.hopper_scale<mx_axis = -2, num_warps = W>, got "
           << Attribute(rhs.getScaleLayout()) << "; convert_layout first";
  if (!chip.hasBF16x2Arithmetic)
    return op.emitOpError() << "the Hopper-layout matmul decodes with "
                               "mul.rn.bf16x2 (sm_90 and newer); "
                            << chip.name << " has none";
  // The ragged form: experts with static rows, through the decode kernel.
  const bool ragged = op.getExpertOffsets() || op.getGatherIndices() ||
                      op.getScatterIndices();
  if (ragged) {
    if (!op.getExpertOffsets())
      return op.emitOpError()
             << "gather or scatter without experts with a Hopper-layout "
                "weight is not built yet; convert_layout the weight to "
                "#microscale.strided<major_dim = -2> (the K-major kernel "
                "takes them)";
    // Index buffers of rows known at run time are passed as flat arrays.
    for (Value buffer : {op.getGatherIndices(), op.getScatterIndices()})
      if (buffer && cast<MemRefType>(buffer.getType()).isDynamicDim(0) &&
          !cast<MemRefType>(buffer.getType()).getLayout().isIdentity())
        return op.emitOpError()
               << "NVIDIA lowering with rows known at run time needs "
                  "contiguous gather and scatter indices (identity layout), "
                  "got "
               << buffer.getType();
  }
  // Rows known at run time: the kernels index the buffers as row-major
  // (both of them: a static one beside a dynamic one is passed as the
  // same unbounded flat array).
  for (Value buffer : {op.getLhs(), op.getOut()}) {
    auto type = cast<MemRefType>(buffer.getType());
    if (hasDynamicRows(op) && !type.getLayout().isIdentity())
      return op.emitOpError()
             << "NVIDIA lowering with rows known at run time needs "
                "row-major lhs and out buffers (identity layout), got "
             << Type(type);
  }
  const int64_t m = lhs.getShape()[0];
  const int64_t outRows = cast<MemRefType>(op.getOut().getType()).getShape()[0];
  if (!ragged && !ShapedType::isDynamic(m) && !ShapedType::isDynamic(outRows) &&
      outRows != m)
    return op.emitOpError() << "the Hopper-layout matmul needs as many out "
                               "rows as lhs rows";
  const int64_t k = rhs.getShape()[rank - 2], n = rhs.getShape()[rank - 1];
  if (k % 32 || k == 0 || n == 0)
    return op.emitOpError() << "NVIDIA lowering needs K a positive multiple "
                               "of 32 and N positive, got K = "
                            << k << ", N = " << n;
  return success();
}

/// Registers per thread, estimated for the split model: the chunks in
/// flight and the one being decoded, the accumulators, the decoded A
/// fragments of a step and indices.
static int64_t estimateRegisters(const HopperMatmulPlan &p) {
  return std::min<int64_t>(255, 24 + p.accumulators() +
                                    (p.depth + 1) * p.chunkValues() +
                                    4 * p.columnGroups +
                                    (p.staged ? 8 * p.rowTiles : 0));
}

/// The split of light warps (plan `light`, at `registers` per thread) that
/// keeps every block in one wave, as far as the shortest range
/// (kLightWarpMinChunks), the block's threads and the shared memory allow,
/// or 0 where not even one warp per block gives one wave.
static int64_t oneWaveSplit(const HopperMatmulPlan &light, int64_t registers,
                            const nvvm::NVIDIAChip &chip, int64_t smCount) {
  // Staged rows: each warp's activation ring beside its split sums.
  const int64_t sharedPerWarp =
      light.warpRingBytes() + 32 * light.accumulators() * 4;
  const int64_t maxSplit = std::min(
      {chip.maxThreadsPerBlock / 32, light.chunks / kLightWarpMinChunks,
       chip.staticSharedMemoryPerBlock / sharedPerWarp});
  for (int64_t split = maxSplit; split >= 1; --split) {
    const int64_t perSM =
        std::min(chip.residentBlocks(split, registers),
                 chip.sharedMemoryPerSM / (split * sharedPerWarp));
    if (perSM > 0 && perSM * smCount >= light.blocks())
      return split;
  }
  return 0;
}

/// Where every warp's K range is short, `p` recast as light warps split K
/// as far as every block still fits in one wave. A few chunks per warp make
/// each warp's decode a short dependent chain, so what the product waits
/// for is how many warps an SM interleaves, not the bytes each keeps in
/// flight (docs/performance.md, "Light warps at one row" and "Light warps
/// at staged rows"). At one row: one 16-column tile and one chunk ahead
/// (64 registers), taken where that leaves at most kLightWarpMaxChunks per
/// warp and more warps per SM than `p` (with long ranges two tiles two
/// chunks ahead stay faster). At staged rows (one row tile): two tiles,
/// one chunk ahead, or two for ranges up to twice as long, where those
/// blocks are at least a third of the SMs (fewer ran slower than the
/// planner's 16-column blocks, a third and more faster).
static std::optional<HopperMatmulPlan>
lightWarpPlan(const HopperMatmulPlan &p, const nvvm::NVIDIAChip &chip,
              int64_t smCount) {
  if (p.staged) {
    HopperMatmulPlan light = p;
    light.columnGroups = kStagedLightColumnGroups;
    // Narrow weights whose 32-column blocks leave two SMs in three without
    // one keep the planner's (narrower) blocks.
    if (p.rowTiles > 1 || 3 * light.blocks() < smCount)
      return std::nullopt;
    for (int64_t depth = 1; depth <= 2; ++depth) {
      light.depth = depth;
      const int64_t split = oneWaveSplit(
          light, kStagedLightRegisters[depth - 1], chip, smCount);
      if (split == 0)
        return std::nullopt;
      const int64_t chunksPerWarp = llvm::divideCeil(p.chunks, split);
      if (chunksPerWarp <= depth * kLightWarpMaxChunks) {
        light.split = split;
        light.lightWarps = true;
        return light;
      }
    }
    return std::nullopt;
  }
  HopperMatmulPlan light = p;
  light.columnGroups = 1;
  light.depth = 1;
  const int64_t split =
      oneWaveSplit(light, estimateRegisters(light), chip, smCount);
  if (split == 0 || llvm::divideCeil(p.chunks, split) > kLightWarpMaxChunks)
    return std::nullopt;
  const int64_t defaultWarps =
      std::min(p.blocks(),
               smCount * chip.residentBlocks(p.split, estimateRegisters(p))) *
      p.split;
  if (light.blocks() * split <= defaultWarps)
    return std::nullopt;
  light.split = split;
  light.lightWarps = true;
  return light;
}

static FailureOr<HopperMatmulPlan>
planHopperMatmul(MixedMatmulStorageOp op, const MixedMatmulOptions &options,
                 const nvvm::NVIDIAChip &chip, int64_t smCount,
                 int64_t planRows) {
  QTensorType rhs = op.getRhsType();
  auto scales = cast<HopperScaleAttr>(rhs.getScaleLayout());
  HopperMatmulPlan p;
  p.k = rhs.getShape()[rhs.getRank() - 2];
  p.n = rhs.getShape()[rhs.getRank() - 1];
  p.m = planRows;
  p.rowTiles = std::max<int64_t>(1, llvm::divideCeil(p.m, 8));
  p.chunks = llvm::divideCeil(p.k, kChunkK);
  p.tail = p.k % kChunkK != 0;
  p.rowBytes = 4 * llvm::alignTo(p.k / 2, 64);
  p.scaleRowBytes = 32 * llvm::alignTo(p.k / 32, 2);
  p.scaleWarps = scales.getNumWarps();
  // The layouts' storage is what the addressing assumes.
  SmallVector<int64_t> valueStorage = rhs.getValueStorageShape();
  SmallVector<int64_t> scaleStorage = rhs.getScaleStorageShape();
  if (valueStorage.back() != p.rowBytes ||
      scaleStorage.back() != p.scaleRowBytes)
    return op.emitOpError() << "unexpected Hopper storage shapes";
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"unroll", options.unroll},
        {"warp_rows", options.warpRows},
        {"column_warps", options.columnWarps},
        {"activation_stages", options.activationStages},
        {"chunk_k", options.chunkK}})
    if (value)
      return op.emitOpError() << "tiling " << name
                              << " does not apply to the Hopper-layout "
                                 "matmul (split_k, warp_columns, "
                                 "weight_stages and max_registers do)";
  // Two 16-column tiles per warp (each activation word and scale vote
  // serves twice the weight) where 32-column blocks still cover every SM;
  // one above 16 rows (their accumulators), or on narrow weights, which
  // need the blocks (the H200 measurements: docs/performance.md).
  p.columnGroups =
      p.rowTiles <= 2 &&
              static_cast<int64_t>(llvm::divideCeil(p.n, 32)) >= smCount
          ? 2
          : 1;
  if (options.warpColumns) {
    if (options.warpColumns != 16 && options.warpColumns != 32 &&
        options.warpColumns != 64)
      return op.emitOpError() << "tiling warp_columns = "
                              << options.warpColumns
                              << " must be 16, 32 or 64 for the "
                                 "Hopper-layout matmul";
    p.columnGroups = options.warpColumns / 16;
  }
  p.staged = p.m > 1;
  // Chunks ahead: as many as keep the registers near 96 (three blocks of
  // four warps per SM) and, staged, a ring of 12 KiB per warp, at least
  // one and at most four.
  p.depth = 1;
  while (p.depth < 4 && estimateRegisters(p) < 80 &&
         (p.depth + 1) * p.ringRows() * HopperMatmulPlan::kRingRowBytes <=
             (12 << 10))
    ++p.depth;
  if (options.weightStages) {
    if (options.weightStages > 8)
      return op.emitOpError() << "tiling weight_stages = "
                              << options.weightStages
                              << " must be 1 to 8 for the Hopper-layout "
                                 "decode matmul (chunks loaded ahead)";
    p.depth = options.weightStages;
  }
  nvvm::SplitKProblem problem;
  problem.chunks = p.chunks;
  problem.chunksInFlight = p.depth;
  problem.registersPerThread = estimateRegisters(p);
  // The ragged form's grid has a block per column strip and expert, and
  // reads every expert's weight.
  const int64_t experts = op.getExpertOffsets() ? rhs.getShape()[0] : 1;
  problem.blocks = p.blocks() * experts;
  problem.weightBytes =
      static_cast<double>(experts) * p.n * (p.k / 2 + p.k / 32);
  problem.maxSplit = chip.maxThreadsPerBlock / 32;
  // The warps' rings and the split sums in static shared memory.
  const int64_t sharedPerWarp = p.warpRingBytes() + 32 * p.accumulators() * 4;
  if (sharedPerWarp > chip.staticSharedMemoryPerBlock)
    return op.emitOpError() << "tiling weight_stages = " << p.depth
                            << " needs " << sharedPerWarp
                            << " bytes of shared memory per warp (the "
                               "activation ring and the split sums); at most "
                            << chip.staticSharedMemoryPerBlock << " fit";
  problem.maxSplit = std::min<int64_t>(
      problem.maxSplit, chip.staticSharedMemoryPerBlock / sharedPerWarp);
  p.split = chooseSplitK(problem, chip, smCount);
  if (experts == 1 && !options.warpColumns && !options.weightStages &&
      !options.splitK)
    if (std::optional<HopperMatmulPlan> light =
            lightWarpPlan(p, chip, smCount))
      p = *light;
  if (options.splitK) {
    if (options.splitK > p.chunks ||
        options.splitK * 32 > chip.maxThreadsPerBlock ||
        options.splitK * sharedPerWarp > chip.staticSharedMemoryPerBlock)
      return op.emitOpError()
             << "tiling split_k = " << options.splitK << " must be at most the "
             << p.chunks << " K chunks of " << kChunkK << " and fit in "
             << chip.maxThreadsPerBlock << " threads and "
             << chip.staticSharedMemoryPerBlock
             << " bytes of static shared memory";
    p.split = options.splitK;
  }
  return p;
}

/// The m16n8k16 mma of the kernel: A (4 registers of bf16 pairs), B (2),
/// C (4 f32) as the NVVM op takes them.
static SmallVector<Value> emitMma(OpBuilder &b, Location loc, ValueRange a,
                                  std::pair<Value, Value> bPair,
                                  ValueRange c) {
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  auto accType = LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  // bf16 operands are packed in i32 registers, as the op takes them.
  SmallVector<Value, 4> aPairs(a.begin(), a.end());
  SmallVector<Value, 2> bPairs = {bPair.first, bPair.second};
  Value result = NVVM::MmaOp::create(
      b, loc, accType, aPairs, bPairs, SmallVector<Value>(c),
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> sums;
  for (int64_t i = 0; i < 4; ++i)
    sums.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return sums;
}

/// The kernel of plan `p`.
static gpu::GPUFuncOp buildKernel(MixedMatmulStorageOp op,
                                  const HopperMatmulPlan &p,
                                  gpu::GPUModuleOp kernels, StringRef name,
                                  ArrayRef<Type> argTypes,
                                  const MixedMatmulOptions &options,
                                  const RaggedForm *ragged = nullptr) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  KernelSignature signature;
  signature.name = name.str();
  signature.arguments.assign(argTypes.begin(), argTypes.end());
  signature.noAliasBuffers = 4;
  signature.blockSize = static_cast<int32_t>(32 * p.split);
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder b(context);
  if (options.maxRegisters)
    function->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      b.getI32IntegerAttr(
                          static_cast<int32_t>(options.maxRegisters)));
  Type f32 = b.getF32Type();
  // The split warps' sums: [warp][lane][accumulator].
  Value partials;
  if (p.split > 1)
    partials = addSharedBuffer(
        function,
        getSharedMemRefType({p.split * 32 * p.accumulators()}, f32), loc);
  // cp.async and the word reads need 16-byte alignment.
  Value ring;
  if (p.staged)
    ring = addSharedBuffer(
        function,
        getSharedMemRefType({p.split * p.warpRingBytes() / 4}, b.getI32Type()),
        loc, /*alignment=*/16);
  Block &entry = function.getBody().front();
  b.setInsertionPointToStart(&entry);
  Emitter e(b, loc);
  HopperMatmulEmitter emitter(p, entry.getArgument(0), entry.getArgument(1),
                              entry.getArgument(2), entry.getArgument(3),
                              entry.getArgument(4), ring, /*onHost=*/false);
  if (argTypes.size() > 5 && !ragged)
    emitter.rows = entry.getArgument(5);
  // Programmatic dependent launch: launched with the programmatic
  // attribute, this kernel may start before the previous one in the stream
  // has finished; it reads what that kernel may write (activations,
  // routing) and writes its output only after griddepcontrol.wait (a no-op
  // in a plain launch). It does not trigger its dependents early
  // (griddepcontrol.launch_dependents): their blocks then took SMs while
  // this kernel's still worked, slower on most shapes (docs/performance.md,
  // "Programmatic dependent launch").
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = e.rem(thread, 32), warp = e.div(thread, 32);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  // The ragged form: the block's expert (grid z), its images, and a loop
  // over its rows in groups of the plan's rows, the body below per group.
  // Its routing comes from the previous kernels, so it waits first.
  scf::ForOp groups;
  if (ragged) {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
    Value expert = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    RaggedSlice slice =
        beginRaggedSlice(e, emitter, 8 * p.rowTiles, *ragged, expert,
                         entry.getArguments().drop_front(5));
    groups = scf::ForOp::create(b, loc, e.index(0), slice.groups, e.index(1));
    b.setInsertionPoint(groups.getBody()->getTerminator());
    enterRaggedGroup(e, emitter, slice, groups.getInductionVar());
  }
  Value first, end;
  std::tie(first, end) = emitter.range(e, warp);
  Value count = arith::SubIOp::create(b, loc, end, first);
  Value last = arith::SubIOp::create(b, loc, end, e.index(1));
  // Chunk `step` of the range, clamped to its last: loads past the range
  // (the pipeline's last `depth` steps) read that chunk again, an L1 hit
  // whose words are never used.
  auto chunkAt = [&](Emitter &at, Value step) -> Value {
    return arith::MinUIOp::create(at.builder(), at.location(),
                                  at.add(first, step), last);
  };
  // Prologue: the first `depth` chunks, slot d holding step d (staged:
  // one cp.async group per chunk, committed even when empty so that every
  // lane counts the same groups). The weight and its scales, which no
  // kernel writes, are in flight before the wait for the previous kernel's
  // activations and output.
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> carried(p.accumulators(), zero);
  SmallVector<Value, 2> prologueChunks;
  SmallVector<ChunkWords, 2> ahead;
  for (int64_t d = 0; d < p.depth; ++d) {
    prologueChunks.push_back(chunkAt(e, e.index(d)));
    ahead.push_back(emitter.loadWeight(e, block, lane, prologueChunks[d]));
  }
  if (!ragged)
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  for (int64_t d = 0; d < p.depth; ++d) {
    Value chunk = prologueChunks[d];
    emitter.loadActivations(e, lane, chunk, ahead[d]);
    carried.append(ahead[d].flatten());
    if (p.staged) {
      emitter.copyActivations(e, warp, lane, chunk, e.index(d));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
  }
  const int64_t accumulators = p.accumulators();
  const int64_t slot = p.chunkValues();
  // The loop takes `depth` steps per iteration, step s D + u from slot u,
  // whose registers (and ring slot) then take step s D + u + D: the slots
  // stay in place (no register moves). Steps past the range compute
  // nothing (a warp-uniform branch).
  Value iterations = e.div(e.add(count, p.depth - 1), p.depth);
  auto loop = scf::ForOp::create(
      b, loc, e.index(0), iterations, e.index(1), carried,
      [&](OpBuilder &lb, Location ll, Value s, ValueRange args) {
        Emitter body(lb, ll);
        SmallVector<Value> sums(args.take_front(accumulators));
        SmallVector<Value> slots(args.drop_front(accumulators));
        for (int64_t u = 0; u < p.depth; ++u) {
          Value step = body.add(body.mul(s, p.depth), u);
          Value nextChunk = chunkAt(body, body.add(step, p.depth));
          ChunkWords next = emitter.load(body, block, lane, nextChunk);
          ChunkWords current = ChunkWords::unflatten(
              p, ValueRange(slots).slice(u * slot, slot));
          if (p.staged) {
            // Step's group is done on this lane (all but the depth - 1
            // latest); the warp barrier makes the other lanes' copies
            // visible.
            NVVM::CpAsyncWaitGroupOp::create(lb, ll, p.depth - 1);
            NVVM::SyncWarpOp::create(lb, ll, body.i32(-1));
          }
          auto live = scf::IfOp::create(
              lb, ll, TypeRange(ValueRange(sums)),
              arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::ult, step,
                                    count),
              /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(lb);
            lb.setInsertionPointToStart(&live.getThenRegion().front());
            Emitter in(lb, ll);
            if (p.staged)
              current.activation =
                  emitter.readActivations(in, warp, lane, in.index(u));
            Value fast = NVVM::VoteSyncOp::create(
                lb, ll, lb.getI1Type(), in.i32(-1),
                emitter.folds(in, current), NVVM::VoteSyncKind::all);
            SmallVector<Value> decoded =
                emitter.decodeByVote(lb, ll, fast, current);
            SmallVector<Value> updated = sums;
            for (int64_t j = 0; j < 4; ++j)
              for (int64_t cg = 0; cg < p.columnGroups; ++cg) {
                ValueRange a = ValueRange(decoded).slice(16 * cg + 4 * j, 4);
                for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
                  const int64_t base = emitter.accumulator(cg, rt, 0);
                  SmallVector<Value> c(updated.begin() + base,
                                       updated.begin() + base + 4);
                  SmallVector<Value> result = emitMma(
                      lb, ll, a, emitter.bFragment(current, rt, j), c);
                  std::copy(result.begin(), result.end(),
                            updated.begin() + base);
                }
              }
            scf::YieldOp::create(lb, ll, updated);
            lb.setInsertionPointToStart(&live.getElseRegion().front());
            scf::YieldOp::create(lb, ll, sums);
          }
          sums.assign(live.getResults().begin(), live.getResults().end());
          if (p.staged) {
            // Every lane's reads of this slot are done before it is
            // overwritten.
            NVVM::SyncWarpOp::create(lb, ll, body.i32(-1));
            emitter.copyActivations(body, warp, lane, nextChunk,
                                    body.index(u));
            NVVM::CpAsyncCommitGroupOp::create(lb, ll);
          }
          SmallVector<Value> nextWords = next.flatten();
          std::copy(nextWords.begin(), nextWords.end(),
                    slots.begin() + u * slot);
        }
        SmallVector<Value> yielded = sums;
        yielded.append(slots);
        scf::YieldOp::create(lb, ll, yielded);
      });
  SmallVector<Value> sums(loop.getResults().take_front(accumulators));
  // The split warps' sums meet in shared memory; warp 0 adds them in warp
  // order and stores.
  if (p.split > 1) {
    Value slotBase = e.mul(thread, accumulators);
    for (int64_t i = 0; i < accumulators; ++i)
      memref::StoreOp::create(b, loc, sums[i], partials,
                              ValueRange{e.add(slotBase, i)});
    gpu::BarrierOp::create(b, loc);
  }
  auto firstWarp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp,
                            e.index(0)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(&firstWarp.getThenRegion().front());
  for (int64_t i = 0; i < accumulators; ++i)
    for (int64_t w = 1; w < p.split; ++w)
      sums[i] = arith::AddFOp::create(
          b, loc, sums[i],
          memref::LoadOp::create(
              b, loc, partials,
              ValueRange{e.add(e.mul(e.add(lane, 32 * w), accumulators), i)}));
  emitter.store(e, block, lane, sums);
  if (ragged) {
    // The next group's copies and split sums reuse the ring and the shared
    // sums: every copy of this group lands and warp 0 has read the sums.
    b.setInsertionPointAfter(firstWarp);
    if (p.staged)
      NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    gpu::BarrierOp::create(b, loc);
  }
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
  return function;
}

/// Whether the decode kernel takes kLightDecodeRows rows, `plan` being its
/// plan for that row tile on `sms` SMs: a default plan of light warps whose
/// blocks fill their waves of SMs (kLightDecodeMinWaveFill). More blocks
/// than SMs but short of two per SM leave the SMs that hold one idle while
/// the others run their second: the busiest SMs set the time. For the
/// default plans only (no tiling key).
static bool takesLightDecodeRows(const HopperMatmulPlan &plan,
                                 const MixedMatmulOptions &options,
                                 int64_t sms) {
  if (!plan.lightWarps || options.hasTiling())
    return false;
  const int64_t blocks = plan.blocks();
  const int64_t slots = llvm::divideCeil(blocks, sms) * sms;
  return blocks <= sms ||
         static_cast<double>(blocks) >= kLightDecodeMinWaveFill * slots;
}

/// Whether `m` static rows take the wgmma kernel: above kDecodeRows, unless
/// the tiling asks for the decode kernel's split of K (up to 64 rows), or
/// at kLightDecodeRows where takesLightDecodeRows.
static bool takesWgmma(MixedMatmulStorageOp op, int64_t m,
                       const MixedMatmulOptions &options,
                       const nvvm::NVIDIAChip &chip, int64_t sms) {
  if (m > kMaxRows)
    return true;
  if (m <= kDecodeRows || options.splitK)
    return false;
  if (m > kLightDecodeRows)
    return true;
  // A probe of the decode kernel's plan: a diagnostic of its planning (a
  // wgmma-only tiling key, say) is not this op's; the wgmma kernel then
  // takes it and reports its own.
  ScopedDiagnosticHandler probe(op.getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<HopperMatmulPlan> plan =
      planHopperMatmul(op, options, chip, sms, m);
  return failed(plan) || !takesLightDecodeRows(*plan, options, sms);
}

/// The decode kernel `function` of plan `p` launched at `b`: a block per
/// column group strip (times `experts` in the ragged form) of `p.split`
/// warps.
static void launchDecodeKernel(OpBuilder &b, Location loc,
                               gpu::GPUFuncOp function,
                               const HopperMatmulPlan &p, int64_t experts,
                               ValueRange operands) {
  Emitter at(b, loc);
  gpu::LaunchFuncOp::create(
      b, loc, function,
      gpu::KernelDim3{at.index(p.blocks()), at.index(1), at.index(experts)},
      gpu::KernelDim3{at.index(32 * p.split), at.index(1), at.index(1)},
      Value(), operands);
}

/// The rows the ragged form's decode kernel is planned for: the ragged
/// rows per expert, at least 1 and at most kRaggedDecodeGroupRows (a block
/// walks more).
static int64_t raggedPlanRows(const RaggedForm &r) {
  return std::min(r.meanRows(), kRaggedDecodeGroupRows);
}

/// The ragged form: the decode kernel with grid z the expert.
static LogicalResult outlineRagged(MixedMatmulStorageOp op,
                                   gpu::GPUModuleOp kernels, unsigned index,
                                   const nvvm::NVIDIAChip &chip,
                                   int64_t smCount,
                                   const MixedMatmulOptions &options) {
  const RaggedForm ragged = getRaggedForm(op);
  if (ragged.dynamicRows)
    return op.emitOpError()
           << "the decode kernel's ragged (experts) form takes static row "
              "counts; without split_k, unroll and chunk_k the wgmma kernel "
              "takes rows known at run time (or convert_layout the expert "
              "weights to #microscale.strided<major_dim = -2> for the "
              "K-major kernel)";
  if (ragged.empty()) {
    op.erase();
    return success();
  }
  FailureOr<HopperMatmulPlan> planned =
      planHopperMatmul(op, options, chip,
                       smCount ? smCount : chip.defaultSMCount,
                       raggedPlanRows(ragged));
  if (failed(planned))
    return failure();
  const HopperMatmulPlan &p = *planned;
  SmallVector<Type> types = raggedKernelArguments(op, p, ragged);
  gpu::GPUFuncOp function =
      buildKernel(op, p, kernels, ("mixed_matmul_hopper_" + Twine(index)).str(),
                  types, options, &ragged);
  OpBuilder builder(op);
  launchDecodeKernel(builder, op.getLoc(), function, p, ragged.experts,
                     raggedKernelOperands(builder, op, types, ragged));
  op.erase();
  return success();
}

bool mlir::microscale::hasDynamicRows(MixedMatmulStorageOp op) {
  return cast<MemRefType>(op.getLhs().getType()).isDynamicDim(0) ||
         cast<MemRefType>(op.getOut().getType()).isDynamicDim(0);
}

namespace {
/// Rows known at run time: one kernel per variant, each planned for
/// typical rows of its range: the decode kernel for 1 and 7 rows, the
/// wgmma kernel for 16, 64, 256 and 4096; variant i takes rows up to
/// kDynamicLimits[i] (the last one, the rest; the decode variant up to
/// kLightDecodeRows where its plan is light warps: dynamicLimits).
constexpr int64_t kDynamicPlanRows[] = {1, kDecodeRows, 16, 64, 256, 4096};
constexpr int64_t kDynamicLimits[] = {1, kDecodeRows, 16, 64, 256};
static_assert(std::size(kDynamicPlanRows) == std::size(kDynamicLimits) + 1);
constexpr size_t kDecodeVariants = 2;
static_assert(kDynamicLimits[kDecodeVariants - 1] == kDecodeRows,
              "the decode variants end here");
} // namespace

namespace {
/// chooseTileByBusiestSM on the host code's index values (0 or 1 for the
/// conditions).
struct HostTileRuleOps {
  OpBuilder &b;
  Location loc;

  Value constant(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value falseValue() { return constant(0); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, int64_t d) {
    return arith::CeilDivUIOp::create(b, loc, x, constant(d));
  }
  Value compare(arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        arith::CmpIOp::create(b, loc, predicate, x, y));
  }
  Value eq(Value x, Value y) { return compare(arith::CmpIPredicate::eq, x, y); }
  Value le(Value x, Value y) { return compare(arith::CmpIPredicate::ule, x, y); }
  Value lt(Value x, Value y) { return compare(arith::CmpIPredicate::ult, x, y); }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, condition,
                              constant(0)),
        x, y);
  }
};

/// Above the last of kDynamicLimits, the tilings of the wgmma tiles the
/// host code chooses between by chooseTileByBusiestSM, in its order: the
/// tile planned for kDynamicPlanRows' last rows (128 tokens, two
/// warpgroups), 128 tokens of one warpgroup, 256 tokens of one; K not split
/// in any (the rule is for unsplit tiles). Then, where some M of the range
/// would leave one warpgroup's 128-token blocks fewer than two per SM (a
/// narrow weight), the split sibling: 128 tokens of one warpgroup with K
/// split in two, as the planner splits K for such an M where it is static.
/// Only that first tiling where the rule would not apply: a tile asked for,
/// or another planned.
SmallVector<MixedMatmulOptions, 4>
largeTileTilings(MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip,
                 int64_t smCount, const MixedMatmulOptions &options) {
  constexpr int64_t planRows = std::end(kDynamicPlanRows)[-1];
  if (options.warpRows || options.columnWarps || options.warpColumns ||
      options.clusterSplitK)
    return {options};
  std::optional<WgmmaTile> planned =
      planHopperWgmmaTile(op, chip, smCount, options, planRows);
  if (!planned || planned->tokens != 128 || planned->warpgroups != 2 ||
      planned->split != 1)
    return {options};
  SmallVector<MixedMatmulOptions, 4> tilings = {options};
  for (int64_t tokens : {128, 256}) {
    MixedMatmulOptions one = options;
    one.warpRows = tokens;
    one.columnWarps = 4;
    one.clusterSplitK = 1;
    if (!planHopperWgmmaTile(op, chip, smCount, one, planRows))
      return {options};
    tilings.push_back(one);
  }
  ArrayRef<int64_t> shape = op.getRhsType().getShape();
  const int64_t fewestBlocks =
      llvm::divideCeil(shape[1], 64) *
      llvm::divideCeil(std::end(kDynamicLimits)[-1] + 1, 128);
  MixedMatmulOptions split = tilings[1];
  split.clusterSplitK = 2;
  ConstantTileRuleOps rule;
  if (fewerBlocksPerSMThan(rule, fewestBlocks, 2,
                           smCount ? smCount : chip.defaultSMCount) &&
      llvm::divideCeil(shape[0], 64) >= 2 * kMinClusterSplitChunks &&
      planHopperWgmmaTile(op, chip, smCount, split, planRows))
    tilings.push_back(split);
  return tilings;
}

/// Emits at `b` the host code's choice among largeTileTilings' tiles for
/// `rows` (an index value above the last limit): the planner's base rule
/// (two warpgroups where their blocks cover the SMs), then, where the
/// planner would apply it, chooseTileByBusiestSM on 128- and 256-token
/// tiles; with `splitSibling`, that sibling wherever one warpgroup's
/// 128-token blocks give some SM fewer than two (the planner splits K
/// there before any other rule). (The static planner evens its tiles out
/// to M; here they are the kernels' 128 and 256.)
Value chooseLargeTile(OpBuilder &b, Location loc, Value rows, int64_t n,
                      int64_t smCount, bool splitSibling) {
  HostTileRuleOps ops{b, loc};
  Value pairBlocks =
      ops.mul(ops.constant(llvm::divideCeil(n, 128)), ops.ceilDiv(rows, 128));
  Value warpgroups =
      ops.select(ops.le(ops.constant(smCount), pairBlocks), ops.constant(2),
                 ops.constant(1));
  Value planned = ops.select(ops.eq(warpgroups, ops.constant(2)),
                             ops.constant(0), ops.constant(1));
  Value choice =
      chooseTileByBusiestSM(ops, rows, n, smCount, 128, 256, warpgroups);
  // Keeping the tile planned so far is the first kernel's where that has
  // two warpgroups, the second's where it has one.
  choice = ops.select(ops.eq(choice, ops.constant(0)), planned, choice);
  // The rule only where the planner applies it to a static M: where M's
  // 128-token tiles evened out stay 128 (M > 120 per tile). Below, on M =
  // 300 and 700, it took one warpgroup or 256 tokens where two warpgroups
  // of 128 ran up to 1.5x faster on large K x N (docs/performance.md,
  // "Rows known at run time: the host code's tile").
  Value evenedFull = ops.lt(ops.mul(ops.constant(120), ops.ceilDiv(rows, 128)),
                            rows);
  choice = ops.select(evenedFull, choice, planned);
  if (!splitSibling)
    return choice;
  Value oneWarpgroupBlocks =
      ops.mul(ops.constant(llvm::divideCeil(n, 64)), ops.ceilDiv(rows, 128));
  return ops.select(fewerBlocksPerSMThan(ops, oneWarpgroupBlocks, 2, smCount),
                    ops.constant(3), choice);
}

/// Rows known at run time: the tokens of the evened tiles (the static
/// planner evens M's tiles out exactly; the host code rounds up to these)
/// lie this far apart below the first, 8 tokens under a variant's planned
/// tile.
constexpr int64_t kTokenRungStep = 16;

/// One kernel of a wgmma variant of rows known at run time: its tiling, the
/// rows it is planned for and the suffix of its name.
struct VariantTile {
  MixedMatmulOptions tiling;
  int64_t planRows = 0;
  std::string suffix;
};

/// A wgmma variant of rows known at run time: the kernels the host code
/// chooses between within its range of rows. First the rungs, tiles of
/// fewer tokens than planned (ascending, one warpgroup) that M's tiles,
/// evened out, fit in; then the full tiles: the planned one, and on the
/// last variant largeTileTilings' others. Each is planned for the
/// variant's rows, or, for the last variant's rungs, the fewest tiles of
/// its range.
struct WgmmaVariantTiles {
  int64_t plannedTokens = 0;
  SmallVector<int64_t> rungs; // tokens of the first rungs.size() tiles
  SmallVector<VariantTile> tiles;

  size_t fullTiles() const { return tiles.size() - rungs.size(); }
};

/// The tiles of wgmma variant `variant` (an index of kDynamicPlanRows past
/// the decode variants). Rungs only where the tiling leaves the tile to the
/// planner: 8 tokens below the planned tile, then every kTokenRungStep
/// below it, down to the fewest an M of the range evens out to (at least
/// 16).
WgmmaVariantTiles wgmmaVariantTiles(MixedMatmulStorageOp op,
                                    const nvvm::NVIDIAChip &chip,
                                    int64_t smCount,
                                    const MixedMatmulOptions &options,
                                    size_t variant) {
  const int64_t planRows = kDynamicPlanRows[variant];
  const bool last = variant + 1 == std::size(kDynamicPlanRows);
  SmallVector<VariantTile> full;
  if (last) {
    static constexpr StringLiteral kLargeSuffixes[] = {"", "_w1", "_t256",
                                                      "_s2"};
    for (auto [t, tiling] :
         llvm::enumerate(largeTileTilings(op, chip, smCount, options)))
      full.push_back({tiling, planRows, kLargeSuffixes[t].str()});
  } else {
    full.push_back({options, planRows, ""});
  }
  WgmmaVariantTiles variantTiles;
  std::optional<WgmmaTile> planned =
      planHopperWgmmaTile(op, chip, smCount, options, planRows);
  if (!planned || options.warpRows || options.columnWarps ||
      options.warpColumns || options.clusterSplitK) {
    variantTiles.tiles = std::move(full);
    return variantTiles;
  }
  variantTiles.plannedTokens = planned->tokens;
  const int64_t firstRows = kDynamicLimits[variant - 1] + 1;
  const int64_t lastRows =
      last ? firstRows + 4 * planned->tokens
           : std::min(kDynamicLimits[variant], firstRows + 4 * planned->tokens);
  int64_t fewest = planned->tokens;
  for (int64_t rows = firstRows; rows <= lastRows; ++rows)
    fewest = std::min(fewest, evenTokenTiles(rows, planned->tokens));
  // A rung's split of K: the planner's for rows of its range. The
  // variants below 256 rows are planned for such rows (64, 256), and their
  // rungs take their split; the last one is planned for 4096 rows, where K
  // is never split, and its rungs serve M whose tiles even out below full,
  // a few tiles: the planner's split for the range's fewest tiles, at most
  // two (docs/performance.md, "Rows known at run time: evened token
  // tiles": rungs of the variants below 256 rows planned that way ran up
  // to 25% slower, those of the last one up to 1.6x faster).
  const int64_t fewestTiles = llvm::divideCeil(firstRows, planned->tokens);
  // Just below the planned tile, one rung 8 tokens fewer (the wgmma's
  // step): M's tiles often even out just short of full (M = 700: six of
  // 117), where the next rung down would not hold them.
  SmallVector<int64_t> rungTokens = {planned->tokens - 8};
  for (int64_t tokens = planned->tokens - kTokenRungStep; tokens > 0;
       tokens -= kTokenRungStep)
    rungTokens.push_back(tokens);
  for (int64_t tokens : rungTokens) {
    if (tokens < std::max<int64_t>(fewest, 16))
      break;
    MixedMatmulOptions rung = options;
    rung.warpRows = tokens;
    rung.columnWarps = 4;
    const int64_t rungPlanRows = last ? fewestTiles * tokens : planRows;
    if (!last) {
      rung.clusterSplitK = planned->split;
    } else {
      std::optional<WgmmaTile> fewestSplit =
          planHopperWgmmaTile(op, chip, smCount, rung, rungPlanRows);
      if (!fewestSplit)
        break;
      rung.clusterSplitK = std::min<int64_t>(fewestSplit->split, 2);
    }
    if (!planHopperWgmmaTile(op, chip, smCount, rung, rungPlanRows))
      break;
    variantTiles.rungs.push_back(tokens);
    variantTiles.tiles.push_back(
        {rung, rungPlanRows, ("_t" + Twine(tokens)).str()});
  }
  // Found from the largest down; the host code's switch wants them
  // ascending.
  std::reverse(variantTiles.rungs.begin(), variantTiles.rungs.end());
  std::reverse(variantTiles.tiles.begin(), variantTiles.tiles.end());
  variantTiles.tiles.append(full.begin(), full.end());
  return variantTiles;
}

/// Emits at `b` the host code's choice among `tiles` for `rows` (an index
/// value in the variant's range), each case built by `emitTile` with the
/// index of its tiling: the fewest-token rung that M's tiles of the planned
/// size, evened out, fit in; else the full tiles: for one, itself; for the
/// last variant's, a switch on chooseLargeTile's choice.
void switchOnVariantTile(OpBuilder &b, Location loc, Value rows, int64_t n,
                         int64_t smCount, const WgmmaVariantTiles &tiles,
                         function_ref<void(OpBuilder &, Location, size_t)>
                             emitTile) {
  const size_t rungs = tiles.rungs.size();
  auto emitFull = [&](OpBuilder &fb, Location fl) {
    if (tiles.fullTiles() == 1)
      return emitTile(fb, fl, rungs);
    emitSwitchOnIndex(fb, fl,
                      chooseLargeTile(fb, fl, rows, n, smCount,
                                      tiles.fullTiles() == 4),
                      tiles.fullTiles(),
                      [&](OpBuilder &cb, Location cl, size_t t) {
                        emitTile(cb, cl, rungs + t);
                      });
  };
  if (!rungs)
    return emitFull(b, loc);
  // evenTokenTiles(rows, plannedTokens), in the host code.
  HostTileRuleOps ops{b, loc};
  Value tileCount = ops.ceilDiv(rows, tiles.plannedTokens);
  Value evened = ops.mul(
      ops.ceilDiv(arith::CeilDivUIOp::create(b, loc, rows, tileCount), 8),
      ops.constant(8));
  emitSwitchOnLimits(b, loc, evened, tiles.rungs,
                     [&](OpBuilder &cb, Location cl, size_t c) {
                       if (c < rungs)
                         return emitTile(cb, cl, c);
                       emitFull(cb, cl);
                     });
}
} // namespace

/// Emits at `b`: nothing when `rows` is 0 (a grid of 0 blocks is a launch
/// error), else a switch on how many limits `rows` passes, case i emitted
/// by `emitVariant`.
static void switchOnRows(OpBuilder &b, Location loc, Value rows,
                         ArrayRef<int64_t> limits,
                         function_ref<void(OpBuilder &, Location, size_t)>
                             emitVariant) {
  emitIfAllNonZero(b, loc, rows, [&](OpBuilder &ib, Location il) {
    emitSwitchOnLimits(ib, il, rows, limits, emitVariant);
  });
}

/// The variants' row limits: kDynamicLimits, the decode variant taking
/// kLightDecodeRows where takesLightDecodeRows (its plan `decode`, for
/// kDecodeRows rows, is of the same row tile), as static rows do.
static SmallVector<int64_t> dynamicLimits(const HopperMatmulPlan &decode,
                                          const MixedMatmulOptions &options,
                                          int64_t sms) {
  SmallVector<int64_t> limits(std::begin(kDynamicLimits),
                              std::end(kDynamicLimits));
  if (takesLightDecodeRows(decode, options, sms))
    limits[kDecodeVariants - 1] = kLightDecodeRows;
  return limits;
}

/// Rows known at run time: every variant's kernel, and the host code that
/// launches the one of the rows.
static LogicalResult outlineDynamicRows(MixedMatmulStorageOp op,
                                        gpu::GPUModuleOp kernels,
                                        unsigned index,
                                        const nvvm::NVIDIAChip &chip,
                                        int64_t smCount,
                                        const MixedMatmulOptions &options) {
  const int64_t sms = smCount ? smCount : chip.defaultSMCount;
  SmallVector<Type> types = getHopperLayoutKernelArguments(op, true);
  SmallVector<HopperMatmulPlan> decodePlans;
  SmallVector<gpu::GPUFuncOp> decodeKernels;
  // Per wgmma variant, its tiles and their kernels.
  SmallVector<WgmmaVariantTiles, 3> variantTiles;
  SmallVector<SmallVector<HopperWgmmaKernel>> wgmmaKernels;
  // The variants' row limits, known once the decode variants are planned.
  SmallVector<int64_t> limits;
  for (size_t i = 0; i < std::size(kDynamicPlanRows); ++i) {
    const int64_t rows = kDynamicPlanRows[i];
    if (i == kDecodeVariants)
      limits = dynamicLimits(decodePlans.back(), options, sms);
    std::string name = ("mixed_matmul_hopper_" + Twine(index) + "_rows" +
                        Twine(i < kDecodeVariants ? rows : limits[i - 1] + 1))
                           .str();
    if (i < kDecodeVariants) {
      FailureOr<HopperMatmulPlan> planned =
          planHopperMatmul(op, options, chip, sms, rows);
      if (failed(planned))
        return failure();
      decodePlans.push_back(*planned);
      decodeKernels.push_back(
          buildKernel(op, *planned, kernels, name, types, options));
      continue;
    }
    WgmmaVariantTiles &tiles = variantTiles.emplace_back(
        wgmmaVariantTiles(op, chip, smCount, options, i));
    SmallVector<HopperWgmmaKernel> &built = wgmmaKernels.emplace_back();
    for (const VariantTile &tile : tiles.tiles) {
      FailureOr<HopperWgmmaKernel> kernel = buildHopperWgmmaKernel(
          op, kernels, name + tile.suffix, chip, smCount, tile.tiling,
          tile.planRows, types);
      if (failed(kernel))
        return failure();
      built.push_back(*kernel);
    }
  }
  OpBuilder builder(op);
  SmallVector<Value> operands = kernelOperands(builder, op, types);
  const int64_t n = op.getRhsType().getShape()[1];
  switchOnRows(builder, op.getLoc(), operands.back(), limits,
               [&](OpBuilder &b, Location loc, size_t i) {
                 if (i < kDecodeVariants) {
                   launchDecodeKernel(b, loc, decodeKernels[i],
                                      decodePlans[i], 1, operands);
                   return;
                 }
                 const size_t v = i - kDecodeVariants;
                 switchOnVariantTile(
                     b, loc, operands.back(), n, sms, variantTiles[v],
                     [&](OpBuilder &cb, Location cl, size_t t) {
                       const HopperWgmmaKernel &k = wgmmaKernels[v][t];
                       Emitter at(cb, cl);
                       Value tokenBlocks = at.div(
                           at.add(operands.back(), k.tokens - 1), k.tokens);
                       k.launch(cb, cl, tokenBlocks, operands, op.getLhs());
                     });
               });
  op.erase();
  return success();
}

LogicalResult mlir::microscale::outlineHopperLayoutMatmul(
    MixedMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  if (failed(checkHopperLayoutMatmul(op, chip)))
    return failure();
  if (isRagged(op))
    return raggedTakesWgmma(chip, options)
               ? outlineHopperWgmmaRagged(op, kernels, index, chip, smCount,
                                          options)
               : outlineRagged(op, kernels, index, chip, smCount, options);
  if (hasDynamicRows(op))
    return outlineDynamicRows(op, kernels, index, chip, smCount, options);
  // Above decode sizes: the wgmma kernel (the decoded weight serves a
  // whole token tile).
  const int64_t m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  const int64_t sms = smCount ? smCount : chip.defaultSMCount;
  if (takesWgmma(op, m, options, chip, sms))
    return outlineHopperWgmmaMatmul(op, kernels, index, chip, smCount,
                                    options);
  FailureOr<HopperMatmulPlan> planned =
      planHopperMatmul(op, options, chip, sms, m);
  if (failed(planned))
    return failure();
  const HopperMatmulPlan &p = *planned;
  if (p.m == 0) {
    op.erase();
    return success();
  }
  SmallVector<Type> types = kernelArguments(op, p);
  gpu::GPUFuncOp function =
      buildKernel(op, p, kernels, ("mixed_matmul_hopper_" + Twine(index)).str(),
                  types, options);
  OpBuilder builder(op);
  launchDecodeKernel(builder, op.getLoc(), function, p, 1,
                     kernelOperands(builder, op, types));
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Host emulation
//===----------------------------------------------------------------------===//

/// One mma.sync m16n8k16 (bf16, f32 accumulators) of the warp on the host,
/// written from the element's side of the PTX ISA's fragment tables
/// (independently of the loads, which are written from the lane's side):
/// A(r, k) is half k % 2 of register r / 8 + 2 (k / 8) of lane
/// 4 (r % 8) + (k % 8) / 2; B(k, c) half k % 2 of register k / 8 of lane
/// 4 c + (k % 8) / 2; D(r, c) register 2 (r / 8) + c % 2 of lane
/// 4 (r % 8) + c / 2. The 16 products (exact in f32) are added in K order
/// to the accumulator: the hardware's order inside one mma is not
/// specified, which is why the test compares with a tolerance.
/// `a`: [fragment][32 lanes][4] i32 at `aIndex`, `bWords`: [fragment][32
/// lanes][2] i32 at `bIndex`, `acc`: [warp][tile][32 lanes][4] f32 at
/// (`warp`, `tile`).
static void emulateMma(OpBuilder &b, Location loc, Value a, int64_t aIndex,
                       Value bWords, int64_t bIndex, Value acc, Value warp,
                       int64_t tile) {
  Emitter e(b, loc);
  Type f32 = b.getF32Type();
  auto lanes = scf::ForOp::create(b, loc, e.index(0), e.index(32), e.index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(lanes.getBody());
  Value lane = lanes.getInductionVar();
  auto half = [&](Emitter &x, Value word, Value k) {
    Value bits = x.shl(x.band(x.shrV(word, x.toI32(x.mul(x.rem(k, 2), 16))),
                              0xFFFF),
                       16);
    return arith::BitcastOp::create(x.builder(), x.location(), f32, bits)
        .getResult();
  };
  for (int64_t i = 0; i < 4; ++i) {
    // D(r, c) of this lane and register.
    Value r = e.add(e.div(lane, 4), 8 * (i / 2));
    Value c = e.add(e.mul(e.rem(lane, 4), 2), i % 2);
    Value start = memref::LoadOp::create(
        b, loc, acc, ValueRange{warp, e.index(tile), lane, e.index(i)});
    auto sum = scf::ForOp::create(
        b, loc, e.index(0), e.index(16), e.index(1), ValueRange{start},
        [&](OpBuilder &kb, Location kl, Value k, ValueRange partial) {
          Emitter x(kb, kl);
          Value laneA = x.add(x.mul(x.rem(r, 8), 4), x.div(x.rem(k, 8), 2));
          Value regA = x.add(x.div(r, 8), x.mul(x.div(k, 8), 2));
          Value laneB = x.add(x.mul(c, 4), x.div(x.rem(k, 8), 2));
          Value regB = x.div(k, 8);
          Value av = half(x,
                          memref::LoadOp::create(
                              kb, kl, a,
                              ValueRange{x.index(aIndex), laneA, regA}),
                          k);
          Value bv = half(x,
                          memref::LoadOp::create(
                              kb, kl, bWords,
                              ValueRange{x.index(bIndex), laneB, regB}),
                          k);
          Value product = arith::MulFOp::create(kb, kl, av, bv);
          scf::YieldOp::create(
              kb, kl, ValueRange{arith::AddFOp::create(kb, kl, partial[0],
                                                       product)});
        });
    memref::StoreOp::create(b, loc, sum.getResult(0), acc,
                            ValueRange{warp, e.index(tile), lane, e.index(i)});
  }
}

/// Emits at `b` the decode kernel's emulation of plan `p` on `args` (the
/// kernel's operands; the rows last where known at run time only).
static void emitDecodeEmulation(OpBuilder &b, Location loc,
                                const HopperMatmulPlan &p,
                                ArrayRef<Value> args,
                                const RaggedForm *ragged = nullptr) {
  OpBuilder::InsertionGuard outer(b);
  Emitter e(b, loc);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  // The warps' activation rings, as in shared memory.
  Value ring;
  if (p.staged)
    ring = memref::AllocaOp::create(
        b, loc, MemRefType::get({p.split * p.warpRingBytes() / 4}, i32),
        ValueRange{}, b.getI64IntegerAttr(16));
  HopperMatmulEmitter emitter(p, args[0], args[1], args[2], args[3], args[4],
                              ring, /*onHost=*/true);
  if (args.size() > 5 && !ragged)
    emitter.rows = args[5];
  const int64_t accumulators = p.accumulators();
  // Registers of every lane: the warps' accumulators, one chunk's A
  // fragments and activation words, and the vote.
  Value acc = memref::AllocaOp::create(
      b, loc, MemRefType::get({p.split, accumulators / 4, 32, 4}, f32));
  Value aRegs = memref::AllocaOp::create(
      b, loc, MemRefType::get({4 * p.columnGroups, 32, 4}, i32));
  Value bRegs = memref::AllocaOp::create(
      b, loc, MemRefType::get({4 * p.rowTiles, 32, 2}, i32));
  auto loop = [&](Value lo, Value hi) {
    auto forOp = scf::ForOp::create(b, loc, lo, hi, e.index(1));
    b.setInsertionPointToStart(forOp.getBody());
    return forOp.getInductionVar();
  };
  auto upTo = [&](int64_t n) { return loop(e.index(0), e.index(n)); };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value block = upTo(p.blocks());
  if (ragged) {
    // Grid z and the block's loop over its expert's row groups.
    Value expert = upTo(ragged->experts);
    RaggedSlice slice = beginRaggedSlice(e, emitter, 8 * p.rowTiles, *ragged,
                                         expert, args.drop_front(5));
    enterRaggedGroup(e, emitter, slice, loop(e.index(0), slice.groups));
  }
  {
    OpBuilder::InsertionGuard guard(b);
    Value warp = upTo(p.split);
    {
      OpBuilder::InsertionGuard inner(b);
      Value tile = upTo(accumulators / 4), lane = upTo(32), i = upTo(4);
      memref::StoreOp::create(b, loc, zero, acc,
                              ValueRange{warp, tile, lane, i});
    }
    Value first, end;
    std::tie(first, end) = emitter.range(e, warp);
    Value chunk = loop(first, end);
    // The vote: every lane's scale codes.
    auto vote = scf::ForOp::create(
        b, loc, e.index(0), e.index(32), e.index(1),
        ValueRange{arith::ConstantIntOp::create(b, loc, 1, 1)},
        [&](OpBuilder &lb, Location ll, Value lane, ValueRange all) {
          Emitter x(lb, ll);
          ChunkWords d = emitter.load(x, block, lane, chunk);
          scf::YieldOp::create(lb, ll,
                               ValueRange{x.andI1(all[0], emitter.folds(x, d))});
        });
    Value fast = vote.getResult(0);
    // Staged: every lane's copies of the chunk's activations into the ring
    // slot the kernel uses for it (step (chunk - first) mod depth).
    Value slot = e.rem(arith::SubIOp::create(b, loc, chunk, first), p.depth);
    if (p.staged) {
      OpBuilder::InsertionGuard inner(b);
      Value lane = upTo(32);
      emitter.copyActivations(e, warp, lane, chunk, slot);
    }
    {
      OpBuilder::InsertionGuard inner(b);
      Value lane = upTo(32);
      ChunkWords d = emitter.load(e, block, lane, chunk);
      if (p.staged)
        d.activation = emitter.readActivations(e, warp, lane, slot);
      SmallVector<Value> decoded = emitter.decodeByVote(b, loc, fast, d);
      for (int64_t f = 0; f < 16 * p.columnGroups; ++f)
        memref::StoreOp::create(
            b, loc, decoded[f], aRegs,
            ValueRange{e.index(f / 4), lane, e.index(f % 4)});
      for (int64_t rt = 0; rt < p.rowTiles; ++rt)
        for (int64_t j = 0; j < 4; ++j) {
          auto [b0, b1] = emitter.bFragment(d, rt, j);
          memref::StoreOp::create(b, loc, b0, bRegs,
                                  ValueRange{e.index(4 * rt + j), lane,
                                             e.index(0)});
          memref::StoreOp::create(b, loc, b1, bRegs,
                                  ValueRange{e.index(4 * rt + j), lane,
                                             e.index(1)});
        }
    }
    // The kernel's mmas in its order: step j, column group, row tile.
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t cg = 0; cg < p.columnGroups; ++cg)
        for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
          emulateMma(b, loc, aRegs, 4 * cg + j, bRegs, 4 * rt + j, acc, warp,
                     cg * p.rowTiles + rt);
        }
  }
  // Warp 0's epilogue: the warps' sums in warp order, stored.
  Value lane = upTo(32);
  SmallVector<Value> sums;
  for (int64_t i = 0; i < accumulators; ++i) {
    Value total;
    for (int64_t w = 0; w < p.split; ++w) {
      Value v = memref::LoadOp::create(
          b, loc, acc,
          ValueRange{e.index(w), e.index(i / 4), lane, e.index(i % 4)});
      total = total ? arith::AddFOp::create(b, loc, total, v).getResult() : v;
    }
    sums.push_back(total);
  }
  emitter.store(e, block, lane, sums);
}

bool mlir::microscale::emulateHopperLayoutMatmulOnHost(
    MixedMatmulStorageOp op, const nvvm::NVIDIAChip &chip, int64_t smCount,
    const MixedMatmulOptions &options) {
  if (!hasHopperLayoutWeight(op))
    return false;
  const int64_t sms = smCount ? smCount : chip.defaultSMCount;
  const bool dynamicRows = hasDynamicRows(op);
  const int64_t m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  SmallVector<HopperMatmulPlan> plans;
  {
    // Whether the kernels apply, without their diagnostics.
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(checkHopperLayoutMatmul(op, chip)))
      return false;
    if (isRagged(op) && raggedTakesWgmma(chip, options))
      return emulateHopperWgmmaRaggedOnHost(op, chip, smCount, options);
    if (isRagged(op)) {
      const RaggedForm ragged = getRaggedForm(op);
      if (ragged.dynamicRows)
        return false;
      FailureOr<HopperMatmulPlan> planned = planHopperMatmul(
          op, options, chip, sms, raggedPlanRows(ragged));
      if (failed(planned))
        return false;
      loadHostEmulationDialects(op.getContext());
      OpBuilder b(op);
      if (!ragged.empty())
        emitDecodeEmulation(
            b, op.getLoc(), *planned,
            raggedKernelOperands(
                b, op, raggedKernelArguments(op, *planned, ragged), ragged),
            &ragged);
      op.erase();
      return true;
    }
    if (!dynamicRows && takesWgmma(op, m, options, chip, sms))
      return emulateHopperWgmmaMatmulOnHost(op, chip, smCount, options);
    for (int64_t rows : dynamicRows
                            ? ArrayRef<int64_t>(kDynamicPlanRows)
                                  .take_front(kDecodeVariants)
                            : ArrayRef<int64_t>(m)) {
      FailureOr<HopperMatmulPlan> planned =
          planHopperMatmul(op, options, chip, sms, rows);
      if (failed(planned))
        return false;
      plans.push_back(*planned);
    }
    if (dynamicRows)
      for (int64_t rows :
           ArrayRef<int64_t>(kDynamicPlanRows).drop_front(kDecodeVariants))
        if (!canPlanHopperWgmma(op, chip, smCount, options, rows))
          return false;
  }
  loadHostEmulationDialects(op.getContext());
  OpBuilder b(op);
  if (!dynamicRows) {
    if (m != 0)
      emitDecodeEmulation(b, op.getLoc(), plans.front(),
                          kernelOperands(b, op, kernelArguments(op, plans[0])));
    op.erase();
    return true;
  }
  // The host code's switch, each case the emulation of its variant (of
  // each tile the host code chooses between).
  SmallVector<WgmmaVariantTiles, 3> variantTiles;
  for (size_t i = kDecodeVariants; i < std::size(kDynamicPlanRows); ++i)
    variantTiles.push_back(wgmmaVariantTiles(op, chip, smCount, options, i));
  SmallVector<Value> args =
      kernelOperands(b, op, getHopperLayoutKernelArguments(op, true));
  switchOnRows(b, op.getLoc(), args.back(),
               dynamicLimits(plans[kDecodeVariants - 1], options, sms),
               [&](OpBuilder &vb, Location loc, size_t i) {
                 if (i < kDecodeVariants) {
                   emitDecodeEmulation(vb, loc, plans[i], args);
                   return;
                 }
                 const WgmmaVariantTiles &tiles =
                     variantTiles[i - kDecodeVariants];
                 switchOnVariantTile(
                     vb, loc, args.back(), op.getRhsType().getShape()[1], sms,
                     tiles, [&](OpBuilder &cb, Location, size_t t) {
                       (void)emitHopperWgmmaEmulation(
                           cb, op, chip, smCount, tiles.tiles[t].tiling,
                           tiles.tiles[t].planRows, args);
                     });
               });
  op.erase();
  return true;
}
