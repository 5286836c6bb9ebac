//===- Passes.h - microscale to gfx950 kernels ------------------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_ROCDL_PASSES_H
#define MICROSCALE_CONVERSION_ROCDL_PASSES_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::microscale {

#define GEN_PASS_DECL
#include "microscale/Conversion/ROCDL/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "microscale/Conversion/ROCDL/Passes.h.inc"

/// scaled_matmul_storage -> gpu kernels -> ROCDL -> gfx950 assembly
/// (gpu.binary, format=isa). Registered as `microscale-gpu-to-gfx950`.
void buildMicroscaleGPUToGFX950Pipeline(OpPassManager &pm,
                                        const std::string &chip,
                                        const std::string &format);
void registerMicroscaleGFX950Pipelines();

} // namespace mlir::microscale

#endif
