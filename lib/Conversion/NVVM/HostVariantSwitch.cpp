//===- HostVariantSwitch.cpp - Host code choosing a kernel variant --------===//
#include "HostVariantSwitch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::microscale;

void mlir::microscale::emitIfAllNonZero(
    OpBuilder &b, Location loc, ValueRange counts,
    function_ref<void(OpBuilder &, Location)> body) {
  OpBuilder::InsertionGuard guard(b);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value all;
  for (Value count : counts) {
    Value nonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          count, zero);
    all = all ? arith::AndIOp::create(b, loc, all, nonZero).getResult()
              : nonZero;
  }
  auto ifAll = scf::IfOp::create(b, loc, all, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifAll.getThenRegion().front());
  body(b, loc);
}

void mlir::microscale::emitSwitchOnLimits(
    OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> limits,
    function_ref<void(OpBuilder &, Location, size_t)> emitCase) {
  OpBuilder::InsertionGuard guard(b);
  Value variant = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t limit : limits) {
    Value above = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ugt, value,
        arith::ConstantIndexOp::create(b, loc, limit));
    variant = arith::AddIOp::create(
        b, loc, variant,
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(), above));
  }
  emitSwitchOnIndex(b, loc, variant, limits.size() + 1, emitCase);
}

void mlir::microscale::emitSwitchOnIndex(
    OpBuilder &b, Location loc, Value variant, size_t count,
    function_ref<void(OpBuilder &, Location, size_t)> emitCase) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<int64_t> cases;
  for (size_t i = 1; i < count; ++i)
    cases.push_back(static_cast<int64_t>(i));
  auto select = scf::IndexSwitchOp::create(b, loc, TypeRange{}, variant,
                                           cases, cases.size());
  for (size_t i = 0; i < count; ++i) {
    Region &region =
        i == 0 ? select.getDefaultRegion() : select.getCaseRegions()[i - 1];
    b.createBlock(&region);
    emitCase(b, loc, i);
    scf::YieldOp::create(b, loc);
  }
}
