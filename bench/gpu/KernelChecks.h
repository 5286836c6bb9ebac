//===- KernelChecks.h - Every kernel family, checked on a given stream ---*- C++ -*-===//
//
// The GPU checks (kernel-check.cpp under compute-sanitizer, stream-check.cpp,
// device-check.cpp) share this: it loads the small kernel sets that
// make_check_kernels.sh generates (conversions, the Hopper dequantization,
// the bf16 x MXFP4 matmul), makes their inputs and the C++ reference's
// result, and queues each kernel's work on a stream of the caller's choice:
//  * conversions and the dequantization are checked byte for byte against
//    the reference (the destination poisoned first);
//  * the matmul against a float64 product of the reference's dequantized
//    weight (relative error < 1e-2; its sums are not the reference's, so not
//    byte-exact), and a later run byte for byte against a first one.
// With `outOfRange`, the ragged matmuls get routing indices outside their
// tensors (gather and scatter, and an empty expert's offset): rows whose
// scatter index is out of range must write nothing.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_BENCH_GPU_KERNELCHECKS_H
#define MICROSCALE_BENCH_GPU_KERNELCHECKS_H

#include "BenchSupport.h"

#include "microscale/Reference/FloatFormats.h"
#include "microscale/Reference/MXFormat.h"
#include "microscale/Reference/TritonLayouts.h"
#include "microscale/Runtime/CUDA/ConversionKernel.h"
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace microscale::bench {

/// One kernel, loaded, with its buffers on the device and what its result
/// must be.
struct KernelCase {
  std::string family, label;
  cuda::Module module = nullptr;
  cuda::Function function = nullptr;
  struct Input {
    cuda::DevicePtr device = 0;
    std::vector<uint8_t> bytes;
    /// A second device copy of `bytes` (stream-check copies it in on the
    /// stream); 0 when not made.
    cuda::DevicePtr staging = 0;
  };
  std::vector<Input> inputs;
  cuda::DevicePtr output = 0;
  size_t outputBytes = 0;
  uint8_t poison = 0;
  unsigned grid[3] = {1, 1, 1}, block = 0;
  /// The kernel's parameters, 8 bytes each (an f32 in the first 4: x86-64
  /// is little-endian).
  std::vector<uint64_t> params;
  /// Page-locked, outputBytes: the copy back returns at once.
  uint8_t *result = nullptr;
  /// "" when `out` is right, else what is wrong.
  std::function<std::string(const uint8_t *out)> verify;
  std::vector<uint8_t> baseline;
  /// Conversions: the kernel as cuda::runConversion takes it, and the
  /// expected destination.
  cuda::ConversionKernel conversion;
  std::vector<uint8_t> expected;
};
using Cases = std::vector<std::unique_ptr<KernelCase>>;

/// A kernel that spins for `ns` nanoseconds of %globaltimer (work that takes
/// long, queued before the kernels under test).
inline const char *spinPtx() {
  return ".version 7.0\n"
         ".target sm_70\n"
         ".address_size 64\n"
         ".visible .entry spin(.param .u64 ns) {\n"
         "  .reg .pred %p;\n"
         "  .reg .b64 %rd<5>;\n"
         "  ld.param.u64 %rd1, [ns];\n"
         "  mov.u64 %rd2, %globaltimer;\n"
         "$L_spin:\n"
         "  mov.u64 %rd3, %globaltimer;\n"
         "  sub.s64 %rd4, %rd3, %rd2;\n"
         "  setp.lt.u64 %p, %rd4, %rd1;\n"
         "  @%p bra $L_spin;\n"
         "  ret;\n"
         "}\n";
}

inline void launchSpin(cuda::Driver &driver, cuda::Function spin, uint64_t ns,
                       cuda::Stream stream) {
  std::vector<void *> args = {&ns};
  driver.launch(spin, 1, 32, args, stream);
}

inline void addInput(cuda::Driver &driver, KernelCase &c,
                     std::vector<uint8_t> bytes) {
  KernelCase::Input input;
  input.device = driver.allocate(bytes.size());
  input.bytes = std::move(bytes);
  c.params.push_back(input.device);
  c.inputs.push_back(std::move(input));
}

inline void addOutput(cuda::Driver &driver, KernelCase &c, size_t bytes,
                      uint8_t poison) {
  c.output = driver.allocate(bytes);
  c.outputBytes = bytes;
  c.poison = poison;
  c.result = static_cast<uint8_t *>(driver.allocateHost(bytes));
  c.params.push_back(c.output);
}

inline std::string countMismatches(const uint8_t *out,
                                   const std::vector<uint8_t> &expected) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    if (out[i] != expected[i] && bad++ == 0)
      first = i;
  if (!bad)
    return "";
  return std::to_string(bad) + " of " + std::to_string(expected.size()) +
         " bytes differ, first at " + std::to_string(first);
}

/// The checked conversions of `dir`/manifest.txt (make_kernels.py).
inline bool addConversions(cuda::Driver &driver, const std::string &dir,
                           Cases &cases, std::mt19937 &rng,
                           std::string &error) {
  std::ifstream manifest(dir + "/manifest.txt");
  if (!manifest) {
    error = "no " + dir + "/manifest.txt";
    return false;
  }
  std::string line;
  while (std::getline(manifest, line)) {
    auto f = split(line, '|');
    if (f.size() != 13 || f[7] != "1")
      continue;
    const unsigned bits = std::stoi(f[3]);
    std::vector<int64_t> shape;
    for (auto &d : split(f[4], ','))
      shape.push_back(std::stoll(d));
    auto from = makeLayout(f[5], shape, bits, &error);
    auto to = makeLayout(f[6], shape, bits, &error);
    if (!from || !to)
      return false;
    auto c = std::make_unique<KernelCase>();
    c->family = "conversion";
    c->label = f[0] + " " + f[5] + " -> " + f[6] + " [" + f[4] + "] " + f[12];
    std::vector<uint8_t> codes(from->getNumElements());
    for (auto &code : codes)
      code = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
    std::vector<uint8_t> source(from->getStorageBytes());
    from->store(codes.data(), source.data());
    c->expected.resize(to->getStorageBytes());
    to->store(codes.data(), c->expected.data());

    cuda::ConversionKernel &k = c->conversion;
    k.image = readFile(dir + "/" + f[1]);
    k.name = f[2];
    k.block = static_cast<unsigned>(std::stoul(f[11]));
    k.takesUnitRange = f[12].rfind("per-unit", 0) == 0;
    k.units = static_cast<int64_t>(c->expected.size()) /
              (f[6].rfind("hopper_value", 0) == 0 ? 4 : 1);
    const int64_t perBlock = k.block * std::stoll(f[8]);
    const unsigned compilerGrid = static_cast<unsigned>(std::stoul(f[10]));
    k.grid = compilerGrid ? compilerGrid
                          : static_cast<unsigned>((k.units + perBlock - 1) / perBlock);
    k.sourceBytes = source.size();
    k.destBytes = c->expected.size();

    c->module = driver.loadModule(k.image);
    c->function = driver.getFunction(c->module, k.name);
    c->grid[0] = k.grid;
    c->block = k.block;
    addInput(driver, *c, std::move(source));
    addOutput(driver, *c, k.destBytes, 0xA5);
    if (k.takesUnitRange) {
      c->params.push_back(0);
      c->params.push_back(static_cast<uint64_t>(k.units));
    }
    const KernelCase *self = c.get();
    c->verify = [self](const uint8_t *out) {
      return countMismatches(out, self->expected);
    };
    cases.push_back(std::move(c));
    if (!driver.ok()) {
      error = driver.getError();
      return false;
    }
  }
  return true;
}

/// The checked dequantizations of `dir`/manifest.txt
/// (make_dequant_kernels.sh): every kernel but the timed ones.
inline bool addDequantizations(cuda::Driver &driver, const std::string &dir,
                               Cases &cases, std::mt19937 &rng,
                               std::string &error) {
  std::ifstream manifest(dir + "/manifest.txt");
  if (!manifest) {
    error = "no " + dir + "/manifest.txt";
    return false;
  }
  std::string name, check;
  int64_t batch, rows, cols, mxAxis;
  unsigned grid, block;
  while (manifest >> name >> batch >> rows >> cols >> mxAxis >> check >> grid >>
         block) {
    if (check == "time")
      continue;
    std::vector<int64_t> shape = {batch, rows, cols};
    std::vector<int64_t> scaleShape = shape;
    scaleShape[mxAxis == -2 ? 1 : 2] /= 32;
    auto valueLayout = ref::makeHopperValueLayout(shape, mxAxis, 3, &error);
    auto scaleLayout = ref::makeHopperScaleLayout(scaleShape, mxAxis, 8, &error);
    if (!valueLayout || !scaleLayout)
      return false;
    std::vector<uint8_t> values(valueLayout->getStorageBytes()),
        scales(scaleLayout->getStorageBytes());
    if (check == "exhaustive") {
      // As dequant-bench.cpp: every 16-bit pattern in each half of a word,
      // every scale code.
      for (size_t i = 0; i < values.size() / 4; ++i) {
        uint32_t high = ((static_cast<uint32_t>(i) * 0x9E37u) ^ 0x5A5Au) & 0xFFFFu;
        uint32_t word = static_cast<uint32_t>(i & 0xFFFF) | high << 16;
        std::memcpy(&values[4 * i], &word, 4);
      }
      for (size_t i = 0; i < scales.size(); ++i)
        scales[i] = static_cast<uint8_t>(i * 7);
    } else {
      for (auto &b : values)
        b = static_cast<uint8_t>(rng());
      for (auto &b : scales)
        b = static_cast<uint8_t>(rng());
    }
    const size_t elements = batch * rows * cols;
    ref::QuantizedTensor tensor;
    tensor.format = ref::MXFormat::mxfp4();
    tensor.shape = shape;
    tensor.axis = mxAxis == -2 ? 1 : 2;
    tensor.scaleShape = scaleShape;
    tensor.elements.resize(elements);
    tensor.scales.resize(elements / 32);
    valueLayout->load(values.data(), tensor.elements.data());
    scaleLayout->load(scales.data(), tensor.scales.data());
    std::vector<float> reference = ref::dequantize(tensor, ref::E8M0Edges::OCP);

    auto c = std::make_unique<KernelCase>();
    c->family = "dequantization";
    c->label = name + " [" + std::to_string(batch) + ", " + std::to_string(rows) +
               ", " + std::to_string(cols) + "] mx_axis " + std::to_string(mxAxis) +
               " (" + check + ")";
    c->expected.resize(elements * 2);
    for (size_t i = 0; i < elements; ++i) {
      uint16_t bits = ref::toBF16Bits(reference[i]);
      std::memcpy(&c->expected[2 * i], &bits, 2);
    }
    c->module = driver.loadModule(readFile(dir + "/" + name + ".cubin"));
    c->function = driver.getFunction(c->module, "dequantize_hopper_0");
    c->grid[0] = grid;
    c->block = block;
    addInput(driver, *c, std::move(values));
    addInput(driver, *c, std::move(scales));
    addOutput(driver, *c, elements * 2, 0xA5);
    const KernelCase *self = c.get();
    c->verify = [self](const uint8_t *out) {
      return countMismatches(out, self->expected);
    };
    cases.push_back(std::move(c));
    if (!driver.ok()) {
      error = driver.getError();
      return false;
    }
  }
  return true;
}

/// The small matmuls of `dir`/cases.txt (make_matmul_kernels.sh ... check):
/// data as matmul-bench.cpp makes it, every output checked.
inline bool addMatmuls(cuda::Driver &driver, const std::string &dir,
                       Cases &cases, std::mt19937 &rng, bool outOfRange,
                       std::string &error) {
  std::ifstream list(dir + "/cases.txt");
  if (!list) {
    error = "no " + dir + "/cases.txt";
    return false;
  }
  int64_t m, k, n, threads, experts, tokens;
  std::string name;
  unsigned gridX, gridY, gridZ;
  while (list >> m >> k >> n >> threads >> name >> gridX >> gridY >> gridZ >>
         experts >> tokens) {
    if (k > 1024)
      continue; // the checks take the small shapes only
    const int64_t batches = experts ? experts : 1;
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<uint16_t> a(tokens * k);
    for (auto &x : a)
      x = ref::toBF16Bits(gauss(rng));
    // Routing as matmul-bench.cpp: each token to m / tokens distinct
    // experts, rows grouped by expert, the last expert empty, the output
    // rows a random permutation.
    std::vector<int32_t> offsets(batches), counts(batches), gather, scatter;
    std::vector<int64_t> expertOfRow;
    if (experts) {
      const int64_t topk = m / tokens;
      std::vector<std::vector<int32_t>> byExpert(experts);
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<int32_t> chosen;
        while (static_cast<int64_t>(chosen.size()) < topk) {
          int32_t e = static_cast<int32_t>(rng() % (experts - 1));
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end())
            chosen.push_back(e);
        }
        for (int32_t e : chosen)
          byExpert[e].push_back(static_cast<int32_t>(t));
      }
      for (int64_t e = 0; e < experts; ++e) {
        offsets[e] = static_cast<int32_t>(gather.size());
        counts[e] = static_cast<int32_t>(byExpert[e].size());
        for (int32_t t : byExpert[e]) {
          gather.push_back(t);
          expertOfRow.push_back(e);
        }
      }
      scatter.resize(m);
      for (int64_t r = 0; r < m; ++r)
        scatter[r] = static_cast<int32_t>(r);
      std::shuffle(scatter.begin(), scatter.end(), rng);
      if (outOfRange && m >= 8) {
        // Indices outside their tensors (negatives too): never followed.
        gather[1] = static_cast<int32_t>(tokens + 1000);
        gather[m - 2] = -1;
        scatter[3] = static_cast<int32_t>(m + 7);
        scatter[5] = INT32_MIN;
        // The empty expert's slice starts far outside the rows.
        offsets[experts - 1] = 1 << 30;
      }
    }
    std::vector<uint8_t> values(batches * k * n / 2),
        scaleCodes(batches * (k / 32) * n);
    for (auto &b : values)
      b = static_cast<uint8_t>(rng());
    for (auto &s : scaleCodes)
      s = static_cast<uint8_t>(rng() % 10 == 0 ? rng() % 3 : 100 + rng() % 61);
    // The expected product, float64, of every output row written.
    std::vector<double> want(m * n, 0.0);
    std::vector<int8_t> rowState(m, 0); // 0: not written, 1: checked, 2: any
    for (int64_t i = 0; i < m; ++i) {
      const int64_t e = experts ? expertOfRow[i] : 0;
      const int64_t row = experts ? gather[i] : i;
      const int64_t target = experts ? scatter[i] : i;
      if (target < 0 || target >= m)
        continue;
      if (row < 0 || row >= tokens) {
        rowState[target] = 2;
        continue;
      }
      rowState[target] = 1;
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          uint8_t byte = values[((e * n + j) * k + kk) / 2];
          uint8_t code = kk % 2 ? byte >> 4 : byte & 0xF;
          double w = ref::decode(ref::ScalarFormat::E2M1, code) *
                     ref::decode(ref::ScalarFormat::E8M0,
                                 scaleCodes[(e * (k / 32) + kk / 32) * n + j]);
          sum += double(ref::fromBF16Bits(a[row * k + kk])) * w;
        }
        want[target * n + j] = sum;
      }
    }
    auto c = std::make_unique<KernelCase>();
    c->family = "matmul";
    c->label = name + (experts && outOfRange ? " (out-of-range routing)" : "");
    c->module = driver.loadModule(readFile(dir + "/" + name + ".cubin"));
    c->function = driver.getFunction(c->module, "mixed_matmul_0");
    c->grid[0] = gridX;
    c->grid[1] = gridY;
    c->grid[2] = gridZ;
    c->block = static_cast<unsigned>(threads);
    auto bytesOf = [](const void *p, size_t size) {
      const uint8_t *b = static_cast<const uint8_t *>(p);
      return std::vector<uint8_t>(b, b + size);
    };
    addInput(driver, *c, bytesOf(a.data(), a.size() * 2));
    addInput(driver, *c, values);
    addInput(driver, *c, scaleCodes);
    addOutput(driver, *c, m * n * 2, 0xFF); // bf16 NaN
    float globalScale = 1.0f;
    uint64_t g = 0;
    std::memcpy(&g, &globalScale, 4);
    c->params.push_back(g);
    if (experts) {
      addInput(driver, *c, bytesOf(offsets.data(), experts * 4));
      addInput(driver, *c, bytesOf(counts.data(), experts * 4));
      addInput(driver, *c, bytesOf(gather.data(), gather.size() * 4));
      addInput(driver, *c, bytesOf(scatter.data(), scatter.size() * 4));
    }
    c->verify = [want, rowState, m, n](const uint8_t *out) -> std::string {
      double errorNorm = 0, refNorm = 0;
      size_t written = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          uint16_t bits;
          std::memcpy(&bits, out + 2 * (i * n + j), 2);
          if (rowState[i] == 0) {
            written += bits != 0xFFFF;
          } else if (rowState[i] == 1) {
            double have = ref::fromBF16Bits(bits), w = want[i * n + j];
            errorNorm += (have - w) * (have - w);
            refNorm += w * w;
          }
        }
      const double rel = refNorm > 0 ? std::sqrt(errorNorm / refNorm) : 0.0;
      std::string problem;
      if (!(rel < 1e-2))
        problem = "relative error " + std::to_string(rel);
      if (written)
        problem += (problem.empty() ? "" : "; ") + std::to_string(written) +
                   " outputs written in rows no valid index maps to";
      return problem;
    };
    cases.push_back(std::move(c));
    if (!driver.ok()) {
      error = driver.getError();
      return false;
    }
  }
  return true;
}

/// All three families; false and `error` on failure.
inline bool addAllFamilies(cuda::Driver &driver, const std::string &kernels,
                           Cases &cases, bool outOfRange, std::string &error) {
  std::mt19937 rng(2026);
  return addConversions(driver, kernels + "/conv", cases, rng, error) &&
         addDequantizations(driver, kernels + "/dq", cases, rng, error) &&
         addMatmuls(driver, kernels + "/mm", cases, rng, outOfRange, error);
}

/// Queues the copies of the inputs from the host on `stream`.
inline void queueUploads(cuda::Driver &driver, KernelCase &c,
                         cuda::Stream stream) {
  for (auto &input : c.inputs)
    driver.copyToDevice(input.device, input.bytes.data(), input.bytes.size(),
                        stream);
}

/// Makes the staging copies of the inputs (synchronously, at set-up).
inline void makeStaging(cuda::Driver &driver, KernelCase &c) {
  for (auto &input : c.inputs) {
    input.staging = driver.allocate(input.bytes.size());
    driver.copyToDevice(input.staging, input.bytes.data(), input.bytes.size());
  }
}

/// Queues device-to-device copies of the staging copies into the inputs.
inline void queueStagedInputs(cuda::Driver &driver, KernelCase &c,
                              cuda::Stream stream) {
  for (auto &input : c.inputs)
    driver.copyOnDevice(input.device, input.staging, input.bytes.size(), stream);
}

/// Queues the poisoning of the output, the launch and the copy of the output
/// into c.result.
inline void queueRun(cuda::Driver &driver, KernelCase &c, cuda::Stream stream) {
  driver.memset(c.output, c.poison, c.outputBytes, stream);
  std::vector<void *> args;
  for (uint64_t &p : c.params)
    args.push_back(&p);
  driver.launch(c.function, c.grid[0], c.grid[1], c.grid[2], c.block, args,
                stream);
  driver.copyToHost(c.result, c.output, c.outputBytes, stream);
}

inline void release(cuda::Driver &driver, Cases &cases) {
  for (auto &c : cases) {
    for (auto &input : c->inputs) {
      driver.free(input.device);
      driver.free(input.staging);
    }
    driver.free(c->output);
    driver.freeHost(c->result);
    driver.unloadModule(c->module);
  }
  cases.clear();
}

} // namespace microscale::bench

#endif
