//===- HostVariantSwitch.h - Host code choosing a kernel variant -*- C++ -*-===//
//
// Rows known at run time only: the matmul outlinings compile one kernel per
// variant (each planned for typical rows of its range) and emit host code
// that launches none when a count is 0 (a grid of 0 blocks is a launch
// error) and otherwise the variant whose range holds the rows. The K-major
// kernel, the Hopper-layout kernels (dense) and the wgmma kernel's ragged
// form share it.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOSTVARIANTSWITCH_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOSTVARIANTSWITCH_H

#include "mlir/IR/Builders.h"

namespace mlir::microscale {

/// Emits at `b`: `body` inside an scf.if that every index of `counts` is
/// nonzero.
void emitIfAllNonZero(OpBuilder &b, Location loc, ValueRange counts,
                      function_ref<void(OpBuilder &, Location)> body);

/// Emits at `b`: an scf.index_switch on the index `variant`, cases 1 to
/// `count` - 1 and the default (case 0, and any other value) built by
/// `emitCase` before their terminators.
void emitSwitchOnIndex(OpBuilder &b, Location loc, Value variant,
                       size_t count,
                       function_ref<void(OpBuilder &, Location, size_t)>
                           emitCase);

/// Emits at `b`: an scf.index_switch on how many of the ascending `limits`
/// the index `value` exceeds (unsigned), case i (0 to limits.size()) built
/// by `emitCase` before its terminator.
void emitSwitchOnLimits(OpBuilder &b, Location loc, Value value,
                        ArrayRef<int64_t> limits,
                        function_ref<void(OpBuilder &, Location, size_t)>
                            emitCase);

} // namespace mlir::microscale

#endif
