//===- FuzzContext.h - The fuzz targets' MLIR context -----------*- C++ -*-===//
//
// An MLIRContext keeps every attribute and type it has uniqued (each input's
// strings and locations among them) until it is destroyed, so one context
// for a whole run grows with every input: a four-minute run of
// type-parser-fuzzer reached libFuzzer's 2 GiB limit after about 5 million
// inputs (an out-of-memory report of the harness, with an empty reproducer).
// The targets therefore parse in a context renewed every kInputsPerContext
// inputs: its set-up stays off the per-input cost, and a run's memory stays
// bounded by what that many inputs unique.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_FUZZ_FUZZCONTEXT_H
#define MICROSCALE_FUZZ_FUZZCONTEXT_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <memory>

namespace microscale::fuzz {

inline constexpr int64_t kInputsPerContext = 100000;

/// The context for the next input: the microscale dialect loaded, threading
/// off, diagnostics dropped (refusals are expected; their text is not
/// interesting).
inline mlir::MLIRContext &contextForNextInput() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static int64_t inputs = 0;
  if (!context || ++inputs % kInputsPerContext == 0) {
    // The old context goes first: two at once would double the peak.
    context.reset();
    context = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
    context->loadDialect<mlir::microscale::MicroscaleDialect>();
    context->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
  }
  return *context;
}

} // namespace microscale::fuzz

#endif // MICROSCALE_FUZZ_FUZZCONTEXT_H
