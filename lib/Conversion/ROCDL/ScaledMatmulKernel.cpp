//===- ScaledMatmulKernel.cpp - scaled_matmul_storage to scaled MFMA -----===//
//
// One wave (64 lanes) per 32x32 result tile; one amdgpu.scaled_mfma
// 32x32x64 per 64 of K. The operand layout of the FP6/FP4 scaled MFMA puts
// row (or column) l % 32 and one whole 32-element K block in lane l, so an
// operand block, its scale and its transcode all stay inside one lane: no
// shuffles, no shared memory.
//
// This is a first, correct-by-construction kernel: no LDS staging, no
// software pipelining, one tile per wave. Its purpose is the instruction
// sequence (the transcode feeding the matrix core), not peak throughput.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/ROCDL/Passes.h"

#include "microscale/Conversion/ROCDL/Chip.h"
#include "microscale/Conversion/ROCDL/GFX950Transcode.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALEROCDLOUTLINESCALEDMATMUL
#include "microscale/Conversion/ROCDL/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

static constexpr StringLiteral kKernelModule = "microscale_gfx950_kernels";
static constexpr int64_t kTile = 32, kStepK = 64, kWave = 64;


namespace {
/// One operand as the kernel sees it.
struct KernelOperand {
  QTensorType type;
  MatmulOperandKind kind;
  bool kFirst;      // rhs [K, N]: K is dimension 0
  int64_t rowBytes; // bytes of one row (lhs) or column (rhs) of K values
};
} // namespace

/// Values must be stored K-major: each lane's 32 K values are then 16
/// (FP4) or 24 (FP6) consecutive bytes.
static LogicalResult checkKMajor(ScaledMatmulStorageOp op,
                                 const KernelOperand &operand,
                                 StringRef which) {
  auto strided = dyn_cast<StridedAttr>(operand.type.getValueLayout());
  const int64_t axis = operand.type.getAxis();
  if (strided && (strided.getMajorDim() == axis ||
                  strided.getMajorDim() == axis - 2))
    return success();
  return op.emitOpError()
         << "gfx950 lowering needs the " << which
         << " values stored K-major (#microscale.strided<major_dim = " << axis
         << ">), got " << Attribute(operand.type.getValueLayout())
         << "; convert_layout first";
}

/// Block `kb` of row/column `other`: six words of packed E2M3 codes as the
/// scaled MFMA's vector<32xf6E2M3FN>, and its E8M0 scale.
static std::pair<Value, Value>
emitOperand(Emitter &e, const KernelOperand &operand, Value values,
            Value scales, Value other, Value kb, TranscodeVariant variant,
            ExponentBump rule) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  SmallVector<int64_t> scaleShape = operand.type.getScaleShape();
  SmallVector<Value> scaleIndex =
      operand.kFirst ? SmallVector<Value>{kb, other}
                     : SmallVector<Value>{other, kb};
  Value scaleCode = operand.type.getScaleLayout().emitLoadElement(
      b, loc, scales, scaleShape, 8, scaleIndex);
  const bool fp6 = operand.kind == MatmulOperandKind::MXFP6;
  const int64_t blockBytes = fp6 ? 24 : 16;
  Value offset =
      e.add(e.mul(other, operand.rowBytes), e.mul(kb, blockBytes));
  auto bytes = VectorType::get({blockBytes}, b.getI8Type());
  auto words = VectorType::get({blockBytes / 4}, b.getI32Type());
  Value loaded = vector::BitCastOp::create(
      b, loc, words,
      vector::LoadOp::create(b, loc, bytes, values, ValueRange{offset},
                             /*nontemporal=*/false,
                             /*alignment=*/llvm::MaybeAlign(fp6 ? 8 : 16)));
  auto fp6Type = VectorType::get({32}, b.getType<Float6E2M3FNType>());
  Value packed, e8m0 = scaleCode;
  if (fp6) {
    packed = vector::BitCastOp::create(b, loc, fp6Type, loaded);
  } else {
    SmallVector<Value, 4> fp4;
    for (int64_t w = 0; w < 4; ++w)
      fp4.push_back(vector::ExtractOp::create(b, loc, loaded, w));
    TranscodedBlock block =
        emitGFX950TranscodeBlock(e, fp4, scaleCode, variant, rule);
    Value six = vector::FromElementsOp::create(
        b, loc, VectorType::get({6}, b.getI32Type()), block.words);
    packed = vector::BitCastOp::create(b, loc, fp6Type, six);
    e8m0 = block.e8m0;
  }
  Value code = arith::TruncIOp::create(b, loc, b.getI8Type(), e8m0);
  Value scale =
      arith::BitcastOp::create(b, loc, b.getType<Float8E8M0FNUType>(), code);
  return {packed, scale};
}

static LogicalResult outline(ScaledMatmulStorageOp op, gpu::GPUModuleOp kernels,
                             unsigned index) {
  FailureOr<MatmulOperandKinds> kinds = getMatmulOperandKinds(op);
  if (failed(kinds))
    return failure();
  QTensorType lhsType = op.getLhsType(), rhsType = op.getRhsType();
  const int64_t m = lhsType.getShape()[0], k = lhsType.getShape()[1],
                n = rhsType.getShape()[1];
  if (m % kTile || n % kTile || k % kStepK || !m || !n || !k)
    return op.emitOpError()
           << "gfx950 lowering needs M and N positive multiples of " << kTile
           << " and K a positive multiple of " << kStepK << ", got M = " << m
           << ", N = " << n << ", K = " << k;
  auto rowBytes = [&](MatmulOperandKind kind) {
    return kind == MatmulOperandKind::MXFP6 ? k * 3 / 4 : k / 2;
  };
  const KernelOperand lhs{lhsType, kinds->lhs, false, rowBytes(kinds->lhs)};
  const KernelOperand rhs{rhsType, kinds->rhs, true, rowBytes(kinds->rhs)};
  if (failed(checkKMajor(op, lhs, "lhs")) ||
      failed(checkKMajor(op, rhs, "rhs")))
    return failure();
  const TranscodeVariant variant =
      op.getVariant().value_or(TranscodeVariant::lut);
  const ExponentBump rule = op.getExponentBump();

  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  auto staticBytes = [&](ArrayRef<int64_t> storage) {
    return MemRefType::get({ShapedType::getNumElements(storage)},
                           IntegerType::get(context, 8));
  };
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  SmallVector<Type> argTypes = {
      staticBytes(lhsType.getValueStorageShape()),
      staticBytes(lhsType.getScaleStorageShape()),
      staticBytes(rhsType.getValueStorageShape()),
      staticBytes(rhsType.getScaleStorageShape()),
      MemRefType::get({m * n}, outElement), Float32Type::get(context)};

  KernelSignature signature;
  signature.name = ("scaled_matmul_" + Twine(index)).str();
  signature.arguments = argTypes;
  signature.noAliasBuffers = 5;
  signature.blockSize = kWave;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder builder(context);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value lane = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value tileN = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value tileM = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::y);
  Value inTile = e.rem(lane, kTile), half = e.div(lane, kTile);
  Value row = e.add(e.mul(tileM, kTile), inTile);
  Value column = e.add(e.mul(tileN, kTile), inTile);
  auto accType = VectorType::get({16}, builder.getF32Type());
  Value zero = arith::ConstantOp::create(
      builder, loc, accType,
      DenseElementsAttr::get(accType, builder.getF32FloatAttr(0.0f)));
  auto steps = scf::ForOp::create(
      builder, loc, e.index(0), e.index(k / kStepK), e.index(1),
      ValueRange{zero},
      [&](OpBuilder &b, Location l, Value step, ValueRange acc) {
        Emitter body(b, l);
        Value kb = body.add(body.mul(step, 2), half);
        auto [a, aScale] = emitOperand(body, lhs, entry.getArgument(0),
                                       entry.getArgument(1), row, kb,
                                       variant, rule);
        auto [w, wScale] = emitOperand(body, rhs, entry.getArgument(2),
                                       entry.getArgument(3), column, kb,
                                       variant, rule);
        Value next = amdgpu::ScaledMFMAOp::create(
            b, l, accType, kTile, kTile, kStepK, a, w, acc[0], aScale, wScale,
            /*scalesIdxA=*/0, /*scalesIdxB=*/0);
        scf::YieldOp::create(b, l, next);
      });
  // The 32x32 accumulator layout: lane l, register j holds column l % 32
  // of row 8 (j / 4) + 4 (l / 32) + j % 4.
  Value globalScale = entry.getArgument(5);
  Value out = entry.getArgument(4);
  for (int64_t j = 0; j < 16; ++j) {
    Value r = e.add(e.add(e.mul(tileM, kTile), e.mul(half, 4)),
                    8 * (j / 4) + j % 4);
    Value value = vector::ExtractOp::create(builder, loc, steps.getResult(0), j);
    value = arith::MulFOp::create(builder, loc, value, globalScale);
    if (outElement != value.getType())
      value = arith::TruncFOp::create(builder, loc, outElement, value);
    memref::StoreOp::create(builder, loc, value, out,
                            ValueRange{e.add(e.mul(r, n), column)});
  }
  gpu::ReturnOp::create(builder, loc);

  // The launch, in place of the op: a grid of (N / 32, M / 32) waves.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  auto asType = [&](Value buffer, Type type) -> Value {
    if (buffer.getType() == type)
      return buffer;
    return memref::CastOp::create(builder, loc, type, buffer);
  };
  Value globalScaleProduct = arith::MulFOp::create(
      builder, loc, op.getLhsGlobalScale(), op.getRhsGlobalScale());
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(n / kTile), host.index(m / kTile), one},
      gpu::KernelDim3{host.index(kWave), one, one}, Value(),
      ValueRange{asType(op.getLhsValues(), argTypes[0]),
                 asType(op.getLhsScales(), argTypes[1]),
                 asType(op.getRhsValues(), argTypes[2]),
                 asType(op.getRhsScales(), argTypes[3]),
                 asType(op.getOut(), argTypes[4]), globalScaleProduct});
  op.erase();
  return success();
}

namespace {
struct OutlineScaledMatmulPass
    : public mlir::microscale::impl::MicroscaleROCDLOutlineScaledMatmulBase<
          OutlineScaledMatmulPass> {
  using MicroscaleROCDLOutlineScaledMatmulBase::
      MicroscaleROCDLOutlineScaledMatmulBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<rocdl::AMDChip> target = rocdl::AMDChip::lookup(chip);
    if (!target) {
      mlir::emitError(module.getLoc())
          << getArgument() << ": unknown AMD chip '" << chip
          << "' (known: " << rocdl::AMDChip::knownChips() << ")";
      return signalPassFailure();
    }
    SmallVector<ScaledMatmulStorageOp> matmuls;
    module.walk([&](ScaledMatmulStorageOp op) { matmuls.push_back(op); });
    if (matmuls.empty())
      return;
    if (!target->hasScaledMFMA) {
      matmuls.front().emitOpError()
          << "the ROCDL scaled_matmul kernel needs the block-scaled MFMA "
             "(gfx950); "
          << target->name << " has none";
      return signalPassFailure();
    }
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(module, kKernelModule);
    unsigned index = 0;
    for (ScaledMatmulStorageOp op : matmuls)
      if (failed(outline(op, kernels, index++)))
        return signalPassFailure();
  }
};
} // namespace
