//===- LayoutCodegen.cpp - Helpers to emit layout maps as IR --------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::microscale::codegen;

Value Emitter::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value Emitter::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
Value Emitter::add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
Value Emitter::mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
Value Emitter::div(Value x, int64_t y) {
  return y == 1 ? x : arith::DivUIOp::create(b, loc, x, index(y)).getResult();
}
Value Emitter::rem(Value x, int64_t y) {
  return y == 1 ? index(0)
                : arith::RemUIOp::create(b, loc, x, index(y)).getResult();
}
Value Emitter::lt(Value x, int64_t y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, index(y));
}
Value Emitter::andI1(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value Emitter::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value Emitter::toI32(Value x) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), x);
}
Value Emitter::toIndex(Value x) {
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x);
}
Value Emitter::shl(Value x, int64_t s) {
  return s == 0 ? x : arith::ShLIOp::create(b, loc, x, i32(s)).getResult();
}
Value Emitter::shr(Value x, int64_t s) {
  return s == 0 ? x : arith::ShRUIOp::create(b, loc, x, i32(s)).getResult();
}
Value Emitter::shlV(Value x, Value s) { return arith::ShLIOp::create(b, loc, x, s); }
Value Emitter::shrV(Value x, Value s) { return arith::ShRUIOp::create(b, loc, x, s); }
Value Emitter::band(Value x, int64_t mask) {
  return arith::AndIOp::create(b, loc, x, i32(mask));
}
Value Emitter::bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }

Value Emitter::loadByte(Value storage, Value offset) {
  Value byte = memref::LoadOp::create(b, loc, storage, ValueRange{offset});
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

Value Emitter::loadBytes(Value storage, Value offset, int count) {
  Value result = loadByte(storage, offset);
  for (int i = 1; i < count; ++i)
    result = bor(result, shl(loadByte(storage, add(offset, i)), 8 * i));
  return result;
}

int64_t mlir::microscale::codegen::batchSize(ArrayRef<int64_t> shape) {
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  return batch;
}

Value mlir::microscale::codegen::linearizeBatch(Emitter &e,
                                                ArrayRef<int64_t> shape,
                                                ValueRange index) {
  Value batch = e.index(0);
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    batch = e.add(e.mul(batch, shape[d]), index[d]);
  return batch;
}

SmallVector<Value>
mlir::microscale::codegen::delinearizeBatch(Emitter &e, ArrayRef<int64_t> shape,
                                            Value batch) {
  SmallVector<Value> dims(shape.size() - 2);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 3; d >= 0; --d) {
    dims[d] = e.rem(batch, shape[d]);
    batch = e.div(batch, shape[d]);
  }
  return dims;
}

SmallVector<Value> mlir::microscale::codegen::makeIndex(Emitter &e,
                                                        ArrayRef<int64_t> shape,
                                                        Value batch, Value r,
                                                        Value c) {
  SmallVector<Value> index = delinearizeBatch(e, shape, batch);
  index.push_back(r);
  index.push_back(c);
  return index;
}

Value mlir::microscale::codegen::loadIfValid(
    Emitter &e, Value valid, SmallVector<Value> index,
    function_ref<Value(OpBuilder &, Location, ValueRange)> loadElement) {
  Value zero = e.index(0);
  for (Value &v : index)
    v = e.select(valid, v, zero);
  Value code = loadElement(e.builder(), e.location(), index);
  return e.select(valid, code, e.i32(0));
}

// The inverse of Hopper's Step A for one word (docs/layouts.md section 3).
// The layout's own emitters are derived from its reference map; the Hopper
// dequantization kernel reads a word's elements with this.
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
