//===- ConvertMixedMatmulToGPU.cpp - BF16 x MXFP4 on NVIDIA tensor cores --===//
//
// mixed_matmul_storage (bf16 activations [M, K] times an MXFP4 weight
// [K, N] stored K-major) as one kernel of mma.sync m16n8k16 (bf16 in, f32
// accumulators), the weight dequantized in registers.
//
// Operand order. A thread (group g = lane / 4, q = lane % 4) of an
// m16n8k16 holds B values at logical k = 2q, 2q+1 (register 0) and 2q+8,
// 2q+9 (register 1) of column g, and the matching A values of rows g and
// g+8. Any permutation of K applied to both operands leaves the product
// unchanged, so the kernel chooses one that makes every load wide and the
// decode short. In a 64-wide K chunk, thread q owns the 16 K values
// 16q .. 16q+15: one 8-byte load of its column's weight bytes 8q .. 8q+7
// (the K-major storage) and two 16-byte loads of each of its two activation
// rows. At step j = 2h + p (0..3) it uses weight bytes 4h+p and 4h+p+2:
// register 0 gets their low nibbles (K = 16q + 8h + 2p + {0, 4}), register
// 1 their high nibbles (+ {1, 5}), and the A registers pair the same K
// values (a byte permute of two loaded words). The 16 values a thread decodes per
// chunk share one scale (K block 2c + q/2).
//
// Decode, per half of a 4-byte weight word: bytes p and p+2 already sit in
// the word's two 16-bit lanes, so shifts and masks put each lane's nibble
// sign at bf16 bit 15 and its exponent-mantissa bits at bits 8..6: the FP4
// value times 2^-126, exactly. One mul.rn.bf16x2 by 2^(s-1) then gives the
// exact bf16 value for scale codes s <= 128 (scales up to 2); a warp
// whose group of chunks has a larger code takes the exact two-multiply
// path instead (2^126, then 2^(s-127); a warp vote keeps the choice uniform,
// as mma.sync needs the whole warp), so every code (0 and NaN included)
// is right: bf16 has f32's exponent range, and these products have two
// significant bits.
//
// Split K: a block is `split` warps on the same 16 (or 8) columns and 16
// rows, each over its own range of K chunks; their f32 partial sums meet in
// shared memory and the first warp adds them in warp order and stores. The
// split is chosen so that about 16 warps per SM are busy on decode shapes.
// Loads of `unroll` chunks are issued before their mmas so that several are
// in flight. Not yet: reuse of the dequantized weight across row tiles (a
// large M rereads the weight per 16 rows), asynchronous copies, wgmma.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/TranscodeBlock.h"
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
constexpr int64_t kTargetWarps = 132 * 16; // H200 SMs x 16 warps

/// What the kernel needs to know about the op.
struct MixedMatmulShape {
  int64_t m, n, k;
  int64_t tilesPerWarp; // n8 tiles per warp
  int64_t unroll;       // chunks whose loads are issued together
  int64_t split;        // warps per block, each over 1/split of K
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
  Value low = e.bor(e.band(e.shl(x, 6), 0x01C001C0),
                    e.band(e.shl(x, 12), static_cast<int32_t>(0x80008000)));
  Value high = e.bor(e.band(e.shl(x, 2), 0x01C001C0),
                     e.band(e.shl(x, 8), static_cast<int32_t>(0x80008000)));
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

LogicalResult mlir::microscale::outlineMixedMatmul(MixedMatmulStorageOp op,
                                                   gpu::GPUModuleOp kernels,
                                                   unsigned index,
                                                   int64_t splitK,
                                                   int64_t unroll,
                                                   int64_t maxRegisters) {
  if (failed(checkSupported(op)))
    return failure();
  QTensorType rhs = op.getRhsType();
  MixedMatmulShape s;
  s.k = rhs.getShape()[0];
  s.n = rhs.getShape()[1];
  s.m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  s.tilesPerWarp = s.n % 16 == 0 ? 2 : 1;
  const int64_t chunks = s.k / kChunkK;
  // Two chunks in flight measured best on the H200 (docs/performance.md).
  s.unroll = chunks % 2 == 0 ? 2 : 1;
  if (unroll) {
    if (unroll < 0 || chunks % unroll)
      return op.emitOpError() << "matmul-unroll = " << unroll
                              << " does not divide the " << chunks
                              << " K chunks of 64";
    s.unroll = unroll;
  }
  const int64_t warpColumns = 8 * s.tilesPerWarp;
  const int64_t tiles =
      ((s.m + kTileM - 1) / kTileM) * ((s.n + warpColumns - 1) / warpColumns);
  s.split = 1;
  while (s.split < 8 && tiles * s.split < kTargetWarps &&
         chunks % (2 * s.split * s.unroll) == 0)
    s.split *= 2;
  if (splitK) {
    if (splitK < 0 || splitK > 32 || !llvm::isPowerOf2_64(splitK) ||
        chunks % (splitK * s.unroll))
      return op.emitOpError()
             << "matmul-split-k = " << splitK
             << " must be a power of two up to 32 whose product with the "
                "unroll ("
             << s.unroll << ") divides the " << chunks << " K chunks of 64";
    s.split = splitK;
  }
  const int64_t chunksPerWarp = chunks / s.split;

  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Type i8 = IntegerType::get(context, 8), i32 = IntegerType::get(context, 32);
  Type bf16 = BFloat16Type::get(context), f32 = Float32Type::get(context);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  SmallVector<Type> argTypes = {
      MemRefType::get({s.m * s.k}, bf16),
      MemRefType::get({ShapedType::getNumElements(rhs.getValueStorageShape())},
                      i8),
      MemRefType::get({ShapedType::getNumElements(rhs.getScaleStorageShape())},
                      i8),
      MemRefType::get({s.m * s.n}, outElement), f32};

  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("mixed_matmul_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name, builder.getFunctionType(argTypes, {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  const int64_t threads = 32 * s.split;
  function.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  for (unsigned arg = 0; arg < 4; ++arg) {
    function.setArgAttr(arg, "llvm.noalias", builder.getUnitAttr());
    function.setArgAttr(arg, "llvm.align", builder.getI64IntegerAttr(16));
  }
  if (maxRegisters)
    function->setAttr("nvvm.maxnreg",
                      builder.getI32IntegerAttr(static_cast<int32_t>(maxRegisters)));
  // The split warps' partial sums: [warp][lane][accumulator].
  const int64_t sums = 4 * s.tilesPerWarp;
  Value partials = function.addWorkgroupAttribution(
      MemRefType::get({s.split * 32 * sums}, f32, MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          context, gpu::AddressSpace::Workgroup)),
      loc);
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
  Value firstColumn = e.mul(blockN, warpColumns);
  // Rows past M read row M - 1 (valid memory) and are not stored.
  Value row0 = e.add(e.mul(blockM, kTileM), group);
  Value row1 = e.add(row0, 8);
  auto clampRow = [&](Value r) {
    return arith::MinUIOp::create(builder, loc, r, e.index(s.m - 1));
  };
  Value loadRow0 = clampRow(row0), loadRow1 = clampRow(row1);

  SmallVector<int64_t> scaleShape = rhs.getScaleShape();
  LayoutAttrInterface scaleLayout = rhs.getScaleLayout();
  auto lanes = VectorType::get({2}, bf16);
  Value bias = arith::ConstantOp::create(
      builder, loc, lanes,
      DenseElementsAttr::get(lanes, builder.getFloatAttr(bf16, 0x1p126)));
  Value zero = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0));
  SmallVector<Value> initial(sums, zero);
  auto accType = LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  Value firstChunk = e.mul(warp, chunksPerWarp);
  auto chunkLoop = scf::ForOp::create(
      builder, loc, firstChunk, e.add(firstChunk, chunksPerWarp),
      e.index(s.unroll), initial,
      [&](OpBuilder &b, Location l, Value groupChunk, ValueRange acc) {
        Emitter body(b, l);
        SmallVector<Value> running(acc.begin(), acc.end());
        // All loads of `unroll` chunks first.
        struct ChunkData {
          SmallVector<Value, 8> a0, a1;    // rows g and g+8: 8 words each
          SmallVector<Value, 2> weight[2]; // per tile: 2 words
          Value scale[2];                  // per tile: the E8M0 code
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
          Value chunk = body.add(groupChunk, u);
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
            data[u].scale[t] = scaleLayout.emitLoadElement(
                b, l, scales, scaleShape, 8, ValueRange{block, column});
          }
        }
        // Decode and multiply, chunk by chunk, with the scale folded into one
        // multiply (2^(s-1), which takes the 2^126 bias along: exact for
        // codes up to 128, i.e. scales up to 2), or, when a code of the
        // chunk is larger, the exact two multiplies (2^126, then
        // 2^(s-127)). The choice is per warp (a vote), since mma.sync is
        // warp-collective; per chunk, so that only one chunk's registers are
        // live in either branch.
        for (int64_t u = 0; u < s.unroll; ++u) {
          const ChunkData &d = data[u];
          Value fast = arith::ConstantIntOp::create(b, l, 1, 1);
          for (int64_t t = 0; t < s.tilesPerWarp; ++t)
            fast = body.andI1(
                fast, arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule,
                                            d.scale[t], body.i32(128)));
          fast = NVVM::VoteSyncOp::create(b, l, b.getI1Type(), body.i32(-1),
                                          fast, NVVM::VoteSyncKind::all);
          auto emitProducts = [&](OpBuilder &rb, Location rl, bool folded) {
            Emitter region(rb, rl);
            SmallVector<Value> sums(running);
            SmallVector<Value, 2> multipliers[2];
            for (int64_t t = 0; t < s.tilesPerWarp; ++t) {
              Value code = d.scale[t];
              if (folded) {
                // 2^(s-1) as bf16: exponent field s + 126.
                multipliers[t] = {emitBF16Pair(
                    region, region.shl(region.add(code, region.i32(126)), 7))};
              } else {
                // 2^(s-127) as bf16: the high half of its f32 bits.
                multipliers[t] = {
                    bias, emitBF16Pair(region,
                                       region.shr(emitE8M0Bits(region, code),
                                                  16))};
              }
            }
            for (int64_t j = 0; j < 4; ++j) {
              // Step j = 2h + p uses bytes 4h+p and 4h+p+2 of the thread's
              // 8: K = 16q + 8h + 2p + {0, 4} (low nibbles) and + {1, 5}
              // (high nibbles). The A registers pair the same K from the 16
              // consecutive bf16 that the thread loaded (words of (k, k+1)).
              const int64_t h = j / 2, p = j % 2;
              auto evenPair = [&](Value w0, Value w1) {
                return region.bor(region.band(w0, 0xFFFF),
                                  region.shl(w1, 16));
              };
              auto oddPair = [&](Value w0, Value w1) {
                return region.bor(
                    region.shr(w0, 16),
                    region.band(w1, static_cast<int32_t>(0xFFFF0000)));
              };
              const int64_t first = 4 * h + p, second = 4 * h + p + 2;
              SmallVector<Value, 4> a = {
                  evenPair(d.a0[first], d.a0[second]),
                  evenPair(d.a1[first], d.a1[second]),
                  oddPair(d.a0[first], d.a0[second]),
                  oddPair(d.a1[first], d.a1[second])};
              for (int64_t t = 0; t < s.tilesPerWarp; ++t) {
                auto [low, high] = emitDecodeWordHalf(region, d.weight[t][h],
                                                      p, multipliers[t]);
                SmallVector<Value, 2> bRegs = {low, high};
                SmallVector<Value, 4> c(sums.begin() + 4 * t,
                                        sums.begin() + 4 * t + 4);
                Value result = NVVM::MmaOp::create(
                    rb, rl, accType, a, bRegs, c,
                    ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
                    std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                  NVVM::MMATypes::bf16},
                    std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                   NVVM::MMALayout::col});
                for (int64_t i = 0; i < 4; ++i)
                  sums[4 * t + i] =
                      LLVM::ExtractValueOp::create(rb, rl, result, i);
              }
            }
            scf::YieldOp::create(rb, rl, sums);
          };
          auto branch = scf::IfOp::create(
              b, l, fast,
              [&](OpBuilder &rb, Location rl) { emitProducts(rb, rl, true); },
              [&](OpBuilder &rb, Location rl) {
                emitProducts(rb, rl, false);
              });
          running.assign(branch.getResults().begin(),
                         branch.getResults().end());
        }
        scf::YieldOp::create(b, l, running);
      });

  // The split warps' sums meet in shared memory; warp 0 adds them in warp
  // order (a fixed order: the result does not depend on scheduling).
  Value slot = e.mul(e.add(e.mul(warp, 32), lane), sums);
  for (int64_t i = 0; i < sums; ++i)
    memref::StoreOp::create(builder, loc, chunkLoop.getResult(i), partials,
                            ValueRange{e.add(slot, i)});
  gpu::BarrierOp::create(builder, loc);
  auto first = scf::IfOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, warp,
                            e.index(0)),
      /*withElseRegion=*/false);
  builder.setInsertionPointToStart(&first.getThenRegion().front());
  // c0, c1: row g, columns 2q, 2q+1 of the tile; c2, c3: row g + 8.
  for (int64_t t = 0; t < s.tilesPerWarp; ++t)
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t accumulator = 4 * t + i;
      Value total = chunkLoop.getResult(accumulator);
      for (int64_t w = 1; w < s.split; ++w)
        total = arith::AddFOp::create(
            builder, loc, total,
            memref::LoadOp::create(
                builder, loc, partials,
                ValueRange{e.add(e.mul(e.add(lane, 32 * w), sums),
                                 accumulator)}));
      Value row = i < 2 ? row0 : row1;
      Value column = e.add(e.add(firstColumn, 8 * t),
                           e.add(e.mul(quad, 2), i % 2));
      Value value = arith::MulFOp::create(builder, loc, total, globalScale);
      if (value.getType() != outElement)
        value = arith::TruncFOp::create(builder, loc, outElement, value);
      auto inRows = scf::IfOp::create(
          builder, loc, e.lt(row, s.m), /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&inRows.getThenRegion().front());
      memref::StoreOp::create(builder, loc, value, out,
                              ValueRange{e.add(e.mul(row, s.n), column)});
    }
  builder.setInsertionPointAfter(first);
  gpu::ReturnOp::create(builder, loc);

  // The launch: (column strips, 16-row tiles) of `split` warps.
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
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(s.n / warpColumns),
                      host.index((s.m + kTileM - 1) / kTileM), one},
      gpu::KernelDim3{host.index(threads), one, one}, Value(),
      ValueRange{flat(op.getLhs(), argTypes[0]),
                 flat(op.getRhsValues(), argTypes[1]),
                 flat(op.getRhsScales(), argTypes[2]),
                 flat(op.getOut(), argTypes[3]), op.getRhsGlobalScale()});
  op.erase();
  return success();
}
