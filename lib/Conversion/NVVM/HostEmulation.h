//===- HostEmulation.h - PTX instructions as arith for the emulations -*- C++ -*-===//
//
// The host emulations of the NVIDIA kernels (CI has no GPU) run the kernels'
// own emitters with each inline PTX instruction replaced by arith that gives
// the same bits. The instructions more than one kernel needs live here.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOSTEMULATION_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOSTEMULATION_H

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"

namespace mlir::microscale {

/// Loads the dialects the host emulations build with (arith, memref, scf,
/// vector, LLVM) into `context`. Before any of their ops is created: an op
/// of a dialect not loaded is not created (null).
void loadHostEmulationDialects(MLIRContext *context);

/// `mul.rn.bf16x2`: the two bf16 lanes of the i32s `a` and `b` multiplied,
/// each exactly in f32 (two 8-bit significands) and rounded to nearest even
/// on the bits.
Value emitHostMulBF16x2(codegen::Emitter &e, Value a, Value b);

} // namespace mlir::microscale

#endif
