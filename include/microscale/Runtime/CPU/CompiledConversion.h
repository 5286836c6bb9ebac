//===- CompiledConversion.h - A layout conversion JIT-compiled --*- C++ -*-===//
//
// Compiles one byte-buffer conversion (values or scales of a quantized tensor,
// layout A to layout B) through our own passes (microscale-cpu-to-llvm) with
// MLIR's ExecutionEngine, and runs it on host buffers, split across threads
// by destination store units. Used by mx-convert, the tests and the
// benchmark.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_RUNTIME_CPU_COMPILEDCONVERSION_H
#define MICROSCALE_RUNTIME_CPU_COMPILEDCONVERSION_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <string>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::microscale {

class CompiledConversion {
public:
  /// Compiles the conversion of `part` from `from` to `to` (the same logical
  /// tensor). Returns null and sets `error` on failure.
  /// `prepare`, when given, may rewrite the module (a func @convert with one
  /// convert_storage over the unit range of its last two arguments) before
  /// it is lowered; tests use it to run other lowerings of the same op.
  static std::unique_ptr<CompiledConversion>
  compile(QTensorType from, QTensorType to, StoragePart part,
          std::string &error,
          llvm::function_ref<LogicalResult(ModuleOp)> prepare = nullptr);
  ~CompiledConversion();

  int64_t getSourceBytes() const { return sourceBytes; }
  int64_t getDestBytes() const { return destBytes; }
  int64_t getNumUnits() const { return numUnits; }

  /// Converts `source` (getSourceBytes() bytes) into `dest` (getDestBytes()
  /// bytes) on `threads` threads (0: one per hardware thread).
  void run(const uint8_t *source, uint8_t *dest, unsigned threads = 0) const;
  /// Converts only destination units [begin, end), on `threads` threads.
  void runUnits(const uint8_t *source, uint8_t *dest, int64_t begin,
                int64_t end, unsigned threads = 0) const;

private:
  CompiledConversion() = default;
  std::unique_ptr<ExecutionEngine> engine;
  void (*kernel)(void **) = nullptr;
  int64_t sourceBytes = 0, destBytes = 0, numUnits = 0;
};

} // namespace mlir::microscale

#endif
