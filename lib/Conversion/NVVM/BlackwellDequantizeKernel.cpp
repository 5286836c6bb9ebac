//===- BlackwellDequantizeKernel.cpp - MXFP4 (Blackwell layouts) to bf16 --===//
//
// dequantize_storage of mxfp4 in Triton's Blackwell value + scale layouts
// (`#microscale.blackwell_value`, `#microscale.blackwell_scale`) to a
// canonical bf16 tensor, on chips with native FP4 conversions (sm_100a,
// sm_120a): the values go through `cvt.rn.f16x2.e2m1x2`, the scales through
// `cvt.rn.bf16x2.ue8m0x2`.
//
// The Blackwell value layout stores each column n of the logical [*L, K, N]
// tensor as K-contiguous bytes (two K-adjacent values per byte, the even one
// in the low nibble): exactly the operand of `cvt.rn.f16x2.e2m1x2`. The
// output is [*L, K, N] row-major, so the kernel transposes, through a shared
// tile as the Hopper kernel does: a block of 256 threads owns a tile of 64 K
// x 64 N, each thread decodes the same 4-byte word (8 K values) of columns n
// and n + 1, pairs their lanes into bf16x2 of adjacent columns, stores them
// into the shared tile (chunks XOR-swizzled by the row, so that every warp
// store hits 32 banks), and after a barrier the block writes whole 128-byte
// output lines with 16-byte stores.
//
// No conversion to bf16 exists in ptxas 13.0 (`cvt.rn.bf16x2.e2m1x2` is
// rejected), so the decode goes through f16: an E2M1 value's f16 bits with
// the magnitude shifted right by 3 are the bf16 bits of the value times
// 2^-112 (the exponent biases differ by 112 and f16 keeps 3 more mantissa
// bits, all zero for E2M1). The scale multiply restores the 2^112: folded
// into the scale (one multiply per pair) where 2^(s-15) is a bf16, i.e.
// for scale codes s <= 142; the exact path (a 2^112 multiply, then the
// scale, then OCP's NaN for code 255) for the others.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "HostEmulation.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMOUTLINEBLACKWELLDEQUANTIZE
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

// The decode of one Blackwell value word ($4: 8 K-consecutive values of one
// column) into four bf16x2 registers ($0-$3: byte b's values 2b, 2b + 1),
// each the values times 2^-112 before the multiplies.
#define MICROSCALE_NATIVE_DECODE_BYTE(b)                                       \
  "cvt.rn.f16x2.e2m1x2 h, b" #b ";\n"                                          \
  "and.b32 t, h, 0x7FFF7FFF;\n"                                                \
  "shr.b32 t, t, 3;\n"                                                         \
  "and.b32 h, h, 0x80008000;\n"                                                \
  "or.b32 $" #b ", t, h;\n"
#define MICROSCALE_NATIVE_DECODE_BITS                                          \
  ".reg .b8 b0, b1, b2, b3;\n"                                                 \
  ".reg .b32 h, t;\n"                                                          \
  "mov.b32 {b0, b1, b2, b3}, $4;\n"                                            \
  MICROSCALE_NATIVE_DECODE_BYTE(0) MICROSCALE_NATIVE_DECODE_BYTE(1)            \
  MICROSCALE_NATIVE_DECODE_BYTE(2) MICROSCALE_NATIVE_DECODE_BYTE(3)
#define MICROSCALE_NATIVE_SCALE_SLOTS                                          \
  "mul.rn.bf16x2 $0, $0, $5;\n"                                                \
  "mul.rn.bf16x2 $1, $1, $5;\n"                                                \
  "mul.rn.bf16x2 $2, $2, $5;\n"                                                \
  "mul.rn.bf16x2 $3, $3, $5;\n"

/// Folded: $5 is 2^(s-15) in both lanes.
static constexpr const char *kNativeDecodeFoldedPTX =
    "{\n" MICROSCALE_NATIVE_DECODE_BITS MICROSCALE_NATIVE_SCALE_SLOTS "}";

/// Exact: 2^112 first (exact: the values are E2M1), then $5 = 2^(s-127).
static constexpr const char *kNativeDecodePTX =
    "{\n" MICROSCALE_NATIVE_DECODE_BITS
    ".reg .b32 bias;\n"
    "mov.b32 bias, 0x77807780;\n"
    "mul.rn.bf16x2 $0, $0, bias;\n"
    "mul.rn.bf16x2 $1, $1, bias;\n"
    "mul.rn.bf16x2 $2, $2, bias;\n"
    "mul.rn.bf16x2 $3, $3, bias;\n" MICROSCALE_NATIVE_SCALE_SLOTS "}";

/// The scale codes of two columns ($2: low byte column n, high byte n + 1)
/// as bf16 scales, each in both lanes of its register ($0: n, $1: n + 1);
/// `kNativeScaleFoldedPTX` times 2^112.
#define MICROSCALE_NATIVE_SCALE_PAIR(fold)                                     \
  "{\n"                                                                        \
  ".reg .b32 p, bias;\n"                                                       \
  "cvt.rn.bf16x2.ue8m0x2 p, $2;\n" fold "prmt.b32 $0, p, 0, 0x1010;\n"         \
  "prmt.b32 $1, p, 0, 0x3232;\n"                                               \
  "}"
static constexpr const char *kNativeScalePTX =
    MICROSCALE_NATIVE_SCALE_PAIR("");
static constexpr const char *kNativeScaleFoldedPTX =
    MICROSCALE_NATIVE_SCALE_PAIR("mov.b32 bias, 0x77807780;\n"
                                 "mul.rn.bf16x2 p, p, bias;\n");

#undef MICROSCALE_NATIVE_DECODE_BYTE
#undef MICROSCALE_NATIVE_DECODE_BITS
#undef MICROSCALE_NATIVE_SCALE_SLOTS
#undef MICROSCALE_NATIVE_SCALE_PAIR

/// The largest scale code whose folded scale 2^(s-15) is a (finite) bf16.
static constexpr int64_t kLargestFoldedCode = 142;

static constexpr int64_t kTileK = 64;     // output rows (K) of a tile
static constexpr int64_t kTileN = 64;     // output columns (N) of a tile
static constexpr int64_t kTileWords = 32; // 4-byte words per shared row
static constexpr int64_t kThreads = 256;

namespace {
/// The shapes the kernel derives from the op.
struct BlackwellDequantizeGeometry {
  SmallVector<int64_t> shape, scaleShape;
  int64_t rank, k, n, batches;
  /// Words per stored column (the packed K extent, padded to 128 bytes).
  int64_t columnWords;
  int64_t words, scaleBytes;
  int64_t kTiles, nTiles, tiles;

  explicit BlackwellDequantizeGeometry(QTensorType type) {
    shape.assign(type.getShape().begin(), type.getShape().end());
    scaleShape = type.getScaleShape();
    rank = shape.size();
    k = shape[rank - 2];
    n = shape[rank - 1];
    batches = batchSize(shape);
    SmallVector<int64_t> storage = type.getValueStorageShape();
    columnWords = storage.back() / 4;
    words = ShapedType::getNumElements(storage) / 4;
    scaleBytes = ShapedType::getNumElements(type.getScaleStorageShape());
    kTiles = llvm::divideCeil(k, kTileK);
    nTiles = llvm::divideCeil(n, kTileN);
    tiles = batches * kTiles * nTiles;
  }
};

/// Emits the native decode of two columns' words with their scale codes:
/// for each byte b, the bf16x2 of column n's values 2b, 2b + 1 and the same
/// of column n + 1.
class NativeDecoder {
public:
  NativeDecoder(OpBuilder &builder, Location loc, bool fold, bool onHost)
      : builder(builder), loc(loc), e(builder, loc), fold(fold),
        onHost(onHost) {}

  /// `codes`: the E8M0 codes (i32) of the two words' K block.
  std::array<SmallVector<Value>, 2> decode(std::array<Value, 2> words,
                                           std::array<Value, 2> codes) {
    if (!fold)
      return exact(words, codes);
    Value small = e.andI1(
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                              codes[0], e.i32(kLargestFoldedCode)),
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                              codes[1], e.i32(kLargestFoldedCode)));
    Type i32 = builder.getI32Type();
    auto branch = scf::IfOp::create(builder, loc, SmallVector<Type>(8, i32),
                                    small, /*withElse=*/true);
    auto flatten = [](std::array<SmallVector<Value>, 2> pairs) {
      SmallVector<Value> all(pairs[0]);
      all.append(pairs[1]);
      return all;
    };
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&branch.getThenRegion().front());
      std::array<Value, 2> scales = scalePair(codes, /*folded=*/true);
      scf::YieldOp::create(builder, loc,
                           flatten({decodeWord(words[0], scales[0], true),
                                    decodeWord(words[1], scales[1], true)}));
      builder.setInsertionPointToStart(&branch.getElseRegion().front());
      scf::YieldOp::create(builder, loc, flatten(exact(words, codes)));
    }
    ValueRange results = branch.getResults();
    return {SmallVector<Value>(results.take_front(4)),
            SmallVector<Value>(results.drop_front(4))};
  }

private:
  std::array<SmallVector<Value>, 2> exact(std::array<Value, 2> words,
                                          std::array<Value, 2> codes) {
    std::array<Value, 2> scales = scalePair(codes, /*folded=*/false);
    std::array<SmallVector<Value>, 2> pairs;
    for (int64_t w = 0; w < 2; ++w) {
      pairs[w] = decodeWord(words[w], scales[w], false);
      Value isNaN = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::eq, codes[w], e.i32(0xFF));
      for (Value &pair : pairs[w])
        pair = e.select(isNaN, e.i32(0x7FC07FC0), pair);
    }
    return pairs;
  }

  /// The two columns' scales, each in both lanes: 2^(s-15) folded, else
  /// 2^(s-127) (code 0: the subnormal 2^-127; code 255 is replaced by NaN
  /// after the multiplies).
  std::array<Value, 2> scalePair(std::array<Value, 2> codes, bool folded) {
    if (onHost) {
      std::array<Value, 2> pairs;
      for (int64_t w = 0; w < 2; ++w) {
        Value lane;
        if (folded)
          lane = e.shl(arith::AddIOp::create(builder, loc, codes[w],
                                             e.i32(112)),
                       7);
        else
          lane = e.select(arith::CmpIOp::create(builder, loc,
                                                arith::CmpIPredicate::eq,
                                                codes[w], e.i32(0)),
                          e.i32(0x0040), e.shl(codes[w], 7));
        pairs[w] = e.bor(lane, e.shl(lane, 16));
      }
      return pairs;
    }
    MLIRContext *context = builder.getContext();
    Type i16 = builder.getI16Type(), i32 = builder.getI32Type();
    Value packed = arith::TruncIOp::create(
        builder, loc, i16, e.bor(codes[0], e.shl(codes[1], 8)));
    auto structType = LLVM::LLVMStructType::getLiteral(context, {i32, i32});
    auto asmOp = pureInlinePtx(
        builder, loc, structType, ValueRange{packed},
        folded ? kNativeScaleFoldedPTX : kNativeScalePTX, "=r,=r,h");
    return {LLVM::ExtractValueOp::create(builder, loc, asmOp.getResult(0),
                                         ArrayRef<int64_t>{0})
                .getResult(),
            LLVM::ExtractValueOp::create(builder, loc, asmOp.getResult(0),
                                         ArrayRef<int64_t>{1})
                .getResult()};
  }

  SmallVector<Value> decodeWord(Value word, Value scale, bool folded) {
    if (onHost)
      return hostDecodeWord(word, scale, folded);
    MLIRContext *context = builder.getContext();
    Type i32 = builder.getI32Type();
    auto structType =
        LLVM::LLVMStructType::getLiteral(context, {i32, i32, i32, i32});
    auto asmOp = pureInlinePtx(
        builder, loc, structType, ValueRange{word, scale},
        folded ? kNativeDecodeFoldedPTX : kNativeDecodePTX, "=r,=r,=r,=r,r,r");
    SmallVector<Value> pairs;
    for (int64_t b = 0; b < 4; ++b)
      pairs.push_back(LLVM::ExtractValueOp::create(
          builder, loc, asmOp.getResult(0), ArrayRef<int64_t>{b}));
    return pairs;
  }

  /// The PTX sequences as integer operations: cvt.rn.f16x2.e2m1x2 as the
  /// f16 bits of each nibble (exact), then the same masks, shifts and
  /// bf16 multiplies.
  SmallVector<Value> hostDecodeWord(Value word, Value scale, bool folded) {
    auto f16OfNibble = [&](Value nibble) {
      // E2M1 s.ee.m: 0 and +-0.5 (e = 0) are 0 and 0x3800; else exponent
      // e + 14 and the mantissa bit on f16's top mantissa bit.
      Value sign = e.shl(e.band(nibble, 8), 12);
      Value exponent = e.band(e.shr(nibble, 1), 3);
      Value mantissa = e.band(nibble, 1);
      Value isSub = arith::CmpIOp::create(builder, loc,
                                          arith::CmpIPredicate::eq, exponent,
                                          e.i32(0));
      Value normal = e.bor(
          e.shl(arith::AddIOp::create(builder, loc, exponent, e.i32(14)), 10),
          e.shl(mantissa, 9));
      Value sub = arith::MulIOp::create(builder, loc, mantissa, e.i32(0x3800));
      return e.bor(sign, e.select(isSub, sub, normal));
    };
    SmallVector<Value> pairs;
    for (int64_t b = 0; b < 4; ++b) {
      Value h = e.bor(f16OfNibble(e.band(e.shr(word, 8 * b), 0xF)),
                      e.shl(f16OfNibble(e.band(e.shr(word, 8 * b + 4), 0xF)),
                            16));
      Value t = e.shr(e.band(h, 0x7FFF7FFF), 3);
      Value pair = e.bor(
          t, arith::AndIOp::create(builder, loc, h,
                                   e.i32(static_cast<int32_t>(0x80008000))));
      if (!folded)
        pair = emitHostMulBF16x2(e, pair, e.i32(0x77807780));
      pairs.push_back(emitHostMulBF16x2(e, pair, scale));
    }
    return pairs;
  }

  OpBuilder &builder;
  Location loc;
  Emitter e;
  bool fold, onHost;
};
} // namespace

/// Whether `op` has the operands the kernel handles.
static LogicalResult checkBlackwellDequantize(DequantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  auto outType = cast<MemRefType>(op.getOut().getType()).getElementType();
  if (!isa<BlackwellValueAttr>(type.getValueLayout()) ||
      !isa<BlackwellScaleAttr>(type.getScaleLayout()) ||
      type.getFormat().getReferenceFormat() != ::microscale::ref::MXFormat::mxfp4() || !outType.isBF16() ||
      op.getE8m0Edges() != E8M0Edges::ocp ||
      type.getAxis() != static_cast<int64_t>(type.getShape().size()) - 2)
    return op.emitOpError()
           << "on the GPU, dequantize_storage from the Blackwell layouts is "
              "lowered for mxfp4 in #microscale.blackwell_value with "
              "#microscale.blackwell_scale, bf16 results and OCP E8M0 edges; "
              "got "
           << Type(type) << " to " << outType;
  return success();
}

static bool isBlackwellDequantize(DequantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  return isa<BlackwellValueAttr>(type.getValueLayout()) ||
         isa<BlackwellScaleAttr>(type.getScaleLayout());
}

/// The kernel's arguments: value words, scale bytes, bf16 output.
static SmallVector<Type> kernelArguments(MLIRContext *context,
                                         const BlackwellDequantizeGeometry &g) {
  return {MemRefType::get({g.words}, IntegerType::get(context, 32)),
          MemRefType::get({g.scaleBytes}, IntegerType::get(context, 8)),
          MemRefType::get({ShapedType::getNumElements(g.shape)},
                          BFloat16Type::get(context))};
}

/// `buffer` as the kernel argument type `type` (the value bytes viewed as
/// 32-bit words: same memory, 4-byte aligned).
static Value viewAsArgument(OpBuilder &builder, Location loc,
                            const BlackwellDequantizeGeometry &g, Value buffer,
                            Type type) {
  auto asType = cast<MemRefType>(type);
  auto from = cast<MemRefType>(buffer.getType());
  if (from.getElementType() == asType.getElementType())
    return buffer.getType() == asType
               ? buffer
               : memref::CastOp::create(builder, loc, asType, buffer)
                     .getResult();
  Value flat = from.hasStaticShape()
                   ? buffer
                   : memref::CastOp::create(
                         builder, loc,
                         MemRefType::get({g.words * 4}, from.getElementType()),
                         buffer)
                         .getResult();
  return memref::ViewOp::create(builder, loc, asType, flat,
                                Emitter(builder, loc).index(0), ValueRange());
}

/// The swizzled chunk of a shared row: chunk ^ (row / 8) % 8. A warp's
/// stores vary the row's bits 3-5 (the word j) and the word in the chunk;
/// the XOR spreads them over the 8 chunks.
static Value swizzledChunk(Emitter &e, Value row, Value chunk) {
  return arith::XOrIOp::create(e.builder(), e.location(), chunk,
                               e.rem(e.div(row, 8), 8));
}

namespace {
/// The kernel's body in pieces: the GPU kernel runs them with barriers
/// between them, the host emulation as loops over the block's threads.
class BlackwellDequantizeEmitter {
public:
  BlackwellDequantizeEmitter(OpBuilder &builder, Location loc,
                             DequantizeStorageOp op,
                             const HopperDequantizeOptions &options,
                             Value words, Value scaleBuffer, Value out,
                             Value tile, bool onHost)
      : builder(builder), loc(loc), e(builder, loc), g(op.getQTensorType()),
        scales(op.getQTensorType().getScaleLayout()), options(options),
        words(words), scaleBuffer(scaleBuffer), out(out), tile(tile),
        onHost(onHost) {
    tilesPerBlock = std::max<int64_t>(options.tilesPerBlock, 1);
    while (g.tiles % tilesPerBlock)
      tilesPerBlock /= 2;
  }

  int64_t getNumBlocks() const { return g.tiles / tilesPerBlock; }
  int64_t getTilesPerBlock() const { return tilesPerBlock; }

  struct TileData {
    Value batch, kTile, nTile;
    std::array<Value, 2> bits, codes;
  };

  /// Tile `t` of `block`: N tiles fastest (the output's rows), then K
  /// tiles, then batches.
  TileData locate(Value block, int64_t t) {
    TileData d;
    Value linear = e.add(e.mul(block, tilesPerBlock), t);
    d.nTile = e.rem(linear, g.nTiles);
    Value rest = e.div(linear, g.nTiles);
    d.kTile = e.rem(rest, g.kTiles);
    d.batch = e.div(rest, g.kTiles);
    return d;
  }

  /// The thread's two words (columns n, n + 1, K word j of the tile) and
  /// their scale codes. Columns past N read word 0 and code 0, never stored.
  void load(TileData &d, Value thread) {
    Lanes l = lanes(thread);
    Value kWord = e.add(e.mul(d.kTile, kTileK / 8), l.j);
    Value ks = e.div(e.mul(kWord, 8), 32);
    Value ksValid = e.lt(e.mul(ks, 32), g.k);
    for (int64_t w = 0; w < 2; ++w) {
      Value column = e.add(e.add(e.mul(d.nTile, kTileN), l.column), w);
      Value valid = e.lt(column, g.n);
      Value word = e.add(
          e.mul(e.add(e.mul(d.batch, g.n), column), g.columnWords), kWord);
      d.bits[w] = memref::LoadOp::create(
          builder, loc, words, ValueRange{e.select(valid, word, e.index(0))});
      Value codeValid = e.andI1(valid, ksValid);
      SmallVector<Value> index = makeIndex(e, g.scaleShape, d.batch, ks,
                                           column);
      for (Value &v : index)
        v = e.select(codeValid, v, e.index(0));
      d.codes[w] = scales.emitLoadElement(builder, loc, scaleBuffer,
                                          g.scaleShape, 8, index);
    }
  }

  /// Decodes the thread's words into the shared tile: for each byte b,
  /// output rows 8j + 2b (low lanes) and 8j + 2b + 1 (high lanes), columns
  /// n, n + 1 as one bf16x2.
  void stage(const TileData &d, Value thread) {
    Lanes l = lanes(thread);
    NativeDecoder decoder(builder, loc, options.foldScaleBias, onHost);
    std::array<SmallVector<Value>, 2> pairs = decoder.decode(d.bits, d.codes);
    Value wordColumn = e.div(l.column, 2);
    for (int64_t b = 0; b < 4; ++b) {
      Value a = pairs[0][b], c = pairs[1][b];
      Value low = e.bor(e.band(a, 0xFFFF), e.shl(c, 16));
      Value high = e.bor(
          e.shr(a, 16),
          arith::AndIOp::create(builder, loc, c,
                                e.i32(static_cast<int32_t>(0xFFFF0000))));
      Value row = e.add(e.mul(l.j, 8), 2 * b);
      storeShared(low, row, wordColumn);
      storeShared(high, e.add(row, 1), wordColumn);
    }
  }

  /// The tile's rows to the output, 16 bytes (8 bf16) per thread and step.
  void storeRows(const TileData &d, Value thread) {
    Type i32 = builder.getI32Type();
    const int64_t rows = g.k, columns = g.n;
    Value firstRow = e.mul(d.kTile, kTileK);
    Value firstColumn = e.mul(d.nTile, kTileN);
    auto chunkType = VectorType::get({4}, i32);
    auto bf16Chunk =
        VectorType::get({8}, BFloat16Type::get(builder.getContext()));
    for (int64_t step = 0; step < kTileK * 8 / kThreads; ++step) {
      Value chunkIndex = e.add(thread, step * kThreads);
      Value row = e.div(chunkIndex, 8), chunk = e.rem(chunkIndex, 8);
      Value sharedIndex = e.add(e.mul(row, kTileWords),
                                e.mul(swizzledChunk(e, row, chunk), 4));
      Value loaded = vector::LoadOp::create(builder, loc, chunkType, tile,
                                            ValueRange{sharedIndex}, false,
                                            llvm::MaybeAlign(16));
      Value outRow = e.add(firstRow, row);
      Value outColumn = e.add(firstColumn, e.mul(chunk, 8));
      Value linear = e.add(
          e.mul(e.add(e.mul(d.batch, rows), outRow), columns), outColumn);
      Value rowValid = e.lt(outRow, rows);
      if (columns % 8 == 0 && !onHost) {
        auto inside = scf::IfOp::create(
            builder, loc, e.andI1(rowValid, e.lt(outColumn, columns)), false);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToStart(&inside.getThenRegion().front());
        Value values =
            vector::BitCastOp::create(builder, loc, bf16Chunk, loaded);
        vector::StoreOp::create(builder, loc, values, out, ValueRange{linear},
                                false, llvm::MaybeAlign(16));
        continue;
      }
      // Rows not a multiple of 16 bytes (and on the host, where LLVM
      // legalizes a bf16 vector store through a library call): element
      // stores, each behind its bounds check.
      for (int64_t i = 0; i < 8; ++i) {
        auto inside = scf::IfOp::create(
            builder, loc,
            e.andI1(rowValid, e.lt(e.add(outColumn, i), columns)), false);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToStart(&inside.getThenRegion().front());
        Value word = vector::ExtractOp::create(builder, loc, loaded, i / 2);
        Value half = arith::TruncIOp::create(
            builder, loc, builder.getI16Type(), e.shr(word, 16 * (i % 2)));
        Value element = arith::BitcastOp::create(
            builder, loc, BFloat16Type::get(builder.getContext()), half);
        memref::StoreOp::create(builder, loc, element, out,
                                ValueRange{e.add(linear, i)});
      }
    }
  }

private:
  /// Thread t takes K word j = t % 8 of the tile and columns 2 (t / 8),
  /// 2 (t / 8) + 1: a warp covers 8 words of 8 columns.
  struct Lanes {
    Value j, column;
  };
  Lanes lanes(Value thread) {
    return {e.rem(thread, 8), e.mul(e.div(thread, 8), 2)};
  }

  void storeShared(Value value, Value row, Value wordColumn) {
    Value chunk = swizzledChunk(e, row, e.div(wordColumn, 4));
    memref::StoreOp::create(
        builder, loc, value, tile,
        ValueRange{e.add(e.add(e.mul(row, kTileWords), e.mul(chunk, 4)),
                         e.rem(wordColumn, 4))});
  }

  OpBuilder &builder;
  Location loc;
  Emitter e;
  BlackwellDequantizeGeometry g;
  LayoutAttrInterface scales;
  const HopperDequantizeOptions &options;
  Value words, scaleBuffer, out, tile;
  bool onHost;
  int64_t tilesPerBlock;
};
} // namespace

static void outlineKernel(DequantizeStorageOp op, gpu::GPUModuleOp kernels,
                          const HopperDequantizeOptions &options,
                          unsigned index) {
  BlackwellDequantizeGeometry g(op.getQTensorType());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  KernelSignature signature;
  signature.name = ("dequantize_blackwell_" + Twine(index)).str();
  signature.arguments = kernelArguments(context, g);
  signature.noAliasBuffers = signature.arguments.size();
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  Value tile = function.addWorkgroupAttribution(
      MemRefType::get({kTileK * kTileWords}, IntegerType::get(context, 32),
                      MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          context, gpu::AddressSpace::Workgroup)),
      loc);
  // The reads are 16-byte vector loads.
  function.setWorkgroupAttributionAttr(
      0, LLVM::LLVMDialect::getAlignAttrName(),
      IntegerAttr::get(IntegerType::get(context, 64), 16));
  Block &entry = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  BlackwellDequantizeEmitter emitter(
      builder, loc, op, options, entry.getArgument(0), entry.getArgument(1),
      entry.getArgument(2), tile, /*onHost=*/false);
  Value block = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  // All loads of the block's tiles first, then tile by tile, the shared
  // tile reused behind barriers.
  SmallVector<BlackwellDequantizeEmitter::TileData> data;
  for (int64_t t = 0; t < emitter.getTilesPerBlock(); ++t) {
    data.push_back(emitter.locate(block, t));
    emitter.load(data.back(), thread);
  }
  for (int64_t t = 0; t < emitter.getTilesPerBlock(); ++t) {
    if (t > 0)
      gpu::BarrierOp::create(builder, loc);
    emitter.stage(data[t], thread);
    gpu::BarrierOp::create(builder, loc);
    emitter.storeRows(data[t], thread);
  }
  gpu::ReturnOp::create(builder, loc);

  OpBuilder host(op);
  Emitter h(host, loc);
  ArrayRef<Type> types = function.getArgumentTypes();
  auto viewAs = [&](Value buffer, Type type) {
    return viewAsArgument(host, loc, g, buffer, type);
  };
  Value one = h.index(1);
  gpu::LaunchFuncOp::create(
      host, loc, function,
      gpu::KernelDim3{h.index(emitter.getNumBlocks()), one, one},
      gpu::KernelDim3{h.index(kThreads), one, one}, Value(),
      ValueRange{viewAs(op.getValues(), types[0]),
                 viewAs(op.getScales(), types[1]),
                 viewAs(op.getOut(), types[2])});
  op.erase();
}

LogicalResult mlir::microscale::outlineBlackwellDequantize(
    DequantizeStorageOp op, gpu::GPUModuleOp kernels,
    const HopperDequantizeOptions &options, unsigned index,
    const nvvm::NVIDIAChip &chip) {
  if (failed(checkBlackwellDequantize(op)))
    return failure();
  if (!chip.hasNativeFP4Conversion || !chip.hasBF16x2Arithmetic)
    return op.emitOpError()
           << "the Blackwell dequantization kernel needs native FP4 "
              "conversions (cvt.rn.f16x2.e2m1x2, cvt.rn.bf16x2.ue8m0x2: "
              "sm_100a, sm_120a); "
           << chip.name << " has none";
  outlineKernel(op, kernels, options, index);
  return success();
}

bool mlir::microscale::emulateBlackwellDequantizeOnHost(
    DequantizeStorageOp op, const HopperDequantizeOptions &options) {
  if (!isBlackwellDequantize(op) || failed(checkBlackwellDequantize(op)))
    return false;
  loadHostEmulationDialects(op.getContext());
  BlackwellDequantizeGeometry g(op.getQTensorType());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  OpBuilder builder(op);
  Emitter e(builder, loc);
  SmallVector<Type> types = kernelArguments(context, g);
  auto viewAs = [&](Value buffer, Type type) {
    return viewAsArgument(builder, loc, g, buffer, type);
  };
  Value words = viewAs(op.getValues(), types[0]);
  Value scaleBuffer = viewAs(op.getScales(), types[1]);
  Value out = viewAs(op.getOut(), types[2]);
  Value tile = memref::AllocaOp::create(
      builder, loc, MemRefType::get({kTileK * kTileWords}, builder.getI32Type()),
      ValueRange{}, builder.getI64IntegerAttr(16));
  BlackwellDequantizeEmitter emitter(builder, loc, op, options, words,
                                     scaleBuffer, out, tile, /*onHost=*/true);
  emitStagedTilesOnHost(builder, loc, emitter, kThreads);
  op.erase();
  return true;
}

namespace {
struct OutlineBlackwellDequantizePass
    : public mlir::microscale::impl::MicroscaleNVVMOutlineBlackwellDequantizeBase<
          OutlineBlackwellDequantizePass> {
  using MicroscaleNVVMOutlineBlackwellDequantizeBase::
      MicroscaleNVVMOutlineBlackwellDequantizeBase;
  void runOnOperation() override {
    std::optional<nvvm::NVIDIAChip> target =
        lookupChip(getOperation(), chip, getArgument());
    if (!target)
      return signalPassFailure();
    SmallVector<DequantizeStorageOp> ops =
        collectOpsToOutline<DequantizeStorageOp>(
            getOperation(),
            [](DequantizeStorageOp op) { return isBlackwellDequantize(op); });
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kNVVMKernelModule);
    for (DequantizeStorageOp op : ops) {
      FailureOr<HopperDequantizeOptions> tiling = getDequantizeTiling(op);
      if (failed(tiling))
        return signalPassFailure();
      op->removeAttr(kTilingAttrName);
      if (failed(outlineBlackwellDequantize(op, kernels, *tiling,
                                            getNextKernelIndex(kernels),
                                            *target)))
        return signalPassFailure();
    }
  }
};
} // namespace
