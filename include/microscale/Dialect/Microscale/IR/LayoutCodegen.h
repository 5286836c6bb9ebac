//===- LayoutCodegen.h - Helpers to emit layout maps as IR ------*- C++ -*-===//
//
// Small builders shared by the layouts' emitLoadElement / emitStoreUnit: index
// arithmetic with constants, byte loads, and the (batch, row, col) split of
// the [*L, R, C] tensors that Triton's layouts are defined on.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_IR_LAYOUTCODEGEN_H
#define MICROSCALE_DIALECT_MICROSCALE_IR_LAYOUTCODEGEN_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::microscale::codegen {

/// Index and i32 arithmetic on one builder and location.
class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

  Value index(int64_t v);
  Value i32(int64_t v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, index(y)); }
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value lt(Value x, int64_t y);
  Value andI1(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  /// index -> i32 (truncating) and back.
  Value toI32(Value x);
  Value toIndex(Value x);
  /// i32 bit operations.
  Value shl(Value x, int64_t s);
  Value shr(Value x, int64_t s);
  Value shlV(Value x, Value s);
  Value shrV(Value x, Value s);
  Value band(Value x, int64_t mask);
  Value bor(Value x, Value y);

  /// Loads byte `offset` of `storage` (memref<?xi8>) zero-extended to i32.
  Value loadByte(Value storage, Value offset);
  /// Loads `count` little-endian bytes starting at `offset` into an i32.
  Value loadBytes(Value storage, Value offset, int count);

private:
  OpBuilder &b;
  Location loc;
};

/// Linearizes the leading dims (all but the last two) of a logical index.
Value linearizeBatch(Emitter &e, ArrayRef<int64_t> shape, ValueRange index);
/// The inverse: a linear batch index to the leading dims' indices.
SmallVector<Value> delinearizeBatch(Emitter &e, ArrayRef<int64_t> shape,
                                    Value batch);
/// Product of the leading dims.
int64_t batchSize(ArrayRef<int64_t> shape);

/// A logical index for [*L, R, C] from (batch, r, c).
SmallVector<Value> makeIndex(Emitter &e, ArrayRef<int64_t> shape, Value batch,
                             Value r, Value c);

/// Calls loadElement at `index` when `valid`, else yields 0, without ever
/// passing an out-of-bounds index: invalid indices are replaced by zeros.
Value loadIfValid(
    Emitter &e, Value valid, SmallVector<Value> index,
    function_ref<Value(OpBuilder &, Location, ValueRange)> loadElement);

/// The elements of one 4-byte word of a Hopper value layout (mma_version 3
/// or 2): for each byte slot, the non-MX index m, the packed MX index kb
/// (its two nibbles are MX indices 2kb and 2kb+1) and whether they are inside
/// the tensor (not padding); plus the word's batch.
struct HopperWordElements {
  Value batch;
  Value m[4], kb[4], valid[4];
};
HopperWordElements emitHopperWordElements(Emitter &e, int64_t mmaVersion,
                                          int64_t paddedM, int64_t paddedKB,
                                          int64_t extentM, int64_t extentKB,
                                          Value word);

} // namespace mlir::microscale::codegen

#endif
