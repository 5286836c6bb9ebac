//===- TritonLayoutCodegen.cpp - Triton's layouts as IR -------------------===//
//
// emitLoadElement / emitStoreUnit for Triton's Hopper, Blackwell and CDNA4
// layouts: the closed-form maps of docs/layouts.md (sections 3-8), forward
// for loads and inverse for stores. Padded extents are read off the
// reference layout's storage shape, so the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

using LoadFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

static std::vector<int64_t> storageShapeOf(LayoutAttrInterface layout,
                                           ArrayRef<int64_t> shape,
                                           unsigned bits) {
  std::string error;
  auto reference = layout.buildReference(shape, bits, &error);
  assert(reference && "codegen needs a verified layout and shape");
  return reference->getStorageShape();
}

/// Reads nibble `h` (0: low, 1: high) of the byte at `offset`.
static Value loadNibble(Emitter &e, Value storage, Value offset, Value h) {
  Value byte = e.loadByte(storage, offset);
  return e.band(e.shrV(byte, e.mul(e.toI32(h), e.i32(4))), 0xF);
}

//===----------------------------------------------------------------------===//
// Hopper value
//===----------------------------------------------------------------------===//

namespace {
struct HopperValueGeometry {
  int64_t mxAxis, mma, rows, cols, m, kb, paddedM, paddedKB;
  HopperValueGeometry(HopperValueAttr attr, ArrayRef<int64_t> shape)
      : mxAxis(attr.getMxAxis()), mma(attr.getMmaVersion()) {
    rows = shape[shape.size() - 2];
    cols = shape[shape.size() - 1];
    m = mxAxis == -2 ? cols : rows;
    kb = (mxAxis == -2 ? rows : cols) / 2;
    std::vector<int64_t> storage = storageShapeOf(attr, shape, 4);
    paddedM = 4 * storage[storage.size() - 2];
    paddedKB = storage.back() / 4;
  }
};
} // namespace

int64_t HopperValueAttr::getStoreUnitBytes(unsigned) const { return 4; }

Value HopperValueAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                       Value storage, ArrayRef<int64_t> shape,
                                       unsigned, ValueRange index) const {
  HopperValueGeometry g(*this, shape);
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  Value batch = linearizeBatch(e, shape, index);
  Value r = index[rank - 2], c = index[rank - 1];
  Value m = g.mxAxis == -2 ? c : r;
  Value mx = g.mxAxis == -2 ? r : c;
  Value kb = e.div(mx, 2), h = e.rem(mx, 2);
  // Step A: the tile permutation.
  Value row = e.add(e.mul(e.div(m, 16), 4), e.rem(e.div(m, 2), 4));
  Value col = e.add(e.mul(e.div(kb, 32), 128), e.mul(e.rem(m, 2), 64));
  if (g.mma == 3) {
    col = e.add(col, e.mul(e.rem(kb, 4), 16));
    col = e.add(col, e.mul(e.rem(e.div(kb, 8), 4), 4));
    col = e.add(col, e.mul(e.rem(e.div(kb, 4), 2), 2));
    col = e.add(col, e.rem(e.div(m, 8), 2));
  } else {
    col = e.add(col, e.mul(e.rem(e.div(kb, 4), 4), 16));
    col = e.add(col, e.mul(e.rem(e.div(kb, 16), 2), 8));
    col = e.add(col, e.mul(e.rem(e.div(m, 8), 2), 4));
    col = e.add(col, e.rem(kb, 4));
  }
  Value wordOffset = e.add(e.mul(batch, g.paddedM * g.paddedKB),
                           e.add(e.mul(row, 4 * g.paddedKB),
                                 e.mul(e.div(col, 4), 4)));
  Value word = e.loadBytes(storage, wordOffset, 4);
  // Step B, inverted: lane h holds the h nibbles of the four slots.
  Value lane = e.shrV(word, e.mul(e.toI32(h), e.i32(16)));
  Value slot = e.toI32(e.rem(col, 4));
  // Slots 0-2: sign at 15 - 3 slot, e1 e0 m at 8..6 - 3 slot.
  Value down = e.mul(slot, e.i32(3));
  Value sign = e.band(e.shrV(lane, arith::SubIOp::create(builder, loc,
                                                         e.i32(15), down)),
                      1);
  Value low = e.band(e.shrV(lane, arith::SubIOp::create(builder, loc,
                                                        e.i32(6), down)),
                     7);
  Value regular = e.bor(e.shl(sign, 3), low);
  // Slot 3: sign at 14, e1 at 11, e0 at 10, m at 13.
  Value special = e.bor(
      e.bor(e.shl(e.band(e.shr(lane, 14), 1), 3),
            e.shl(e.band(e.shr(lane, 10), 3), 1)),
      e.band(e.shr(lane, 13), 1));
  Value isSlot3 = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                        slot, e.i32(3));
  return e.select(isSlot3, special, regular);
}

/// Step B: where the bits of nibble `x` of byte slot `slot` go in its lane.
static Value compressNibble(Emitter &e, Value x, int64_t slot) {
  Value sign = e.band(x, 8);
  switch (slot) {
  case 0:
    return e.bor(e.shl(sign, 12), e.shl(e.band(x, 7), 6));
  case 1:
    return e.bor(e.shl(sign, 9), e.shl(e.band(x, 7), 3));
  case 2:
    return e.bor(e.shl(sign, 6), e.band(x, 7));
  default:
    return e.bor(e.bor(e.shl(sign, 11), e.shl(e.band(x, 6), 9)),
                 e.shl(e.band(x, 1), 13));
  }
}

HopperWordElements mlir::microscale::codegen::emitHopperWordElements(
    Emitter &e, int64_t mma, int64_t paddedM, int64_t paddedKB,
    int64_t extentM, int64_t extentKB, Value unit) {
  HopperWordElements word;
  Value wordInRow = e.rem(unit, paddedKB);
  Value rowLinear = e.div(unit, paddedKB);
  Value row = e.rem(rowLinear, paddedM / 4);
  word.batch = e.div(rowLinear, paddedM / 4);
  for (int64_t slot = 0; slot < 4; ++slot) {
    // Step A, inverted (docs: layouts.md section 3).
    Value col = e.add(e.mul(wordInRow, 4), slot);
    Value s0 = e.rem(e.div(col, 64), 2);
    Value w0, kb;
    if (mma == 3) {
      w0 = e.rem(col, 2);
      kb = e.add(e.add(e.mul(e.div(col, 128), 32),
                       e.mul(e.rem(e.div(col, 4), 4), 8)),
                 e.add(e.mul(e.rem(e.div(col, 2), 2), 4),
                       e.rem(e.div(col, 16), 4)));
    } else {
      w0 = e.rem(e.div(col, 4), 2);
      kb = e.add(e.add(e.mul(e.div(col, 128), 32),
                       e.mul(e.rem(e.div(col, 8), 2), 16)),
                 e.add(e.mul(e.rem(e.div(col, 16), 4), 4), e.rem(col, 4)));
    }
    word.m[slot] = e.add(e.add(e.mul(e.div(row, 4), 16), e.mul(w0, 8)),
                         e.add(e.mul(e.rem(row, 4), 2), s0));
    word.kb[slot] = kb;
    word.valid[slot] = e.andI1(e.lt(word.m[slot], extentM), e.lt(kb, extentKB));
  }
  return word;
}

Value HopperValueAttr::emitStoreUnit(OpBuilder &builder, Location loc,
                                     ArrayRef<int64_t> shape, unsigned,
                                     Value unit, LoadFn loadElement) const {
  HopperValueGeometry g(*this, shape);
  Emitter e(builder, loc);
  HopperWordElements elements = emitHopperWordElements(
      e, g.mma, g.paddedM, g.paddedKB, g.m, g.kb, unit);
  Value word = e.i32(0);
  for (int64_t slot = 0; slot < 4; ++slot) {
    for (int64_t h = 0; h < 2; ++h) {
      Value mx = e.add(e.mul(elements.kb[slot], 2), h);
      Value m = elements.m[slot];
      SmallVector<Value> index =
          g.mxAxis == -2 ? makeIndex(e, shape, elements.batch, mx, m)
                         : makeIndex(e, shape, elements.batch, m, mx);
      Value code = loadIfValid(e, elements.valid[slot], index, loadElement);
      word = e.bor(word, e.shl(compressNibble(e, code, slot), 16 * h));
    }
  }
  return word;
}

//===----------------------------------------------------------------------===//
// Hopper scale
//===----------------------------------------------------------------------===//

namespace {
struct HopperScaleGeometry {
  int64_t mxAxis, warps, m, ks, paddedM, paddedKs;
  HopperScaleGeometry(HopperScaleAttr attr, ArrayRef<int64_t> shape)
      : mxAxis(attr.getMxAxis()), warps(attr.getNumWarps()) {
    int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
    m = mxAxis == -2 ? cols : rows;
    ks = mxAxis == -2 ? rows : cols;
    std::vector<int64_t> storage = storageShapeOf(attr, shape, 8);
    paddedM = 32 * storage[storage.size() - 2];
    paddedKs = storage.back() / 32;
  }
};
} // namespace

Value HopperScaleAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                       Value storage, ArrayRef<int64_t> shape,
                                       unsigned, ValueRange index) const {
  HopperScaleGeometry g(*this, shape);
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  Value batch = linearizeBatch(e, shape, index);
  Value m = g.mxAxis == -2 ? index[rank - 1] : index[rank - 2];
  Value ks = g.mxAxis == -2 ? index[rank - 2] : index[rank - 1];
  const int64_t w = g.warps;
  Value row = e.add(e.mul(e.div(m, 32 * w), w), e.rem(e.div(m, 16), w));
  Value col = e.add(
      e.add(e.mul(e.div(ks, 2), 64), e.mul(e.rem(e.div(m, 16 * w), 2), 32)),
      e.add(e.add(e.mul(e.rem(m, 8), 4), e.mul(e.rem(ks, 2), 2)),
            e.rem(e.div(m, 8), 2)));
  Value offset = e.add(e.mul(batch, g.paddedM * g.paddedKs),
                       e.add(e.mul(row, 32 * g.paddedKs), col));
  return e.loadByte(storage, offset);
}

Value HopperScaleAttr::emitStoreUnit(OpBuilder &builder, Location loc,
                                     ArrayRef<int64_t> shape, unsigned,
                                     Value unit, LoadFn loadElement) const {
  HopperScaleGeometry g(*this, shape);
  Emitter e(builder, loc);
  const int64_t w = g.warps;
  Value col = e.rem(unit, 32 * g.paddedKs);
  Value rowLinear = e.div(unit, 32 * g.paddedKs);
  Value row = e.rem(rowLinear, g.paddedM / 32);
  Value batch = e.div(rowLinear, g.paddedM / 32);
  Value m = e.add(
      e.add(e.mul(e.div(row, w), 32 * w), e.mul(e.rem(e.div(col, 32), 2), 16 * w)),
      e.add(e.add(e.mul(e.rem(row, w), 16), e.mul(e.rem(col, 2), 8)),
            e.rem(e.div(col, 4), 8)));
  Value ks = e.add(e.mul(e.div(col, 64), 2), e.rem(e.div(col, 2), 2));
  Value valid = e.andI1(e.lt(m, g.m), e.lt(ks, g.ks));
  SmallVector<Value> index = g.mxAxis == -2
                                 ? makeIndex(e, shape, batch, ks, m)
                                 : makeIndex(e, shape, batch, m, ks);
  return loadIfValid(e, valid, index, loadElement);
}

//===----------------------------------------------------------------------===//
// Blackwell value: [*L, K, N] stored as [*L, N, K2p] bytes
//===----------------------------------------------------------------------===//

Value BlackwellValueAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                          Value storage,
                                          ArrayRef<int64_t> shape, unsigned,
                                          ValueRange index) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  const int64_t n = shape[rank - 1];
  const int64_t paddedKB = storageShapeOf(*this, shape, 4).back();
  Value batch = linearizeBatch(e, shape, index);
  Value k = index[rank - 2], col = index[rank - 1];
  Value offset = e.add(e.mul(e.add(e.mul(batch, n), col), paddedKB),
                       e.div(k, 2));
  return loadNibble(e, storage, offset, e.rem(k, 2));
}

Value BlackwellValueAttr::emitStoreUnit(OpBuilder &builder, Location loc,
                                        ArrayRef<int64_t> shape, unsigned,
                                        Value unit, LoadFn loadElement) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  const int64_t k = shape[rank - 2], n = shape[rank - 1];
  const int64_t paddedKB = storageShapeOf(*this, shape, 4).back();
  Value kb = e.rem(unit, paddedKB);
  Value rest = e.div(unit, paddedKB);
  Value col = e.rem(rest, n);
  Value batch = e.div(rest, n);
  Value valid = e.lt(kb, k / 2);
  Value lo = loadIfValid(e, valid, makeIndex(e, shape, batch, e.mul(kb, 2), col),
                         loadElement);
  Value hi = loadIfValid(
      e, valid, makeIndex(e, shape, batch, e.add(e.mul(kb, 2), 1), col),
      loadElement);
  return e.bor(lo, e.shl(hi, 4));
}

//===----------------------------------------------------------------------===//
// Blackwell shuffled value: [E, NTK, NTN, TN, TKP] bytes
//===----------------------------------------------------------------------===//

Value BlackwellShuffledValueAttr::emitLoadElement(
    OpBuilder &builder, Location loc, Value storage, ArrayRef<int64_t> shape,
    unsigned, ValueRange index) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 4);
  const int64_t tilesK = s[1], tilesN = s[2], tileN = s[3], tileKB = s[4];
  Value batch = linearizeBatch(e, shape, index);
  Value k = index[rank - 2], n = index[rank - 1];
  Value kb = e.div(k, 2);
  Value offset = e.add(e.mul(batch, tilesK), e.div(kb, tileKB));
  offset = e.add(e.mul(offset, tilesN), e.div(n, tileN));
  offset = e.add(e.mul(offset, tileN), e.rem(n, tileN));
  offset = e.add(e.mul(offset, tileKB), e.rem(kb, tileKB));
  return loadNibble(e, storage, offset, e.rem(k, 2));
}

Value BlackwellShuffledValueAttr::emitStoreUnit(OpBuilder &builder,
                                                Location loc,
                                                ArrayRef<int64_t> shape,
                                                unsigned, Value unit,
                                                LoadFn loadElement) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 4);
  const int64_t tilesK = s[1], tilesN = s[2], tileN = s[3], tileKB = s[4];
  Value j = e.rem(unit, tileKB);
  Value t = e.div(unit, tileKB);
  Value i = e.rem(t, tileN);
  t = e.div(t, tileN);
  Value tn = e.rem(t, tilesN);
  t = e.div(t, tilesN);
  Value tk = e.rem(t, tilesK);
  Value batch = e.div(t, tilesK);
  Value kb = e.add(e.mul(tk, tileKB), j);
  Value n = e.add(e.mul(tn, tileN), i);
  Value valid =
      e.andI1(e.lt(kb, shape[rank - 2] / 2), e.lt(n, shape[rank - 1]));
  Value lo = loadIfValid(e, valid, makeIndex(e, shape, batch, e.mul(kb, 2), n),
                         loadElement);
  Value hi = loadIfValid(
      e, valid, makeIndex(e, shape, batch, e.add(e.mul(kb, 2), 1), n),
      loadElement);
  return e.bor(lo, e.shl(hi, 4));
}

//===----------------------------------------------------------------------===//
// Blackwell scale: 512-byte atoms of 128 n x 4 ks
//===----------------------------------------------------------------------===//

Value BlackwellScaleAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                          Value storage,
                                          ArrayRef<int64_t> shape, unsigned,
                                          ValueRange index) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 8);
  const int64_t nBlocks = s[1] / batchSize(shape), kQuads = s[2];
  Value batch = linearizeBatch(e, shape, index);
  Value ks = index[rank - 2], n = index[rank - 1];
  Value atom = e.add(e.mul(e.add(e.mul(batch, nBlocks), e.div(n, 128)), kQuads),
                     e.div(ks, 4));
  Value inAtom = e.add(e.add(e.mul(e.rem(n, 32), 16),
                             e.mul(e.rem(e.div(n, 32), 4), 4)),
                       e.rem(ks, 4));
  return e.loadByte(storage, e.add(e.mul(atom, 512), inAtom));
}

Value BlackwellScaleAttr::emitStoreUnit(OpBuilder &builder, Location loc,
                                        ArrayRef<int64_t> shape, unsigned,
                                        Value unit, LoadFn loadElement) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 8);
  const int64_t nBlocks = s[1] / std::max<int64_t>(batchSize(shape), 1);
  const int64_t kQuads = s[2];
  Value t = e.rem(unit, 512);
  Value atom = e.div(unit, 512);
  Value kq = e.rem(atom, kQuads);
  Value q = e.div(atom, kQuads);
  Value nb = e.rem(q, nBlocks);
  Value batch = e.div(q, nBlocks);
  Value n = e.add(e.add(e.mul(nb, 128), e.mul(e.rem(e.div(t, 4), 4), 32)),
                  e.div(t, 16));
  Value ks = e.add(e.mul(kq, 4), e.rem(t, 4));
  Value valid = e.andI1(e.lt(n, shape[rank - 1]), e.lt(ks, shape[rank - 2]));
  return loadIfValid(e, valid, makeIndex(e, shape, batch, ks, n), loadElement);
}

//===----------------------------------------------------------------------===//
// CDNA4 scale: [B, Np/32, 32 * Kp] bytes
//===----------------------------------------------------------------------===//

Value CDNA4ScaleAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                      Value storage, ArrayRef<int64_t> shape,
                                      unsigned, ValueRange index) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 8);
  const int64_t nGroups = s[1], run = s[2]; // run = 32 * Kp
  Value batch = linearizeBatch(e, shape, index);
  Value ks = index[rank - 2], n = index[rank - 1];
  Value offset = e.mul(e.add(e.mul(batch, nGroups), e.div(n, 32)), run);
  offset = e.add(offset, e.add(e.mul(e.div(ks, 8), 256),
                               e.mul(e.rem(ks, 4), 64)));
  offset = e.add(offset, e.add(e.add(e.mul(e.rem(n, 16), 4),
                                     e.mul(e.rem(e.div(ks, 4), 2), 2)),
                               e.rem(e.div(n, 16), 2)));
  return e.loadByte(storage, offset);
}

Value CDNA4ScaleAttr::emitStoreUnit(OpBuilder &builder, Location loc,
                                    ArrayRef<int64_t> shape, unsigned,
                                    Value unit, LoadFn loadElement) const {
  Emitter e(builder, loc);
  const size_t rank = shape.size();
  std::vector<int64_t> s = storageShapeOf(*this, shape, 8);
  const int64_t nGroups = s[1], run = s[2];
  Value t = e.rem(unit, run);
  Value group = e.div(unit, run);
  Value nq = e.rem(group, nGroups);
  Value batch = e.div(group, nGroups);
  Value ks = e.add(e.add(e.mul(e.div(t, 256), 8), e.mul(e.rem(e.div(t, 2), 2), 4)),
                   e.rem(e.div(t, 64), 4));
  Value n = e.add(e.add(e.mul(nq, 32), e.mul(e.rem(t, 2), 16)),
                  e.rem(e.div(t, 4), 16));
  Value valid = e.andI1(e.lt(n, shape[rank - 1]), e.lt(ks, shape[rank - 2]));
  return loadIfValid(e, valid, makeIndex(e, shape, batch, ks, n), loadElement);
}
