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

bool microscale::cuda::runConversion(Driver &driver,
                                     const ConversionKernel &kernel,
                                     const void *source, void *dest,
                                     std::string &error) {
  if (kernel.destBytes == 0)
    return true;
  if (!driver.ok()) {
    error = driver.getError();
    return false;
  }
  Module module = driver.loadModule(kernel.image);
  Function function = module ? driver.getFunction(module, kernel.name) : nullptr;
  DevicePtr in = 0, out = 0;
  if (function) {
    in = driver.allocate(kernel.sourceBytes);
    out = driver.allocate(kernel.destBytes);
  }
  if (in && out) {
    driver.copyToDevice(in, source, kernel.sourceBytes);
    launchConversion(driver, function, kernel, in, out, nullptr);
    driver.synchronize();
    driver.copyToHost(dest, out, kernel.destBytes);
  }
  if (in)
    driver.free(in);
  if (out)
    driver.free(out);
  if (module)
    driver.unloadModule(module);
  if (!driver.ok()) {
    error = driver.getError();
    return false;
  }
  return true;
}
