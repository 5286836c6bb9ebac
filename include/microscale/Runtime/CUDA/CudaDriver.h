//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// A small, MLIR-free runtime that runs our PTX: it dlopen()s libcuda.so.1 at
// run time (so builds without CUDA work and fail only when used), loads PTX
// modules and launches their kernels on a given stream (0: the context's
// legacy default stream). Every call that queues work on the device (copies,
// memsets, launches, events, stream-ordered allocation) takes the stream it
// goes on; the calls without one (copyToDevice/copyToHost/memset without a
// stream, synchronize()) are the legacy default stream's synchronous forms.
// Each call makes the driver's context current first, so that drivers of
// several devices can be used from one thread. It is plain C++17 so that it
// builds on the GPU machine, where there is no MLIR.
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
  /// The device ordinal this driver runs on.
  int getOrdinal() const { return ordinal; }
  /// The number of CUDA devices, found without creating a context on any
  /// (-1 and `error` set when there is no usable driver).
  static int countDevices(std::string *error = nullptr);
  /// The device of the current context (cuCtxGetDevice): this driver's,
  /// after any call of it.
  int currentDevice();
  /// The ordinal of the device that holds `ptr` (cuPointerGetAttribute).
  int deviceOf(DevicePtr ptr);
  /// Whether device `ordinal`'s primary context is active in this process
  /// (cuDevicePrimaryCtxGetState); creates nothing.
  bool primaryContextActive(int ordinal);

  /// Loads a module from PTX text or a cubin image. The driver's module load
  /// and unload wait for the work of every stream of the device (measured on
  /// the H200: docs/reliability.md): load before queueing work that must not
  /// be waited for.
  Module loadModule(const std::string &image);
  Function getFunction(Module module, const std::string &name);
  void unloadModule(Module module);
  DevicePtr allocate(size_t bytes);
  void free(DevicePtr ptr);
  void copyToDevice(DevicePtr dst, const void *src, size_t bytes);
  void copyToHost(void *dst, DevicePtr src, size_t bytes);
  void copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream);
  void memset(DevicePtr dst, uint8_t value, size_t bytes);
  /// Stream-ordered forms: queued on `stream`, ordered after the work
  /// already queued there. With pageable host memory the copies may return
  /// only when done (the driver's rules), still in the stream's order.
  void copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                    Stream stream);
  void copyToHost(void *dst, DevicePtr src, size_t bytes, Stream stream);
  void memset(DevicePtr dst, uint8_t value, size_t bytes, Stream stream);
  /// Stream-ordered allocation (cuMemAllocAsync / cuMemFreeAsync); where the
  /// driver lacks them, a plain allocation, and a free after the stream's
  /// work.
  DevicePtr allocate(size_t bytes, Stream stream);
  void free(DevicePtr ptr, Stream stream);
  /// Page-locked host memory (cuMemAllocHost), for copies that return at
  /// once.
  void *allocateHost(size_t bytes);
  void freeHost(void *ptr);
  void launch(Function function, unsigned gridX, unsigned blockX,
              std::vector<void *> &args, Stream stream);
  /// A two-dimensional grid (gridX x gridY blocks of blockX threads).
  void launch(Function function, unsigned gridX, unsigned gridY,
              unsigned blockX, std::vector<void *> &args, Stream stream);
  /// A three-dimensional grid (gridX x gridY x gridZ blocks).
  void launch(Function function, unsigned gridX, unsigned gridY,
              unsigned gridZ, unsigned blockX, std::vector<void *> &args,
              Stream stream);
  /// A launch with `sharedBytes` of dynamic shared memory (above the 48 KiB
  /// a kernel gets without asking, the function's limit is raised first).
  /// `overlapPrevious`: a programmatic dependent launch (cuLaunchKernelEx,
  /// CUDA 12): the kernel's launch overlaps the end of the stream's previous
  /// kernel (its blocks may start before that kernel's memory is flushed,
  /// or earlier where it triggers its dependents), so the kernel must wait
  /// (griddepcontrol.wait) before it reads what that kernel writes. The
  /// Hopper matmul kernels do, and read only their weight and scales before
  /// the wait: take it where no earlier kernel in the stream writes those.
  void launch(Function function, unsigned gridX, unsigned gridY, unsigned gridZ,
              unsigned blockX, unsigned sharedBytes, std::vector<void *> &args,
              Stream stream, bool overlapPrevious = false);
  /// The 128-byte CUtensorMap of a row-major bf16 matrix (`rows` x
  /// `columns`, rows `pitchBytes` apart) at `address`, for boxes of
  /// `boxRows` x `boxColumns` elements in the 128-byte swizzle, zeros out
  /// of bounds, 256-byte L2 promotion (cuTensorMapEncodeTiled, driver 12.0
  /// and newer); false, with the error set, where the driver refuses it.
  bool encodeSwizzled128TensorMap(void *map, DevicePtr address,
                                  uint64_t rows, uint64_t columns,
                                  uint64_t pitchBytes, uint32_t boxRows,
                                  uint32_t boxColumns);
  /// Waits for all work of the context, every stream.
  void synchronize();
  /// A stream of this driver's context; non-blocking by default (it does
  /// not wait for the legacy default stream, nor that for it).
  Stream createStream(bool nonBlocking = true);
  void destroyStream(Stream stream);
  /// Waits for the work queued on `stream`.
  void synchronize(Stream stream);
  /// Whether all work queued on `stream` is done (cuStreamQuery), without
  /// waiting.
  bool streamDone(Stream stream);
  Event createEvent();
  void record(Event event, Stream stream);
  /// Work queued on `stream` after this waits for `event` (cuStreamWaitEvent).
  void wait(Stream stream, Event event);
  /// Whether `event`'s work is done (cuEventQuery), without waiting.
  bool eventDone(Event event);
  float elapsedMs(Event start, Event end);
  void destroyEvent(Event event);
  /// Free and total device memory, in bytes.
  void memoryInfo(size_t &free, size_t &total);

private:
  bool check(int result, const char *call);
  /// ok(), with this driver's context made current.
  bool enter();
  void *library = nullptr;
  void *context = nullptr;
  int device = 0;
  int ordinal = 0;
  std::string error;
  struct Api;
  Api *api = nullptr;
};

} // namespace microscale::cuda

#endif
