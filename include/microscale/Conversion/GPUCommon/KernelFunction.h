//===- KernelFunction.h - The gpu.func every kernel starts from -*- C++ -*-===//
//
// What every microscale GPU kernel, NVIDIA or AMD, has in common: the
// gpu.module it is outlined into, and a gpu.func marked as a kernel whose
// buffer arguments never alias and are aligned, with its block size when it
// is fixed. The target libraries add only what is theirs (register caps,
// shared-memory buffers).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_GPUCOMMON_KERNELFUNCTION_H
#define MICROSCALE_CONVERSION_GPUCOMMON_KERNELFUNCTION_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::microscale {

/// The gpu.module `name` of `module`, created at its end (and `module`
/// marked a gpu.container_module) the first time. Each target outlines its
/// kernels into a module of its own name (microscale_kernels for NVIDIA,
/// microscale_gfx950_kernels for gfx950), so that a module lowered for both
/// keeps two binaries apart.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module, StringRef name);

/// The signature of a kernel.
struct KernelSignature {
  std::string name;
  SmallVector<Type> arguments;
  /// The leading `noAliasBuffers` arguments are device buffers that never
  /// alias one another (so that the backend may load shared bytes once and
  /// merge stores), aligned to `bufferAlignment` bytes (device allocations
  /// are 256-byte aligned; views handed to a kernel keep 16).
  unsigned noAliasBuffers = 0;
  int64_t bufferAlignment = 16;
  /// Threads per block when the kernel is written for one block size
  /// (becomes the launch bound: .reqntid on NVIDIA).
  std::optional<int32_t> blockSize;
};

/// Appends to `kernels` a gpu.func kernel with `signature`, its entry block
/// empty, and returns it.
gpu::GPUFuncOp buildKernelFunction(gpu::GPUModuleOp kernels, Location loc,
                                   const KernelSignature &signature);

/// Adds a workgroup (shared-memory) buffer of `type` to `function`, aligned
/// to `alignment` bytes when non-zero, and returns it.
Value addSharedBuffer(gpu::GPUFuncOp function, MemRefType type, Location loc,
                      int64_t alignment = 0);

/// A memref type of `shape` and `elementType` in workgroup memory.
MemRefType getSharedMemRefType(ArrayRef<int64_t> shape, Type elementType);

} // namespace mlir::microscale

#endif
