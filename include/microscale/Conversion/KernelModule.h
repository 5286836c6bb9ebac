//===- KernelModule.h - The gpu.module our kernels go into ------*- C++ -*-===//
//
// Each GPU lowering outlines its kernels into one gpu.module of its own name
// (microscale_kernels for NVIDIA, microscale_gfx950_kernels for gfx950), so
// that a module lowered for both targets keeps two binaries apart.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_KERNELMODULE_H
#define MICROSCALE_CONVERSION_KERNELMODULE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::microscale {

/// The gpu.module `name` of `module`, created at its end (and `module`
/// marked a gpu.container_module) the first time.
inline gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module,
                                                StringRef name) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), name);
}

} // namespace mlir::microscale

#endif
