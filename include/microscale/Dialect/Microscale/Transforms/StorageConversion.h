//===- StorageConversion.h - The body of one conversion unit ----*- C++ -*-===//
//
// What every lowering of convert_storage emits per destination store unit:
// the destination layout's inverse map gathering each element through the
// source layout's forward map, then the unit's bytes stored. The CPU lowering
// wraps it in an scf.parallel loop, the GPU lowering in one thread per unit.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_STORAGECONVERSION_H
#define MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_STORAGECONVERSION_H

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

} // namespace mlir::microscale

#endif

namespace mlir::microscale {
/// Stores the low `unitBytes` bytes of the i32 `unitBits`, little-endian, as
/// destination unit `unit` of the 1-D i8 memref `dest`.
void emitStoreUnitBytes(OpBuilder &builder, Location loc, Value dest,
                        Value unit, Value unitBits, int64_t unitBytes);

/// Replaces a quantize_storage with the loops that compute it (block scales
/// into a temporary of one byte per block, then the scale bytes and the
/// element bytes through their layouts). Defined in LowerQuantize.cpp.
void lowerQuantizeStorage(QuantizeStorageOp op);

/// One parallel loop over the store units of `layout`'s storage of `shape`
/// (`storageBytes` bytes), gathering each unit's codes from `loadElement`
/// (an i32 per logical index) and storing them into the 1-D i8 `dest`.
/// Defined in LowerQuantize.cpp.
void emitGatherLoop(OpBuilder &builder, Location loc,
                    LayoutAttrInterface layout, ArrayRef<int64_t> shape,
                    unsigned bits, int64_t storageBytes, Value dest,
                    function_ref<Value(OpBuilder &, Location, ValueRange)>
                        loadElement);

/// A private constant memref.global of `module` holding `values` (a 1-D
/// tensor attribute), created once per name, and its memref.get_global at
/// the builder's insertion point. Defined in LowerStorageConversions.cpp.
Value getConstantTable(OpBuilder &builder, Location loc, ModuleOp module,
                       StringRef name, DenseElementsAttr values);
/// The same for a 1-D table of `values`, of element type `elementType`.
template <typename T>
Value getConstantTable(OpBuilder &builder, Location loc, ModuleOp module,
                       StringRef name, ArrayRef<T> values, Type elementType) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    elementType);
  return getConstantTable(builder, loc, module, name,
                          DenseElementsAttr::get(type, values));
}

/// Replaces a transcode_storage with table-driven gather loops. Returns
/// failure (with a diagnostic) when the op has no enclosing module for its
/// tables. Defined in LowerTranscode.cpp.
LogicalResult lowerTranscodeStorage(TranscodeStorageOp op);

/// Replaces a scaled_matmul_storage with host loops that assemble each
/// operand block as gfx950's matrix core gets it (see TranscodeBlock.h).
/// Returns failure (with a diagnostic) for operand formats it does not
/// handle. Defined in LowerScaledMatmul.cpp.
LogicalResult lowerScaledMatmulStorage(ScaledMatmulStorageOp op);

/// The f32 decode tables of a format's element codes and scale codes, as
/// constant module globals. Defined in LowerStorageConversions.cpp.
struct DecodeTables {
  Value element, scale;
};
DecodeTables getDecodeTables(OpBuilder &builder, Location loc, ModuleOp module,
                             FormatAttr format, E8M0Edges edges);

/// Replaces a mixed_matmul_storage with host loops (each weight element
/// dequantized through the decode tables, products summed in f32). Returns
/// failure (with a diagnostic) without an enclosing module. Defined in
/// LowerMixedMatmul.cpp.
LogicalResult lowerMixedMatmulStorage(MixedMatmulStorageOp op);
} // namespace mlir::microscale
