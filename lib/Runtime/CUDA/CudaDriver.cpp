//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include <dlfcn.h>

using namespace microscale::cuda;

/// The driver entry points we use, with their C signatures (CUresult = int).
struct Driver::Api {
  int (*cuInit)(unsigned);
  int (*cuDeviceGet)(int *, int);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuDevicePrimaryCtxRelease)(int);
  int (*cuCtxSetCurrent)(void *);
  int (*cuCtxSynchronize)();
  int (*cuModuleLoadData)(Module *, const void *);
  int (*cuModuleUnload)(Module);
  int (*cuModuleGetFunction)(Function *, Module, const char *);
  int (*cuMemAlloc)(DevicePtr *, size_t);
  int (*cuMemFree)(DevicePtr);
  int (*cuMemcpyHtoD)(DevicePtr, const void *, size_t);
  int (*cuMemcpyDtoH)(void *, DevicePtr, size_t);
  int (*cuMemcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream);
  int (*cuMemsetD8)(DevicePtr, unsigned char, size_t);
  int (*cuLaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, Stream, void **,
                        void **);
  int (*cuEventCreate)(Event *, unsigned);
  int (*cuEventRecord)(Event, Stream);
  int (*cuEventSynchronize)(Event);
  int (*cuEventElapsedTime)(float *, Event, Event);
  int (*cuEventDestroy)(Event);
  int (*cuMemGetInfo)(size_t *, size_t *);
  int (*cuGetErrorName)(int, const char **);
  int (*cuCtxGetCurrent)(void **);
  int (*cuCtxGetDevice)(int *);
  int (*cuDeviceGetCount)(int *);
  int (*cuDevicePrimaryCtxGetState)(int, unsigned *, int *);
  int (*cuPointerGetAttribute)(void *, int, DevicePtr);
  int (*cuStreamCreate)(Stream *, unsigned);
  int (*cuStreamDestroy)(Stream);
  int (*cuStreamSynchronize)(Stream);
  int (*cuStreamQuery)(Stream);
  int (*cuStreamWaitEvent)(Stream, Event, unsigned);
  int (*cuEventQuery)(Event);
  int (*cuMemcpyHtoDAsync)(DevicePtr, const void *, size_t, Stream);
  int (*cuMemcpyDtoHAsync)(void *, DevicePtr, size_t, Stream);
  int (*cuMemsetD8Async)(DevicePtr, unsigned char, size_t, Stream);
  int (*cuMemAllocHost)(void **, size_t);
  int (*cuMemFreeHost)(void *);
  // Optional (CUDA 11.2 and newer): stream-ordered allocation.
  int (*cuMemAllocAsync)(DevicePtr *, size_t, Stream) = nullptr;
  int (*cuMemFreeAsync)(DevicePtr, Stream) = nullptr;
  // Optional: dynamic shared memory above 48 KiB, tensor maps (CUDA 12).
  int (*cuFuncSetAttribute)(Function, int, int) = nullptr;
  /// Optional (CUDA 12): launches with attributes; `config` is a
  /// LaunchConfig.
  int (*cuLaunchKernelEx)(const void *config, Function, void **,
                          void **) = nullptr;
  int (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *,
                                const uint64_t *, const uint64_t *,
                                const uint32_t *, const uint32_t *, int, int,
                                int, int) = nullptr;
};

// CUresult values and attributes we test for.
static constexpr int kNotReady = 600;               // CUDA_ERROR_NOT_READY
static constexpr int kPointerDeviceOrdinal = 9;     // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
static constexpr unsigned kStreamNonBlocking = 1;   // CU_STREAM_NON_BLOCKING

template <typename T> static bool bind(void *library, T &slot, const char *name) {
  slot = reinterpret_cast<T>(dlsym(library, name));
  return slot != nullptr;
}

Driver::Driver(int ordinal) : ordinal(ordinal) {
  library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    error = "cannot load the CUDA driver (libcuda.so.1): no NVIDIA GPU "
            "driver on this machine";
    return;
  }
  api = new Api();
  bool bound =
      bind(library, api->cuInit, "cuInit") &&
      bind(library, api->cuDeviceGet, "cuDeviceGet") &&
      bind(library, api->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
      bind(library, api->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") &&
      bind(library, api->cuCtxSetCurrent, "cuCtxSetCurrent") &&
      bind(library, api->cuCtxSynchronize, "cuCtxSynchronize") &&
      bind(library, api->cuModuleLoadData, "cuModuleLoadData") &&
      bind(library, api->cuModuleUnload, "cuModuleUnload") &&
      bind(library, api->cuModuleGetFunction, "cuModuleGetFunction") &&
      bind(library, api->cuMemAlloc, "cuMemAlloc_v2") &&
      bind(library, api->cuMemFree, "cuMemFree_v2") &&
      bind(library, api->cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
      bind(library, api->cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
      bind(library, api->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") &&
      bind(library, api->cuMemsetD8, "cuMemsetD8_v2") &&
      bind(library, api->cuLaunchKernel, "cuLaunchKernel") &&
      bind(library, api->cuEventCreate, "cuEventCreate") &&
      bind(library, api->cuEventRecord, "cuEventRecord") &&
      bind(library, api->cuEventSynchronize, "cuEventSynchronize") &&
      bind(library, api->cuEventElapsedTime, "cuEventElapsedTime_v2") &&
      bind(library, api->cuEventDestroy, "cuEventDestroy_v2") &&
      bind(library, api->cuMemGetInfo, "cuMemGetInfo_v2") &&
      bind(library, api->cuGetErrorName, "cuGetErrorName") &&
      bind(library, api->cuCtxGetCurrent, "cuCtxGetCurrent") &&
      bind(library, api->cuCtxGetDevice, "cuCtxGetDevice") &&
      bind(library, api->cuDeviceGetCount, "cuDeviceGetCount") &&
      bind(library, api->cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState") &&
      bind(library, api->cuPointerGetAttribute, "cuPointerGetAttribute") &&
      bind(library, api->cuStreamCreate, "cuStreamCreate") &&
      bind(library, api->cuStreamDestroy, "cuStreamDestroy_v2") &&
      bind(library, api->cuStreamSynchronize, "cuStreamSynchronize") &&
      bind(library, api->cuStreamQuery, "cuStreamQuery") &&
      bind(library, api->cuStreamWaitEvent, "cuStreamWaitEvent") &&
      bind(library, api->cuEventQuery, "cuEventQuery") &&
      bind(library, api->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") &&
      bind(library, api->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2") &&
      bind(library, api->cuMemsetD8Async, "cuMemsetD8Async") &&
      bind(library, api->cuMemAllocHost, "cuMemAllocHost_v2") &&
      bind(library, api->cuMemFreeHost, "cuMemFreeHost");
  if (bound) {
    bind(library, api->cuMemAllocAsync, "cuMemAllocAsync");
    bind(library, api->cuMemFreeAsync, "cuMemFreeAsync");
    bind(library, api->cuFuncSetAttribute, "cuFuncSetAttribute");
    bind(library, api->cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    bind(library, api->cuLaunchKernelEx, "cuLaunchKernelEx");
  }
  if (!bound) {
    error = std::string("the CUDA driver lacks an entry point: ") + dlerror();
    return;
  }
  if (check(api->cuInit(0), "cuInit") &&
      check(api->cuDeviceGet(&device, ordinal), "cuDeviceGet") &&
      check(api->cuDevicePrimaryCtxRetain(&context, device),
            "cuDevicePrimaryCtxRetain"))
    check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Driver::~Driver() {
  if (api && context)
    api->cuDevicePrimaryCtxRelease(device);
  delete api;
  if (library)
    dlclose(library);
}

bool Driver::check(int result, const char *call) {
  if (result == 0)
    return true;
  const char *name = "unknown error";
  if (api && api->cuGetErrorName)
    api->cuGetErrorName(result, &name);
  if (error.empty())
    error = std::string(call) + " failed: " + name + " (" +
            std::to_string(result) + ")";
  return false;
}

bool Driver::enter() {
  if (!ok())
    return false;
  void *current = nullptr;
  if (!check(api->cuCtxGetCurrent(&current), "cuCtxGetCurrent"))
    return false;
  return current == context ||
         check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Module Driver::loadModule(const std::string &image) {
  Module module = nullptr;
  if (enter())
    check(api->cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  return module;
}

Function Driver::getFunction(Module module, const std::string &name) {
  Function function = nullptr;
  if (enter())
    check(api->cuModuleGetFunction(&function, module, name.c_str()),
          "cuModuleGetFunction");
  return function;
}

void Driver::unloadModule(Module module) {
  if (enter() && module)
    check(api->cuModuleUnload(module), "cuModuleUnload");
}

DevicePtr Driver::allocate(size_t bytes) {
  DevicePtr ptr = 0;
  if (enter())
    check(api->cuMemAlloc(&ptr, bytes ? bytes : 1), "cuMemAlloc");
  return ptr;
}

void Driver::free(DevicePtr ptr) {
  if (enter() && ptr)
    check(api->cuMemFree(ptr), "cuMemFree");
}

void Driver::copyToDevice(DevicePtr dst, const void *src, size_t bytes) {
  if (enter() && bytes)
    check(api->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

void Driver::copyToHost(void *dst, DevicePtr src, size_t bytes) {
  if (enter() && bytes)
    check(api->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

void Driver::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                          Stream stream) {
  if (enter() && bytes)
    check(api->cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
}

void Driver::memset(DevicePtr dst, uint8_t value, size_t bytes) {
  if (enter() && bytes)
    check(api->cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}

void Driver::launch(Function function, unsigned gridX, unsigned blockX,
                    std::vector<void *> &args, Stream stream) {
  launch(function, gridX, 1, blockX, args, stream);
}

void Driver::launch(Function function, unsigned gridX, unsigned gridY,
                    unsigned blockX, std::vector<void *> &args,
                    Stream stream) {
  launch(function, gridX, gridY, 1, blockX, args, stream);
}

void Driver::launch(Function function, unsigned gridX, unsigned gridY,
                    unsigned gridZ, unsigned blockX,
                    std::vector<void *> &args, Stream stream) {
  launch(function, gridX, gridY, gridZ, blockX, /*sharedBytes=*/0, args,
         stream);
}

namespace {
/// CUlaunchAttribute and CUlaunchConfig (cuda.h, CUDA 12), as the driver
/// reads them.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int flag;
  } value;
};
struct LaunchConfig {
  unsigned gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes;
  Stream stream;
  LaunchAttribute *attributes;
  unsigned attributeCount;
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute's layout");
} // namespace

void Driver::launch(Function function, unsigned gridX, unsigned gridY,
                    unsigned gridZ, unsigned blockX, unsigned sharedBytes,
                    std::vector<void *> &args, Stream stream,
                    bool overlapPrevious) {
  if (!enter() || !gridX || !gridY || !gridZ)
    return;
  constexpr int kMaxDynamicSharedSizeBytes = 8; // CU_FUNC_ATTRIBUTE_...
  if (sharedBytes > 48 * 1024) {
    if (!api->cuFuncSetAttribute) {
      error = "the CUDA driver lacks cuFuncSetAttribute";
      return;
    }
    if (!check(api->cuFuncSetAttribute(function, kMaxDynamicSharedSizeBytes,
                                       static_cast<int>(sharedBytes)),
               "cuFuncSetAttribute"))
      return;
  }
  if (overlapPrevious) {
    if (!api->cuLaunchKernelEx) {
      error = "the CUDA driver lacks cuLaunchKernelEx (CUDA 12): no "
              "programmatic dependent launch";
      return;
    }
    constexpr int kProgrammaticStreamSerialization = 6; // CU_LAUNCH_ATTRIBUTE_
    LaunchAttribute attribute{};
    attribute.id = kProgrammaticStreamSerialization;
    attribute.value.flag = 1;
    LaunchConfig config{gridX, gridY,       gridZ,  blockX,     1,
                        1,     sharedBytes, stream, &attribute, 1};
    check(api->cuLaunchKernelEx(&config, function, args.data(), nullptr),
          "cuLaunchKernelEx");
    return;
  }
  check(api->cuLaunchKernel(function, gridX, gridY, gridZ, blockX, 1, 1,
                            sharedBytes, stream, args.data(), nullptr),
        "cuLaunchKernel");
}

bool Driver::encodeSwizzled128TensorMap(void *map, DevicePtr address,
                                        uint64_t rows, uint64_t columns,
                                        uint64_t pitchBytes, uint32_t boxRows,
                                        uint32_t boxColumns) {
  if (!enter())
    return false;
  if (!api->cuTensorMapEncodeTiled) {
    error = "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12)";
    return false;
  }
  // CUtensorMap enums: BFLOAT16 = 9, INTERLEAVE_NONE = 0, SWIZZLE_128B = 3,
  // L2_PROMOTION_L2_256B = 3, FLOAT_OOB_FILL_NONE = 0 (zeros).
  const uint64_t dims[2] = {columns, rows};
  const uint64_t strides[1] = {pitchBytes};
  const uint32_t box[2] = {boxColumns, boxRows};
  const uint32_t elementStrides[2] = {1, 1};
  return check(api->cuTensorMapEncodeTiled(
                   map, 9, 2, reinterpret_cast<void *>(address), dims,
                   strides, box, elementStrides, 0, 3, 3, 0),
               "cuTensorMapEncodeTiled");
}

void Driver::synchronize() {
  if (enter())
    check(api->cuCtxSynchronize(), "cuCtxSynchronize");
}

Event Driver::createEvent() {
  Event event = nullptr;
  if (enter())
    check(api->cuEventCreate(&event, 0), "cuEventCreate");
  return event;
}

void Driver::record(Event event, Stream stream) {
  if (enter())
    check(api->cuEventRecord(event, stream), "cuEventRecord");
}

float Driver::elapsedMs(Event start, Event end) {
  float ms = 0;
  if (enter() && check(api->cuEventSynchronize(end), "cuEventSynchronize"))
    check(api->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

void Driver::destroyEvent(Event event) {
  if (enter() && event)
    check(api->cuEventDestroy(event), "cuEventDestroy");
}

void Driver::memoryInfo(size_t &freeBytes, size_t &totalBytes) {
  freeBytes = totalBytes = 0;
  if (enter())
    check(api->cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}

int Driver::countDevices(std::string *error) {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    if (error)
      *error = "cannot load the CUDA driver (libcuda.so.1): no NVIDIA GPU "
               "driver on this machine";
    return -1;
  }
  int (*init)(unsigned) = nullptr;
  int (*getCount)(int *) = nullptr;
  int count = -1;
  if (bind(handle, init, "cuInit") && bind(handle, getCount, "cuDeviceGetCount") &&
      init(0) == 0 && getCount(&count) != 0)
    count = -1;
  if (count < 0 && error)
    *error = "cuInit or cuDeviceGetCount failed";
  dlclose(handle);
  return count;
}

int Driver::currentDevice() {
  int current = -1;
  if (enter())
    check(api->cuCtxGetDevice(&current), "cuCtxGetDevice");
  return current;
}

int Driver::deviceOf(DevicePtr ptr) {
  int owner = -1;
  if (enter())
    check(api->cuPointerGetAttribute(&owner, kPointerDeviceOrdinal, ptr),
          "cuPointerGetAttribute");
  return owner;
}

bool Driver::primaryContextActive(int other) {
  int handle = 0, active = 0;
  unsigned flags = 0;
  if (ok() && check(api->cuDeviceGet(&handle, other), "cuDeviceGet"))
    check(api->cuDevicePrimaryCtxGetState(handle, &flags, &active),
          "cuDevicePrimaryCtxGetState");
  return active != 0;
}

void Driver::copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                          Stream stream) {
  if (enter() && bytes)
    check(api->cuMemcpyHtoDAsync(dst, src, bytes, stream), "cuMemcpyHtoDAsync");
}

void Driver::copyToHost(void *dst, DevicePtr src, size_t bytes, Stream stream) {
  if (enter() && bytes)
    check(api->cuMemcpyDtoHAsync(dst, src, bytes, stream), "cuMemcpyDtoHAsync");
}

void Driver::memset(DevicePtr dst, uint8_t value, size_t bytes, Stream stream) {
  if (enter() && bytes)
    check(api->cuMemsetD8Async(dst, value, bytes, stream), "cuMemsetD8Async");
}

DevicePtr Driver::allocate(size_t bytes, Stream stream) {
  if (!api || !api->cuMemAllocAsync)
    return allocate(bytes);
  DevicePtr ptr = 0;
  if (enter())
    check(api->cuMemAllocAsync(&ptr, bytes ? bytes : 1, stream),
          "cuMemAllocAsync");
  return ptr;
}

void Driver::free(DevicePtr ptr, Stream stream) {
  if (!ptr)
    return;
  if (!api || !api->cuMemFreeAsync) {
    synchronize(stream);
    free(ptr);
    return;
  }
  if (enter())
    check(api->cuMemFreeAsync(ptr, stream), "cuMemFreeAsync");
}

void *Driver::allocateHost(size_t bytes) {
  void *ptr = nullptr;
  if (enter())
    check(api->cuMemAllocHost(&ptr, bytes ? bytes : 1), "cuMemAllocHost");
  return ptr;
}

void Driver::freeHost(void *ptr) {
  if (enter() && ptr)
    check(api->cuMemFreeHost(ptr), "cuMemFreeHost");
}

Stream Driver::createStream(bool nonBlocking) {
  Stream stream = nullptr;
  if (enter())
    check(api->cuStreamCreate(&stream, nonBlocking ? kStreamNonBlocking : 0),
          "cuStreamCreate");
  return stream;
}

void Driver::destroyStream(Stream stream) {
  if (enter() && stream)
    check(api->cuStreamDestroy(stream), "cuStreamDestroy");
}

void Driver::synchronize(Stream stream) {
  if (enter())
    check(api->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

bool Driver::streamDone(Stream stream) {
  if (!enter())
    return false;
  int result = api->cuStreamQuery(stream);
  return result == kNotReady ? false : check(result, "cuStreamQuery");
}

void Driver::wait(Stream stream, Event event) {
  if (enter())
    check(api->cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

bool Driver::eventDone(Event event) {
  if (!enter())
    return false;
  int result = api->cuEventQuery(event);
  return result == kNotReady ? false : check(result, "cuEventQuery");
}
