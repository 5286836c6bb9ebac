//===- InlinePtx.cpp - One inline PTX statement ---------------------------===//
#include "InlinePtx.h"

using namespace mlir;

LLVM::InlineAsmOp mlir::microscale::inlinePtx(OpBuilder &b, Location loc,
                                              Type result, ValueRange operands,
                                              StringRef ptx,
                                              StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, result, operands, ptx, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}
