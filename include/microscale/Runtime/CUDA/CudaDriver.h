//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// A small, MLIR-free runtime that runs our PTX: it dlopen()s libcuda.so.1 at
// run time (so builds without CUDA work and fail only when used), loads PTX
// modules and launches their kernels on a given stream (0: the caller's
// current, legacy default stream). It is plain C++17 so that it builds on the
// GPU machine, where there is no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_RUNTIME_CUDA_CUDADRIVER_H
#define MICROSCALE_RUNTIME_CUDA_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace microscale::cuda {

using DevicePtr = unsigned long long; // CUdeviceptr
using Stream = void *;                // CUstream
using Function = void *;              // CUfunction
using Module = void *;                // CUmodule
using Event = void *;                 // CUevent

/// The driver, loaded once. Every call checks its result; on failure the
/// object records a message naming the call and the CUDA error, and
/// ok() turns false.
class Driver {
public:
  /// Loads libcuda.so.1 and initializes device `ordinal` (primary context).
  explicit Driver(int ordinal = 0);
  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  bool ok() const { return error.empty(); }
  const std::string &getError() const { return error; }

  /// Loads a module from PTX text or a cubin image.
  Module loadModule(const std::string &image);
  Function getFunction(Module module, const std::string &name);
  void unloadModule(Module module);
  DevicePtr allocate(size_t bytes);
  void free(DevicePtr ptr);
  void copyToDevice(DevicePtr dst, const void *src, size_t bytes);
  void copyToHost(void *dst, DevicePtr src, size_t bytes);
  void copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream);
  void memset(DevicePtr dst, uint8_t value, size_t bytes);
  void launch(Function function, unsigned gridX, unsigned blockX,
              std::vector<void *> &args, Stream stream);
  /// A two-dimensional grid (gridX x gridY blocks of blockX threads).
  void launch(Function function, unsigned gridX, unsigned gridY,
              unsigned blockX, std::vector<void *> &args, Stream stream);
  /// A three-dimensional grid (gridX x gridY x gridZ blocks).
  void launch(Function function, unsigned gridX, unsigned gridY,
              unsigned gridZ, unsigned blockX, std::vector<void *> &args,
              Stream stream);
  void synchronize();
  Event createEvent();
  void record(Event event, Stream stream);
  float elapsedMs(Event start, Event end);
  void destroyEvent(Event event);
  /// Free and total device memory, in bytes.
  void memoryInfo(size_t &free, size_t &total);

private:
  bool check(int result, const char *call);
  void *library = nullptr;
  void *context = nullptr;
  int device = 0;
  std::string error;
  struct Api;
  Api *api = nullptr;
};

} // namespace microscale::cuda

#endif
