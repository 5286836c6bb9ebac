//===- dequant-bench.cpp - The generated Hopper dequantization on the GPU -===//
//
// Runs the dequantization kernels that make_dequant_kernels.sh generated
// (mxfp4 in Triton's Hopper value + scale layouts -> bf16, through seed 000's
// PTX decode) on the GPU, through the MLIR-free CUDA runtime:
//  * exhaustive checks: weights whose 65536 Hopper words hold every 16-bit
//    pattern in each half, with every E8M0 scale code, against the C++
//    reference (OCP edges) bit for bit; padded shapes on random data;
//  * timing on the [16, 4096, 4096] weight against the floor: bytes read +
//    written at the device-to-device copy bandwidth of the same run.
// The kernels and their launches are listed in the directory's manifest.txt.
//
//   g++ -O2 -std=c++17 -Iinclude bench/gpu/dequant-bench.cpp lib/Reference/*.cpp
//       lib/Runtime/CUDA/CudaDriver.cpp -ldl -o dequant-bench
//   ./dequant-bench bench/gpu/kernels-dq
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/MXFormat.h"
#include "microscale/Reference/TritonLayouts.h"
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include "BenchSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace microscale;

struct Case {
  std::string name, check;
  int64_t batch, rows, cols, mxAxis;
  unsigned grid, block;
};

static std::vector<Case> readManifest(const std::string &path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  Case c;
  while (in >> c.name >> c.batch >> c.rows >> c.cols >> c.mxAxis >> c.check >>
         c.grid >> c.block)
    cases.push_back(c);
  return cases;
}

int main(int argc, char **argv) {
  const std::string dir = argc > 1 ? argv[1] : "bench/gpu/kernels-dq";
  cuda::Driver driver;
  if (!driver.ok()) {
    std::printf("SKIP: %s\n", driver.getError().c_str());
    return 0;
  }
  // All the work on one non-blocking stream: copies, poisoning, launches,
  // timing events.
  cuda::Stream stream = driver.createStream();
  std::vector<Case> cases = readManifest(dir + "/manifest.txt");
  if (cases.empty()) {
    std::printf("no kernels in %s/manifest.txt\n", dir.c_str());
    return 1;
  }
  int failures = 0;
  for (const Case &c : cases) {
    const bool exhaustive = c.check == "exhaustive";
    std::vector<int64_t> shape = {c.batch, c.rows, c.cols};
    std::vector<int64_t> scaleShape = shape;
    scaleShape[c.mxAxis == -2 ? 1 : 2] /= 32;
    std::string error;
    auto valueLayout = ref::makeHopperValueLayout(shape, c.mxAxis, 3, &error);
    auto scaleLayout = ref::makeHopperScaleLayout(scaleShape, c.mxAxis, 8, &error);
    if (!valueLayout || !scaleLayout) {
      std::printf("%s\n", error.c_str());
      return 1;
    }
    const size_t valueBytes = valueLayout->getStorageBytes();
    const size_t scaleBytes = scaleLayout->getStorageBytes();
    const size_t outElements = c.batch * c.rows * c.cols;
    std::vector<uint8_t> values(valueBytes), scales(scaleBytes);
    if (exhaustive) {
      // Word i: low half i, high half an odd multiple of i, xored: every
      // 16-bit pattern appears in each half. Every scale code appears.
      for (size_t i = 0; i < valueBytes / 4; ++i) {
        uint32_t high = ((static_cast<uint32_t>(i) * 0x9E37u) ^ 0x5A5Au) & 0xFFFFu;
        uint32_t word = static_cast<uint32_t>(i & 0xFFFF) | high << 16;
        std::memcpy(&values[4 * i], &word, 4);
      }
      for (size_t i = 0; i < scaleBytes; ++i)
        scales[i] = static_cast<uint8_t>(i * 7);
    } else {
      std::mt19937 rng(3);
      for (auto &b : values)
        b = static_cast<uint8_t>(rng());
      // Checked shapes: every code (NaN and codes above 128 included).
      // Timed weight: scales of real weights, 2^-22 .. 2^0 (codes 105..127).
      for (auto &b : scales)
        b = static_cast<uint8_t>(c.check == "random" ? rng() : 105 + rng() % 23);
    }
    cuda::Module module = driver.loadModule(bench::readFile(dir + "/" + c.name + ".cubin"));
    cuda::Function kernel = driver.getFunction(module, "dequantize_hopper_0");
    cuda::DevicePtr dv = driver.allocate(valueBytes), ds = driver.allocate(scaleBytes);
    cuda::DevicePtr dout = driver.allocate(outElements * 2);
    cuda::DevicePtr copyA = driver.allocate(outElements * 2), copyB = driver.allocate(outElements * 2);
    driver.copyToDevice(dv, values.data(), valueBytes, stream);
    driver.copyToDevice(ds, scales.data(), scaleBytes, stream);
    driver.memset(dout, 0xA5, outElements * 2, stream); // poison
    std::vector<void *> args = {&dv, &ds, &dout};
    driver.launch(kernel, c.grid, c.block, args, stream);
    driver.synchronize(stream);
    if (c.check != "time") {
      // The reference: unpack the codes through the layouts, dequantize.
      ref::QuantizedTensor tensor;
      tensor.format = ref::MXFormat::mxfp4();
      tensor.shape = shape;
      tensor.axis = c.mxAxis == -2 ? 1 : 2;
      tensor.scaleShape = scaleShape;
      tensor.elements.resize(outElements);
      tensor.scales.resize(outElements / 32);
      valueLayout->load(values.data(), tensor.elements.data());
      scaleLayout->load(scales.data(), tensor.scales.data());
      std::vector<float> expected = ref::dequantize(tensor, ref::E8M0Edges::OCP);
      std::vector<uint16_t> actual(outElements);
      driver.copyToHost(actual.data(), dout, outElements * 2, stream);
      driver.synchronize(stream);
      size_t bad = 0, nan = 0;
      for (size_t i = 0; i < outElements; ++i) {
        uint16_t want = ref::toBF16Bits(expected[i]);
        nan += std::isnan(expected[i]);
        if (actual[i] != want && bad++ < 5)
          std::printf("mismatch at %zu: got 0x%04x, want 0x%04x (%g), code %u\n",
                      i, actual[i], want, expected[i], tensor.elements[i]);
      }
      std::printf("%s [%lld, %lld, %lld] mx_axis %lld (%s): %zu elements, "
                  "%zu NaN, %zu mismatches\n",
                  c.name.c_str(), (long long)c.batch, (long long)c.rows,
                  (long long)c.cols, (long long)c.mxAxis,
                  exhaustive ? "65536 patterns per word half, all 256 scale codes"
                             : "random codes and scale codes",
                  outElements, nan, bad);
      failures += bad != 0;
    } else {
      auto median = [&](auto fn) { return bench::medianMs(driver, fn, 5, 30, stream); };
      float ours = median([&] { driver.launch(kernel, c.grid, c.block, args, stream); });
      const size_t copyBytes = outElements * 2;
      float copy = median([&] { driver.copyOnDevice(copyB, copyA, copyBytes, stream); });
      // Copy bandwidth counts read + write.
      double bandwidth = 2.0 * copyBytes / (copy * 1e-3);
      double moved = valueBytes + scaleBytes + outElements * 2.0;
      double floorMs = moved / bandwidth * 1e3;
      std::printf("%s [%lld, %lld, %lld] mx_axis %lld: dequantize %.4f ms, "
                  "floor %.4f ms (%.1f MiB read + written at the copy's "
                  "%.2f TB/s), ours/floor %.2f\n",
                  c.name.c_str(), (long long)c.batch, (long long)c.rows,
                  (long long)c.cols, (long long)c.mxAxis, ours, floorMs,
                  moved / 1048576.0, bandwidth / 1e12, ours / floorMs);
    }
    for (cuda::DevicePtr p : {dv, ds, dout, copyA, copyB})
      driver.free(p);
    driver.unloadModule(module);
    if (!driver.ok()) {
      std::printf("CUDA error: %s\n", driver.getError().c_str());
      return 1;
    }
  }
  std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
