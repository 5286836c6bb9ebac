//===- ConversionKernel.cpp - Run a compiled layout conversion ------------===//
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include <vector>

using namespace microscale::cuda;

void microscale::cuda::launchConversion(Driver &driver, Function function,
                                        const ConversionKernel &kernel,
                                        DevicePtr source, DevicePtr dest,
                                        Stream stream) {
  if (kernel.destBytes == 0 || kernel.grid == 0)
    return;
  int64_t begin = 0, end = kernel.units;
  std::vector<void *> args = {&source, &dest};
  if (kernel.takesUnitRange) {
    args.push_back(&begin);
    args.push_back(&end);
  }
  driver.launch(function, kernel.grid, kernel.block, args, stream);
}

bool microscale::cuda::runConversion(Driver &driver, Function function,
                                     const ConversionKernel &kernel,
                                     const void *source, void *dest,
                                     std::string &error, Stream stream) {
  if (kernel.destBytes == 0)
    return true;
  DevicePtr in = driver.allocate(kernel.sourceBytes, stream);
  DevicePtr out = driver.allocate(kernel.destBytes, stream);
  if (in && out) {
    driver.copyToDevice(in, source, kernel.sourceBytes, stream);
    launchConversion(driver, function, kernel, in, out, stream);
    driver.copyToHost(dest, out, kernel.destBytes, stream);
  }
  if (in)
    driver.free(in, stream);
  if (out)
    driver.free(out, stream);
  driver.synchronize(stream);
  if (!driver.ok()) {
    error = driver.getError();
    return false;
  }
  return true;
}

bool microscale::cuda::runConversion(Driver &driver,
                                     const ConversionKernel &kernel,
                                     const void *source, void *dest,
                                     std::string &error, Stream stream) {
  if (kernel.destBytes == 0)
    return true;
  if (!driver.ok()) {
    error = driver.getError();
    return false;
  }
  Module module = driver.loadModule(kernel.image);
  Function function = module ? driver.getFunction(module, kernel.name) : nullptr;
  if (function)
    runConversion(driver, function, kernel, source, dest, error, stream);
  if (module)
    driver.unloadModule(module);
  if (!driver.ok()) {
    error = driver.getError();
    return false;
  }
  return true;
}
