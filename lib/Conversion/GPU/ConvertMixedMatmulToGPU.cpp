//===- ConvertMixedMatmulToGPU.cpp - BF16 x MXFP4 on NVIDIA tensor cores --===//
//
// mixed_matmul_storage (bf16 activations [M, K] times an MXFP4 weight
// [K, N] stored K-major) as one kernel of mma.sync m16n8k16 (bf16 in, f32
// accumulators), the weight dequantized in registers.
//
// Operand order. A thread (group g = lane / 4, q = lane % 4) of an
// m16n8k16 holds B values at k = 2q, 2q+1 (register 0) and 2q+8, 2q+9
// (register 1) of column g, and the matching A values of rows g and g+8.
// Any permutation of K applied to both operands leaves the product
// unchanged, so the kernel maps the mma's k16 steps j = 0..3 of a 64-wide K
// chunk onto the weight's bytes so that each thread's weight bytes are
// contiguous: at step j, thread q's B registers hold K = 16q + 4j + {0,1}
// and {2,3}, i.e. byte 8q + 2j and 8q + 2j + 1 of the chunk's 32 bytes of
// its column. One 8-byte load per column and chunk then feeds four mmas,
// and the A side reads 16 consecutive bf16 (two 16-byte loads) per row. The
// 16 values a thread decodes per chunk share one scale (K block 2c + q/2).
//
// Dequantization: the nibble's sign and exponent-mantissa bits placed into
// an f32 (value x 2^-126, exact), times 2^126, times the E8M0 scale: exact
// in f32 for every code (zero, subnormal and NaN scales included), then
// rounded to bf16 (exact for every finite product that bf16 holds).
//
// First version: one warp per 16 x 16 output tile column strip, no shared
// memory, no split-K; loads of `unroll` chunks are issued before their
// mmas so that several are in flight.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
constexpr int64_t kChunkK = 64;  // K per chunk: four m16n8k16 steps
constexpr int64_t kTileM = 16;
constexpr int64_t kWarps = 4;    // warps per block

/// What the kernel needs to know about the op.
struct MixedMatmulShape {
  int64_t m, n, k;
  int64_t tilesPerWarp; // n8 tiles per warp
  int64_t unroll;       // chunks whose loads are issued together
};
} // namespace

static LogicalResult checkSupported(MixedMatmulStorageOp op) {
  QTensorType rhs = op.getRhsType();
  auto lhs = cast<MemRefType>(op.getLhs().getType());
  if (!lhs.getElementType().isBF16())
    return op.emitOpError()
           << "NVIDIA lowering takes bf16 activations, got " << Type(lhs);
  if (rhs.getFormat().getShortName() != "mxfp4")
    return op.emitOpError() << "NVIDIA lowering takes an mxfp4 weight, got "
                            << Attribute(rhs.getFormat());
  auto strided = dyn_cast<StridedAttr>(rhs.getValueLayout());
  if (!strided || (strided.getMajorDim() != 0 && strided.getMajorDim() != -2))
    return op.emitOpError()
           << "NVIDIA lowering needs the weight values stored K-major "
              "(#microscale.strided<major_dim = 0>), got "
           << Attribute(rhs.getValueLayout()) << "; convert_layout first";
  const int64_t k = rhs.getShape()[0], n = rhs.getShape()[1];
  if (k % kChunkK || n % 8 || k == 0 || n == 0)
    return op.emitOpError()
           << "NVIDIA lowering needs K a positive multiple of " << kChunkK
           << " and N of 8, got K = " << k << ", N = " << n;
  return success();
}

/// The four bf16 pairs of one weight byte pair: byte -> bf16x2 (low half
/// the even-K nibble), each nibble dequantized exactly with `scale` (f32).
static Value emitDecodeByte(Emitter &e, Value byte, Value scale) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type f32 = b.getF32Type();
  Value bias = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(0x1p126f));
  auto decode = [&](Value nibble) -> Value {
    // Sign to bit 31, exponent and mantissa bits to bits 24..22: an f32 of
    // the FP4 value times 2^-126.
    Value bits = e.bor(e.shl(e.band(nibble, 8), 28), e.shl(e.band(nibble, 7), 22));
    Value value = arith::BitcastOp::create(b, loc, f32, bits);
    value = arith::MulFOp::create(b, loc, value, bias);
    value = arith::MulFOp::create(b, loc, value, scale);
    Value half = arith::TruncFOp::create(b, loc, b.getBF16Type(), value);
    return arith::ExtUIOp::create(
        b, loc, b.getI32Type(),
        arith::BitcastOp::create(b, loc, b.getI16Type(), half));
  };
  return e.bor(decode(e.band(byte, 0xF)), e.shl(decode(e.shr(byte, 4)), 16));
}

/// 2^(code - 127) as f32; code 0 is the subnormal 2^-127, 0xFF NaN.
static Value emitE8M0ToF32(Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  auto eq = [&](int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code,
                                 e.i32(v));
  };
  Value bits = e.select(eq(0), e.i32(0x00400000), e.shl(code, 23));
  bits = e.select(eq(0xFF), e.i32(0x7FC00000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

LogicalResult mlir::microscale::outlineMixedMatmul(MixedMatmulStorageOp op,
                                                   gpu::GPUModuleOp kernels,
                                                   unsigned index) {
  if (failed(checkSupported(op)))
    return failure();
  QTensorType rhs = op.getRhsType();
  MixedMatmulShape s;
  s.k = rhs.getShape()[0];
  s.n = rhs.getShape()[1];
  s.m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  s.tilesPerWarp = s.n % 16 == 0 ? 2 : 1;
  const int64_t chunks = s.k / kChunkK;
  s.unroll = chunks % 4 == 0 ? 4 : chunks % 2 == 0 ? 2 : 1;

  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Type i8 = IntegerType::get(context, 8), i32 = IntegerType::get(context, 32);
  Type bf16 = BFloat16Type::get(context);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  SmallVector<Type> argTypes = {
      MemRefType::get({s.m * s.k}, bf16),
      MemRefType::get({ShapedType::getNumElements(rhs.getValueStorageShape())},
                      i8),
      MemRefType::get({ShapedType::getNumElements(rhs.getScaleStorageShape())},
                      i8),
      MemRefType::get({s.m * s.n}, outElement), Float32Type::get(context)};

  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("mixed_matmul_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name, builder.getFunctionType(argTypes, {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  function.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({32 * kWarps, 1, 1}));
  for (unsigned arg = 0; arg < 4; ++arg) {
    function.setArgAttr(arg, "llvm.noalias", builder.getUnitAttr());
    function.setArgAttr(arg, "llvm.align", builder.getI64IntegerAttr(16));
  }
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value lhs = entry.getArgument(0), values = entry.getArgument(1),
        scales = entry.getArgument(2), out = entry.getArgument(3),
        globalScale = entry.getArgument(4);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value lane = e.rem(thread, 32), warp = e.div(thread, 32);
  Value group = e.div(lane, 4), quad = e.rem(lane, 4);
  Value blockN = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value blockM = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::y);
  const int64_t warpColumns = 8 * s.tilesPerWarp;
  Value firstColumn =
      e.mul(e.add(e.mul(blockN, kWarps), warp), warpColumns);
  // Rows past M read row M - 1 (valid memory) and are not stored.
  Value row0 = e.add(e.mul(blockM, kTileM), group);
  Value row1 = e.add(row0, 8);
  auto clampRow = [&](Value r) {
    return arith::MinUIOp::create(builder, loc, r, e.index(s.m - 1));
  };
  Value loadRow0 = clampRow(row0), loadRow1 = clampRow(row1);

  auto active = scf::IfOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                            firstColumn, e.index(s.n)),
      /*withElseRegion=*/false);
  builder.setInsertionPointToStart(&active.getThenRegion().front());

  SmallVector<int64_t> shape(rhs.getShape());
  SmallVector<int64_t> scaleShape = rhs.getScaleShape();
  LayoutAttrInterface scaleLayout = rhs.getScaleLayout();
  Type f32 = builder.getF32Type();
  Value zero = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0));
  SmallVector<Value> initial(4 * s.tilesPerWarp, zero);
  auto accType = LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  auto chunkLoop = scf::ForOp::create(
      builder, loc, e.index(0), e.index(chunks), e.index(s.unroll), initial,
      [&](OpBuilder &b, Location l, Value firstChunk, ValueRange acc) {
        Emitter body(b, l);
        SmallVector<Value> sums(acc.begin(), acc.end());
        // All loads of `unroll` chunks first.
        struct ChunkData {
          SmallVector<Value, 8> a0, a1;       // rows g and g+8: 8 words
          SmallVector<Value, 2> weight[2];    // per tile: 2 words
          Value scale[2];                     // per tile
        };
        SmallVector<ChunkData> data(s.unroll);
        auto rowWords = [&](Value row, Value kFirst) {
          Value offset = body.add(body.mul(row, s.k), kFirst);
          SmallVector<Value, 8> words;
          for (int half = 0; half < 2; ++half) {
            Value v = vector::LoadOp::create(
                b, l, VectorType::get({8}, bf16), lhs,
                ValueRange{body.add(offset, 8 * half)}, false,
                llvm::MaybeAlign(16));
            Value w = vector::BitCastOp::create(
                b, l, VectorType::get({4}, i32), v);
            for (int64_t i = 0; i < 4; ++i)
              words.push_back(vector::ExtractOp::create(b, l, w, i));
          }
          return words;
        };
        for (int64_t u = 0; u < s.unroll; ++u) {
          Value chunk = body.add(firstChunk, u);
          Value kFirst = body.add(body.mul(chunk, kChunkK), body.mul(quad, 16));
          data[u].a0 = rowWords(loadRow0, kFirst);
          data[u].a1 = rowWords(loadRow1, kFirst);
          for (int64_t t = 0; t < s.tilesPerWarp; ++t) {
            Value column = body.add(firstColumn, body.add(group, 8 * t));
            Value offset = body.add(body.mul(column, s.k / 2),
                                    body.add(body.mul(chunk, 32),
                                             body.mul(quad, 8)));
            Value bytes = vector::LoadOp::create(
                b, l, VectorType::get({8}, i8), values, ValueRange{offset},
                false, llvm::MaybeAlign(8));
            Value w = vector::BitCastOp::create(
                b, l, VectorType::get({2}, i32), bytes);
            data[u].weight[t] = {vector::ExtractOp::create(b, l, w, 0),
                                 vector::ExtractOp::create(b, l, w, 1)};
            Value block = body.add(body.mul(chunk, 2), body.div(quad, 2));
            data[u].scale[t] = emitE8M0ToF32(
                body, scaleLayout.emitLoadElement(b, l, scales, scaleShape, 8,
                                                  ValueRange{block, column}));
          }
        }
        for (int64_t u = 0; u < s.unroll; ++u)
          for (int64_t j = 0; j < 4; ++j) {
            SmallVector<Value, 4> a = {data[u].a0[2 * j], data[u].a1[2 * j],
                                       data[u].a0[2 * j + 1],
                                       data[u].a1[2 * j + 1]};
            for (int64_t t = 0; t < s.tilesPerWarp; ++t) {
              Value word = data[u].weight[t][j / 2];
              Value pair = body.shr(word, 16 * (j % 2));
              SmallVector<Value, 2> bRegs = {
                  emitDecodeByte(body, body.band(pair, 0xFF),
                                 data[u].scale[t]),
                  emitDecodeByte(body, body.band(body.shr(pair, 8), 0xFF),
                                 data[u].scale[t])};
              SmallVector<Value, 4> c(sums.begin() + 4 * t,
                                      sums.begin() + 4 * t + 4);
              Value d = NVVM::MmaOp::create(
                  b, l, accType, a, bRegs, c, ArrayRef<int64_t>{16, 8, 16},
                  std::nullopt, std::nullopt,
                  std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                NVVM::MMATypes::bf16},
                  std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                 NVVM::MMALayout::col});
              for (int64_t i = 0; i < 4; ++i)
                sums[4 * t + i] = LLVM::ExtractValueOp::create(b, l, d, i);
            }
          }
        scf::YieldOp::create(b, l, sums);
      });

  // c0, c1: row g, columns 2q, 2q+1 of the tile; c2, c3: row g + 8.
  for (int64_t t = 0; t < s.tilesPerWarp; ++t)
    for (int64_t i = 0; i < 4; ++i) {
      Value row = i < 2 ? row0 : row1;
      Value column = e.add(e.add(firstColumn, 8 * t),
                           e.add(e.mul(quad, 2), i % 2));
      Value value = arith::MulFOp::create(
          builder, loc, chunkLoop.getResult(4 * t + i), globalScale);
      if (value.getType() != outElement)
        value = arith::TruncFOp::create(builder, loc, outElement, value);
      auto inRows = scf::IfOp::create(
          builder, loc, e.lt(row, s.m), /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&inRows.getThenRegion().front());
      memref::StoreOp::create(builder, loc, value, out,
                              ValueRange{e.add(e.mul(row, s.n), column)});
    }
  builder.setInsertionPointAfter(active);
  gpu::ReturnOp::create(builder, loc);

  // The launch: (column strips of kWarps warps, 16-row tiles).
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  auto flat = [&](Value buffer, Type type) -> Value {
    auto memref = cast<MemRefType>(buffer.getType());
    Value result = buffer;
    if (memref.getRank() == 2)
      result = memref::CollapseShapeOp::create(
          builder, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
    if (result.getType() != type)
      result = memref::CastOp::create(builder, loc, type, result);
    return result;
  };
  const int64_t blockColumns = kWarps * warpColumns;
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index((s.n + blockColumns - 1) / blockColumns),
                      host.index((s.m + kTileM - 1) / kTileM), one},
      gpu::KernelDim3{host.index(32 * kWarps), one, one}, Value(),
      ValueRange{flat(op.getLhs(), argTypes[0]),
                 flat(op.getRhsValues(), argTypes[1]),
                 flat(op.getRhsScales(), argTypes[2]),
                 flat(op.getOut(), argTypes[3]), op.getRhsGlobalScale()});
  op.erase();
  return success();
}
