//===- StridedCodegen.cpp - #microscale.strided as IR ---------------------===//
//
// Codes packed along major_dim, which varies fastest; the other dims are
// row-major on top. A store unit is one byte (two FP4 or one FP8 code) or,
// for FP6, the three bytes that hold four codes.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
/// The strided geometry of one logical shape.
struct StridedGeometry {
  int64_t packDim;
  SmallVector<int64_t> memoryOrder;  // outermost first; packDim last
  SmallVector<int64_t> storageShape; // bytes along the last dim
  SmallVector<int64_t> strides;      // bytes, by memory-order position

  StridedGeometry(ArrayRef<int64_t> shape, unsigned bits, int64_t majorDim) {
    const int64_t rank = shape.size();
    packDim = majorDim < 0 ? majorDim + rank : majorDim;
    for (int64_t d = 0; d < rank; ++d)
      if (d != packDim)
        memoryOrder.push_back(d);
    memoryOrder.push_back(packDim);
    for (int64_t d : memoryOrder)
      storageShape.push_back(shape[d]);
    storageShape.back() = shape[packDim] * bits / 8;
    strides.assign(rank, 1);
    for (int64_t i = rank - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * storageShape[i + 1];
  }
};
} // namespace

int64_t StridedAttr::getStoreUnitBytes(unsigned elementBits) const {
  return elementBits == 6 ? 3 : 1;
}

Value StridedAttr::emitLoadElement(OpBuilder &builder, Location loc,
                                   Value storage, ArrayRef<int64_t> shape,
                                   unsigned bits, ValueRange index) const {
  StridedGeometry g(shape, bits, getMajorDim());
  Emitter e(builder, loc);
  Value rowByte = e.index(0);
  for (size_t i = 0; i + 1 < g.memoryOrder.size(); ++i)
    rowByte = e.add(rowByte, e.mul(index[g.memoryOrder[i]], g.strides[i]));
  Value packed = index[g.packDim];
  switch (bits) {
  case 8:
    return e.loadByte(storage, e.add(rowByte, packed));
  case 4: {
    Value byte = e.loadByte(storage, e.add(rowByte, e.div(packed, 2)));
    Value shift = e.mul(e.toI32(e.rem(packed, 2)), e.i32(4));
    return e.band(e.shrV(byte, shift), 0xF);
  }
  default: { // 6: four codes in three little-endian bytes
    Value group = e.loadBytes(
        storage, e.add(rowByte, e.mul(e.div(packed, 4), 3)), 3);
    Value shift = e.mul(e.toI32(e.rem(packed, 4)), e.i32(6));
    return e.band(e.shrV(group, shift), 0x3F);
  }
  }
}

Value StridedAttr::emitStoreUnit(
    OpBuilder &builder, Location loc, ArrayRef<int64_t> shape, unsigned bits,
    Value unit,
    function_ref<Value(OpBuilder &, Location, ValueRange)> loadElement) const {
  StridedGeometry g(shape, bits, getMajorDim());
  Emitter e(builder, loc);
  const int64_t unitBytes = getStoreUnitBytes(bits);
  const int64_t perUnit = unitBytes * 8 / bits;
  const int64_t unitsPerRow = g.storageShape.back() / unitBytes;
  SmallVector<Value> index(shape.size());
  Value column = e.rem(unit, unitsPerRow);
  Value row = e.div(unit, unitsPerRow);
  for (int64_t i = static_cast<int64_t>(g.memoryOrder.size()) - 2; i >= 0;
       --i) {
    index[g.memoryOrder[i]] = e.rem(row, g.storageShape[i]);
    row = e.div(row, g.storageShape[i]);
  }
  Value result = e.i32(0);
  for (int64_t k = 0; k < perUnit; ++k) {
    index[g.packDim] = e.add(e.mul(column, perUnit), k);
    result = e.bor(result, e.shl(loadElement(builder, loc, index), k * bits));
  }
  return result;
}
