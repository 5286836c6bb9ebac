//===- Pipeline.h - microscale to LLVM for the host CPU ---------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_CPU_PIPELINE_H
#define MICROSCALE_CONVERSION_CPU_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace mlir::microscale {

/// Lowers buffer-level microscale ops (convert_storage) with scf, arith,
/// memref and func to the LLVM dialect, ready for the JIT or mlir-translate.
/// Registered as the pipeline `microscale-cpu-to-llvm`.
void buildMicroscaleCPUToLLVMPipeline(OpPassManager &pm);

/// Registers `microscale-cpu-to-llvm` with the global pipeline registry.
void registerMicroscaleCPUPipelines();

} // namespace mlir::microscale

#endif
