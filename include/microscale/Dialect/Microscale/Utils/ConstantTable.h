//===- ConstantTable.h - Lookup tables as memref globals --------*- C++ -*-===//
//
// A lookup table that the generated code reads (decode tables, transcode
// tables, the staged GPU conversion's gap table) as a private constant
// memref.global of a symbol table (a builtin module, or a GPU kernel module),
// and its memref.get_global where the code reads it.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_CONSTANTTABLE_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_CONSTANTTABLE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::microscale {

/// A private constant memref.global of `symbolTable` (an op with the
/// SymbolTable trait and one block, e.g. a ModuleOp or a gpu.module) holding
/// `values` (a tensor attribute, its shape the global's), created at the
/// start of its block once per name, and its memref.get_global at the
/// builder's insertion point. `alignment` (bytes, 0: the element type's)
/// lets the code read the table with vector loads.
Value getConstantTable(OpBuilder &builder, Location loc,
                       Operation *symbolTable, StringRef name,
                       DenseElementsAttr values, int64_t alignment = 0);

/// The same for a 1-D table of `values`, of element type `elementType`.
template <typename T>
Value getConstantTable(OpBuilder &builder, Location loc,
                       Operation *symbolTable, StringRef name,
                       ArrayRef<T> values, Type elementType,
                       int64_t alignment = 0) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    elementType);
  return getConstantTable(builder, loc, symbolTable, name,
                          DenseElementsAttr::get(type, values), alignment);
}

} // namespace mlir::microscale

#endif
