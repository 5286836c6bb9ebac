//===- gpu-convert-bench.cpp - Generated GPU conversions on the device ----===//
//
// Runs the kernels that bench/gpu/make_kernels.py generated with our compiler
// (PTX; the GPU machine has no MLIR), through the MLIR-free CUDA runtime:
//  * checks every "check" case byte for byte against the C++ reference on
//    random codes, with the destination poisoned first (padding must be
//    written as zeros);
//  * times every case against a device-to-device copy of the destination's
//    bytes in the same run (CUDA events, median of 50 after warm-up), and
//    reports device memory allocated by the conversion and the first call's
//    latency (module load + first launch).
//
//   g++ -O2 -std=c++17 -Iinclude bench/gpu/gpu-convert-bench.cpp
//       lib/Reference/*.cpp lib/Runtime/CUDA/CudaDriver.cpp -ldl -o bench
//   ./bench bench/gpu/kernels
// (bench/gpu/run-on-h200.sh does both.)
//
//===----------------------------------------------------------------------===//
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include "BenchSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace microscale;
using bench::makeLayout;
using bench::split;

int main(int argc, char **argv) {
  const std::string dir = argc > 1 ? argv[1] : "bench/gpu/kernels";
  auto processStart = std::chrono::steady_clock::now();
  cuda::Driver driver;
  if (!driver.ok()) {
    std::printf("SKIP: %s\n", driver.getError().c_str());
    return 0;
  }
  std::ifstream manifest(dir + "/manifest.txt");
  std::string line;
  int failures = 0, checked = 0;
  bool firstCall = true;
  std::printf("| case | from -> to | shape | bits | kernel | units/thread | traversal | dest MiB | "
              "ours ms | copy ms | ours/copy | alloc MiB | check |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::mt19937 rng(12345);
  while (std::getline(manifest, line)) {
    auto f = split(line, '|');
    if (f.size() != 13)
      continue;
    // The block size and the kind of kernel, as the compiler chose them.
    const unsigned block = static_cast<unsigned>(std::stoul(f[11]));
    const std::string &kind = f[12];
    const int64_t perThread = std::stoll(f[8]);
    const std::string &traversal = f[9];
    const unsigned compilerGrid = static_cast<unsigned>(std::stoul(f[10]));
    const std::string &name = f[0], &from = f[5], &to = f[6];
    const unsigned bits = std::stoi(f[3]);
    std::vector<int64_t> shape;
    for (auto &d : split(f[4], ','))
      shape.push_back(std::stoll(d));
    const bool check = f[7] == "1";
    std::string error;
    auto refFrom = makeLayout(from, shape, bits, &error);
    auto refTo = makeLayout(to, shape, bits, &error);
    if (!refFrom || !refTo) {
      std::printf("%s: %s\n", name.c_str(), error.c_str());
      return 1;
    }
    const size_t srcBytes = refFrom->getStorageBytes();
    const size_t dstBytes = refTo->getStorageBytes();
    const int64_t unitBytes = to.rfind("hopper_value", 0) == 0 ? 4 : 1;
    const int64_t units = dstBytes / unitBytes;

    std::vector<uint8_t> source(srcBytes), expected;
    if (check) {
      std::vector<uint8_t> codes(refFrom->getNumElements());
      for (auto &c : codes)
        c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
      refFrom->store(codes.data(), source.data());
      expected.resize(dstBytes);
      refTo->store(codes.data(), expected.data());
    } else {
      for (auto &b : source)
        b = static_cast<uint8_t>(rng());
    }

    auto loadStart = std::chrono::steady_clock::now();
    // PTX text or a cubin: the driver takes either.
    cuda::Module module = driver.loadModule(bench::readFile(dir + "/" + f[1]));
    cuda::Function kernel = driver.getFunction(module, f[2]);
    cuda::DevicePtr src = driver.allocate(srcBytes), dst = driver.allocate(dstBytes);
    cuda::DevicePtr copyDst = driver.allocate(dstBytes);
    driver.copyToDevice(src, source.data(), srcBytes);
    driver.memset(dst, 0xA5, dstBytes); // poison: every byte must be written
    driver.synchronize();

    // The kernel's parameters (bare-pointer convention): the two buffers and
    // the unit range.
    int64_t begin = 0, end = units;
    std::vector<void *> args = {&src, &dst, &begin, &end};
    const int64_t perBlock = block * perThread;
    // The grid the compiler chose for the launch (0 when it is computed at
    // run time: then one thread per perThread units).
    const unsigned grid = compilerGrid
                              ? compilerGrid
                              : static_cast<unsigned>((units + perBlock - 1) / perBlock);
    size_t freeBefore, freeAfter, total;
    driver.memoryInfo(freeBefore, total);
    auto launchStart = std::chrono::steady_clock::now();
    driver.launch(kernel, grid, block, args, nullptr);
    driver.synchronize();
    double firstCallMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                  loadStart).count();
    (void)launchStart;
    driver.memoryInfo(freeAfter, total);
    std::string verdict = "-";
    if (check) {
      std::vector<uint8_t> actual(dstBytes);
      driver.copyToHost(actual.data(), dst, dstBytes);
      size_t bad = 0;
      for (size_t i = 0; i < dstBytes; ++i)
        bad += actual[i] != expected[i];
      verdict = bad ? "FAIL " + std::to_string(bad) + " bytes" : "exact";
      failures += bad != 0;
      ++checked;
    }
    // Timing: warm-up, then the median of 50 launches and 50 copies.
    auto median = [&](auto fn) { return bench::medianMs(driver, fn, 5, 50); };
    float ours = median([&] { driver.launch(kernel, grid, block, args, nullptr); });
    float copy = median([&] { driver.copyOnDevice(copyDst, src, std::min(srcBytes, dstBytes), nullptr); });
    std::string shapeText;
    for (int64_t d : shape)
      shapeText += (shapeText.empty() ? "" : "x") + std::to_string(d);
    std::printf("| %s | %s -> %s | %s | %u | %s | %lld | %s | %.2f | %.4f | %.4f | %.2f | %.1f | %s |\n",
                name.c_str(), from.c_str(), to.c_str(), shapeText.c_str(), bits,
                kind.c_str(), (long long)perThread, traversal.c_str(),
                dstBytes / 1048576.0, ours, copy, copy > 0 ? ours / copy : 0.0,
                (double(freeBefore) - double(freeAfter)) / 1048576.0,
                verdict.c_str());
    if (firstCall) {
      double sinceStart = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - processStart)
                              .count();
      std::printf("first call: %.2f ms (module load + launch + sync), %.1f ms "
                  "since process start (driver init included)\n",
                  firstCallMs, sinceStart);
      firstCall = false;
    }
    driver.free(src);
    driver.free(dst);
    driver.free(copyDst);
    driver.unloadModule(module);
    if (!driver.ok()) {
      std::printf("CUDA error: %s\n", driver.getError().c_str());
      return 1;
    }
  }
  std::printf("%d checked cases, %d failed\n", checked, failures);
  return failures ? 1 : 0;
}
