//===- mx-numerics.cpp - Weight-only quantization error of MX formats -----===//
//
// Prints the local relative error of each microscaling format, seed 002's
// section 4 measurement, computed with the reference library only:
//
//   for each window of 32 consecutive values along the last axis,
//     error = ||x - dequant(quant(x))||_2 / ||x||_2      (in percent;
//   all-zero windows are skipped), then mean, p50, p90, p99 and max.
//
// Every format blocks the last axis. NVFP4 formats use the default global
// scale amax / (6 * 448). The transcoded rows quantize to NVFP4 B32, then
// transcode to MXFP6 E2M3 (implementation bump rule); exact_blocks is the
// share of 32-element blocks whose transcode changed no value.
//
// Synthetic distributions (deterministic for a given --seed), each a
// --rows x --cols tensor:
//   gaussian   N(0, 1)
//   laplace    Laplace(0, 1)
//   student_t  Student's t with 4 degrees of freedom (heavy tails)
//   outliers   N(0, 1) with 0.1% of values multiplied by 20
// plus "all", which pools the windows of the four.
// Any .safetensors files given add one row group per bf16, f16 or f32 tensor.
//
//===----------------------------------------------------------------------===//
#include "Safetensors.h"
#include "microscale/Reference/FloatFormats.h"
#include "microscale/Reference/MXFormat.h"
#include "microscale/Reference/Transcode.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace microscale;
using namespace llvm;

static cl::OptionCategory category("mx-numerics options");
static cl::list<std::string> inputs(cl::Positional, cl::desc("[FILE.safetensors ...]"),
                                    cl::cat(category));
static cl::opt<bool> csv("csv", cl::init(false), cl::cat(category),
                         cl::desc("Print distribution,format,mean,p50,p90,"
                                  "p99,max,exact_blocks"));
static cl::opt<unsigned> rows("rows", cl::init(512), cl::cat(category),
                              cl::desc("Rows of each synthetic tensor"));
static cl::opt<unsigned> cols("cols", cl::init(4096), cl::cat(category),
                              cl::desc("Columns (the blocked axis) of each "
                                       "synthetic tensor"));
static cl::opt<unsigned> seed("seed", cl::init(2026), cl::cat(category),
                              cl::desc("Seed of the synthetic distributions"));
static cl::opt<bool> noSynthetic("no-synthetic", cl::init(false),
                                 cl::cat(category),
                                 cl::desc("Only measure the given files"));

namespace {

constexpr int64_t kWindow = 32;

enum class Method { Direct, TranscodeLUT, TranscodeHWCVT };
struct FormatRow {
  const char *name;
  ref::MXFormat format;
  Method method;
};
const FormatRow kFormats[] = {
    {"mxfp4", ref::MXFormat::mxfp4(), Method::Direct},
    {"nvfp4", ref::MXFormat::nvfp4(), Method::Direct},
    {"nvfp4_b32", ref::MXFormat::nvfp4B32(), Method::Direct},
    {"nvfp4_b32_to_mxfp6_lut", ref::MXFormat::nvfp4B32(), Method::TranscodeLUT},
    {"nvfp4_b32_to_mxfp6_hwcvt", ref::MXFormat::nvfp4B32(),
     Method::TranscodeHWCVT},
    {"mxfp6_e2m3", ref::MXFormat::mxfp6E2M3(), Method::Direct},
};
constexpr size_t kNumFormats = sizeof(kFormats) / sizeof(kFormats[0]);

/// Window errors and exact-block counts of one format on one tensor group.
struct Measurement {
  std::vector<double> windowErrors;
  int64_t exactBlocks = 0, blocks = 0;
};

struct Tensor2D {
  std::string name;
  int64_t rows, cols;
  std::vector<float> values;
};

void measure(const Tensor2D &tensor, const FormatRow &row, Measurement &out) {
  const std::vector<int64_t> shape = {tensor.rows, tensor.cols};
  const ref::QuantizedTensor quantized =
      ref::quantize(row.format, shape, /*axis=*/1, tensor.values.data());
  std::vector<float> approx;
  std::vector<float> direct;
  if (row.method == Method::Direct) {
    approx = ref::dequantize(quantized);
  } else {
    ref::TranscodedTensor transcoded;
    std::string error = ref::transcode(
        quantized,
        row.method == Method::TranscodeLUT ? ref::TranscodeVariant::LUT
                                           : ref::TranscodeVariant::HWCVT,
        ref::ExponentBumpRule::NonzeroMantissa, transcoded);
    if (!error.empty())
      report_fatal_error(Twine("internal: ") + error);
    approx = ref::dequantize(transcoded);
    direct = ref::dequantize(quantized);
  }
  for (int64_t r = 0; r < tensor.rows; ++r)
    for (int64_t c0 = 0; c0 < tensor.cols; c0 += kWindow) {
      const int64_t c1 = std::min(tensor.cols, c0 + kWindow);
      double errorSq = 0, normSq = 0;
      bool exact = true;
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t i = r * tensor.cols + c;
        const double x = tensor.values[i];
        const double d = x - approx[i];
        errorSq += d * d;
        normSq += x * x;
        if (!direct.empty())
          exact &= direct[i] == approx[i];
      }
      if (!direct.empty()) {
        ++out.blocks;
        out.exactBlocks += exact;
      }
      if (normSq > 0)
        out.windowErrors.push_back(100.0 * std::sqrt(errorSq / normSq));
    }
}

void printRow(const std::string &distribution, const FormatRow &row,
              Measurement &m) {
  std::vector<double> &e = m.windowErrors;
  std::sort(e.begin(), e.end());
  auto quantile = [&](double q) {
    return e.empty() ? NAN : e[static_cast<size_t>(q * (e.size() - 1))];
  };
  double mean = 0;
  for (double v : e)
    mean += v;
  mean = e.empty() ? NAN : mean / e.size();
  const bool transcoded = row.method != Method::Direct;
  const double exactShare =
      m.blocks ? 100.0 * m.exactBlocks / m.blocks : NAN;
  if (csv) {
    outs() << distribution << ',' << row.name << ','
           << format("%.3f,%.3f,%.3f,%.3f,%.3f,", mean, quantile(0.5),
                     quantile(0.9), quantile(0.99), e.empty() ? NAN : e.back());
    if (transcoded)
      outs() << format("%.3f", exactShare);
    outs() << '\n';
    return;
  }
  outs() << format("%-12s %-26s %8.3f %8.3f %8.3f %8.3f %8.3f", 
                   distribution.c_str(), row.name, mean, quantile(0.5),
                   quantile(0.9), quantile(0.99),
                   e.empty() ? NAN : e.back());
  if (transcoded)
    outs() << format(" %11.2f", exactShare);
  outs() << '\n';
}

std::vector<Tensor2D> syntheticTensors() {
  std::vector<Tensor2D> tensors;
  const int64_t count = int64_t(rows) * cols;
  auto make = [&](const char *name, auto &&draw) {
    std::mt19937_64 rng(seed + tensors.size());
    Tensor2D t{name, rows, cols, std::vector<float>(count)};
    for (float &v : t.values)
      v = static_cast<float>(draw(rng));
    tensors.push_back(std::move(t));
  };
  std::normal_distribution<double> normal(0, 1);
  std::exponential_distribution<double> exponential(1);
  std::student_t_distribution<double> studentT(4);
  std::bernoulli_distribution coin(0.5), rare(0.001);
  make("gaussian", [&](auto &rng) { return normal(rng); });
  make("laplace", [&](auto &rng) {
    return coin(rng) ? exponential(rng) : -exponential(rng);
  });
  make("student_t", [&](auto &rng) { return studentT(rng); });
  make("outliers", [&](auto &rng) {
    const double v = normal(rng);
    return rare(rng) ? 20 * v : v;
  });
  return tensors;
}

/// Reads every bf16, f16 or f32 tensor of rank >= 1 as [prod(leading), last].
Error readFileTensors(StringRef path, std::vector<Tensor2D> &tensors) {
  auto file = safetensors::read(path);
  if (!file)
    return file.takeError();
  for (const safetensors::Tensor &t : file->tensors) {
    if (t.dtype != "BF16" && t.dtype != "F16" && t.dtype != "F32")
      continue;
    if (t.shape.empty())
      continue;
    Tensor2D out;
    out.name = t.name;
    out.cols = t.shape.back();
    out.rows = 1;
    for (size_t d = 0; d + 1 < t.shape.size(); ++d)
      out.rows *= t.shape[d];
    const int64_t count = out.rows * out.cols;
    out.values.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      if (t.dtype == "F32") {
        std::memcpy(&out.values[i], t.data.data() + 4 * i, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, t.data.data() + 2 * i, 2);
        out.values[i] = t.dtype == "BF16" ? ref::fromBF16Bits(bits)
                                          : ref::fromF16Bits(bits);
      }
      if (!std::isfinite(out.values[i]))
        return createStringError(inconvertibleErrorCode(),
                                 "%s: tensor '%s' holds a non-finite value",
                                 path.str().c_str(), t.name.c_str());
    }
    if (count > 0)
      tensors.push_back(std::move(out));
  }
  return Error::success();
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mx-numerics: relative error of MXFP4, NVFP4, NVFP4 B32, its MXFP6 "
      "transcode and MXFP6 over 32-value windows\n");
  if (rows == 0 || cols == 0 || uint64_t(rows) * cols > (uint64_t(1) << 28)) {
    WithColor::error(errs(), "mx-numerics")
        << "--rows x --cols must be between 1 and 2^28 values\n";
    return 1;
  }
  std::vector<Tensor2D> synthetic;
  if (!noSynthetic)
    synthetic = syntheticTensors();
  std::vector<Tensor2D> files;
  for (const std::string &path : inputs)
    if (Error error = readFileTensors(path, files)) {
      WithColor::error(errs(), "mx-numerics") << toString(std::move(error))
                                              << '\n';
      return 1;
    }
  if (synthetic.empty() && files.empty()) {
    WithColor::error(errs(), "mx-numerics")
        << "nothing to measure: no synthetic set and no bf16/f16/f32 tensor "
           "in the given files\n";
    return 1;
  }

  if (csv)
    outs() << "distribution,format,mean,p50,p90,p99,max,exact_blocks\n";
  else
    outs() << format("%-12s %-26s %8s %8s %8s %8s %8s %11s\n", "distribution",
                     "format", "mean%", "p50%", "p90%", "p99%", "max%",
                     "exact_blk%");
  std::vector<Measurement> pooled(kNumFormats);
  for (const Tensor2D &tensor : synthetic)
    for (size_t f = 0; f < kNumFormats; ++f) {
      Measurement m;
      measure(tensor, kFormats[f], m);
      pooled[f].windowErrors.insert(pooled[f].windowErrors.end(),
                                    m.windowErrors.begin(),
                                    m.windowErrors.end());
      pooled[f].exactBlocks += m.exactBlocks;
      pooled[f].blocks += m.blocks;
      printRow(tensor.name, kFormats[f], m);
    }
  if (!synthetic.empty())
    for (size_t f = 0; f < kNumFormats; ++f)
      printRow("all", kFormats[f], pooled[f]);
  for (const Tensor2D &tensor : files)
    for (const FormatRow &row : kFormats) {
      Measurement m;
      measure(tensor, row, m);
      printRow(tensor.name, row, m);
    }
  return 0;
}
