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
};

template <typename T> static bool bind(void *library, T &slot, const char *name) {
  slot = reinterpret_cast<T>(dlsym(library, name));
  return slot != nullptr;
}

Driver::Driver(int ordinal) {
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
      bind(library, api->cuGetErrorName, "cuGetErrorName");
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

Module Driver::loadModule(const std::string &image) {
  Module module = nullptr;
  if (ok())
    check(api->cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  return module;
}

Function Driver::getFunction(Module module, const std::string &name) {
  Function function = nullptr;
  if (ok())
    check(api->cuModuleGetFunction(&function, module, name.c_str()),
          "cuModuleGetFunction");
  return function;
}

void Driver::unloadModule(Module module) {
  if (ok() && module)
    check(api->cuModuleUnload(module), "cuModuleUnload");
}

DevicePtr Driver::allocate(size_t bytes) {
  DevicePtr ptr = 0;
  if (ok())
    check(api->cuMemAlloc(&ptr, bytes ? bytes : 1), "cuMemAlloc");
  return ptr;
}

void Driver::free(DevicePtr ptr) {
  if (ok() && ptr)
    check(api->cuMemFree(ptr), "cuMemFree");
}

void Driver::copyToDevice(DevicePtr dst, const void *src, size_t bytes) {
  if (ok() && bytes)
    check(api->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

void Driver::copyToHost(void *dst, DevicePtr src, size_t bytes) {
  if (ok() && bytes)
    check(api->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

void Driver::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                          Stream stream) {
  if (ok() && bytes)
    check(api->cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
}

void Driver::memset(DevicePtr dst, uint8_t value, size_t bytes) {
  if (ok() && bytes)
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
  if (ok() && gridX && gridY && gridZ)
    check(api->cuLaunchKernel(function, gridX, gridY, gridZ, blockX, 1, 1, 0,
                              stream, args.data(), nullptr),
          "cuLaunchKernel");
}

void Driver::synchronize() {
  if (ok())
    check(api->cuCtxSynchronize(), "cuCtxSynchronize");
}

Event Driver::createEvent() {
  Event event = nullptr;
  if (ok())
    check(api->cuEventCreate(&event, 0), "cuEventCreate");
  return event;
}

void Driver::record(Event event, Stream stream) {
  if (ok())
    check(api->cuEventRecord(event, stream), "cuEventRecord");
}

float Driver::elapsedMs(Event start, Event end) {
  float ms = 0;
  if (ok() && check(api->cuEventSynchronize(end), "cuEventSynchronize"))
    check(api->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

void Driver::destroyEvent(Event event) {
  if (ok() && event)
    check(api->cuEventDestroy(event), "cuEventDestroy");
}

void Driver::memoryInfo(size_t &freeBytes, size_t &totalBytes) {
  freeBytes = totalBytes = 0;
  if (ok())
    check(api->cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}
