//===- InlinePtx.h - One inline PTX statement ------------------*- C++ -*-===//
//
// The NVIDIA kernels emit the PTX that NVVM has no op for, or whose NVVM op
// only convert-nvvm-to-llvm lowers (which the kernel pipeline does not
// run), as LLVM inline assembly with side effects (so that LLVM neither
// drops nor reorders it against other such statements).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_INLINEPTX_H
#define MICROSCALE_LIB_CONVERSION_NVVM_INLINEPTX_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {

/// `ptx` on `operands` ($0 ... in the order of the results, then the
/// operands) with `constraints`, yielding `result` (null: none).
LLVM::InlineAsmOp inlinePtx(OpBuilder &b, Location loc, Type result,
                            ValueRange operands, StringRef ptx,
                            StringRef constraints);

/// `ptx` without side effects: a pure function of its operands (byte
/// permutes, bit selects, conversions), which LLVM may move, merge or drop
/// like any arithmetic.
LLVM::InlineAsmOp pureInlinePtx(OpBuilder &b, Location loc, Type result,
                                ValueRange operands, StringRef ptx,
                                StringRef constraints);

} // namespace mlir::microscale

#endif
