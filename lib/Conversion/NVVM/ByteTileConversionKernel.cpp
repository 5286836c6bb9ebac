//===- ByteTileConversionKernel.cpp - Byte layouts by whole-axis tiles ----===//
//
// The NVIDIA kernel of a ByteTilePlan (Utils/ByteTileConversion.h): one
// thread block per tile. Its threads copy the tile's source chunks into
// shared memory with aligned vector loads (whatever the source rows'
// pitch), then each writes whole destination chunks, every byte gathered
// from shared memory at a position the plan's tables give (a base per
// chunk, offsets per pattern). The three tables (source chunks,
// destination chunks with their gather base and pattern, the patterns) are
// constant globals of the kernel module, read by every block and so served
// by the caches.
//
// The host emulation at the end runs the same emitter with the threads as
// loops and shared memory as a stack buffer.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "HostEmulation.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"

#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/ByteTileConversion.h"
#include "microscale/Dialect/Microscale/Utils/ConstantTable.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Reference/Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
/// The plan's tables concatenated over its kinds, with each kind's start.
/// `destChunks` holds two words per destination chunk, read together: its
/// offset, and its gather base | pattern << 16.
struct ByteTileTables {
  std::vector<int32_t> sourceChunks, destChunks;
  std::vector<int16_t> patterns;
  SmallVector<int64_t, 2> sourceStart, destStart;

  explicit ByteTileTables(const ByteTilePlan &plan) : patterns(plan.patterns) {
    for (const ByteTilePlan::Kind &kind : plan.kinds) {
      sourceStart.push_back(sourceChunks.size());
      destStart.push_back(destChunks.size() / 2);
      llvm::append_range(sourceChunks, kind.sourceChunks);
      for (size_t c = 0; c < kind.destChunks.size(); ++c) {
        destChunks.push_back(kind.destChunks[c]);
        destChunks.push_back(static_cast<int32_t>(
            uint32_t(kind.chunkBase[c]) | uint32_t(kind.chunkPattern[c]) << 16));
      }
    }
  }
};

/// The tables as globals of `symbolTable` (the kernel module, or the host
/// module for the emulation), read at the builder's insertion point.
struct TableValues {
  Value sourceChunks, destChunks, patterns;
};

TableValues getTables(OpBuilder &b, Location loc, Operation *symbolTable,
                      StringRef prefix, const ByteTileTables &tables) {
  TableValues values;
  values.sourceChunks = getConstantTable(
      b, loc, symbolTable, (prefix + "_source_chunks").str(),
      ArrayRef(tables.sourceChunks), b.getI32Type());
  // Read 8 bytes at a time, and patterns of 16 or 32: aligned to that.
  values.destChunks = getConstantTable(b, loc, symbolTable,
                                       (prefix + "_dest_chunks").str(),
                                       ArrayRef(tables.destChunks),
                                       b.getI32Type(), /*alignment=*/8);
  values.patterns = getConstantTable(b, loc, symbolTable,
                                     (prefix + "_gather_patterns").str(),
                                     ArrayRef(tables.patterns), b.getI16Type(),
                                     /*alignment=*/32);
  return values;
}

class ByteTileEmitter {
public:
  ByteTileEmitter(OpBuilder &b, Location loc, const ByteTilePlan &plan,
                  const ByteTileTables &tables, TableValues values)
      : b(b), loc(loc), e(b, loc), plan(plan), tables(tables),
        values(values) {}

  /// Where `tile` reads and writes, and whether it is the edge kind.
  Value sourceBase(Value tile) {
    return e.add(e.mul(e.div(tile, plan.numGroups), plan.sourceBatchStride),
                 e.mul(e.rem(tile, plan.numGroups), plan.sourceGroupStride));
  }
  Value destBase(Value tile) {
    return e.add(e.mul(e.div(tile, plan.numGroups), plan.destBatchStride),
                 e.mul(e.rem(tile, plan.numGroups), plan.destGroupStride));
  }
  Value isEdge(Value tile) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 e.rem(tile, plan.numGroups),
                                 e.index(plan.numGroups - 1));
  }

  /// `body(kind)` for the tile's kind: one branch per kind, uniform over
  /// the block.
  void forKind(Value tile, function_ref<void(int)> body) {
    if (plan.kinds.size() == 1)
      return body(0);
    auto branch = scf::IfOp::create(b, loc, isEdge(tile), /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    body(1);
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    body(0);
  }

  /// Phase 1, thread `thread`: the zero byte (thread 0) and the thread's
  /// source chunks into shared memory.
  void copyIn(int kind, Value source, Value shared, Value base,
              Value thread) {
    Type i8 = b.getI8Type();
    {
      auto first = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                                e.index(0)),
          /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      auto zeroType = VectorType::get({16}, i8);
      Value zeros = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(zeroType, b.getI8IntegerAttr(0)));
      vector::StoreOp::create(b, loc, zeros, shared,
                              ValueRange{e.index(plan.zeroByte)}, false,
                              llvm::MaybeAlign(16));
    }
    // Every load of the thread first, then every store: the loads are in
    // flight together. Chunk thread + step * threads; past the end, chunk 0
    // is read again (in bounds) and not stored.
    const int64_t chunks = plan.kinds[kind].sourceChunks.size();
    const int64_t width = plan.loadBytes, piece = plan.sharedStoreBytes;
    SmallVector<std::pair<Value, Value>> loads; // (bytes, shared position)
    SmallVector<Value> valid;
    for (int64_t step = 0; step * plan.threads < chunks; ++step) {
      auto [i, inRange] = chunkOf(thread, step, chunks);
      Value read = inRange ? e.select(inRange, i, e.index(0)) : i;
      Value offset = readTable(values.sourceChunks,
                               e.add(read, tables.sourceStart[kind]));
      Value bytes = vector::LoadOp::create(
          b, loc, VectorType::get({width}, i8), source,
          ValueRange{e.add(base, offset)}, false, llvm::MaybeAlign(width));
      Value loaded = e.mul(i, width);
      loads.push_back({bytes, e.add(loaded, e.mul(e.div(loaded,
                                                        plan.sharedPeriod),
                                                  plan.sharedPad))});
      valid.push_back(inRange);
    }
    for (auto [loadPair, inRangeValue] : llvm::zip(loads, valid)) {
      // Lambdas may not capture structured bindings before C++20.
      const auto &load = loadPair;
      Value inRange = inRangeValue;
      guarded(inRange, [&] {
        auto [bytes, position] = load;
        // Narrower stores where the padding breaks the chunk's alignment:
        // the chunk as `width / piece` integers, each stored as its bytes.
        Type pieceInt = b.getIntegerType(8 * piece);
        Value pieces = bytes;
        if (piece != width)
          pieces = vector::BitCastOp::create(
              b, loc, VectorType::get({width / piece}, pieceInt), bytes);
        for (int64_t k = 0; k < width / piece; ++k) {
          Value part = bytes;
          if (piece != width)
            part = vector::BitCastOp::create(
                b, loc, VectorType::get({piece}, i8),
                vector::BroadcastOp::create(
                    b, loc, VectorType::get({1}, pieceInt),
                    vector::ExtractOp::create(b, loc, pieces, k)));
          vector::StoreOp::create(b, loc, part, shared,
                                  ValueRange{e.add(position, k * piece)},
                                  false, llvm::MaybeAlign(piece));
        }
      });
    }
  }

  /// Phase 2, thread `thread`: the thread's destination chunks, each byte
  /// gathered from shared memory.
  void gatherOut(int kind, Value dest, Value shared, Value base,
                 Value thread) {
    Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
    // Straight-line code, each stage for all of the thread's chunks before
    // the next: table words, patterns, shared bytes, stores. Past the end,
    // chunk 0's entries are read (in bounds) and nothing is stored.
    const int64_t chunks = plan.kinds[kind].destChunks.size();
    const int64_t width = plan.storeBytes;
    SmallVector<Value> entries, valid;
    for (int64_t step = 0; step * plan.threads < chunks; ++step) {
      auto [c, inRange] = chunkOf(thread, step, chunks);
      Value read = inRange ? e.select(inRange, c, e.index(0)) : c;
      entries.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({2}, i32), values.destChunks,
          ValueRange{e.mul(e.add(read, tables.destStart[kind]), 2)}, false,
          llvm::MaybeAlign(8)));
      valid.push_back(inRange);
    }
    SmallVector<Value> patterns;
    for (Value entry : entries) {
      Value pattern = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          e.shr(vector::ExtractOp::create(b, loc, entry, 1), 16));
      patterns.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({width}, i16), values.patterns,
          ValueRange{e.mul(pattern, width)}, false,
          llvm::MaybeAlign(2 * width)));
    }
    const ByteTileGather gather = plan.kinds[kind].gather;
    SmallVector<Value> chunkBytes;
    for (size_t chunk = 0; chunk < entries.size(); ++chunk) {
      Value offsets = patterns[chunk];
      Value gatherBase = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          e.band(vector::ExtractOp::create(b, loc, entries[chunk], 1),
                 0xFFFF));
      auto offset = [&](int64_t i) {
        return e.add(gatherBase,
                     arith::IndexCastOp::create(
                         b, loc, b.getIndexType(),
                         vector::ExtractOp::create(b, loc, offsets, i)));
      };
      SmallVector<Value> words;
      if (gather == ByteTileGather::bytes) {
        for (int64_t w = 0; w < width / 4; ++w) {
          Value word;
          for (int64_t k = 0; k < 4; ++k) {
            Value byte = arith::ExtUIOp::create(
                b, loc, i32,
                memref::LoadOp::create(b, loc, shared,
                                       ValueRange{offset(4 * w + k)}));
            word = k ? e.bor(word, e.shl(byte, 8 * k)) : byte;
          }
          words.push_back(word);
        }
      } else {
        // The slots' words first (all in flight together), then the
        // permutes.
        SmallVector<Value> slots;
        for (int64_t s = 0; s < plan.getReadsPerChunk(plan.kinds[kind]); ++s)
          slots.push_back(loadSharedWord(shared, offset(s)));
        for (int64_t w = 0; w < width / 4; ++w) {
          auto selector = [&](int64_t part) {
            return arith::ExtUIOp::create(
                b, loc, i32,
                vector::ExtractOp::create(
                    b, loc, offsets,
                    ByteTilePlan::getSelectorEntry(gather, width, w, part)));
          };
          if (gather == ByteTileGather::wordPairs) {
            words.push_back(
                permute(slots[2 * w], slots[2 * w + 1], selector(0)));
            continue;
          }
          Value low = permute(slots[0], slots[1], selector(0));
          Value high = permute(slots[2], slots[3], selector(1));
          words.push_back(permute(low, high, selector(2)));
        }
      }
      chunkBytes.push_back(vector::BitCastOp::create(
          b, loc, VectorType::get({width}, i8),
          vector::FromElementsOp::create(
              b, loc, VectorType::get({width / 4}, i32), words)));
    }
    for (auto [entryValue, bytesValue, inRange] :
         llvm::zip(entries, chunkBytes, valid)) {
      // Lambdas may not capture structured bindings before C++20.
      Value entry = entryValue, bytes = bytesValue;
      guarded(inRange, [&] {
        Value offset = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            vector::ExtractOp::create(b, loc, entry, 0));
        vector::StoreOp::create(b, loc, bytes, dest,
                                ValueRange{e.add(base, offset)}, false,
                                llvm::MaybeAlign(width));
      });
    }
  }

  /// Byte permutes as integer operations instead of PTX (the host
  /// emulation of the kernel).
  bool onHost = false;

private:
  /// The 4-byte-aligned word of shared memory at byte `at`.
  Value loadSharedWord(Value shared, Value at) {
    Value bytes = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI8Type()), shared, ValueRange{at},
        false, llvm::MaybeAlign(4));
    return vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), bytes),
        0);
  }

  /// prmt.b32 with a selector known only at run time (from the pattern
  /// table): bytes of x then y, nibbles 0-7.
  Value permute(Value x, Value y, Value selector) {
    if (onHost) {
      Value result = e.i32(0);
      for (int k = 0; k < 4; ++k) {
        Value pick = e.band(e.shr(selector, 4 * k), 7);
        Value fromY = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            pick, e.i32(4));
        Value source = arith::SelectOp::create(b, loc, fromY, y, x);
        Value shift = e.mul(e.band(pick, 3), e.i32(8));
        Value byte =
            e.band(arith::ShRUIOp::create(b, loc, source, shift), 0xFF);
        result = e.bor(result, e.shl(byte, 8 * k));
      }
      return result;
    }
    return pureInlinePtx(b, loc, b.getI32Type(), ValueRange{x, y, selector},
                         "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r")
        .getResult(0);
  }

  /// Chunk thread + step * threads of `count`, and the condition that it
  /// exists (null where every thread's does).
  std::pair<Value, Value> chunkOf(Value thread, int64_t step, int64_t count) {
    Value i = e.add(thread, step * plan.threads);
    if ((step + 1) * plan.threads <= count)
      return {i, Value()};
    return {i, e.lt(i, count)};
  }
  /// `body` where `condition` holds (always, where it is null).
  void guarded(Value condition, function_ref<void()> body) {
    if (!condition)
      return body();
    auto branch = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    body();
  }

  Value readTable(Value table, Value index) {
    Value entry = memref::LoadOp::create(b, loc, table, ValueRange{index});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  }

  OpBuilder &b;
  Location loc;
  Emitter e;
  const ByteTilePlan &plan;
  const ByteTileTables &tables;
  TableValues values;
};

/// The plan for a whole convert_storage of 8-bit elements (`conversion`,
/// the op's), or nothing.
std::optional<ByteTilePlan> planFor(ConvertStorageOp op,
                                    const StorageConversion &conversion,
                                    int64_t threads, bool wordGather) {
  if (!op.getUnitRange().empty())
    return std::nullopt;
  if (conversion.bits != 8)
    return std::nullopt;
  std::unique_ptr<::microscale::ref::Layout> from, to;
  if (!conversion.buildReferences(from, to))
    return std::nullopt;
  return planByteTileConversion(*from, *to, threads, wordGather);
}
} // namespace

bool mlir::microscale::outlineByteTileConversion(ConvertStorageOp op,
                                                 gpu::GPUModuleOp kernels,
                                                 unsigned index,
                                                 int64_t threads,
                                                 bool wordGather) {
  if (threads % 32 || threads <= 0)
    return false;
  StorageConversion conversion(op);
  std::optional<ByteTilePlan> plan =
      planFor(op, conversion, threads, wordGather);
  if (!plan)
    return false;
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  auto i8 = IntegerType::get(context, 8);
  QTensorType fromType = op.getFromType();
  auto sourceType = MemRefType::get(
      {ShapedType::getNumElements(op.getPart() == StoragePart::values
                                      ? fromType.getValueStorageShape()
                                      : fromType.getScaleStorageShape())},
      i8);
  auto destType = MemRefType::get({conversion.destBytes}, i8);
  KernelSignature signature;
  signature.name = ("convert_storage_" + Twine(index)).str();
  signature.arguments = {sourceType, destType};
  signature.noAliasBuffers = 2;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder builder(context);
  Value shared =
      addSharedBuffer(function, getSharedMemRefType({plan->sharedBytes}, i8),
                      loc, /*alignment=*/16);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  ByteTileTables tables(*plan);
  TableValues values =
      getTables(builder, loc, kernels, signature.name, tables);
  Value tile = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  ByteTileEmitter emitter(builder, loc, *plan, tables, values);
  Value sourceBase = emitter.sourceBase(tile);
  Value destBase = emitter.destBase(tile);
  emitter.forKind(tile, [&](int kind) {
    emitter.copyIn(kind, entry.getArgument(0), shared, sourceBase, thread);
    gpu::BarrierOp::create(builder, loc);
    emitter.gatherOut(kind, entry.getArgument(1), shared, destBase, thread);
  });
  builder.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(builder, loc);

  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(plan->getNumTiles()), one, one},
      gpu::KernelDim3{host.index(plan->threads), one, one}, Value(),
      ValueRange{castToArgument(builder, loc, op.getSource(), sourceType),
                 castToArgument(builder, loc, op.getDest(), destType)});
  op.erase();
  return true;
}

bool mlir::microscale::emulateByteTileConversionOnHost(ConvertStorageOp op,
                                                       int64_t threads,
                                                       bool wordGather) {
  std::optional<ByteTilePlan> plan =
      planFor(op, StorageConversion(op), threads, wordGather);
  if (!plan)
    return false;
  // Outside a pass nothing has loaded the dialects the emulation builds.
  loadHostEmulationDialects(op.getContext());
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value shared = memref::AllocaOp::create(
      builder, loc, MemRefType::get({plan->sharedBytes}, builder.getI8Type()),
      ValueRange{}, builder.getI64IntegerAttr(16));
  Operation *module = op->getParentOfType<ModuleOp>();
  const std::string prefix =
      uniqueSymbolPrefix(module, "byte_tile", "_gather_patterns");
  ByteTileTables tables(*plan);
  TableValues values = getTables(builder, loc, module, prefix, tables);
  // The tiles in a scattered order, the shared buffer poisoned before each,
  // so that a tile writing another's bytes or reading a byte it did not
  // load shows as a wrong result.
  const int64_t numTiles = plan->getNumTiles();
  const int64_t stride = scatteredOrderStride(numTiles);
  auto tiles = scf::ForOp::create(builder, loc, e.index(0),
                                  e.index(numTiles), e.index(1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(tiles.getBody());
  Value tile = e.rem(e.mul(tiles.getInductionVar(), stride), numTiles);
  {
    Value poison = arith::ConstantIntOp::create(builder, loc,
                                                builder.getI8Type(), 0xCD);
    auto fill = scf::ForOp::create(builder, loc, e.index(0),
                                   e.index(plan->sharedBytes), e.index(1));
    OpBuilder::InsertionGuard fillGuard(builder);
    builder.setInsertionPointToStart(fill.getBody());
    memref::StoreOp::create(builder, loc, poison, shared,
                            ValueRange{fill.getInductionVar()});
  }
  ByteTileEmitter emitter(builder, loc, *plan, tables, values);
  emitter.onHost = true;
  Value sourceBase = emitter.sourceBase(tile);
  Value destBase = emitter.destBase(tile);
  emitter.forKind(tile, [&](int kind) {
    // A barrier is the end of a loop over the block's threads.
    for (int phase = 1; phase <= 2; ++phase) {
      auto threadLoop = scf::ForOp::create(builder, loc, e.index(0),
                                           e.index(plan->threads), e.index(1));
      OpBuilder::InsertionGuard phaseGuard(builder);
      builder.setInsertionPointToStart(threadLoop.getBody());
      Value thread = threadLoop.getInductionVar();
      if (phase == 1)
        emitter.copyIn(kind, op.getSource(), shared, sourceBase, thread);
      else
        emitter.gatherOut(kind, op.getDest(), shared, destBase, thread);
    }
  });
  op.erase();
  return true;
}
