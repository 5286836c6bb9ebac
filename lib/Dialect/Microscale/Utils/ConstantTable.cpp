//===- ConstantTable.cpp - Constant lookup tables as memref globals -------===//
#include "microscale/Dialect/Microscale/Utils/ConstantTable.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

Value mlir::microscale::getConstantTable(OpBuilder &builder, Location loc,
                                         Operation *symbolTable,
                                         StringRef name,
                                         DenseElementsAttr values,
                                         int64_t alignment) {
  auto type = MemRefType::get(values.getType().getShape(),
                              values.getType().getElementType());
  if (!isa_and_nonnull<memref::GlobalOp>(
          SymbolTable::lookupSymbolIn(symbolTable, name))) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&symbolTable->getRegion(0).front());
    memref::GlobalOp::create(builder, loc, name,
                             builder.getStringAttr("private"), type, values,
                             /*constant=*/true,
                             alignment ? builder.getI64IntegerAttr(alignment)
                                       : IntegerAttr());
  }
  return memref::GetGlobalOp::create(builder, loc, type, name);
}
