//===- HopperLayoutMatmulEmitter.h - Hopper-layout weight, per lane -*- C++ -*-===//
//
// What the two Hopper-layout matmul kernels share (the mma.sync decode
// kernel, HopperLayoutMatmulKernel.cpp, and the wgmma kernel,
// HopperWgmmaMatmulKernel.cpp): the plan's shape and image geometry, and
// the per-lane emitter of one 16-column tile's weight words, scale word
// and decode (seed 000's sequence into mma A fragments, which are also
// the wgmma A fragments of the lane's warp), run in the kernel and, with
// onHost, in the host emulations. The layouts' addressing is explained
// at the top of HopperLayoutMatmulKernel.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOPPERLAYOUTMATMULEMITTER_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOPPERLAYOUTMATMULEMITTER_H

#include "HopperWordDecode.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <functional>

namespace mlir::microscale::hopperlayout {

using codegen::Emitter;

/// x < y, both indices.
inline Value below(Emitter &at, Value x, Value y) {
  return arith::CmpIOp::create(at.builder(), at.location(),
                               arith::CmpIPredicate::ult, x, y);
}

/// x <= y, both indices.
inline Value atMost(Emitter &at, Value x, Value y) {
  return arith::CmpIOp::create(at.builder(), at.location(),
                               arith::CmpIPredicate::ule, x, y);
}

/// Rows known at run time only: the kernels take the lhs and out buffers as
/// this many elements (the bare-pointer convention needs static types), a
/// bound no device memory reaches and nothing in the kernels reads (the
/// rows come as an argument).
constexpr int64_t kDynamicRowsBound = int64_t(1) << 40;


/// K values per chunk: one 16-byte load per lane and 16 columns.
constexpr int64_t kChunkK = 64;

/// The kernel's shape and tiling.
struct HopperMatmulPlan {
  int64_t m, k, n;
  int64_t rowTiles;     // 8-row tiles of activations: ceil(m / 8)
  int64_t columnGroups; // 16-column tiles per warp
  int64_t depth;        // chunks a warp has loaded ahead
  int64_t split;        // warps per block, each over a range of K chunks
  int64_t chunks;       // ceil(k / 64)
  bool tail;            // k % 64 == 32: the last chunk is half
  int64_t rowBytes;     // bytes of a value image row (4 * KB padded to 64)
  int64_t scaleRowBytes; // bytes of a scale image row (32 * Ks padded to 2)
  int64_t scaleWarps;   // W of the scale layout
  // Activations through a per-warp shared-memory ring of `depth` chunks
  // (cp.async), read back as 4-byte words: with more than one row, the
  // lanes' 4-byte loads from global memory would touch one line per row.
  bool staged = false;
  // Warps recast by the light-warp rule (short K ranges, split as far as
  // one wave allows).
  bool lightWarps = false;

  int64_t columnTiles() const { return llvm::divideCeil(n, 16); }
  int64_t blocks() const {
    return llvm::divideCeil(columnTiles(), columnGroups);
  }
  int64_t accumulators() const { return 4 * columnGroups * rowTiles; }
  // Per chunk and lane: 4 weight words and a scale word per column group,
  // 8 activation words per row tile (unless staged).
  int64_t chunkValues() const {
    return 5 * columnGroups + (staged ? 0 : 8 * rowTiles);
  }
  // The ring: per warp and slot, 8 rowTiles rows of a chunk's 128 bytes,
  // rows 144 bytes apart so that the lanes' word reads (row g, word
  // q + 4i) hit 32 distinct banks and cp.async stays 16-byte aligned.
  static constexpr int64_t kRingRowBytes = 144;
  int64_t ringRows() const { return 8 * rowTiles; }
  int64_t warpRingBytes() const {
    return staged ? depth * ringRows() * kRingRowBytes : 0;
  }
};

/// One chunk's loads, as a lane holds them.
struct ChunkWords {
  SmallVector<Value, 16> weight;     // [columnGroup][step j]
  SmallVector<Value, 4> scale;       // [columnGroup]
  SmallVector<Value, 64> activation; // [rowTile][8]: word i is K 8i + 2q

  SmallVector<Value> flatten() const {
    SmallVector<Value> all(weight.begin(), weight.end());
    all.append(scale.begin(), scale.end());
    all.append(activation.begin(), activation.end());
    return all;
  }
  static ChunkWords unflatten(const HopperMatmulPlan &p, ValueRange all) {
    ChunkWords d;
    const int64_t w = 4 * p.columnGroups, s = p.columnGroups;
    d.weight.assign(all.begin(), all.begin() + w);
    d.scale.assign(all.begin() + w, all.begin() + w + s);
    d.activation.assign(all.begin() + w + s, all.end());
    return d;
  }
};

/// cp.async of `bytes` (4 or 16: cp.async's only forms of those sizes, 16
/// bypassing L1, 4 through it) from the global pointer `from` into byte
/// `dest` + `offset` (a constant) of the shared buffer `shared`,
/// `sourceBytes` of them read (null: all; the rest zero-filled), the
/// offset as the immediate of the shared address ([base+offset], inline
/// PTX): in a chunk loop unrolled by its stages LLVM would otherwise hoist
/// each stage's loop-invariant shared address whole, one register apiece,
/// where the immediate costs none.
inline void copyAsyncToShared(Emitter &at, Value shared, Value dest,
                              Value offset, Value from, int64_t bytes,
                              Value sourceBytes) {
  OpBuilder &b = at.builder();
  Location loc = at.location();
  std::optional<int64_t> immediate = getConstantIntValue(offset);
  assert(immediate && "a shared offset in an immediate is a constant");
  Value base = at.toI32(at.add(
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared), dest));
  SmallVector<Value, 3> operands{
      base, LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), from)};
  std::string ptx =
      (Twine("cp.async.") + (bytes == 16 ? "cg" : "ca") +
       ".shared.global [$0+" + Twine(*immediate) + "], [$1], " + Twine(bytes))
          .str();
  std::string constraints = "r,l";
  if (sourceBytes) {
    ptx += ", $2";
    constraints += ",r";
    operands.push_back(sourceBytes);
  }
  inlinePtx(b, loc, Type(), operands, ptx + ";", constraints);
}

/// One 16-byte unit of activations (8 bf16 from element `source` of `lhs`)
/// into byte `dest` (+ `offset`, see copyAsyncToShared) of the shared
/// buffer `shared` (i32 words): cp.async with source size 0 (zero fill)
/// where `inside` is false; on the host, the same bytes by a vector load
/// and store.
inline void copyActivationUnit(Emitter &at, Value shared, Value dest, Value lhs,
                               Value source, Value inside, bool onHost,
                               Value offset = Value()) {
  OpBuilder &b = at.builder();
  Location loc = at.location();
  if (onHost) {
    Type i32 = b.getI32Type();
    Value words = vector::BitCastOp::create(
        b, loc, VectorType::get({4}, i32),
        vector::LoadOp::create(b, loc, VectorType::get({8}, b.getBF16Type()),
                               lhs, ValueRange{source}));
    Value zeros = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(VectorType::get({4}, i32),
                                       b.getI32IntegerAttr(0)));
    if (offset)
      dest = at.add(dest, offset);
    vector::StoreOp::create(b, loc, at.select(inside, words, zeros), shared,
                            ValueRange{at.div(dest, 4)});
    return;
  }
  if (!offset) {
    NVVM::CpAsyncOp::create(b, loc, pointerToByte(b, loc, shared, dest, 3),
                            pointerToByte(b, loc, lhs, at.mul(source, 2), 1),
                            16, NVVM::LoadCacheModifierKind::CG,
                            at.select(inside, at.i32(16), at.i32(0)));
    return;
  }
  copyAsyncToShared(at, shared, dest, offset,
                    pointerToByte(b, loc, lhs, at.mul(source, 2), 1), 16,
                    at.select(inside, at.i32(16), at.i32(0)));
}

/// `bytes` (4 or 16) bytes at byte `source` of the i8 buffer `global` into
/// byte `dest` (+ `offset`, see copyAsyncToShared) of the shared buffer
/// `shared` (i32 words): cp.async; on the host, the same bytes by a vector
/// load and store.
inline void copyBytes(Emitter &at, Value shared, Value dest, Value global,
                      Value source, int64_t bytes, bool onHost,
                      Value offset = Value()) {
  OpBuilder &b = at.builder();
  Location loc = at.location();
  if (onHost) {
    Value words = vector::BitCastOp::create(
        b, loc, VectorType::get({bytes / 4}, b.getI32Type()),
        vector::LoadOp::create(b, loc, VectorType::get({bytes}, b.getI8Type()),
                               global, ValueRange{source}));
    if (offset)
      dest = at.add(dest, offset);
    vector::StoreOp::create(b, loc, words, shared,
                            ValueRange{at.div(dest, 4)});
    return;
  }
  if (!offset) {
    NVVM::CpAsyncOp::create(b, loc, pointerToByte(b, loc, shared, dest, 3),
                            pointerToByte(b, loc, global, source, 1), bytes,
                            bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                        : NVVM::LoadCacheModifierKind::CA,
                            Value());
    return;
  }
  copyAsyncToShared(at, shared, dest, offset,
                    pointerToByte(b, loc, global, source, 1), bytes, Value());
}

/// Emits the kernel's parts, per lane: the same code runs in the kernel
/// (lane = the thread's lane) and in the host emulation (lane = a loop).
class HopperMatmulEmitter {
public:
  HopperMatmulEmitter(const HopperMatmulPlan &p, Value lhs, Value values,
                      Value scales, Value out, Value globalScale, Value ring,
                      bool onHost)
      : p(p), lhs(lhs), values(values), scales(scales), out(out),
        globalScale(globalScale), ring(ring), onHost(onHost) {}

  /// The activation rows (index): `rows` where they are known at run time
  /// only (the kernel's argument), else the plan's.
  Value rowCount(Emitter &at) const { return rows ? rows : at.index(p.m); }
  Value rows;

  /// The ragged (experts) form: local row r of the block's current row
  /// group mapped to its lhs row and its out row, each with whether it is
  /// read or written at all (a row outside its slice, or an index outside
  /// its tensor, is neither); the mapped row is always safe to address.
  /// Null: dense rows (r itself, r < rowCount). And the block's expert's
  /// byte offsets into the value and scale images (null: 0).
  using RowMap = std::function<std::pair<Value, Value>(Emitter &, Value)>;
  RowMap lhsRow, outRow;
  Value valueBase, scaleBase;

  /// Local row `row` as an lhs row and whether it is read.
  std::pair<Value, Value> lhsRowOf(Emitter &at, Value row) const {
    if (lhsRow)
      return lhsRow(at, row);
    return {row, below(at, row, rowCount(at))};
  }
  /// Local row `row` as an out row and whether it is written.
  std::pair<Value, Value> outRowOf(Emitter &at, Value row) const {
    if (outRow)
      return outRow(at, row);
    return {row, below(at, row, rowCount(at))};
  }

  /// Warp `warp`'s range of chunks: [first, end).
  std::pair<Value, Value> range(Emitter &at, Value warp) const {
    return {at.div(at.mul(warp, p.chunks), p.split),
            at.div(at.mul(at.add(warp, 1), p.chunks), p.split)};
  }

  /// The byte offset in the value image of lane `lane`'s 16 bytes of
  /// 16-column tile `tile`, chunk `chunk`: 4 words, K steps j = 0..3.
  Value valueOffset(Emitter &at, Value tile, Value lane, Value chunk) const {
    Value g = at.div(lane, 4), q = at.rem(lane, 4);
    Value row = at.add(at.mul(tile, 4), at.div(g, 2));
    Value offset =
        at.add(at.add(at.mul(row, p.rowBytes), at.mul(chunk, 128)),
               at.add(at.mul(at.rem(g, 2), 64), at.mul(q, 16)));
    return valueBase ? at.add(offset, valueBase) : offset;
  }

  /// The byte offset in the scale image of lane `lane`'s 4 scale codes of
  /// 16-column tile `tile`, chunk `chunk`.
  Value scaleOffset(Emitter &at, Value tile, Value lane, Value chunk) const {
    Value g = at.div(lane, 4);
    const int64_t w = p.scaleWarps;
    Value scaleRow = at.add(at.mul(at.div(tile, 2 * w), w), at.rem(tile, w));
    Value offset = at.add(
        at.add(at.mul(scaleRow, p.scaleRowBytes), at.mul(chunk, 64)),
        at.add(at.mul(at.rem(at.div(tile, w), 2), 32), at.mul(g, 4)));
    return scaleBase ? at.add(offset, scaleBase) : offset;
  }

  /// Whether chunk `chunk`'s K values from 32 on are inside K (null where
  /// every chunk is whole): the upper two words of a half last chunk are
  /// past K and read as zeros.
  Value upperHalfInK(Emitter &at, Value chunk) const {
    return p.tail ? at.lt(at.mul(chunk, kChunkK), p.k - 32) : Value();
  }
  /// Appends one tile's weight words to `d` as the decode takes them: the
  /// four of `words` (vector<4xi32>, K steps j = 0..3), zero past K
  /// (`upperInK`: upperHalfInK).
  void appendWeightWords(Emitter &at, ChunkWords &d, Value words,
                         Value upperInK) const {
    for (int64_t j = 0; j < 4; ++j) {
      Value word =
          vector::ExtractOp::create(at.builder(), at.location(), words, j);
      d.weight.push_back(upperInK && j >= 2
                             ? at.select(upperInK, word, at.i32(0))
                             : word);
    }
  }

  /// The words lane `lane` of a warp on block `block`'s columns loads for
  /// chunk `chunk`: the weight's and scales' (loadWeight), then the
  /// activations' where they are not staged (loadActivations).
  ChunkWords load(Emitter &at, Value block, Value lane, Value chunk) const {
    ChunkWords d = loadWeight(at, block, lane, chunk);
    loadActivations(at, lane, chunk, d);
    return d;
  }

  /// The weight's and scales' words of `load`, nothing that another kernel
  /// writes: the part a kernel may load before griddepcontrol.wait.
  ChunkWords loadWeight(Emitter &at, Value block, Value lane,
                        Value chunk) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    ChunkWords d;
    Value upperInK = upperHalfInK(at, chunk);
    for (int64_t cg = 0; cg < p.columnGroups; ++cg) {
      Value tile = at.add(at.mul(block, p.columnGroups), cg);
      Value bytes = vector::LoadOp::create(
          b, loc, VectorType::get({16}, i8), values,
          ValueRange{valueOffset(at, tile, lane, chunk)}, false,
          llvm::MaybeAlign(16));
      Value words =
          vector::BitCastOp::create(b, loc, VectorType::get({4}, i32), bytes);
      appendWeightWords(at, d, words, upperInK);
      Value code = vector::LoadOp::create(
          b, loc, VectorType::get({4}, i8), scales,
          ValueRange{scaleOffset(at, tile, lane, chunk)}, false,
          llvm::MaybeAlign(4));
      d.scale.push_back(vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), code),
          0));
    }
    return d;
  }

  /// The activations' words of `load` (none where they are staged) appended
  /// to `d`.
  void loadActivations(Emitter &at, Value lane, Value chunk,
                       ChunkWords &d) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Type i32 = b.getI32Type(), bf16 = b.getBF16Type();
    Value g = at.div(lane, 4), q = at.rem(lane, 4);
    Value upperInK = upperHalfInK(at, chunk);
    for (int64_t rt = 0; rt < p.rowTiles && !p.staged; ++rt) {
      // A row not read: a safe row again, whose products land in rows
      // never stored.
      Value row =
          lhsRow ? lhsRowOf(at, at.add(g, 8 * rt)).first
                 : arith::MinUIOp::create(b, loc, at.add(g, 8 * rt),
                                          at.add(rowCount(at), -1))
                       .getResult();
      Value base = at.add(at.add(at.mul(row, p.k), at.mul(chunk, kChunkK)),
                          at.mul(q, 2));
      for (int64_t i = 0; i < 8; ++i) {
        // Word i of the lower half again where the upper half is past K.
        Value offset = at.add(base, 8 * i);
        if (upperInK && i >= 4)
          offset = at.select(upperInK, offset, at.add(base, 8 * (i - 4)));
        Value pair = vector::LoadOp::create(b, loc, VectorType::get({2}, bf16),
                                            lhs, ValueRange{offset}, false,
                                            llvm::MaybeAlign(4));
        Value word = vector::ExtractOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
            0);
        if (upperInK && i >= 4)
          word = at.select(upperInK, word, at.i32(0));
        d.activation.push_back(word);
      }
    }
  }

  /// The byte offset of ring row `row` of slot `slot` of warp `warp`.
  Value ringRow(Emitter &at, Value warp, Value slot, Value row) const {
    return at.mul(
        at.add(at.mul(at.add(at.mul(warp, p.depth), slot), p.ringRows()), row),
        HopperMatmulPlan::kRingRowBytes);
  }

  /// Staged: lane `lane`'s copies of chunk `chunk`'s activation rows into
  /// slot `slot` of warp `warp`'s ring: 16-byte units, unit u = lane + 32 i
  /// of row u / 8, bytes 16 (u % 8). Rows past M and K values past K copy
  /// nothing and zero-fill (their source clamped to row 0, K 0).
  void copyActivations(Emitter &at, Value warp, Value lane, Value chunk,
                       Value slot) const {
    const int64_t units = p.ringRows() * 8;
    for (int64_t i = 0; i * 32 < units; ++i) {
      Value unit = at.add(lane, 32 * i);
      Value row = at.div(unit, 8), part = at.rem(unit, 8);
      Value k = at.add(at.mul(chunk, kChunkK), at.mul(part, 8));
      auto [lhsRowIndex, inside] = lhsRowOf(at, row);
      if (p.tail)
        inside = at.andI1(inside, at.lt(k, p.k));
      Value source = at.select(inside, at.add(at.mul(lhsRowIndex, p.k), k),
                               at.index(0));
      Value dest = at.add(ringRow(at, warp, slot, row), at.mul(part, 16));
      copyActivationUnit(at, ring, dest, lhs, source, inside, onHost);
    }
  }

  /// Staged: lane `lane`'s activation words of slot `slot` of warp `warp`'s
  /// ring: per row tile, row g, words q + 4 i.
  SmallVector<Value> readActivations(Emitter &at, Value warp, Value lane,
                                     Value slot) const {
    Value g = at.div(lane, 4), q = at.rem(lane, 4);
    SmallVector<Value> words;
    for (int64_t rt = 0; rt < p.rowTiles; ++rt) {
      Value row = at.div(ringRow(at, warp, slot, at.add(g, 8 * rt)), 4);
      for (int64_t i = 0; i < 8; ++i)
        words.push_back(memref::LoadOp::create(
            at.builder(), at.location(), ring,
            ValueRange{at.add(row, at.add(q, 4 * i))}));
    }
    return words;
  }

  /// Whether the lane's scale codes of `d` allow the folded decode (all
  /// below 128: bit 7 clear in every byte).
  Value folds(Emitter &at, const ChunkWords &d) const {
    Value any = d.scale.front();
    for (Value s : ArrayRef<Value>(d.scale).drop_front())
      any = at.bor(any, s);
    return arith::CmpIOp::create(at.builder(), at.location(),
                                 arith::CmpIPredicate::eq,
                                 at.band(any, static_cast<int32_t>(0x80808080)),
                                 at.i32(0));
  }

  /// The A fragments of `d`: [columnGroup][step j][register a0..a3].
  /// The A fragments of every tile of `words`, in order: the folded
  /// decode where `fast` (the warp's vote), else the exact one; a branch
  /// that yields them.
  SmallVector<Value> decodeByVote(OpBuilder &b, Location loc, Value fast,
                                  ArrayRef<ChunkWords> words) const {
    auto decodeAll = [&](bool folded) {
      return [&, folded](OpBuilder &rb, Location rl) {
        SmallVector<Value> all;
        for (const ChunkWords &d : words)
          llvm::append_range(all, decode(rb, rl, d, folded));
        scf::YieldOp::create(rb, rl, all);
      };
    };
    auto branch =
        scf::IfOp::create(b, loc, fast, decodeAll(true), decodeAll(false));
    return SmallVector<Value>(branch.getResults());
  }

  SmallVector<Value> decode(OpBuilder &b, Location loc, const ChunkWords &d,
                            bool folded) const {
    Emitter at(b, loc);
    ScaledWordDecoder decoder(b, loc, /*fold=*/folded);
    decoder.onHost = onHost;
    SmallVector<Value> fragments;
    for (int64_t cg = 0; cg < p.columnGroups; ++cg) {
      // Byte 2 (j / 2) + h: K block 2c + j / 2 of column n (h = 0), n + 8.
      // Folded: bytes 0 and 2 are the lanes of the even register, 1 and 3
      // of the odd one, so step j takes lane j / 2 of both.
      if (folded) {
        auto [evenLanes, oddLanes] = decoder.foldedLanes(d.scale[cg]);
        for (int64_t j = 0; j < 4; ++j)
          llvm::append_range(fragments, decoder.decodeFoldedLanes(
                                            d.weight[4 * cg + j], evenLanes,
                                            oddLanes, j / 2));
        continue;
      }
      SmallVector<Value, 4> codes;
      for (int64_t byte = 0; byte < 4; ++byte)
        codes.push_back(at.band(at.shr(d.scale[cg], 8 * byte), 0xFF));
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t even = 2 * (j / 2), odd = even + 1;
        llvm::append_range(fragments,
                           decoder.decodeExact(d.weight[4 * cg + j],
                                               codes[even], codes[odd]));
      }
    }
    return fragments;
  }

  /// The B fragment of row tile `rt`, step `j`: activation words 2j, 2j + 1.
  std::pair<Value, Value> bFragment(const ChunkWords &d, int64_t rt,
                                    int64_t j) const {
    return {d.activation[8 * rt + 2 * j], d.activation[8 * rt + 2 * j + 1]};
  }

  /// Index of accumulator register `i` (c0..c3) of tile (cg, rt).
  int64_t accumulator(int64_t cg, int64_t rt, int64_t i) const {
    return 4 * (cg * p.rowTiles + rt) + i;
  }

  /// Stores lane `lane`'s sums (c0, c1: weight column g, token rows 2q,
  /// 2q + 1 of the row tile; c2, c3: column g + 8), times the global scale.
  void store(Emitter &at, Value block, Value lane, ArrayRef<Value> sums) const {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Type outElement = cast<MemRefType>(out.getType()).getElementType();
    Value g = at.div(lane, 4), q = at.rem(lane, 4);
    for (int64_t cg = 0; cg < p.columnGroups; ++cg)
      for (int64_t rt = 0; rt < p.rowTiles; ++rt)
        for (int64_t i = 0; i < 4; ++i) {
          Value row = at.add(at.mul(q, 2), 8 * rt + i % 2);
          Value column = at.add(
              at.mul(at.add(at.mul(block, p.columnGroups), cg), 16),
              at.add(g, 8 * (i / 2)));
          Value value = arith::MulFOp::create(
              b, loc, sums[accumulator(cg, rt, i)], globalScale);
          if (value.getType() != outElement)
            value = arith::TruncFOp::create(b, loc, outElement, value);
          auto [outRowIndex, written] = outRowOf(at, row);
          auto inside = scf::IfOp::create(
              b, loc, at.andI1(written, at.lt(column, p.n)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&inside.getThenRegion().front());
          memref::StoreOp::create(
              b, loc, value, out,
              ValueRange{at.add(at.mul(outRowIndex, p.n), column)});
        }
  }

  /// The weight's value and scale images (i8).
  Value valueImage() const { return values; }
  Value scaleImage() const { return scales; }

private:
  const HopperMatmulPlan &p;
  Value lhs, values, scales, out, globalScale;
  Value ring; // staged: the warps' rings (i32 words), else null
  bool onHost;
};

/// The ragged form's row map (HopperMatmulEmitter::RowMap) of a row group
/// starting at ragged row `rowBase` with `left` rows of its expert's slice
/// left: local row r is ragged row rowBase + r, read or written when
/// r < left, the ragged row is below `raggedRows`, and its image through
/// `indices` (a gather or scatter; null: the ragged row itself) is below
/// `bound` (unsigned: a negative index is outside too).
inline HopperMatmulEmitter::RowMap raggedRowMap(Value rowBase, Value left,
                                               Value indices, Value raggedRows,
                                               Value bound) {
  return [=](Emitter &at, Value r) -> std::pair<Value, Value> {
    OpBuilder &b = at.builder();
    Location loc = at.location();
    Value ragged = at.add(rowBase, r);
    Value valid = at.andI1(below(at, r, left), below(at, ragged, raggedRows));
    Value mapped = arith::MinUIOp::create(b, loc, ragged,
                                          at.add(raggedRows, -1));
    if (indices)
      mapped = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          memref::LoadOp::create(b, loc, indices, ValueRange{mapped}));
    valid = at.andI1(valid, below(at, mapped, bound));
    return {arith::MinUIOp::create(b, loc, mapped, at.add(bound, -1)), valid};
  };
}

/// Sets `emitter`'s ragged row maps for a row group (raggedRowMap): lhs rows
/// through `gather`, out rows through `scatter`; a row is written only
/// where it is also read (a row skipped by the gather is not written).
inline void setRaggedRows(HopperMatmulEmitter &emitter, Value rowBase,
                          Value left, Value gather, Value scatter,
                          Value raggedRows, Value lhsRows, Value outRows) {
  HopperMatmulEmitter::RowMap read =
      raggedRowMap(rowBase, left, gather, raggedRows, lhsRows);
  HopperMatmulEmitter::RowMap write =
      raggedRowMap(rowBase, left, scatter, raggedRows, outRows);
  emitter.lhsRow = read;
  emitter.outRow = [=](Emitter &at, Value r) -> std::pair<Value, Value> {
    auto [row, written] = write(at, r);
    return {row, at.andI1(written, read(at, r).second)};
  };
}

/// The kernel's argument types: flat lhs, value bytes, scale bytes, flat
/// out, the global scale; with `dynamicRows`, the buffers of
/// kDynamicRowsBound elements and the rows (index) last.
inline SmallVector<Type> kernelArguments(MixedMatmulStorageOp op,
                                         const HopperMatmulPlan &p,
                                         bool dynamicRows = false) {
  MLIRContext *context = op.getContext();
  QTensorType rhs = op.getRhsType();
  Type i8 = IntegerType::get(context, 8);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  SmallVector<Type> types = {
      MemRefType::get({dynamicRows ? kDynamicRowsBound : p.m * p.k},
                      BFloat16Type::get(context)),
      MemRefType::get({ShapedType::getNumElements(rhs.getValueStorageShape())},
                      i8),
      MemRefType::get({ShapedType::getNumElements(rhs.getScaleStorageShape())},
                      i8),
      MemRefType::get({dynamicRows ? kDynamicRowsBound : p.m * p.n},
                      outElement),
      Float32Type::get(context)};
  if (dynamicRows)
    types.push_back(IndexType::get(context));
  return types;
}

/// The op's operands as the kernel's argument types (collapsed to one
/// dimension, cast to the static sizes; rows known at run time
/// reinterpreted as kDynamicRowsBound elements), and with dynamic rows the
/// rows: the smaller of lhs's and out's (nothing past either is touched).
inline SmallVector<Value> kernelOperands(OpBuilder &builder,
                                         MixedMatmulStorageOp op,
                                         ArrayRef<Type> types) {
  Location loc = op.getLoc();
  auto flat = [&](Value buffer, Type type) {
    return flattenToArgument(builder, loc, buffer, type);
  };
  SmallVector<Value> operands = {
      flat(op.getLhs(), types[0]), flat(op.getRhsValues(), types[1]),
      flat(op.getRhsScales(), types[2]), flat(op.getOut(), types[3]),
      op.getRhsGlobalScale()};
  if (types.size() > 5)
    operands.push_back(arith::MinUIOp::create(
        builder, loc, memref::DimOp::create(builder, loc, op.getLhs(), 0),
        memref::DimOp::create(builder, loc, op.getOut(), 0)));
  return operands;
}

} // namespace mlir::microscale::hopperlayout

#endif
