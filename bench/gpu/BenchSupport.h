//===- BenchSupport.h - Shared pieces of the GPU benchmarks ------*- C++ -*-===//
#ifndef MICROSCALE_BENCH_GPU_BENCHSUPPORT_H
#define MICROSCALE_BENCH_GPU_BENCHSUPPORT_H

#include "microscale/Reference/Layout.h"
#include "microscale/Reference/TritonLayouts.h"
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace microscale::bench {

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

inline std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, sep))
    parts.push_back(part);
  return parts;
}

/// A layout from its spec in the kernel manifests (make_kernels.py), e.g.
/// "hopper_value:-2:3", as the C++ reference's.
inline std::unique_ptr<ref::Layout> makeLayout(const std::string &spec,
                                               std::vector<int64_t> shape,
                                               unsigned bits,
                                               std::string *error) {
  auto p = split(spec, ':');
  const std::string &kind = p[0];
  if (kind == "strided")
    return ref::makeStridedLayout(shape, bits, std::stoll(p[1]), error);
  if (kind == "hopper_value")
    return ref::makeHopperValueLayout(shape, std::stoll(p[1]), std::stoi(p[2]), error);
  if (kind == "hopper_scale")
    return ref::makeHopperScaleLayout(shape, std::stoll(p[1]), std::stoi(p[2]), error);
  if (kind == "blackwell_value")
    return ref::makeBlackwellValueLayout(shape, error);
  if (kind == "blackwell_shuffled")
    return ref::makeBlackwellShuffledValueLayout(shape, std::stoll(p[1]),
                                                 std::stoll(p[2]), error);
  if (kind == "blackwell_scale")
    return ref::makeBlackwellScaleLayout(shape, error);
  if (kind == "cdna4_scale")
    return ref::makeCDNA4ScaleLayout(shape, error);
  *error = "unknown layout spec " + spec;
  return nullptr;
}

/// The median time of `fn` in ms over `runs` runs after `warmups`, measured
/// with CUDA events on `stream` (0: the legacy default stream), where `fn`
/// queues its work.
template <typename Fn>
float medianMs(cuda::Driver &driver, Fn fn, int warmups = 5, int runs = 50,
               cuda::Stream stream = nullptr) {
  std::vector<float> times;
  for (int i = 0; i < warmups; ++i)
    fn();
  cuda::Event a = driver.createEvent(), b = driver.createEvent();
  for (int i = 0; i < runs; ++i) {
    driver.record(a, stream);
    fn();
    driver.record(b, stream);
    times.push_back(driver.elapsedMs(a, b));
  }
  driver.destroyEvent(a);
  driver.destroyEvent(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace microscale::bench

#endif
