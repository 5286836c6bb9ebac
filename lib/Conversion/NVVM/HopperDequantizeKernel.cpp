//===- DequantizeHopperToGPU.cpp - MXFP4 (Hopper layouts) to bf16 ---------===//
//
// dequantize_storage of mxfp4 in Triton's Hopper value + scale layouts to a
// canonical bf16 tensor, as one NVIDIA kernel carrying the bit-interleave decode as
// inline PTX (layouts.md section 3: "Decode contract").
//
// Two kernels:
//  * staged (the default): a block of 256 threads owns a tile of the Hopper
//    image, 16 image rows (64 non-MX indices m) by 32 words (one aligned
//    128-byte column: 64 MX indices). Each thread decodes two words, puts
//    the 16 bf16 values into a [64 x 64] bf16 tile in shared memory at their
//    output coordinates, and after a barrier the block writes the tile's
//    rows with 16-byte stores: whole 128-byte lines of the output.
//  * per-word (`stage-dequantize=false`, kept for comparison): one thread
//    per word, eight 2-byte stores straight to the output.
// The output is four times the input, so its stores set the speed: the
// per-word kernel's 2-byte stores scatter over four output rows per word.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"
#include "llvm/Support/MathExtras.h"

#include "HopperWordDecode.h"
#include "HostEmulation.h"
#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMOUTLINEDEQUANTIZE
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
/// The shapes both kernels derive from the op.
struct HopperDequantizeGeometry {
  SmallVector<int64_t> shape, scaleShape;
  int64_t rank, mxAxis;
  /// The image: paddedM / 4 rows of paddedKB words per batch.
  int64_t paddedM, paddedKB;
  /// The unpadded non-MX extent and MX extent / 2.
  int64_t extentM, extentKB;
  int64_t words, scaleBytes, batches;

  explicit HopperDequantizeGeometry(QTensorType type) {
    auto values = cast<HopperValueAttr>(type.getValueLayout());
    shape.assign(type.getShape().begin(), type.getShape().end());
    scaleShape = type.getScaleShape();
    SmallVector<int64_t> storage = type.getValueStorageShape();
    rank = shape.size();
    mxAxis = values.getMxAxis();
    paddedM = 4 * storage[rank - 2];
    paddedKB = storage.back() / 4;
    extentM = mxAxis == -2 ? shape[rank - 1] : shape[rank - 2];
    extentKB = (mxAxis == -2 ? shape[rank - 2] : shape[rank - 1]) / 2;
    words = ShapedType::getNumElements(storage) / 4;
    scaleBytes = ShapedType::getNumElements(type.getScaleStorageShape());
    batches = words / (paddedM / 4 * paddedKB);
  }
};
} // namespace

/// Whether `op` has the operands the Hopper kernels handle.
static LogicalResult checkHopperDequantize(DequantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  auto values = dyn_cast<HopperValueAttr>(type.getValueLayout());
  auto scales = dyn_cast<HopperScaleAttr>(type.getScaleLayout());
  auto outType = cast<MemRefType>(op.getOut().getType()).getElementType();
  if (!values || values.getMmaVersion() != 3 || !scales ||
      scales.getMxAxis() != values.getMxAxis() ||
      type.getFormat().getReferenceFormat() != ::microscale::ref::MXFormat::mxfp4() || !outType.isBF16() ||
      op.getE8m0Edges() != E8M0Edges::ocp)
    return op.emitOpError()
           << "on the GPU, dequantize_storage is lowered for mxfp4 in "
              "#microscale.hopper_value<mma_version = 3> with "
              "#microscale.hopper_scale of the same mx_axis, bf16 results "
              "and OCP E8M0 edges; got "
           << Type(type) << " to " << outType;
  return success();
}

/// A kernel `name` of `kernels` taking the value words, the scale bytes and
/// the bf16 output, none aliasing, all 16-byte aligned.
static gpu::GPUFuncOp createKernel(gpu::GPUModuleOp kernels, Location loc,
                                   StringRef name, ArrayRef<Type> arguments) {
  KernelSignature signature;
  signature.name = name.str();
  signature.arguments.assign(arguments.begin(), arguments.end());
  signature.noAliasBuffers = arguments.size();
  return buildKernelFunction(kernels, loc, signature);
}

/// The E8M0 code (i32) of logical scale element (batch, K block, m) of the
/// Hopper scale layout; an index outside the tensor (padding) reads element
/// 0 instead, whose value is never stored.
static Value loadScaleCode(Emitter &e, HopperScaleAttr scales,
                           const HopperDequantizeGeometry &g, Value scaleBuffer,
                           Value batch, Value kBlock, Value m, Value valid) {
  SmallVector<Value> index =
      makeIndex(e, g.scaleShape, batch, g.mxAxis == -2 ? kBlock : m,
                g.mxAxis == -2 ? m : kBlock);
  for (Value &v : index)
    v = e.select(valid, v, e.index(0));
  return scales.emitLoadElement(e.builder(), e.location(), scaleBuffer,
                                g.scaleShape, 8, index);
}

/// `buffer` (one of the op's operands) as the kernel argument type `type`:
/// a cast, or for the value bytes a view as 32-bit words (same memory,
/// 4-byte aligned).
static Value viewAsKernelArgument(OpBuilder &builder, Location loc,
                                  const HopperDequantizeGeometry &g,
                                  Value buffer, Type type) {
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

/// Replaces `op` by the launch of `function` on `blocks` x `threads`, its
/// operands viewed as the kernel's argument types.
static void replaceByLaunch(DequantizeStorageOp op, gpu::GPUFuncOp function,
                            const HopperDequantizeGeometry &g, int64_t blocks,
                            int64_t threads) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter host(builder, loc);
  ArrayRef<Type> types = function.getArgumentTypes();
  auto viewAs = [&](Value buffer, Type type) {
    return viewAsKernelArgument(builder, loc, g, buffer, type);
  };
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(blocks), one, one},
      gpu::KernelDim3{host.index(threads), one, one}, Value(),
      ValueRange{viewAs(op.getValues(), types[0]),
                 viewAs(op.getScales(), types[1]),
                 viewAs(op.getOut(), types[2])});
  op.erase();
}

static SmallVector<Type> kernelArguments(MLIRContext *context,
                                         const HopperDequantizeGeometry &g) {
  int64_t elements = ShapedType::getNumElements(g.shape);
  return {MemRefType::get({g.words}, IntegerType::get(context, 32)),
          MemRefType::get({g.scaleBytes}, IntegerType::get(context, 8)),
          MemRefType::get({elements}, BFloat16Type::get(context))};
}

//===----------------------------------------------------------------------===//
// Per-word kernel
//===----------------------------------------------------------------------===//

static void outlinePerWord(DequantizeStorageOp op, gpu::GPUModuleOp kernels,
                           const HopperDequantizeOptions &options,
                           unsigned index) {
  QTensorType type = op.getQTensorType();
  auto scales = cast<HopperScaleAttr>(type.getScaleLayout());
  HopperDequantizeGeometry g(type);
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  gpu::GPUFuncOp function =
      createKernel(kernels, loc, ("dequantize_hopper_" + Twine(index)).str(),
                   kernelArguments(context, g));
  Block &entry = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Emitter e(builder, loc);
  Value thread = e.add(
      e.mul(gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x),
            gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x)),
      gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x));
  auto inRange = scf::IfOp::create(builder, loc, e.lt(thread, g.words),
                                   /*withElse=*/false);
  builder.setInsertionPointToStart(&inRange.getThenRegion().front());
  // Column-major: consecutive threads take the same word of consecutive
  // image rows, so that their non-MX indices m are neighbours and a warp's
  // bf16 stores land next to each other in the output rows.
  Value unit = thread;
  if (options.columnMajor) {
    const int64_t rows = g.paddedM / 4, columns = g.paddedKB;
    Value row = e.rem(thread, rows);
    Value rest = e.div(thread, rows);
    unit = e.add(e.mul(e.add(e.mul(e.div(rest, columns), rows), row), columns),
                 e.rem(rest, columns));
  }
  HopperWordElements word = emitHopperWordElements(
      e, 3, g.paddedM, g.paddedKB, g.extentM, g.extentKB, unit);
  Value bits = memref::LoadOp::create(builder, loc, entry.getArgument(0),
                                      ValueRange{unit});
  // The two scales of the word (m and m + 8; one K block).
  Value kBlock = e.div(word.kb[0], 16);
  Value evenCode = loadScaleCode(e, scales, g, entry.getArgument(1),
                                 word.batch, kBlock, word.m[0], word.valid[0]);
  Value oddCode = loadScaleCode(e, scales, g, entry.getArgument(1),
                                word.batch, kBlock, word.m[1], word.valid[0]);
  ScaledWordDecoder decoder(builder, loc, options.foldScaleBias);
  SmallVector<Value> results = decoder.decode(bits, evenCode, oddCode);
  Value out = entry.getArgument(2);
  const int64_t rows = g.shape[g.rank - 2], columns = g.shape[g.rank - 1];
  for (int64_t slot = 0; slot < 4; ++slot) {
    auto store = scf::IfOp::create(builder, loc, word.valid[slot],
                                   /*withElse=*/false);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&store.getThenRegion().front());
    for (int64_t h = 0; h < 2; ++h) {
      Value mx = e.add(e.mul(word.kb[slot], 2), h);
      Value r = g.mxAxis == -2 ? mx : word.m[slot];
      Value c = g.mxAxis == -2 ? word.m[slot] : mx;
      Value linear =
          e.add(e.mul(e.add(e.mul(word.batch, rows), r), columns), c);
      Value lane = arith::TruncIOp::create(builder, loc, builder.getI16Type(),
                                           e.shr(results[slot], 16 * h));
      Value value = arith::BitcastOp::create(
          builder, loc, BFloat16Type::get(context), lane);
      memref::StoreOp::create(builder, loc, value, out, ValueRange{linear});
    }
  }
  builder.setInsertionPointAfter(inRange);
  gpu::ReturnOp::create(builder, loc);
  replaceByLaunch(op, function, g,
                  llvm::divideCeil(g.words, options.blockSize),
                  options.blockSize);
}

//===----------------------------------------------------------------------===//
// Staged kernel
//===----------------------------------------------------------------------===//
//
// Tile: image rows 16t .. 16t + 15 (non-MX m = 64t .. 64t + 63) by words
// 32c .. 32c + 31 of each row (packed MX kb = 32c .. 32c + 31, MX indices
// 64c .. 64c + 63), per layouts.md section 3 (mma_version 3): in image row
// r (local) and word a (local), byte slot s holds
//   m  = 16 (r / 4) + 2 (r % 4) + 8 (s % 2) + (a / 16)
//   kb = 8 (a % 4) + 4 (s / 2) + (a / 4) % 4.
// Words a and a + 16 hold the same kb with m and m + 1, so a thread takes
// that pair: with mx_axis = -2 (output rows are MX indices, columns m) the
// two words' lanes pair up into bf16x2 of adjacent columns, one 4-byte
// shared store each; with mx_axis = -1 (rows m) each slot's bf16x2 is
// already two adjacent columns.
//
// The shared tile is [64 rows][8 chunks of 16 bytes], the chunk index
// XORed with a function of the row so that the 32 stores of each warp
// instruction hit 32 different banks. Which address bits a warp's lanes
// vary depends on which words each lane takes (below), so the function
// depends on mx_axis:
//  * mx = -2: lanes take a = lane % 8 (+ 8 per odd warp) of image rows
//    4 (warp / 2) + lane / 8. They vary the output row's bits 1, 4, 5
//    (kb bits 0, 3, 4) and the word-in-chunk bits 0, 1 (m bits 1, 2): the
//    swizzle moves row bits 1, 4, 5 to chunk bits 0, 1, 2.
//  * mx = -1: lanes take a = lane % 16 of image rows 2 warp + lane / 16.
//    They vary the word-in-chunk (kb bits 0, 1), chunk bits 1, 2 (kb bits
//    3, 4) and the output row's bit 1 (m bit 1): the swizzle moves row bits
//    1, 2, 3 to chunk bits 0, 1, 2.
// The reads (a warp reads 4 whole rows, each row's 8 chunks by 8 lanes) are
// conflict-free under any per-row permutation of chunks.

static constexpr int64_t kTileRows = 64;     // output rows of a tile
static constexpr int64_t kTileWords = 32;    // 4-byte words per tile row
static constexpr int64_t kStagedThreads = 256;

static Value swizzledChunk(Emitter &e, int64_t mxAxis, Value row, Value chunk) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value f;
  if (mxAxis == -2) {
    Value bit1 = e.rem(e.div(row, 2), 2);
    Value bits45 = arith::AndIOp::create(b, loc, e.div(row, 8), e.index(6));
    f = arith::OrIOp::create(b, loc, bit1, bits45);
  } else {
    f = e.rem(e.div(row, 2), 8);
  }
  return arith::XOrIOp::create(b, loc, chunk, f);
}

/// The shared-memory word index of word `column` (0..31) of tile row `row`.
static Value sharedWord(Emitter &e, int64_t mxAxis, Value row, Value column) {
  Value chunk = swizzledChunk(e, mxAxis, row, e.div(column, 4));
  return e.add(e.add(e.mul(row, kTileWords), e.mul(chunk, 4)),
               e.rem(column, 4));
}

namespace {
/// The staged kernel's body, in pieces that the GPU kernel runs with
/// barriers between them and the host emulation runs as loops over the
/// block's threads.
class StagedDequantizeEmitter {
public:
  StagedDequantizeEmitter(OpBuilder &builder, Location loc,
                          DequantizeStorageOp op,
                          const HopperDequantizeOptions &options, Value words,
                          Value scaleBuffer, Value out, Value tile, bool onHost)
      : builder(builder), loc(loc), e(builder, loc),
        g(op.getQTensorType()),
        scales(cast<HopperScaleAttr>(op.getQTensorType().getScaleLayout())),
        options(options), words(words), scaleBuffer(scaleBuffer), out(out),
        tile(tile), onHost(onHost) {
    columnsPerRow = g.paddedKB / kTileWords;
    groups = g.paddedM / kTileRows;
    tiles = g.batches * groups * columnsPerRow;
    tilesPerBlock = options.tilesPerBlock;
    while (tiles % tilesPerBlock)
      tilesPerBlock /= 2;
  }

  int64_t getNumBlocks() const { return tiles / tilesPerBlock; }
  int64_t getTilesPerBlock() const { return tilesPerBlock; }

  /// The tile's coordinates and the thread's two words and four scale codes.
  struct TileData {
    Value column, group, batch, firstM, bits[2], codes[2][2];
  };

  /// Which tile is tile `t` of block `block`: (batch, group of 64 m,
  /// column of 32 words), in the order of the output's rows (mx = -2:
  /// output rows are MX indices, so the groups of m come fastest; mx = -1:
  /// the columns), so that the blocks in flight write neighbouring lines;
  /// or in the image's order (columns fastest) with `outputOrder` off.
  TileData locate(Value block, int64_t t) {
    TileData d;
    Value linear = e.add(e.mul(block, tilesPerBlock), t);
    if (options.outputOrder && g.mxAxis == -2) {
      d.group = e.rem(linear, groups);
      Value rest = e.div(linear, groups);
      d.column = e.rem(rest, columnsPerRow);
      d.batch = e.div(rest, columnsPerRow);
    } else {
      d.column = e.rem(linear, columnsPerRow);
      Value rest = e.div(linear, columnsPerRow);
      d.group = e.rem(rest, groups);
      d.batch = e.div(rest, groups);
    }
    d.firstM = e.mul(d.group, kTileRows);
    return d;
  }

  /// The thread's two words and four scale codes of tile `d`.
  void load(TileData &d, Value thread) {
    Lanes l = lanes(thread);
    Value imageRow =
        e.add(e.mul(e.add(e.mul(d.batch, groups), d.group), 16), l.r);
    Value wordA = e.add(e.add(e.mul(imageRow, g.paddedKB),
                              e.mul(d.column, kTileWords)),
                        l.a);
    d.bits[0] = memref::LoadOp::create(builder, loc, words, ValueRange{wordA});
    d.bits[1] = memref::LoadOp::create(builder, loc, words,
                                       ValueRange{e.add(wordA, 16)});
    // Word a: m, m + 8; word a + 16: m + 1, m + 9; all in K block
    // 2c + (a % 4) / 2.
    Value kBlock = e.add(e.mul(d.column, 2), e.div(e.rem(l.a, 4), 2));
    Value kValid = e.lt(e.mul(kBlock, 16), g.extentKB);
    for (int64_t w = 0; w < 2; ++w)
      for (int64_t odd = 0; odd < 2; ++odd) {
        Value m = e.add(e.add(d.firstM, l.mBase), w + 8 * odd);
        d.codes[w][odd] =
            loadScaleCode(e, scales, g, scaleBuffer, d.batch, kBlock, m,
                          e.andI1(kValid, e.lt(m, g.extentM)));
      }
  }

  /// Decodes the thread's words of `d` into the shared tile.
  void stage(const TileData &d, Value thread) {
    Lanes l = lanes(thread);
    ScaledWordDecoder decoder(builder, loc, options.foldScaleBias);
    decoder.onHost = onHost;
    SmallVector<Value> pairsA =
        decoder.decode(d.bits[0], d.codes[0][0], d.codes[0][1]);
    SmallVector<Value> pairsB =
        decoder.decode(d.bits[1], d.codes[1][0], d.codes[1][1]);
    auto storeShared = [&](Value value, Value row, Value wordColumn) {
      memref::StoreOp::create(
          builder, loc, value, tile,
          ValueRange{sharedWord(e, g.mxAxis, row, wordColumn)});
    };
    auto kbLocal = [&](int64_t slot) {
      return e.add(e.add(e.mul(e.rem(l.a, 4), 8), e.index(4 * (slot / 2))),
                   e.div(l.a, 4));
    };
    for (int64_t slot = 0; slot < 4; ++slot) {
      Value m = e.add(l.mBase, 8 * (slot % 2)); // word a's; a + 16's is m + 1
      if (g.mxAxis == -2) {
        // Output rows 2 kb + h; columns m, m + 1: lane h of both words.
        Value lowA = e.band(pairsA[slot], 0xFFFF);
        Value highB = arith::AndIOp::create(builder, loc, pairsB[slot],
                                            e.i32(0xFFFF0000));
        Value low = e.bor(lowA, e.shl(pairsB[slot], 16));
        Value high = e.bor(e.shr(pairsA[slot], 16), highB);
        Value row = e.mul(kbLocal(slot), 2);
        storeShared(low, row, e.div(m, 2));
        storeShared(high, e.add(row, 1), e.div(m, 2));
      } else {
        // Output rows m and m + 1; columns 2 kb, 2 kb + 1.
        storeShared(pairsA[slot], m, kbLocal(slot));
        storeShared(pairsB[slot], e.add(m, 1), kbLocal(slot));
      }
    }
  }

  /// The tile's rows to the output, 16 bytes (8 bf16) per thread and step.
  void storeRows(const TileData &d, Value thread) {
    Type i32 = builder.getI32Type();
    const int64_t rows = g.shape[g.rank - 2], columns = g.shape[g.rank - 1];
    Value firstRow = g.mxAxis == -2 ? e.mul(d.column, kTileRows) : d.firstM;
    Value firstColumn =
        g.mxAxis == -2 ? d.firstM : e.mul(d.column, kTileRows);
    auto chunkType = VectorType::get({4}, i32);
    auto bf16Chunk = VectorType::get({8}, BFloat16Type::get(builder.getContext()));
    for (int64_t step = 0; step < kTileRows * 8 / kStagedThreads; ++step) {
      Value chunkIndex = e.add(thread, step * kStagedThreads);
      Value row = e.div(chunkIndex, 8), chunk = e.rem(chunkIndex, 8);
      Value sharedIndex =
          e.add(e.mul(row, kTileWords),
                e.mul(swizzledChunk(e, g.mxAxis, row, chunk), 4));
      Value loaded = vector::LoadOp::create(builder, loc, chunkType, tile,
                                            ValueRange{sharedIndex}, false,
                                            llvm::MaybeAlign(16));
      Value values =
          vector::BitCastOp::create(builder, loc, bf16Chunk, loaded);
      Value outRow = e.add(firstRow, row);
      Value outColumn = e.add(firstColumn, e.mul(chunk, 8));
      Value linear = e.add(
          e.mul(e.add(e.mul(d.batch, rows), outRow), columns), outColumn);
      Value rowValid = e.lt(outRow, rows);
      if (columns % 8 == 0 && !onHost) {
        // Whole chunks only (the extent is a multiple of 8): one aligned
        // 16-byte store.
        auto inside = scf::IfOp::create(
            builder, loc, e.andI1(rowValid, e.lt(outColumn, columns)), false);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToStart(&inside.getThenRegion().front());
        vector::StoreOp::create(builder, loc, values, out, ValueRange{linear},
                                false, llvm::MaybeAlign(16));
        continue;
      }
      // Rows not a multiple of 16 bytes: element stores, each behind its
      // bounds check. (Also on the host, where LLVM legalizes a bf16
      // vector store through f32 and a library call.)
      for (int64_t i = 0; i < 8; ++i) {
        auto inside = scf::IfOp::create(
            builder, loc,
            e.andI1(rowValid, e.lt(e.add(outColumn, i), columns)), false);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToStart(&inside.getThenRegion().front());
        // Element i: half i % 2 of word i / 2, as bf16 bits.
        Value word = vector::ExtractOp::create(builder, loc, loaded, i / 2);
        Value half = arith::TruncIOp::create(builder, loc, builder.getI16Type(),
                                             e.shr(word, 16 * (i % 2)));
        Value element = arith::BitcastOp::create(
            builder, loc, BFloat16Type::get(builder.getContext()), half);
        memref::StoreOp::create(builder, loc, element, out,
                                ValueRange{e.add(linear, i)});
      }
    }
  }

private:
  /// The words a thread takes (see the file comment): word a of image row
  /// r in the tile, and its non-MX index m (word a's even slots).
  struct Lanes {
    Value a, r, mBase;
  };
  Lanes lanes(Value thread) {
    Value warp = e.div(thread, 32), lane = e.rem(thread, 32);
    Lanes l;
    if (g.mxAxis == -2) {
      l.a = e.add(e.rem(lane, 8), e.mul(e.rem(warp, 2), 8));
      l.r = e.add(e.mul(e.div(warp, 2), 4), e.div(lane, 8));
    } else {
      l.a = e.rem(lane, 16);
      l.r = e.add(e.mul(warp, 2), e.div(lane, 16));
    }
    l.mBase = e.add(e.mul(e.div(l.r, 4), 16), e.mul(e.rem(l.r, 4), 2));
    return l;
  }

  OpBuilder &builder;
  Location loc;
  Emitter e;
  HopperDequantizeGeometry g;
  HopperScaleAttr scales;
  const HopperDequantizeOptions &options;
  Value words, scaleBuffer, out, tile;
  bool onHost;
  int64_t columnsPerRow, groups, tiles, tilesPerBlock;
};
} // namespace

static void outlineStaged(DequantizeStorageOp op, gpu::GPUModuleOp kernels,
                          const HopperDequantizeOptions &options,
                          unsigned index) {
  HopperDequantizeGeometry g(op.getQTensorType());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  gpu::GPUFuncOp function =
      createKernel(kernels, loc, ("dequantize_hopper_" + Twine(index)).str(),
                   kernelArguments(context, g));
  Value tile = function.addWorkgroupAttribution(
      MemRefType::get({kTileRows * kTileWords}, IntegerType::get(context, 32),
                      MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          context, gpu::AddressSpace::Workgroup)),
      loc);
  // The reads are 16-byte vector loads: the tile must be 16-byte aligned.
  function.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                       IntegerAttr::get(
                                           IntegerType::get(context, 64), 16));
  Block &entry = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  StagedDequantizeEmitter emitter(builder, loc, op, options,
                                  entry.getArgument(0), entry.getArgument(1),
                                  entry.getArgument(2), tile, /*onHost=*/false);
  Value block = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  // All loads of the block's tiles first (two words and four scale codes
  // each), so that they are in flight together; then tile by tile, the
  // shared tile reused behind barriers.
  SmallVector<StagedDequantizeEmitter::TileData> data;
  for (int64_t t = 0; t < emitter.getTilesPerBlock(); ++t) {
    data.push_back(emitter.locate(block, t));
    emitter.load(data.back(), thread);
  }
  for (int64_t t = 0; t < emitter.getTilesPerBlock(); ++t) {
    // The previous tile's reads of the shared tile are done.
    if (t > 0)
      gpu::BarrierOp::create(builder, loc);
    emitter.stage(data[t], thread);
    gpu::BarrierOp::create(builder, loc);
    emitter.storeRows(data[t], thread);
  }
  gpu::ReturnOp::create(builder, loc);
  replaceByLaunch(op, function, g, emitter.getNumBlocks(), kStagedThreads);
}

bool mlir::microscale::emulateHopperDequantizeOnHost(
    DequantizeStorageOp op, const HopperDequantizeOptions &options) {
  if (!options.staged || failed(checkHopperDequantize(op)))
    return false;
  // Outside a pass nothing has loaded the dialects the emulation builds.
  loadHostEmulationDialects(op.getContext());
  HopperDequantizeGeometry g(op.getQTensorType());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  OpBuilder builder(op);
  Emitter e(builder, loc);
  // The kernel's arguments as views of the op's buffers.
  SmallVector<Type> types = kernelArguments(context, g);
  auto viewAs = [&](Value buffer, Type type) {
    return viewAsKernelArgument(builder, loc, g, buffer, type);
  };
  Value words = viewAs(op.getValues(), types[0]);
  Value scaleBuffer = viewAs(op.getScales(), types[1]);
  Value out = viewAs(op.getOut(), types[2]);
  Value tile = memref::AllocaOp::create(
      builder, loc,
      MemRefType::get({kTileRows * kTileWords}, builder.getI32Type()),
      ValueRange{}, builder.getI64IntegerAttr(16));
  StagedDequantizeEmitter emitter(builder, loc, op, options, words,
                                  scaleBuffer, out, tile, /*onHost=*/true);
  emitStagedTilesOnHost(builder, loc, emitter, kStagedThreads);
  op.erase();
  return true;
}

LogicalResult mlir::microscale::outlineHopperDequantize(
    DequantizeStorageOp op, gpu::GPUModuleOp kernels,
    const HopperDequantizeOptions &options, unsigned index,
    const nvvm::NVIDIAChip &chip) {
  if (failed(checkHopperDequantize(op)))
    return failure();
  if (!chip.hasBF16x2Arithmetic)
    return op.emitOpError()
           << "the Hopper dequantization kernel needs bf16x2 arithmetic "
              "(mul.rn.bf16x2, sm_90 and newer); "
           << chip.name << " has none";
  if (options.staged)
    outlineStaged(op, kernels, options, index);
  else
    outlinePerWord(op, kernels, options, index);
  return success();
}

namespace {
struct OutlineDequantizePass
    : public mlir::microscale::impl::MicroscaleNVVMOutlineDequantizeBase<OutlineDequantizePass> {
  using MicroscaleNVVMOutlineDequantizeBase::
      MicroscaleNVVMOutlineDequantizeBase;
  void runOnOperation() override {
    std::optional<nvvm::NVIDIAChip> target =
        lookupChip(getOperation(), chip, getArgument());
    if (!target)
      return signalPassFailure();
    SmallVector<DequantizeStorageOp> ops =
        collectOpsToOutline<DequantizeStorageOp>(getOperation());
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kNVVMKernelModule);
    for (DequantizeStorageOp op : ops) {
      FailureOr<HopperDequantizeOptions> tiling = getDequantizeTiling(op);
      if (failed(tiling) || failed(checkBlockSize(op, tiling->blockSize,
                                                  *target)))
        return signalPassFailure();
      op->removeAttr(kTilingAttrName);
      if (failed(outlineHopperDequantize(op, kernels, *tiling,
                                         getNextKernelIndex(kernels),
                                         *target)))
        return signalPassFailure();
    }
  }
};
} // namespace
