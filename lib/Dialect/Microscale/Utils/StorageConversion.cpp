//===- StorageConversion.cpp - The body of one conversion unit ------------===//
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

StorageConversion::StorageConversion(ConvertStorageOp op)
    : shape(op.getPartShape()), bits(op.getPartBits()),
      from(op.getSourceLayout()), to(op.getDestLayout()) {
  QTensorType toType = op.getToType();
  destBytes = ShapedType::getNumElements(
      op.getPart() == StoragePart::values ? toType.getValueStorageShape()
                                          : toType.getScaleStorageShape());
  unitBytes = to.getStoreUnitBytes(bits);
}

Value StorageConversion::emitUnitBits(OpBuilder &builder, Location loc,
                                      Value source, Value unit) const {
  Emitter e(builder, loc);
  // An empty logical tensor may still have padded storage: zeros.
  if (isEmpty())
    return e.i32(0);
  return to.emitStoreUnit(builder, loc, shape, bits, unit,
                          [&](OpBuilder &b, Location l, ValueRange index) {
                            return from.emitLoadElement(b, l, source, shape,
                                                        bits, index);
                          });
}

void mlir::microscale::emitStoreUnitBytes(OpBuilder &builder, Location loc,
                                          Value dest, Value unit,
                                          Value unitBits, int64_t unitBytes) {
  Emitter e(builder, loc);
  Value offset = e.mul(unit, unitBytes);
  for (int64_t i = 0; i < unitBytes; ++i) {
    Value byte = arith::TruncIOp::create(builder, loc, builder.getI8Type(),
                                         e.shr(unitBits, 8 * i));
    memref::StoreOp::create(builder, loc, byte, dest,
                            ValueRange{e.add(offset, i)});
  }
}

void StorageConversion::emitUnitStore(OpBuilder &builder, Location loc,
                                      Value dest, Value unit,
                                      Value unitBits) const {
  emitStoreUnitBytes(builder, loc, dest, unit, unitBits, unitBytes);
}

void StorageConversion::emitUnit(OpBuilder &builder, Location loc,
                                 Value source, Value dest, Value unit) const {
  emitUnitStore(builder, loc, dest, unit,
                emitUnitBits(builder, loc, source, unit));
}

bool StorageConversion::buildReferences(
    std::unique_ptr<::microscale::ref::Layout> &fromMap,
    std::unique_ptr<::microscale::ref::Layout> &toMap) const {
  std::string error;
  fromMap = from.buildReference(shape, bits, &error);
  toMap = to.buildReference(shape, bits, &error);
  return fromMap && toMap;
}

OwningOpRef<ModuleOp> mlir::microscale::buildConversionModule(
    QTensorType from, QTensorType to, StoragePart part, bool unitRange,
    std::string &error) {
  MLIRContext *context = from.getContext();
  context->loadDialect<func::FuncDialect, MicroscaleDialect>();
  OpBuilder builder(context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto bytes = MemRefType::get({ShapedType::kDynamic}, builder.getI8Type());
  SmallVector<Type> arguments = {bytes, bytes};
  if (unitRange)
    arguments.append(2, builder.getIndexType());
  auto function = func::FuncOp::create(
      builder, loc, "convert", builder.getFunctionType(arguments, {}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  ConvertStorageOp::create(
      builder, loc, StoragePartAttr::get(context, part), body->getArgument(0),
      body->getArgument(1), body->getArguments().drop_front(2),
      TypeAttr::get(from), TypeAttr::get(to));
  func::ReturnOp::create(builder, loc);
  if (failed(mlir::verify(*module))) {
    error = "the conversion does not verify (are the two types the same "
            "logical tensor?)";
    return nullptr;
  }
  return module;
}
