//===- ByteTileConversionKernel.cpp - Byte layouts by whole-axis tiles ----===//
//
// The NVIDIA kernel of a ByteTilePlan (Utils/ByteTileConversion.h), on
// the persistent grid of ByteTileConversionKernel.h. For each tile a
// block's threads copy the tile's source chunks into shared memory with
// aligned cp.async copies (whatever the source rows' pitch), then each
// writes whole destination chunks, every byte gathered from shared memory
// at a position the plan's tables give (a base per chunk, offsets per
// pattern). The three tables (source chunks, destination chunks with their
// gather base and pattern, the patterns) are constant globals of the
// kernel module; the gather's are the same for every full tile, so a
// block reads its threads' share once.
//
// The host emulation at the end runs the same emitter and the same block
// structure with the threads as loops, plain copies for cp.async, and
// shared memory as a stack buffer.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/ByteTileConversionKernel.h"
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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
/// The plan's tables concatenated over its kinds, with each kind's start.
/// `destChunks` holds two words per destination chunk, read together: its
/// offset (| its read order's rotation, ByteTilePlan::Kind::chunkRotation),
/// and its gather base | pattern << 16.
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
        // A rotated gather's rotation in the offset's low bits (the planner
        // rotates only chunks aligned to their width).
        destChunks.push_back(kind.destChunks[c] |
                             (kind.chunkRotation.empty()
                                  ? 0
                                  : int32_t(kind.chunkRotation[c])));
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

/// The thread's share of a destination gather: per step, its chunk's table
/// word pair and pattern, and whether the chunk exists (null: it does).
struct GatherTables {
  SmallVector<Value> entries, patterns, valid;
};

class ByteTileEmitter {
public:
  ByteTileEmitter(OpBuilder &b, Location loc, const ByteTilePlan &plan,
                  const ByteTileTables &tables, TableValues values)
      : b(b), loc(loc), e(b, loc), plan(plan), tables(tables),
        values(values) {}

  /// Where tile (outer, group) reads and writes: outer = batch *
  /// numSplits + split.
  Value sourceBase(Value outer, Value group) {
    return base(outer, group, plan.sourceBatchStride, plan.sourceSplitStride,
                plan.sourceGroupStride);
  }
  Value destBase(Value outer, Value group) {
    return base(outer, group, plan.destBatchStride, plan.destSplitStride,
                plan.destGroupStride);
  }
  Value base(Value outer, Value group, int64_t batchStride,
             int64_t splitStride, int64_t groupStride) {
    Value offset = e.mul(group, groupStride);
    if (plan.numSplits == 1)
      return e.add(e.mul(outer, batchStride), offset);
    return e.add(e.add(e.mul(e.div(outer, plan.numSplits), batchStride),
                       e.mul(e.rem(outer, plan.numSplits), splitStride)),
                 offset);
  }

  /// The zero bytes of the shared buffer at `buffer` (thread 0's job).
  void writeZeroByte(Value shared, Value buffer, Value thread) {
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                              e.index(0)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    auto zeroType = VectorType::get({16}, b.getI8Type());
    Value zeros = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(zeroType, b.getI8IntegerAttr(0)));
    vector::StoreOp::create(b, loc, zeros, shared,
                            ValueRange{e.add(buffer, plan.zeroByte)}, false,
                            llvm::MaybeAlign(16));
  }

  /// Phase 1, thread `thread`: its source chunks of the tile at `base` into
  /// the shared buffer at `buffer`. On the device by 16-byte cp.async copies
  /// (completed by the caller's wait) where the shared padding keeps the
  /// chunks aligned; else (and on the host) by loads into registers, every
  /// load of the thread first, then the narrower stores: the chunk as
  /// `width / piece` integers, each stored as its bytes. (cp.async of 4
  /// bytes took four copies per chunk and was slower than the loads.)
  void copyIn(int kind, Value source, Value shared, Value buffer, Value base,
              Value thread) {
    if (plan.transposedQuads)
      return copyInTransposed(kind, source, shared, buffer, base, thread);
    Type i8 = b.getI8Type();
    const int64_t chunks = plan.kinds[kind].sourceChunks.size();
    const int64_t width = plan.loadBytes, piece = plan.sharedStoreBytes;
    const bool async = copiesAsync();
    auto sourceOf = [&](Value i) {
      return e.add(base, readTable(values.sourceChunks,
                                   e.add(i, tables.sourceStart[kind])));
    };
    auto positionOf = [&](Value i) {
      Value loaded = e.mul(i, width);
      return e.add(buffer,
                   e.add(loaded, e.mul(e.div(loaded, plan.sharedPeriod),
                                       plan.sharedPad)));
    };
    // (bytes, shared position, chunk index)
    SmallVector<std::tuple<Value, Value, Value>> loads;
    SmallVector<Value> valid;
    for (int64_t step = 0; step * plan.threads < chunks; ++step) {
      auto [chunk, inRange] = chunkOf(thread, step, chunks);
      // Lambdas may not capture structured bindings before C++20.
      Value i = chunk;
      if (async) {
        guarded(inRange, [&] {
          NVVM::CpAsyncOp::create(
              b, loc, pointerToByte(b, loc, shared, positionOf(i), 3),
              pointerToByte(b, loc, source, sourceOf(i), 1), width,
                                  NVVM::LoadCacheModifierKind::CG, Value());
        });
        continue;
      }
      // Past the end, chunk 0 is read again (in bounds) and not stored.
      Value read = inRange ? e.select(inRange, i, e.index(0)) : i;
      loads.push_back(
          {vector::LoadOp::create(b, loc, VectorType::get({width}, i8),
                                  source, ValueRange{sourceOf(read)}, false,
                                  llvm::MaybeAlign(width)),
           positionOf(i), i});
      valid.push_back(inRange);
    }
    const int64_t count = width / piece;
    for (auto [loadTuple, inRangeValue] : llvm::zip(loads, valid)) {
      const auto &load = loadTuple;
      Value inRange = inRangeValue;
      guarded(inRange, [&] {
        auto [bytes, position, i] = load;
        if (piece == width) {
          vector::StoreOp::create(b, loc, bytes, shared, ValueRange{position},
                                  false, llvm::MaybeAlign(piece));
          return;
        }
        // Consecutive lanes hold consecutive 16-byte chunks: storing piece
        // k of each at once would put 4 lanes (16 / piece of them) on every
        // bank. Store k of the lanes of group g = chunk / 8 writes instead
        // the piece whose shared position, counted in pieces, is k + g
        // modulo the pieces per chunk, so that each store's lanes cover
        // the banks once (the shared padding's shift of a chunk included).
        Type pieceInt = b.getIntegerType(8 * piece);
        Value pieces = vector::BitCastOp::create(
            b, loc, VectorType::get({count}, pieceInt), bytes);
        SmallVector<Value> parts;
        for (int64_t k = 0; k < count; ++k)
          parts.push_back(vector::ExtractOp::create(b, loc, pieces, k));
        Value rotation = e.rem(
            e.add(e.rem(e.div(i, 8), count),
                  arith::SubIOp::create(
                      b, loc, e.index(count),
                      e.rem(e.div(position, piece), count))),
            count);
        for (int64_t k = 0; k < count; ++k) {
          Value index = e.rem(e.add(rotation, k), count);
          Value part = parts[0];
          for (int64_t p = 1; p < count; ++p)
            part = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                      e.index(p)),
                parts[p], part);
          Value stored = vector::BitCastOp::create(
              b, loc, VectorType::get({piece}, i8),
              vector::BroadcastOp::create(
                  b, loc, VectorType::get({1}, pieceInt), part));
          vector::StoreOp::create(b, loc, stored, shared,
                                  ValueRange{e.add(position,
                                                   e.mul(index, piece))},
                                  false, llvm::MaybeAlign(piece));
        }
      });
    }
  }

  /// copyIn where the plan transposes the chunks in groups of four
  /// (ByteTilePlan::transposedQuads): thread g's groups g, g + threads,
  /// ..., each loaded as its four chunks (every load of the thread first),
  /// then each 4-byte column of the four a 4 x 4 byte transpose (eight
  /// permutes), stored as `sharedStoreBytes` pieces in order: the planner
  /// chose the padding for these stores' banks too.
  void copyInTransposed(int kind, Value source, Value shared, Value buffer,
                        Value base, Value thread) {
    Type i32 = b.getI32Type();
    const int64_t groups = plan.kinds[kind].sourceChunks.size() / 4;
    const int64_t piece = plan.sharedStoreBytes;
    SmallVector<std::array<Value, 4>> loaded;
    SmallVector<Value> indices, valid;
    for (int64_t step = 0; step * plan.threads < groups; ++step) {
      auto [group, inRange] = chunkOf(thread, step, groups);
      // Past the end, group 0 is read again (in bounds) and not stored.
      Value read = inRange ? e.select(inRange, group, e.index(0)) : group;
      std::array<Value, 4> chunks;
      for (int64_t r = 0; r < 4; ++r) {
        Value at = e.add(base, readTable(values.sourceChunks,
                                         e.add(e.add(e.mul(read, 4), r),
                                               tables.sourceStart[kind])));
        chunks[r] = vector::BitCastOp::create(
            b, loc, VectorType::get({4}, i32),
            vector::LoadOp::create(b, loc,
                                   VectorType::get({16}, b.getI8Type()),
                                   source, ValueRange{at}, false,
                                   llvm::MaybeAlign(16)));
      }
      loaded.push_back(chunks);
      indices.push_back(group);
      valid.push_back(inRange);
    }
    for (auto [chunksValue, groupValue, inRangeValue] :
         llvm::zip(loaded, indices, valid)) {
      // Lambdas may not capture structured bindings before C++20.
      const std::array<Value, 4> &chunks = chunksValue;
      Value group = groupValue;
      guarded(inRangeValue, [&] {
        // Word k of the group: byte k of each of the four chunks.
        SmallVector<Value, 16> words;
        for (int64_t w = 0; w < 4; ++w) {
          Value a[4];
          for (int64_t r = 0; r < 4; ++r)
            a[r] = vector::ExtractOp::create(b, loc, chunks[r], w);
          auto prmt = [&](Value x, Value y, uint32_t selector) {
            return permute(x, y, e.i32(selector));
          };
          Value low01 = prmt(a[0], a[1], 0x5140), high01 = prmt(a[0], a[1], 0x7362);
          Value low23 = prmt(a[2], a[3], 0x5140), high23 = prmt(a[2], a[3], 0x7362);
          words.push_back(prmt(low01, low23, 0x5410));
          words.push_back(prmt(low01, low23, 0x7632));
          words.push_back(prmt(high01, high23, 0x5410));
          words.push_back(prmt(high01, high23, 0x7632));
        }
        Value loadedByte = e.mul(group, 64);
        Value position = e.add(
            buffer, e.add(loadedByte, e.mul(e.div(loadedByte, plan.sharedPeriod),
                                            plan.sharedPad)));
        const int64_t perPiece = piece / 4;
        for (int64_t k = 0; k < 64 / piece; ++k) {
          Value bytes = vector::BitCastOp::create(
              b, loc, VectorType::get({piece}, b.getI8Type()),
              vector::FromElementsOp::create(
                  b, loc, VectorType::get({perPiece}, i32),
                  ArrayRef(words).slice(k * perPiece, perPiece)));
          vector::StoreOp::create(b, loc, bytes, shared,
                                  ValueRange{e.add(position, k * piece)},
                                  false, llvm::MaybeAlign(piece));
        }
      });
    }
  }

  /// Whether copyIn copies by cp.async (and the caller must commit and
  /// wait for its groups).
  bool copiesAsync() const {
    return !onHost && plan.sharedStoreBytes == 16 && !plan.transposedQuads;
  }

  /// The gather tables of `kind` for thread `thread`: the same for every
  /// tile of the kind, so a block that converts several tiles reads them
  /// once. Past the end, chunk 0's entries are read (in bounds) and nothing
  /// is stored.
  GatherTables loadGatherTables(int kind, Value thread) {
    Type i16 = b.getI16Type(), i32 = b.getI32Type();
    const int64_t chunks = plan.kinds[kind].destChunks.size();
    const int64_t width = plan.storeBytes;
    GatherTables t;
    for (int64_t step = 0; step * plan.threads < chunks; ++step) {
      auto [c, inRange] = chunkOf(thread, step, chunks);
      Value read = inRange ? e.select(inRange, c, e.index(0)) : c;
      t.entries.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({2}, i32), values.destChunks,
          ValueRange{e.mul(e.add(read, tables.destStart[kind]), 2)}, false,
          llvm::MaybeAlign(8)));
      t.valid.push_back(inRange);
    }
    for (Value entry : t.entries) {
      Value pattern = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          e.shr(vector::ExtractOp::create(b, loc, entry, 1), 16));
      t.patterns.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({width}, i16), values.patterns,
          ValueRange{e.mul(pattern, width)}, false,
          llvm::MaybeAlign(2 * width)));
    }
    return t;
  }

  /// Phase 2: the thread's destination chunks of the tile at `base`, each
  /// gathered from the shared buffer at `buffer` by the tables `t`.
  void gatherOut(int kind, const GatherTables &t, Value dest, Value shared,
                 Value buffer, Value base) {
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    // Straight-line code, each stage for all of the thread's chunks before
    // the next: shared reads, permutes, stores.
    const int64_t width = plan.storeBytes;
    const ByteTileGather gather = plan.kinds[kind].gather;
    const bool rotated = !plan.kinds[kind].chunkRotation.empty();
    SmallVector<Value> chunkBytes;
    for (size_t chunk = 0; chunk < t.entries.size(); ++chunk) {
      Value offsets = t.patterns[chunk];
      Value gatherBase = e.add(
          buffer, arith::IndexCastUIOp::create(
                      b, loc, b.getIndexType(),
                      e.band(vector::ExtractOp::create(b, loc,
                                                       t.entries[chunk], 1),
                             0xFFFF)));
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
      if (rotated)
        words = rotateBack(words, e.band(vector::ExtractOp::create(
                                             b, loc, t.entries[chunk], 0),
                                         width - 1));
      chunkBytes.push_back(vector::BitCastOp::create(
          b, loc, VectorType::get({width}, i8),
          vector::FromElementsOp::create(
              b, loc, VectorType::get({width / 4}, i32), words)));
    }
    for (auto [entryValue, bytesValue, inRange] :
         llvm::zip(t.entries, chunkBytes, t.valid)) {
      // Lambdas may not capture structured bindings before C++20.
      Value entry = entryValue, bytes = bytesValue;
      guarded(inRange, [&] {
        Value word = vector::ExtractOp::create(b, loc, entry, 0);
        if (rotated)
          word = e.band(word, ~int64_t(width - 1));
        Value offset =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), word);
        vector::StoreOp::create(b, loc, bytes, dest,
                                ValueRange{e.add(base, offset)}, false,
                                llvm::MaybeAlign(width));
      });
    }
  }

  /// A chunk gathered in an order rotated by `rotation` bytes (an i32,
  /// below 16; ByteTilePlan::Kind::chunkRotation) in its destination
  /// order: destination word j is gathered bytes 4j - rotation to 4j -
  /// rotation + 3 (mod 16), i.e. the gathered words rotated by rotation / 4
  /// (two rounds of selects), then each word's bytes taken from it and the
  /// word before by one permute.
  SmallVector<Value> rotateBack(ArrayRef<Value> gathered, Value rotation) {
    assert(gathered.size() == 4 && "rotated gathers are 16-byte chunks");
    SmallVector<Value> words(gathered);
    for (int64_t bit : {1, 2}) {
      Value set = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        e.band(rotation, 4 * bit), e.i32(0));
      SmallVector<Value> moved;
      for (int64_t j = 0; j < 4; ++j)
        moved.push_back(arith::SelectOp::create(b, loc, set,
                                                words[(j - bit + 4) % 4],
                                                words[j]));
      words = moved;
    }
    // Bytes 4 - s to 7 - s of (word j - 1, word j), s = rotation % 4.
    Value selector = arith::SubIOp::create(
        b, loc, e.i32(0x7654), e.mul(e.band(rotation, 3), e.i32(0x1111)));
    SmallVector<Value> result;
    for (int64_t j = 0; j < 4; ++j)
      result.push_back(permute(words[(j + 3) % 4], words[j], selector));
    return result;
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

  /// Plain loads and stores instead of cp.async, and byte permutes as
  /// integer operations instead of PTX (the host emulation of the kernel).
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
                                    const ByteTileKernelOptions &options) {
  if (!op.getUnitRange().empty())
    return std::nullopt;
  if (conversion.bits != 8)
    return std::nullopt;
  std::unique_ptr<::microscale::ref::Layout> from, to;
  if (!conversion.buildReferences(from, to))
    return std::nullopt;
  return planByteTileConversion(*from, *to, options.threads, options.wordGather,
                                kByteTileMaxBatchBytes,
                                options.blocksOfLargeBatches,
                                options.transposedCopies,
                                options.minTileBytes, options.minRun);
}

/// Where the per-thread code of a block runs: on the device in the thread
/// itself, a barrier between phases; on the host each phase is a loop over
/// the block's threads (the barrier is that loop's end), and each copy into
/// a buffer is preceded by poisoning it.
struct ThreadPhases {
  function_ref<void(function_ref<void(Value thread)>)> phase;
  function_ref<void()> barrier;
  function_ref<void(Value buffer)> beforeCopy;
  bool onDevice = true;
};

/// One block of the kernel, block `block` of `grid`: a persistent block
/// converts the full tiles block, block + P, ... (P persistent blocks),
/// copying the next tile into its other buffer while it gathers this one
/// (two buffers) or after (one); an edge block converts the edge tile of
/// its outer index.
void emitBlock(OpBuilder &b, Location loc, ByteTileEmitter &emitter,
               const ByteTilePlan &plan, const ByteTileGrid &grid,
               Value block, Value source, Value dest, Value shared,
               const ThreadPhases &threads) {
  Emitter e(b, loc);
  auto commit = [&] {
    if (emitter.copiesAsync())
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };
  auto waitFor = [&](int64_t pending) {
    if (emitter.copiesAsync())
      NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  };
  auto bufferAt = [&](int64_t i) { return e.index(i * grid.bufferBytes); };
  // One tile of `kind` at (outer, group), the block's only one: its gather
  // tables read after the copy is issued, in flight with it. (Read before
  // it, they and the loads cost registers and occupancy on the large
  // tiles: docs/performance.md.)
  auto single = [&](int kind, Value outer, Value group) {
    threads.beforeCopy(bufferAt(0));
    GatherTables early;
    threads.phase([&](Value thread) {
      emitter.writeZeroByte(shared, bufferAt(0), thread);
      emitter.copyIn(kind, source, shared, bufferAt(0),
                     emitter.sourceBase(outer, group), thread);
      commit();
      if (threads.onDevice)
        early = emitter.loadGatherTables(kind, thread);
      waitFor(0);
    });
    threads.barrier();
    threads.phase([&](Value thread) {
      emitter.gatherOut(kind,
                        threads.onDevice
                            ? early
                            : emitter.loadGatherTables(kind, thread),
                        dest, shared, bufferAt(0),
                        emitter.destBase(outer, group));
    });
  };
  auto persistent = [&] {
    if (grid.persistentBlocks == grid.fullTiles)
      return single(0, e.div(block, grid.fullGroups),
                    e.rem(block, grid.fullGroups));
    const int64_t P = grid.persistentBlocks;
    // Tile t of the full tiles: outer t / fullGroups, group t % fullGroups.
    auto copyTile = [&](Value t, Value buffer) {
      threads.beforeCopy(buffer);
      threads.phase([&](Value thread) {
        emitter.copyIn(0, source, shared, buffer,
                       emitter.sourceBase(e.div(t, grid.fullGroups),
                                          e.rem(t, grid.fullGroups)),
                       thread);
      });
    };
    // Every thread commits a group after each (possible) copy, empty where
    // it copied nothing, so that the groups count the tiles.
    auto commitPhase = [&] { threads.phase([&](Value) { commit(); }); };
    // On the device the gather tables are read once, before the loop.
    GatherTables hoisted;
    threads.phase([&](Value thread) {
      for (int64_t i = 0; i < grid.buffers; ++i)
        emitter.writeZeroByte(shared, bufferAt(i), thread);
      if (threads.onDevice && grid.hoistTables)
        hoisted = emitter.loadGatherTables(0, thread);
    });
    copyTile(block, bufferAt(0));
    commitPhase();
    Value iterations = e.div(
        arith::SubIOp::create(b, loc, e.index(grid.fullTiles + P - 1), block),
        P);
    auto loop = scf::ForOp::create(b, loc, e.index(0), iterations,
                                   e.index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value t = e.add(block, e.mul(i, P));
    Value next = e.add(t, P);
    Value hasNext = e.lt(next, grid.fullTiles);
    Value buffer = bufferAt(0), other;
    if (grid.buffers == 2) {
      Value odd = e.rem(i, 2);
      buffer = e.mul(odd, grid.bufferBytes);
      other = arith::SubIOp::create(b, loc, bufferAt(1), buffer);
      emitter.guarded(hasNext, [&] { copyTile(next, other); });
      // All groups but the newest (the next tile's) done: this tile's.
      threads.phase([&](Value) {
        commit();
        waitFor(1);
      });
    } else {
      threads.phase([&](Value) { waitFor(0); });
    }
    threads.barrier();
    threads.phase([&](Value thread) {
      GatherTables tables = threads.onDevice && grid.hoistTables
                                ? hoisted
                                : emitter.loadGatherTables(0, thread);
      emitter.gatherOut(0, tables, dest, shared, buffer,
                        emitter.destBase(e.div(t, grid.fullGroups),
                                         e.rem(t, grid.fullGroups)));
    });
    threads.barrier();
    if (grid.buffers == 1) {
      emitter.guarded(hasNext, [&] { copyTile(next, buffer); });
      commitPhase();
    }
  };
  auto edge = [&] {
    single(1,
           arith::SubIOp::create(b, loc, block,
                                 e.index(grid.persistentBlocks)),
           e.index(plan.numGroups - 1));
  };
  if (!grid.edgeBlocks)
    return persistent();
  if (!grid.persistentBlocks)
    return edge();
  // Uniform over the block.
  auto branch = scf::IfOp::create(b, loc, e.lt(block, grid.persistentBlocks),
                                  /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  persistent();
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  edge();
}
} // namespace

/// One block per tile of `plan`, one shared buffer each.
static ByteTileGrid blockPerTileGrid(const ByteTilePlan &plan) {
  ByteTileGrid grid;
  grid.fullGroups = plan.numGroups - (plan.hasEdge ? 1 : 0);
  grid.fullTiles = plan.getNumOuter() * grid.fullGroups;
  grid.persistentBlocks = grid.fullTiles;
  grid.edgeBlocks = plan.hasEdge ? plan.getNumOuter() : 0;
  grid.bufferBytes = plan.sharedBytes;
  return grid;
}

ByteTileGrid mlir::microscale::planByteTileGrid(
    const ByteTilePlan &plan, const nvvm::NVIDIAChip &chip,
    const ByteTileKernelOptions &options) {
  ByteTileGrid grid = blockPerTileGrid(plan);
  grid.hoistTables = options.hoistTables;
  // One block per tile by default: measured no slower than the persistent
  // grids on gpt-oss's scales (docs/performance.md), and without their
  // registers.
  if (options.blocksPerSM == 0)
    return grid;
  // Two buffers where they fit in a block's static shared memory.
  grid.buffers = options.buffers;
  if (grid.buffers == 0 ||
      2 * plan.sharedBytes > chip.staticSharedMemoryPerBlock)
    grid.buffers =
        2 * plan.sharedBytes <= chip.staticSharedMemoryPerBlock ? 2 : 1;
  const int64_t smCount =
      options.smCount ? options.smCount : chip.defaultSMCount;
  const int64_t perSM = std::max<int64_t>(
      1, std::min({options.blocksPerSM, chip.maxThreadsPerSM / plan.threads,
                   chip.sharedMemoryPerSM /
                       (grid.buffers * grid.bufferBytes + 1024)}));
  grid.persistentBlocks = std::min(grid.fullTiles, perSM * smCount);
  // Registers that keep the persistent blocks resident together.
  grid.maxRegisters = std::min<int64_t>(
      chip.maxRegistersPerThread,
      chip.registersPerSM / (perSM * plan.threads) / 8 * 8);
  return grid;
}

bool mlir::microscale::outlineByteTileConversion(
    ConvertStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip, const ByteTileKernelOptions &options) {
  if (options.threads % 32 || options.threads <= 0)
    return false;
  StorageConversion conversion(op);
  std::optional<ByteTilePlan> plan =
      planFor(op, conversion, options);
  if (!plan)
    return false;
  const ByteTileGrid grid = planByteTileGrid(*plan, chip, options);
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
  if (grid.maxRegisters)
    function->setAttr(
        NVVM::NVVMDialect::getMaxnregAttrName(),
        IntegerAttr::get(IntegerType::get(context, 32),
                         static_cast<int32_t>(grid.maxRegisters)));
  OpBuilder builder(context);
  Value shared = addSharedBuffer(
      function,
      getSharedMemRefType({grid.buffers * grid.bufferBytes}, i8), loc,
      /*alignment=*/16);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  ByteTileTables tables(*plan);
  TableValues values =
      getTables(builder, loc, kernels, signature.name, tables);
  Value block = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  ByteTileEmitter emitter(builder, loc, *plan, tables, values);
  auto phase = [&](function_ref<void(Value)> body) { body(thread); };
  auto barrier = [&] { gpu::BarrierOp::create(builder, loc); };
  auto noPoison = [](Value) {};
  emitBlock(builder, loc, emitter, *plan, grid, block, entry.getArgument(0),
            entry.getArgument(1), shared,
            ThreadPhases{phase, barrier, noPoison, /*onDevice=*/true});
  builder.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(builder, loc);

  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index(grid.getNumBlocks()), one, one},
      gpu::KernelDim3{host.index(plan->threads), one, one}, Value(),
      ValueRange{castToArgument(builder, loc, op.getSource(), sourceType),
                 castToArgument(builder, loc, op.getDest(), destType)});
  op.erase();
  return true;
}

bool mlir::microscale::emulateByteTileConversionOnHost(
    ConvertStorageOp op, const ByteTileKernelOptions &options,
    int64_t persistentBlocks) {
  std::optional<ByteTilePlan> plan =
      planFor(op, StorageConversion(op), options);
  if (!plan)
    return false;
  ByteTileGrid grid = blockPerTileGrid(*plan);
  grid.buffers = options.buffers == 1 ? 1 : 2;
  grid.persistentBlocks = std::min(grid.fullTiles, persistentBlocks);
  // Outside a pass nothing has loaded the dialects the emulation builds.
  loadHostEmulationDialects(op.getContext());
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value shared = memref::AllocaOp::create(
      builder, loc,
      MemRefType::get({grid.buffers * grid.bufferBytes}, builder.getI8Type()),
      ValueRange{}, builder.getI64IntegerAttr(16));
  Operation *module = op->getParentOfType<ModuleOp>();
  const std::string prefix =
      uniqueSymbolPrefix(module, "byte_tile", "_gather_patterns");
  ByteTileTables tables(*plan);
  TableValues values = getTables(builder, loc, module, prefix, tables);
  // The blocks in a scattered order; a buffer poisoned before each copy
  // into it, so that a tile writing another's bytes or reading a byte it
  // did not load (or from the wrong buffer) shows as a wrong result.
  const int64_t numBlocks = grid.getNumBlocks();
  const int64_t stride = scatteredOrderStride(numBlocks);
  auto blocks = scf::ForOp::create(builder, loc, e.index(0),
                                   e.index(numBlocks), e.index(1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(blocks.getBody());
  Value block = e.rem(e.mul(blocks.getInductionVar(), stride), numBlocks);
  ByteTileEmitter emitter(builder, loc, *plan, tables, values);
  emitter.onHost = true;
  auto phase = [&](function_ref<void(Value)> body) {
    auto threadLoop = scf::ForOp::create(builder, loc, e.index(0),
                                         e.index(plan->threads), e.index(1));
    OpBuilder::InsertionGuard phaseGuard(builder);
    builder.setInsertionPointToStart(threadLoop.getBody());
    body(threadLoop.getInductionVar());
  };
  auto barrier = [] {};
  auto poison = [&](Value buffer) {
    Value bad = arith::ConstantIntOp::create(builder, loc,
                                             builder.getI8Type(), 0xCD);
    auto fill = scf::ForOp::create(builder, loc, e.index(0),
                                   e.index(plan->zeroByte), e.index(1));
    OpBuilder::InsertionGuard fillGuard(builder);
    builder.setInsertionPointToStart(fill.getBody());
    memref::StoreOp::create(builder, loc, bad, shared,
                            ValueRange{e.add(buffer, fill.getInductionVar())});
  };
  emitBlock(builder, loc, emitter, *plan, grid, block, op.getSource(),
            op.getDest(), shared,
            ThreadPhases{phase, barrier, poison, /*onDevice=*/false});
  op.erase();
  return true;
}
