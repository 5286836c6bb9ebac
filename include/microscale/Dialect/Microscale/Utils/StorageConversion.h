//===- StorageConversion.h - The body of one conversion unit ----*- C++ -*-===//
//
// What every lowering of convert_storage emits per destination store unit:
// the destination layout's inverse map gathering each element through the
// source layout's forward map, then the unit's bytes stored. The CPU lowering
// wraps it in an scf.parallel loop, the GPU lowering in one thread per unit.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_STORAGECONVERSION_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_STORAGECONVERSION_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::microscale {

/// The static description of one convert_storage.
struct StorageConversion {
  SmallVector<int64_t> shape; // logical shape of the converted buffer
  unsigned bits;              // code width
  LayoutAttrInterface from, to;
  int64_t destBytes;
  int64_t unitBytes;

  explicit StorageConversion(ConvertStorageOp op);
  int64_t getNumUnits() const { return destBytes / unitBytes; }
  bool isEmpty() const { return ShapedType::getNumElements(shape) == 0; }

  /// Emits the computation and the stores of destination unit `unit`
  /// (an index), reading `source` and writing `dest` (1-D i8 memrefs).
  void emitUnit(OpBuilder &builder, Location loc, Value source, Value dest,
                Value unit) const;
  /// The two halves of emitUnit: the unit's bits (an i32) ...
  Value emitUnitBits(OpBuilder &builder, Location loc, Value source,
                     Value unit) const;
  /// ... and their stores.
  void emitUnitStore(OpBuilder &builder, Location loc, Value dest, Value unit,
                     Value unitBits) const;

  /// The reference maps of both layouts on this buffer (for planners that
  /// work from them); false where a layout does not fit.
  bool buildReferences(std::unique_ptr<::microscale::ref::Layout> &fromMap,
                       std::unique_ptr<::microscale::ref::Layout> &toMap) const;
};

/// A module with one function @convert(%src: memref<?xi8>, %dst:
/// memref<?xi8>[, %begin: index, %end: index]) holding one convert_storage
/// of `part` from `from` to `to` (over the unit range [%begin, %end) with
/// `unitRange`, else whole), for the compilers that run one conversion (the
/// host JIT, the CUDA compiler). Null, with `error` set, when it does not
/// verify.
OwningOpRef<ModuleOp> buildConversionModule(QTensorType from, QTensorType to,
                                            StoragePart part, bool unitRange,
                                            std::string &error);

/// Stores the low `unitBytes` bytes of the i32 `unitBits`, little-endian, as
/// destination unit `unit` of the 1-D i8 memref `dest`.
void emitStoreUnitBytes(OpBuilder &builder, Location loc, Value dest,
                        Value unit, Value unitBits, int64_t unitBytes);

} // namespace mlir::microscale

#endif
