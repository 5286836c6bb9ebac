//===- QuantizeJITTest.cpp - Generated quantization vs reference ----------===//
//
// microscale.quantize_storage lowered by our passes for the host and run
// through MLIR's JIT must write exactly the reference's element and scale
// bytes: every format, f32/bf16/f16 inputs, strided and Triton layouts, on
// random data with rounding ties, saturating values, zero, tiny, NaN and Inf
// blocks mixed in.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *type;
  const char *inType; // f32, bf16, f16
};

class QuantizeJIT : public ::testing::TestWithParam<Case> {};

/// Values that exercise the encoder: random magnitudes across many binades,
/// with exact rounding ties of the element grid, values past the largest
/// element, and whole zero / tiny / NaN / Inf blocks.
std::vector<float> makeInput(const ref::QuantizedTensor &shape,
                             const ref::MXFormat &format, size_t n,
                             std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const ref::ScalarFormatInfo &element = ref::getInfo(format.element);
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) {
    float v = normal(rng) * std::ldexp(1.0f, exponent(rng) / 8);
    if (i % 7 == 3) {
      // A tie between two adjacent element codes, times a power of two.
      uint32_t code = rng() % ((1u << (element.bits - 1)) - 1);
      double lo = ref::decode(format.element, code);
      double hi = ref::decode(format.element, code + 1);
      if (std::isfinite(hi))
        v = static_cast<float>((lo + hi) / 2 * ((rng() & 1) ? 1 : -1));
    }
    if (i % 11 == 5)
      v = static_cast<float>(element.maxFinite * 1.7);
    data[i] = v;
  }
  (void)shape;
  return data;
}

std::vector<uint8_t> roundTo(const std::vector<float> &data,
                             const std::string &type) {
  std::vector<uint8_t> bytes;
  for (float v : data) {
    if (type == "f32") {
      uint8_t raw[4];
      std::memcpy(raw, &v, 4);
      bytes.insert(bytes.end(), raw, raw + 4);
    } else {
      uint16_t h = type == "bf16" ? ref::toBF16Bits(v) : ref::toF16Bits(v);
      bytes.push_back(h & 0xFF);
      bytes.push_back(h >> 8);
    }
  }
  return bytes;
}

std::vector<float> widen(const std::vector<uint8_t> &bytes,
                         const std::string &type) {
  std::vector<float> out;
  size_t width = type == "f32" ? 4 : 2;
  for (size_t i = 0; i < bytes.size(); i += width) {
    if (width == 4) {
      float v;
      std::memcpy(&v, &bytes[i], 4);
      out.push_back(v);
    } else {
      uint16_t h = bytes[i] | bytes[i + 1] << 8;
      out.push_back(type == "bf16" ? ref::fromBF16Bits(h) : ref::fromF16Bits(h));
    }
  }
  return out;
}

TEST_P(QuantizeJIT, MatchesTheReferenceBitForBit) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  auto qtensor = cast<QTensorType>(parseType(c.type, &context));
  const bool global = qtensor.getFormat().getGlobalScale();
  std::string text =
      std::string("func.func @quantize(%x: memref<?x") + c.inType +
      ">, %v: memref<?xi8>, %s: memref<?xi8>" + (global ? ", %g: f32" : "") +
      ") {\n  microscale.quantize_storage %x" + (global ? ", %g" : "") +
      " into %v, %s : " + c.type + ", memref<?x" + c.inType +
      ">, memref<?xi8>, memref<?xi8>\n  return\n}\n";
  std::string compileError;
  auto engine = ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  ref::MXFormat format = qtensor.getFormat().getReferenceFormat();
  std::vector<int64_t> shape(qtensor.getShape().begin(), qtensor.getShape().end());
  const size_t n = qtensor.getNumElements();
  std::mt19937 rng(11);
  ref::QuantizedTensor unused;
  std::vector<float> data = makeInput(unused, format, n, rng);
  // Whole special blocks along the block axis of the first slice.
  if (n >= 4 * format.blockSize && qtensor.getAxis() == qtensor.getRank() - 1) {
    const int64_t b = format.blockSize;
    for (int64_t i = 0; i < b; ++i) {
      data[i] = 0.0f;
      data[b + i] = std::ldexp(1.0f, -140) * (i + 1);
    }
    data[2 * b + 3] = NAN;
    data[3 * b + 5] = -INFINITY;
  }
  std::vector<uint8_t> inputBytes = roundTo(data, c.inType);
  std::vector<float> rounded = widen(inputBytes, c.inType); // what the op reads
  const float globalScale = 0.25f;
  ref::QuantizedTensor expected = ref::quantize(
      format, shape, qtensor.getAxis(), rounded.data(),
      global ? std::optional<float>(globalScale) : std::nullopt);
  auto valueLayout = qtensor.buildValueReference();
  auto scaleLayout = qtensor.buildScaleReference();
  std::vector<uint8_t> wantValues(valueLayout->getStorageBytes() + 1, 0);
  std::vector<uint8_t> wantScales(scaleLayout->getStorageBytes() + 1, 0);
  valueLayout->store(expected.elements.data(), wantValues.data());
  scaleLayout->store(expected.scales.data(), wantScales.data());

  std::vector<uint8_t> values(wantValues.size(), 0xA5), scales(wantScales.size(), 0xA5);
  values.back() = scales.back() = 0;
  int64_t zero = 0, one = 1, count = n;
  int64_t vBytes = values.size() - 1, sBytes = scales.size() - 1;
  void *xp = inputBytes.data();
  uint8_t *vp = values.data(), *sp = scales.data();
  float g = globalScale;
  std::vector<void *> args = {&xp, &xp, &zero, &count, &one,
                              &vp, &vp, &zero, &vBytes, &one,
                              &sp, &sp, &zero, &sBytes, &one};
  if (global)
    args.push_back(&g);
  llvm::Error error = engine->invokePacked("quantize", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  size_t badValues = 0, badScales = 0;
  for (size_t i = 0; i < values.size(); ++i)
    badValues += values[i] != wantValues[i];
  for (size_t i = 0; i < scales.size(); ++i)
    badScales += scales[i] != wantScales[i];
  EXPECT_EQ(badValues, 0u) << c.type << " from " << c.inType;
  EXPECT_EQ(badScales, 0u) << c.type << " from " << c.inType;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, QuantizeJIT,
    ::testing::Values(
        Case{"!microscale.qtensor<8x64, mxfp4, axis = 1>", "f32"},
        Case{"!microscale.qtensor<8x64, mxfp4, axis = 1>", "bf16"},
        Case{"!microscale.qtensor<8x64, mxfp4, axis = 1>", "f16"},
        Case{"!microscale.qtensor<8x64, mxfp6_e2m3, axis = 1>", "f32"},
        Case{"!microscale.qtensor<8x64, mxfp6_e3m2, axis = 1>", "f32"},
        Case{"!microscale.qtensor<8x64, mxfp8_e4m3, axis = 1>", "f32"},
        Case{"!microscale.qtensor<8x64, mxfp8_e5m2, axis = 1>", "bf16"},
        Case{"!microscale.qtensor<8x64, nvfp4, axis = 1>", "f32"},
        Case{"!microscale.qtensor<8x64, nvfp4_b32, axis = 1>", "f32"},
        Case{"!microscale.qtensor<64x8, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>", "f32"},
        Case{"!microscale.qtensor<2x64x66, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16"},
        Case{"!microscale.qtensor<2x34x64, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 2>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 4>>", "f32"},
        Case{"!microscale.qtensor<2x64x130, nvfp4_b32, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>", "f32"},
        Case{"!microscale.qtensor<64x0, mxfp4, axis = 0>", "f32"}));

} // namespace
