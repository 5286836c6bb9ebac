//===- TritonLayoutCodegen.cpp - Triton's layouts as IR -------------------===//
//
// The hand-written emitters that remain: every other layout's emitLoadElement
// and emitStoreUnit are derived from its reference map (DerivedLayoutCodegen).
//
//  * Hopper values keep their word (the Step B interleave works on whole
//    32-bit words) as store unit; the emitters are derived.
//  * Blackwell shuffled values with a box of block_k / 2 bytes that is not a
//    power of two: a byte's place in its box is kb mod (block_k / 2), which
//    is not a move of index bits. The closed form of docs/layouts.md
//    section 5 handles them; other box sizes take the derived emitters.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/DerivedLayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

using LoadFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

int64_t HopperValueAttr::getStoreUnitBytes(unsigned) const { return 4; }

//===----------------------------------------------------------------------===//
// Blackwell shuffled value: [E, NTK, NTN, TN, TKP] bytes
//===----------------------------------------------------------------------===//

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

Value BlackwellShuffledValueAttr::emitLoadElement(
    OpBuilder &builder, Location loc, Value storage, ArrayRef<int64_t> shape,
    unsigned bits, ValueRange index) const {
  if (auto map = deriveBlockBits(*this, shape, bits, 1))
    return emitDerivedLoadElement(builder, loc, *map, 1, storage, index);
  if (llvm::is_contained(shape, 0))
    return Emitter(builder, loc).i32(0);
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
                                                unsigned bits, Value unit,
                                                LoadFn loadElement) const {
  if (auto map = deriveBlockBits(*this, shape, bits, 1))
    return emitDerivedStoreUnit(builder, loc, *map, 1, shape, unit,
                                loadElement);
  if (llvm::is_contained(shape, 0))
    return Emitter(builder, loc).i32(0);
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
