//===- BenchSupport.h - Shared pieces of the GPU benchmarks ------*- C++ -*-===//
#ifndef MICROSCALE_BENCH_GPU_BENCHSUPPORT_H
#define MICROSCALE_BENCH_GPU_BENCHSUPPORT_H

#include "microscale/Runtime/CUDA/CudaDriver.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace microscale::bench {

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

/// The median time of `fn` in ms over `runs` runs after `warmups`, measured
/// with CUDA events on the default stream.
template <typename Fn>
float medianMs(cuda::Driver &driver, Fn fn, int warmups = 5, int runs = 50) {
  std::vector<float> times;
  for (int i = 0; i < warmups; ++i)
    fn();
  cuda::Event a = driver.createEvent(), b = driver.createEvent();
  for (int i = 0; i < runs; ++i) {
    driver.record(a, nullptr);
    fn();
    driver.record(b, nullptr);
    times.push_back(driver.elapsedMs(a, b));
  }
  driver.destroyEvent(a);
  driver.destroyEvent(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace microscale::bench

#endif
