//===- ConversionKernel.h - A compiled layout conversion for CUDA -*- C++ -*-===//
//
// What the runtime needs to run one generated conversion kernel (from
// `microscale-gpu-to-ptx`): its image, its name and its launch, as our
// compiler chose them. MLIR-free, like the driver, so that a program that
// only runs kernels (or the benchmark on the GPU machine) needs no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_RUNTIME_CUDA_CONVERSIONKERNEL_H
#define MICROSCALE_RUNTIME_CUDA_CONVERSIONKERNEL_H

#include "microscale/Runtime/CUDA/CudaDriver.h"

#include <cstdint>
#include <string>

namespace microscale::cuda {

struct ConversionKernel {
  /// PTX text or a cubin.
  std::string image;
  std::string name;
  unsigned grid = 0, block = 0;
  /// The per-unit kernel also takes the destination unit range [0, units).
  bool takesUnitRange = false;
  int64_t units = 0;
  size_t sourceBytes = 0, destBytes = 0;
};

/// Launches `function` (kernel's, loaded) on device buffers `source` and
/// `dest` on `stream` (0: the current context's default stream). Nothing
/// is launched for an empty conversion.
void launchConversion(Driver &driver, Function function,
                      const ConversionKernel &kernel, DevicePtr source,
                      DevicePtr dest, Stream stream);

/// Runs `kernel` on host buffers on the driver's device, every step queued
/// on `stream` (0: the legacy default stream) after the work already queued
/// there: loads the kernel's module, allocates the two buffers
/// (stream-ordered), copies `source` (kernel.sourceBytes) in, launches,
/// copies `dest` (kernel.destBytes) out, frees the buffers, waits for
/// `stream` only, unloads the module. An empty conversion touches nothing.
/// Returns false and sets `error` on failure.
///
/// Measured on the H200 (bench/gpu/stream-check.cpp, docs/reliability.md):
/// every step is stream-ordered except the driver's module load and unload
/// (cuModuleLoadData, cuModuleUnload), which wait for the work of every
/// stream of the device. To convert on a stream while other work runs, load
/// the module once and use the overload below.
bool runConversion(Driver &driver, const ConversionKernel &kernel,
                   const void *source, void *dest, std::string &error,
                   Stream stream = nullptr);

/// The same with `function` (kernel's, already loaded in the driver's
/// context): no module load or unload, so nothing here waits for work on
/// other streams; the buffers are allocated and freed stream-ordered, and
/// only `stream` is waited for.
bool runConversion(Driver &driver, Function function,
                   const ConversionKernel &kernel, const void *source,
                   void *dest, std::string &error, Stream stream);

} // namespace microscale::cuda

#endif
