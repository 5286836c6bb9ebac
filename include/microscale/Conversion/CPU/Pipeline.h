//===- Pipeline.h - microscale to LLVM for the host CPU ---------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_CPU_PIPELINE_H
#define MICROSCALE_CONVERSION_CPU_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace mlir::microscale {

/// What the host CPU offers the lowering.
struct CPUPipelineOptions {
  /// x86 GFNI and AVX-512BW: word interleaves by vgf2p8affineqb.
  bool gfni = false;
  /// Bytes of vector registers the block route may hold (32 x 64 with
  /// AVX-512F, 16 x 32 with AVX, 16 x 16 otherwise); 0: no register model.
  int64_t registerFileBytes = 0;
};

/// The options for the machine this process runs on (what a JIT compiling
/// for the host may use).
CPUPipelineOptions getHostCPUPipelineOptions();

/// Lowers buffer-level microscale ops (convert_storage) with scf, arith,
/// memref and func to the LLVM dialect, ready for the JIT or mlir-translate.
/// Registered as the pipeline
/// `microscale-cpu-to-llvm{gfni=... register-file-bytes=...}`.
void buildMicroscaleCPUToLLVMPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options = {});

/// Registers `microscale-cpu-to-llvm` with the global pipeline registry.
void registerMicroscaleCPUPipelines();

} // namespace mlir::microscale

#endif
