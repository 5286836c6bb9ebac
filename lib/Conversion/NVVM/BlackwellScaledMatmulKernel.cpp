//===- BlackwellScaledMatmulKernel.cpp - FP4 x FP4 on sm_120a -------------===//
//
// scaled_matmul_storage of two MXFP4 (or two NVFP4) operands as one kernel
// of the warp-level block-scaled MMA of sm_120a,
// `mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X
// .f32.e2m1.e2m1.f32.ue8m0` (NVVM `mma.block_scale`; for NVFP4
// `kind::mxf4nvf4 ... scale_vec::4X ... ue4m3`, one E4M3 code per 16 K
// values, the global scales applied in the epilogue): the tensor core
// multiplies the E2M1 codes and applies the scales itself, so nothing is
// decoded in registers.
//
// Operand roles, as in the bf16 mma.sync kernel (MixedMatmulKernel.cpp):
// the weight (rhs, [K, N]) is the MMA's A operand, its 16 rows are 16
// weight columns; the activations (lhs, [M, K]) are B, its 8 columns are 8
// activation rows; D is the transposed tile of the result. At decode sizes
// (M <= 16) one weight fragment then feeds every 8-row tile of the warp.
//
// Fragments (PTX ISA 9.7.14.5, the m16n8k64 figures for 4-bit elements;
// group g = lane / 4, t = lane % 4): a0 and a1 hold rows g and g + 8 at K
// 8t..8t+7, a2 and a3 the same rows at K 32 + 8t..; b0 and b1 column g at
// the same K; eight E2M1 codes per register, the lowest K in the low
// nibble. Both operands stored K-major (the activations row-major, the
// weight as `#microscale.blackwell_value` or `#microscale.strided<major_dim
// = 0>`), each register is one aligned 4-byte load: the K-major bytes
// already pack two K-adjacent codes per byte, the even one low. The two K
// blocks of a step are the two halves of the registers, so one E8M0 code
// per block and row: with scale_vec::2X each row's two codes are bytes 0
// and 1 of its provider's scale register (byte-id 0), the providers being
// lanes 4 (r % 8) + r / 8 for A's row r (thread-id 0 picks the first lane
// pair of each quad) and lane 4c for B's column c (PTX ISA 9.7.14.3, block
// scaling for mma.sync). Scales are read through the layouts' own
// emitters, so any scale layout works; `#microscale.blackwell_scale` is the
// one Triton ships for this chip.
//
// Tiling: a warp owns 16 weight columns x 8T activation rows (T = 1, 2 or
// 4 tiles of 8, chosen from M), a block four warps side by side on the
// weight columns. K steps by 64; a K that is not a multiple of 64 ends
// with a partial step whose missing blocks are zero codes with scale 1.
// Rows and columns past the tensor load zero codes and scale 1 (never
// NaN x 0) and are not stored.
//
// This is a first, correct-by-construction kernel: registers straight from
// global memory, no shared-memory staging or software pipelining, scattered
// epilogue stores. Its purpose is the instruction and the data movement
// that feed it, checked without the GPU: ptxas for sm_120a, and the host
// emulation below (the same emitter, the MMA replaced by loops that read
// each element from the lane the PTX ISA's tables put it in).
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "BlockScaledSupport.h"
#include "HostEmulation.h"
#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Conversion/NVVM/TCGen05ScaledMatmul.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMOUTLINESCALEDMATMUL
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
using namespace mlir::microscale::blockscaled;

static constexpr int64_t kWarp = 32;
static constexpr int64_t kWarpsPerBlock = 4;
static constexpr int64_t kTileN = 16; // weight columns per MMA (its M)
static constexpr int64_t kTileM = 8;  // activation rows per MMA (its N)
static constexpr int64_t kStepK = 64;

namespace {
/// The two block-scaled kinds the kernel emits: MXFP4 (kind::mxf4, one E8M0
/// code per 32 K values, scale_vec::2X) and NVFP4 (kind::mxf4nvf4, one E4M3
/// code per 16, scale_vec::4X).
struct ScaleKind {
  bool nvfp4;
  int64_t blockSize() const { return nvfp4 ? 16 : 32; }
  int64_t blocksPerStep() const { return 64 / blockSize(); }
  /// The code of 1.0, for rows, columns and K blocks past the tensor
  /// (never NaN x 0): E8M0 127, E4M3 0x38.
  int64_t unitCode() const { return nvfp4 ? 0x38 : 127; }
};

/// The shapes the kernel derives from the op.
struct ScaledMatmulGeometry {
  ScaleKind kind;
  int64_t m, n, k;
  /// Bytes from one K-major row (activations) or column (weight) to the
  /// next.
  int64_t lhsPitch, rhsPitch;
  int64_t lhsWords, rhsWords, lhsScaleBytes, rhsScaleBytes;
  SmallVector<int64_t> lhsScaleShape, rhsScaleShape;
  /// Activation tiles of 8 rows per warp.
  int64_t tilesPerWarp;
  int64_t steps;

  ScaledMatmulGeometry(QTensorType lhs, QTensorType rhs) {
    kind.nvfp4 = lhs.getFormat().getReferenceFormat() ==
                 ::microscale::ref::MXFormat::nvfp4();
    m = lhs.getShape()[0];
    k = lhs.getShape()[1];
    n = rhs.getShape()[1];
    lhsPitch = lhs.getValueStorageShape().back();
    rhsPitch = rhs.getValueStorageShape().back();
    lhsWords = ShapedType::getNumElements(lhs.getValueStorageShape()) / 4;
    rhsWords = ShapedType::getNumElements(rhs.getValueStorageShape()) / 4;
    lhsScaleBytes = ShapedType::getNumElements(lhs.getScaleStorageShape());
    rhsScaleBytes = ShapedType::getNumElements(rhs.getScaleStorageShape());
    lhsScaleShape = lhs.getScaleShape();
    rhsScaleShape = rhs.getScaleShape();
    const int64_t mTiles = llvm::divideCeil(m, kTileM);
    tilesPerWarp = mTiles >= 4 ? 4 : mTiles >= 2 ? 2 : 1;
    steps = llvm::divideCeil(k, kStepK);
  }

  int64_t rowsPerBlock() const { return kTileM * tilesPerWarp; }
  int64_t columnsPerBlock() const { return kTileN * kWarpsPerBlock; }
  int64_t gridX() const { return llvm::divideCeil(n, columnsPerBlock()); }
  int64_t gridY() const { return llvm::divideCeil(m, rowsPerBlock()); }
  /// Whether the grid's tiles cover exactly the columns / rows.
  bool wholeColumns() const { return n % columnsPerBlock() == 0; }
  bool wholeRows() const { return m % rowsPerBlock() == 0; }
};

/// One warp's registers for one K step, as the mma takes them: A (weight)
/// a0..a3, its scale register, and per activation tile b0, b1 and the
/// scale register.
struct Fragments {
  SmallVector<Value, 4> a;
  Value scaleA;
  SmallVector<SmallVector<Value, 2>> b;
  SmallVector<Value> scaleB;
};
} // namespace

/// Whether `op` has the operands the kernel handles (with a diagnostic).
static LogicalResult checkScaledMatmul(ScaledMatmulStorageOp op) {
  QTensorType lhs = op.getLhsType(), rhs = op.getRhsType();
  const auto format = lhs.getFormat().getReferenceFormat();
  if ((format != ::microscale::ref::MXFormat::mxfp4() &&
       format != ::microscale::ref::MXFormat::nvfp4()) ||
      rhs.getFormat().getReferenceFormat() != format || op.getVariant())
    return op.emitOpError()
           << "the sm_120a block-scaled mma.sync kernel multiplies mxfp4 by "
              "mxfp4 (kind::mxf4) or nvfp4 by nvfp4 (kind::mxf4nvf4) without "
              "a transcode variant; got "
           << Attribute(lhs.getFormat()) << " x " << Attribute(rhs.getFormat());
  if (!isKMajor(lhs) || !isKMajor(rhs))
    return op.emitOpError()
           << "the sm_120a block-scaled mma.sync kernel needs both operands "
              "K-major (lhs #microscale.strided, rhs "
              "#microscale.blackwell_value or #microscale.strided<major_dim = "
              "0>), got "
           << Attribute(lhs.getValueLayout()) << " and "
           << Attribute(rhs.getValueLayout()) << "; convert_layout first";
  const int64_t k = lhs.getShape()[1];
  if (k <= 0 || k % 16 || lhs.getShape()[0] <= 0 || rhs.getShape()[1] <= 0)
    return op.emitOpError() << "the sm_120a block-scaled mma.sync kernel "
                               "needs K a positive multiple of 16 and "
                               "non-empty M and N, got "
                            << lhs.getShape()[0] << " x " << k << " x "
                            << rhs.getShape()[1];
  return success();
}


namespace {
/// The kernel's body in pieces: the GPU kernel runs them per lane, the host
/// emulation in loops over a warp's lanes with the registers in buffers.
class ScaledMatmulEmitter {
public:
  ScaledMatmulEmitter(OpBuilder &builder, Location loc,
                      ScaledMatmulStorageOp op, Value lhsWords,
                      Value lhsScales, Value rhsWords, Value rhsScales,
                      Value out)
      : builder(builder), loc(loc), e(builder, loc),
        g(op.getLhsType(), op.getRhsType()),
        lhsScaleLayout(op.getLhsType().getScaleLayout()),
        rhsScaleLayout(op.getRhsType().getScaleLayout()), lhsWords(lhsWords),
        lhsScales(lhsScales), rhsWords(rhsWords), rhsScales(rhsScales),
        out(out) {}

  const ScaledMatmulGeometry &geometry() const { return g; }

  /// The first weight column and activation row of warp `warp` of block
  /// (bx, by).
  std::pair<Value, Value> warpOrigin(Value bx, Value by, Value warp) {
    return {e.add(e.mul(bx, g.columnsPerBlock()), e.mul(warp, kTileN)),
            e.mul(by, g.rowsPerBlock())};
  }

  /// Lane `lane`'s registers for K step `step` of the warp at (n0, m0).
  Fragments load(Value lane, Value n0, Value m0, Value step) {
    Value group = e.div(lane, 4), t = e.rem(lane, 4);
    // Byte of the step's first half in a K-major row, plus 4t.
    Value kByte = e.add(e.mul(step, kStepK / 2), e.mul(t, 4));
    // Whether the thread's 8 K values of each half of the step exist: K
    // is a multiple of the block (16 or 32), a word never straddles its end.
    Value firstK = e.add(e.mul(step, kStepK), e.mul(t, 8));
    const bool wholeSteps = g.k % kStepK == 0;
    std::array<Value, 2> inK = {within(firstK, g.k, wholeSteps),
                                within(e.add(firstK, 32), g.k, wholeSteps)};
    Fragments f;
    // a0 = (row g, block 0), a1 = (g + 8, 0), a2 = (g, 1), a3 = (g + 8, 1).
    for (int64_t reg = 0; reg < 4; ++reg) {
      Value column = e.add(e.add(n0, group), 8 * (reg % 2));
      Value valid = e.andI1(within(column, g.n, g.wholeColumns()),
                            inK[reg / 2]);
      f.a.push_back(loadWord(rhsWords, valid, column, g.rhsPitch,
                             e.add(kByte, 16 * (reg / 2))));
    }
    // The scale provider of A's row r is lane 4 (r % 8) + r / 8: lane l
    // provides row l / 4 + 8 (l % 2) (lanes 4g + 2, 4g + 3 repeat it).
    Value scaleColumn = e.add(e.add(n0, group), e.mul(e.rem(lane, 2), 8));
    f.scaleA = scalePair(rhsScaleLayout, rhsScales, g.rhsScaleShape,
                         scaleColumn, g.n, g.wholeColumns(), step,
                         /*kFirst=*/true);
    for (int64_t tile = 0; tile < g.tilesPerWarp; ++tile) {
      Value row = e.add(e.add(m0, tile * kTileM), group);
      Value valid = within(row, g.m, g.wholeRows());
      SmallVector<Value, 2> b;
      b.push_back(loadWord(lhsWords, e.andI1(valid, inK[0]), row, g.lhsPitch,
                           kByte));
      b.push_back(loadWord(lhsWords, e.andI1(valid, inK[1]), row, g.lhsPitch,
                           e.add(kByte, 16)));
      f.b.push_back(b);
      // B's column c has its provider in lane 4c (thread-id 0).
      f.scaleB.push_back(scalePair(lhsScaleLayout, lhsScales,
                                   g.lhsScaleShape, row, g.m, g.wholeRows(),
                                   step, /*kFirst=*/false));
    }
    return f;
  }

  /// Stores lane `lane`'s accumulators of tile `tile` (d0..d3: D rows g,
  /// g, g + 8, g + 8 = weight columns; D columns 2t, 2t + 1 = activation
  /// rows) times the global scale.
  void store(Value lane, Value n0, Value m0, int64_t tile,
             ArrayRef<Value> accumulators, Value globalScale) {
    Type outElement = cast<MemRefType>(out.getType()).getElementType();
    Value group = e.div(lane, 4), t = e.rem(lane, 4);
    for (int64_t i = 0; i < 4; ++i) {
      Value column = e.add(e.add(n0, group), 8 * (i / 2));
      Value row = e.add(e.add(e.add(m0, tile * kTileM), e.mul(t, 2)), i % 2);
      Value inside = e.andI1(within(column, g.n, g.wholeColumns()),
                             within(row, g.m, g.wholeRows()));
      auto guard = scf::IfOp::create(builder, loc, inside, false);
      OpBuilder::InsertionGuard insertion(builder);
      builder.setInsertionPointToStart(&guard.getThenRegion().front());
      Value value =
          arith::MulFOp::create(builder, loc, accumulators[i], globalScale);
      if (outElement != value.getType())
        value = arith::TruncFOp::create(builder, loc, outElement, value);
      memref::StoreOp::create(builder, loc, value, out,
                              ValueRange{e.add(e.mul(row, g.n), column)});
    }
  }

private:
  /// x < extent, or the constant true where the grid never reaches past
  /// the extent (`always`): whole tiles then carry no bounds checks.
  Value within(Value x, int64_t extent, bool always) {
    if (always)
      return arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true));
    return e.lt(x, extent);
  }

  /// The 4 bytes at `byte` of K-major row `row` (pitch `pitch`), or 0
  /// where `valid` is false (never an out-of-bounds address).
  Value loadWord(Value words, Value valid, Value row, int64_t pitch,
                 Value byte) {
    Value word = e.div(e.add(e.mul(row, pitch), byte), 4);
    Value loaded = memref::LoadOp::create(
        builder, loc, words, ValueRange{e.select(valid, word, e.index(0))});
    return e.select(valid, loaded, e.i32(0));
  }

  /// The scale codes of the step's K blocks of row/column `other` in bytes
  /// 0, 1 (scale_vec::2X) or 0-3 (4X), byte-id 0; the code of 1.0 past the
  /// tensor.
  Value scalePair(LayoutAttrInterface layout, Value buffer,
                  ArrayRef<int64_t> shape, Value other, int64_t extent,
                  bool wholeExtent, Value step, bool kFirst) {
    Value pair = e.i32(0);
    const int64_t perStep = g.kind.blocksPerStep();
    const int64_t blocks = llvm::divideCeil(g.k, g.kind.blockSize());
    for (int64_t half = 0; half < perStep; ++half) {
      Value block = e.add(e.mul(step, perStep), half);
      Value valid = e.andI1(within(other, extent, wholeExtent),
                            within(block, blocks, g.k % kStepK == 0));
      SmallVector<Value> index =
          kFirst ? SmallVector<Value>{block, other}
                 : SmallVector<Value>{other, block};
      for (Value &v : index)
        v = e.select(valid, v, e.index(0));
      Value code = layout.emitLoadElement(builder, loc, buffer, shape, 8, index);
      code = e.select(valid, code, e.i32(g.kind.unitCode()));
      pair = e.bor(pair, e.shl(code, 8 * half));
    }
    return pair;
  }

  OpBuilder &builder;
  Location loc;
  Emitter e;
  ScaledMatmulGeometry g;
  LayoutAttrInterface lhsScaleLayout, rhsScaleLayout;
  Value lhsWords, lhsScales, rhsWords, rhsScales, out;
};
} // namespace

/// The kernel's arguments: activation words, activation scales, weight
/// words, weight scales, the result, the product of the global scales.
static SmallVector<Type> kernelArguments(ScaledMatmulStorageOp op,
                                         const ScaledMatmulGeometry &g) {
  MLIRContext *context = op.getContext();
  Type i8 = IntegerType::get(context, 8), i32 = IntegerType::get(context, 32);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  return {MemRefType::get({g.lhsWords}, i32),
          MemRefType::get({g.lhsScaleBytes}, i8),
          MemRefType::get({g.rhsWords}, i32),
          MemRefType::get({g.rhsScaleBytes}, i8),
          MemRefType::get({g.m * g.n}, outElement), Float32Type::get(context)};
}


static Value zeroF32(OpBuilder &builder, Location loc) {
  return arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0.0f));
}

static void outlineKernel(ScaledMatmulStorageOp op, gpu::GPUModuleOp kernels,
                          unsigned index) {
  ScaledMatmulGeometry g(op.getLhsType(), op.getRhsType());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  KernelSignature signature;
  signature.name = ((g.kind.nvfp4 ? "scaled_matmul_mxf4nvf4_"
                                   : "scaled_matmul_mxf4_") +
                    Twine(index))
                       .str();
  signature.arguments = kernelArguments(op, g);
  signature.noAliasBuffers = 5;
  signature.blockSize = kWarp * kWarpsPerBlock;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  Block &entry = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Emitter e(builder, loc);
  ScaledMatmulEmitter emitter(builder, loc, op, entry.getArgument(0),
                              entry.getArgument(1), entry.getArgument(2),
                              entry.getArgument(3), entry.getArgument(4));
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value bx = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::y);
  Value lane = e.rem(thread, kWarp), warp = e.div(thread, kWarp);
  std::pair<Value, Value> origin = emitter.warpOrigin(bx, by, warp);
  Value n0 = origin.first, m0 = origin.second;
  const int64_t tiles = g.tilesPerWarp;
  SmallVector<Value> zeros(4 * tiles, zeroF32(builder, loc));
  Type f32 = builder.getF32Type();
  Type result = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(4, f32));
  auto steps = scf::ForOp::create(
      builder, loc, e.index(0), e.index(g.steps), e.index(1), zeros,
      [&](OpBuilder &b, Location l, Value step, ValueRange acc) {
        ScaledMatmulEmitter body(b, l, op, entry.getArgument(0),
                                 entry.getArgument(1), entry.getArgument(2),
                                 entry.getArgument(3), entry.getArgument(4));
        Fragments f = body.load(lane, n0, m0, step);
        Value zeroId = LLVM::ConstantOp::create(b, l, b.getI16Type(),
                                                b.getI16IntegerAttr(0));
        SmallVector<Value> next;
        for (int64_t tile = 0; tile < tiles; ++tile) {
          ValueRange c = acc.slice(4 * tile, 4);
          Value d = NVVM::MmaBlockScaleOp::create(
              b, l, result, f.a, f.b[tile], c, f.scaleA, zeroId, zeroId,
              f.scaleB[tile], zeroId, zeroId,
              ArrayRef<int64_t>{kTileN, kTileM, kStepK},
              std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::e2m1,
                                            NVVM::MMATypes::e2m1},
              g.kind.nvfp4 ? NVVM::ScaleVecSize::X4 : NVVM::ScaleVecSize::X2,
              g.kind.nvfp4 ? NVVM::BlockScaleFormat::UE4M3
                           : NVVM::BlockScaleFormat::UE8M0,
              g.kind.nvfp4 ? NVVM::MMABlockScaleKind::MXF4NVF4
                           : NVVM::MMABlockScaleKind::MXF4);
          for (int64_t i = 0; i < 4; ++i)
            next.push_back(LLVM::ExtractValueOp::create(
                b, l, d, ArrayRef<int64_t>{i}));
        }
        scf::YieldOp::create(b, l, next);
      });
  for (int64_t tile = 0; tile < tiles; ++tile)
    emitter.store(lane, n0, m0, tile,
                  SmallVector<Value>(steps.getResults().slice(4 * tile, 4)),
                  entry.getArgument(5));
  gpu::ReturnOp::create(builder, loc);

  OpBuilder host(op);
  Emitter h(host, loc);
  Value one = h.index(1);
  gpu::LaunchFuncOp::create(
      host, loc, function,
      gpu::KernelDim3{h.index(g.gridX()), h.index(g.gridY()), one},
      gpu::KernelDim3{h.index(kWarp * kWarpsPerBlock), one, one}, Value(),
      argumentValues(host, loc, op, function.getArgumentTypes()));
  op.erase();
}

LogicalResult mlir::microscale::outlineBlackwellScaledMatmul(
    ScaledMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip) {
  // sm_100a has no block-scaled mma.sync: its kernel is tcgen05's.
  if (chip.hasTcgen05)
    return outlineTCGen05ScaledMatmul(op, kernels, index, chip);
  if (!chip.hasBlockScaledMmaSync)
    return op.emitOpError()
           << "has no NVIDIA lowering for " << chip.name
           << ": the scaled_matmul kernels need the block-scaled mma.sync "
              "(sm_120a) or tcgen05.mma ... block_scale (sm_100a)";
  if (failed(checkScaledMatmul(op)))
    return failure();
  outlineKernel(op, kernels, index);
  return success();
}

//===----------------------------------------------------------------------===//
// Host emulation
//===----------------------------------------------------------------------===//

namespace {
/// The warp's registers on the host: per lane, A's 4 words and scale, per
/// tile B's 2 words and scale, and the 4 accumulators.
struct HostRegisters {
  Value a, scaleA, b, scaleB, acc;
};

/// One m16n8k64 kind::mxf4 scale_vec::2X (kind::mxf4nvf4 4X) MMA of the
/// warp on the host,
/// D = C + sum over the K blocks (2 of 32 or 4 of 16) of (block sum) x
/// SF_A x SF_B, written
/// from the element's side of the PTX ISA's tables (independently of the
/// loads, which are written from the lane's side): A(r, k) is nibble k % 8
/// of register r / 8 + 2 (k / 32) of lane 4 (r % 8) + (k % 32) / 8; B(k, c)
/// nibble k % 8 of register k / 32 of lane 4c + (k % 32) / 8; SF_A(r, j)
/// byte j of the scale register of lane 4 (r % 8) + r / 8 (thread-id 0),
/// SF_B(j, c) byte j of lane 4c's. Each block's 32 (16) products are summed
/// exactly (integers: the codes times 4), scaled, and added to the f32
/// accumulator in K order: the hardware's order and rounding inside one
/// MMA are not specified, which is why the test compares with a tolerance.
void emulateMma(OpBuilder &builder, Location loc, ScaleKind kind, Value a,
                Value scaleA, Value b, Value scaleB, Value acc, int64_t tile) {
  Emitter e(builder, loc);
  Type f32 = builder.getF32Type();
  auto lanes = scf::ForOp::create(builder, loc, e.index(0), e.index(kWarp),
                                  e.index(1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(lanes.getBody());
  Value lane = lanes.getInductionVar();
  Value tileIndex = e.index(tile);
  auto load = [&](Value buffer, ValueRange index) {
    return memref::LoadOp::create(builder, loc, buffer, index).getResult();
  };
  for (int64_t i = 0; i < 4; ++i) {
    Value r = e.add(e.div(lane, 4), 8 * (i / 2));
    Value c = e.add(e.mul(e.rem(lane, 4), 2), i % 2);
    Value sum = load(acc, {tileIndex, lane, e.index(i)});
    Value providerA = e.add(e.mul(e.rem(r, 8), 4), e.div(r, 8));
    Value providerB = e.mul(c, 4);
    Value sfa = load(scaleA, {providerA});
    Value sfb = load(scaleB, {tileIndex, providerB});
    const int64_t size = kind.blockSize();
    for (int64_t block = 0; block < kind.blocksPerStep(); ++block) {
      auto products = scf::ForOp::create(
          builder, loc, e.index(0), e.index(size), e.index(1),
          ValueRange{e.i32(0)},
          [&](OpBuilder &bb, Location l, Value j, ValueRange partial) {
            Emitter x(bb, l);
            Value k = x.add(j, size * block);
            Value nibble = x.toI32(x.mul(x.rem(k, 8), 4));
            Value laneA = x.add(x.mul(x.rem(r, 8), 4), x.div(x.rem(k, 32), 8));
            Value regA = x.add(x.div(r, 8), x.mul(x.div(k, 32), 2));
            Value laneB = x.add(x.mul(c, 4), x.div(x.rem(k, 32), 8));
            Value regB = x.div(k, 32);
            Value codeA = x.band(
                x.shrV(memref::LoadOp::create(bb, l, a,
                                              ValueRange{laneA, regA}),
                       nibble),
                0xF);
            Value codeB = x.band(
                x.shrV(memref::LoadOp::create(bb, l, b,
                                              ValueRange{x.index(tile), laneB,
                                                         regB}),
                       nibble),
                0xF);
            Value product = arith::MulIOp::create(
                bb, l, e2m1TimesFour(x, codeA), e2m1TimesFour(x, codeB));
            scf::YieldOp::create(
                bb, l,
                ValueRange{arith::AddIOp::create(bb, l, partial[0], product)});
          });
      // The codes times 4 each: the block sum is the integer / 16, exact.
      Value blockSum = arith::MulFOp::create(
          builder, loc,
          arith::SIToFPOp::create(builder, loc, f32, products.getResult(0)),
          arith::ConstantOp::create(builder, loc,
                                    builder.getF32FloatAttr(1.0f / 16)));
      Value codeA = e.band(e.shr(sfa, 8 * block), 0xFF);
      Value codeB = e.band(e.shr(sfb, 8 * block), 0xFF);
      auto decode = [&](Value code) {
        return kind.nvfp4 ? e4m3ToF32(e, code) : e8m0ToF32(e, code);
      };
      Value scaled = arith::MulFOp::create(
          builder, loc,
          arith::MulFOp::create(builder, loc, blockSum, decode(codeA)),
          decode(codeB));
      sum = arith::AddFOp::create(builder, loc, sum, scaled);
    }
    memref::StoreOp::create(builder, loc, sum, acc,
                            ValueRange{tileIndex, lane, e.index(i)});
  }
}
} // namespace

bool mlir::microscale::emulateBlackwellScaledMatmulOnHost(
    ScaledMatmulStorageOp op) {
  {
    // The checks without their diagnostics: a test asks whether the kernel
    // applies.
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(checkScaledMatmul(op)))
      return false;
  }
  loadHostEmulationDialects(op.getContext());
  ScaledMatmulGeometry g(op.getLhsType(), op.getRhsType());
  Location loc = op.getLoc();
  OpBuilder builder(op);
  Emitter e(builder, loc);
  SmallVector<Type> types = kernelArguments(op, g);
  SmallVector<Value> args = argumentValues(builder, loc, op, types);
  ScaledMatmulEmitter emitter(builder, loc, op, args[0], args[1], args[2],
                              args[3], args[4]);
  const int64_t tiles = g.tilesPerWarp;
  Type f32 = builder.getF32Type(), i32 = builder.getI32Type();
  HostRegisters regs;
  regs.a = memref::AllocaOp::create(builder, loc,
                                    MemRefType::get({kWarp, 4}, i32));
  regs.scaleA =
      memref::AllocaOp::create(builder, loc, MemRefType::get({kWarp}, i32));
  regs.b = memref::AllocaOp::create(builder, loc,
                                    MemRefType::get({tiles, kWarp, 2}, i32));
  regs.scaleB = memref::AllocaOp::create(builder, loc,
                                         MemRefType::get({tiles, kWarp}, i32));
  regs.acc = memref::AllocaOp::create(builder, loc,
                                      MemRefType::get({tiles, kWarp, 4}, f32));
  auto loop = [&](int64_t count) {
    auto forOp = scf::ForOp::create(builder, loc, e.index(0), e.index(count),
                                    e.index(1));
    builder.setInsertionPointToStart(forOp.getBody());
    return forOp.getInductionVar();
  };
  // Blocks, then the block's warps one after the other.
  Value bx = loop(g.gridX());
  Value by = loop(g.gridY());
  Value warp = loop(kWarpsPerBlock);
  std::pair<Value, Value> origin = emitter.warpOrigin(bx, by, warp);
  Value n0 = origin.first, m0 = origin.second;
  Value zero = zeroF32(builder, loc);
  {
    OpBuilder::InsertionGuard guard(builder);
    Value tile = loop(tiles), lane = loop(kWarp), i = loop(4);
    memref::StoreOp::create(builder, loc, zero, regs.acc,
                            ValueRange{tile, lane, i});
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    Value step = loop(g.steps);
    {
      // Every lane's registers, as each lane of the kernel loads them.
      OpBuilder::InsertionGuard lanes(builder);
      Value lane = loop(kWarp);
      Fragments f = emitter.load(lane, n0, m0, step);
      for (int64_t reg = 0; reg < 4; ++reg)
        memref::StoreOp::create(builder, loc, f.a[reg], regs.a,
                                ValueRange{lane, e.index(reg)});
      memref::StoreOp::create(builder, loc, f.scaleA, regs.scaleA,
                              ValueRange{lane});
      for (int64_t tile = 0; tile < tiles; ++tile) {
        for (int64_t reg = 0; reg < 2; ++reg)
          memref::StoreOp::create(
              builder, loc, f.b[tile][reg], regs.b,
              ValueRange{e.index(tile), lane, e.index(reg)});
        memref::StoreOp::create(builder, loc, f.scaleB[tile], regs.scaleB,
                                ValueRange{e.index(tile), lane});
      }
    }
    for (int64_t tile = 0; tile < tiles; ++tile)
      emulateMma(builder, loc, g.kind, regs.a, regs.scaleA, regs.b,
                 regs.scaleB, regs.acc, tile);
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    Value lane = loop(kWarp);
    for (int64_t tile = 0; tile < tiles; ++tile) {
      SmallVector<Value> accumulators;
      for (int64_t i = 0; i < 4; ++i)
        accumulators.push_back(memref::LoadOp::create(
            builder, loc, regs.acc,
            ValueRange{e.index(tile), lane, e.index(i)}));
      emitter.store(lane, n0, m0, tile, accumulators, args[5]);
    }
  }
  op.erase();
  return true;
}

namespace {
struct OutlineScaledMatmulPass
    : public mlir::microscale::impl::MicroscaleNVVMOutlineScaledMatmulBase<
          OutlineScaledMatmulPass> {
  using MicroscaleNVVMOutlineScaledMatmulBase::
      MicroscaleNVVMOutlineScaledMatmulBase;
  void runOnOperation() override {
    std::optional<nvvm::NVIDIAChip> target =
        lookupChip(getOperation(), chip, getArgument());
    if (!target)
      return signalPassFailure();
    SmallVector<ScaledMatmulStorageOp> ops =
        collectOpsToOutline<ScaledMatmulStorageOp>(getOperation());
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kNVVMKernelModule);
    for (ScaledMatmulStorageOp op : ops)
      if (failed(outlineBlackwellScaledMatmul(op, kernels,
                                              getNextKernelIndex(kernels),
                                              *target)))
        return signalPassFailure();
  }
};
} // namespace
