//===- InlinePtx.cpp - One inline PTX statement ---------------------------===//
#include "InlinePtx.h"

using namespace mlir;

static LLVM::InlineAsmOp createInlinePtx(OpBuilder &b, Location loc,
                                         Type result, ValueRange operands,
                                         StringRef ptx, StringRef constraints,
                                         bool sideEffects) {
  return LLVM::InlineAsmOp::create(
      b, loc, result, operands, ptx, constraints, sideEffects,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}

LLVM::InlineAsmOp mlir::microscale::inlinePtx(OpBuilder &b, Location loc,
                                              Type result, ValueRange operands,
                                              StringRef ptx,
                                              StringRef constraints) {
  return createInlinePtx(b, loc, result, operands, ptx, constraints,
                         /*sideEffects=*/true);
}

LLVM::InlineAsmOp mlir::microscale::pureInlinePtx(OpBuilder &b, Location loc,
                                                  Type result,
                                                  ValueRange operands,
                                                  StringRef ptx,
                                                  StringRef constraints) {
  return createInlinePtx(b, loc, result, operands, ptx, constraints,
                         /*sideEffects=*/false);
}
