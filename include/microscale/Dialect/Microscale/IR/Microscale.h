//===- Microscale.h - The microscale dialect --------------------*- C++ -*-===//
//
// One header for the dialect, its attributes, types and operations.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_IR_MICROSCALE_H
#define MICROSCALE_DIALECT_MICROSCALE_IR_MICROSCALE_H

#include "microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.h"
#include "microscale/Reference/MXFormat.h"
#include "microscale/Reference/Transcode.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "microscale/Dialect/Microscale/IR/MicroscaleDialect.h.inc"
// MicroscaleEnums.h.inc comes with MicroscaleLayoutInterface.h.

#define GET_ATTRDEF_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleTypes.h.inc"

#define GET_OP_CLASSES
#include "microscale/Dialect/Microscale/IR/MicroscaleOps.h.inc"

namespace mlir {
class RewritePatternSet;
namespace microscale {
/// The canonicalizer folds constants of at most this many elements, so that
/// canonicalization never materializes large constants. The
/// microscale-fold-constants pass takes its own limit.
inline constexpr int64_t kCanonicalizerFoldLimit = 65536;

/// Registers the microscale dialect (and nothing else) in `registry`: the one
/// call a compiler needs to parse and build microscale IR.
void registerMicroscaleDialect(DialectRegistry &registry);

/// The reference library's spelling of the dialect's enum attributes.
inline ::microscale::ref::E8M0Edges toReference(E8M0Edges edges) {
  return edges == E8M0Edges::ocp ? ::microscale::ref::E8M0Edges::OCP
                                 : ::microscale::ref::E8M0Edges::ZeroInf;
}
inline ::microscale::ref::TranscodeVariant toReference(TranscodeVariant v) {
  return v == TranscodeVariant::lut ? ::microscale::ref::TranscodeVariant::LUT
                                    : ::microscale::ref::TranscodeVariant::HWCVT;
}
inline ::microscale::ref::ExponentBumpRule toReference(ExponentBump bump) {
  return bump == ExponentBump::nonzero_mantissa
             ? ::microscale::ref::ExponentBumpRule::NonzeroMantissa
             : ::microscale::ref::ExponentBumpRule::MantissaAtLeast3;
}

/// Patterns that fold quantize, dequantize, convert_layout and transcode of
/// constants (of at most `maxElements` logical elements) through the C++
/// reference.
void populateReferenceFoldingPatterns(RewritePatternSet &patterns,
                                      int64_t maxElements);
} // namespace microscale
} // namespace mlir

#endif
