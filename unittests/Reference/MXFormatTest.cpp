//===- MXFormatTest.cpp - Block quantization against brute force ----------===//
//
// The oracle here is independent of the encoder: for every element it
// searches all codes of the element format for the nearest value (ties to
// the even code), and it derives the scale from the OCP / NVFP4 definitions.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/MXFormat.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace microscale::ref;

namespace {

/// Nearest code by exhaustive search; ties to the even code; saturating.
uint32_t bruteForceNearest(ScalarFormat format, double value) {
  const ScalarFormatInfo &info = getInfo(format);
  uint32_t best = 0;
  double bestError = INFINITY;
  for (uint32_t code = 0; code < (1u << info.bits); ++code) {
    double candidate = decode(format, code);
    if (!std::isfinite(candidate))
      continue;
    if (std::signbit(candidate) != std::signbit(value) && candidate != 0)
      continue;
    double error = std::fabs(candidate - value);
    if (error < bestError ||
        (error == bestError && (code % 2 == 0) && (best % 2 == 1))) {
      best = code;
      bestError = error;
    }
  }
  // Keep the sign of zero as the encoder does.
  if (decode(format, best) == 0)
    best = std::signbit(value) ? 1u << (info.bits - 1) : 0;
  return best;
}

std::vector<float> randomBlock(std::mt19937 &rng, size_t n, double spread) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<double> exponent(-spread, spread);
  double blockScale = std::exp2(exponent(rng));
  std::vector<float> block(n);
  for (float &v : block)
    v = static_cast<float>(normal(rng) * blockScale);
  return block;
}

const MXFormat kMXFormats[] = {MXFormat::mxfp4(), MXFormat::mxfp6E2M3(),
                               MXFormat::mxfp6E3M2(), MXFormat::mxfp8E4M3(),
                               MXFormat::mxfp8E5M2()};

TEST(MXFormat, NamedFormats) {
  EXPECT_EQ(namedFormats().size(), 7u);
  for (const NamedFormat &named : namedFormats()) {
    EXPECT_EQ(lookupFormat(named.name), named.format);
    EXPECT_EQ(formatName(named.format), named.name);
    EXPECT_EQ(verifyFormat(named.format), "");
  }
  EXPECT_FALSE(lookupFormat("mxfp5").has_value());
  EXPECT_EQ(formatName({ScalarFormat::E2M1, ScalarFormat::E8M0, 64, false}), "");
}

TEST(MXFormat, VerifyRejectsBadFormats) {
  EXPECT_NE(verifyFormat({ScalarFormat::E8M0, ScalarFormat::E8M0, 32, false}), "");
  EXPECT_NE(verifyFormat({ScalarFormat::E2M1, ScalarFormat::E5M2, 32, false}), "");
  EXPECT_NE(verifyFormat({ScalarFormat::E2M1, ScalarFormat::E8M0, 24, false}), "");
  EXPECT_NE(verifyFormat({ScalarFormat::E2M1, ScalarFormat::E8M0, 2048, false}), "");
  EXPECT_NE(verifyFormat({ScalarFormat::E2M1, ScalarFormat::E8M0, 32, true}), "");
}

TEST(MXFormat, OCPScaleAndElementsMatchBruteForce) {
  std::mt19937 rng(1);
  for (const MXFormat &format : kMXFormats) {
    const ScalarFormatInfo &element = getInfo(format.element);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<float> block = randomBlock(rng, 32, 40);
      std::vector<uint8_t> codes(32);
      uint32_t scale = quantizeBlock(format, block.data(), 32, 1.0f, codes.data());
      double amax = 0;
      for (float v : block)
        amax = std::max(amax, std::fabs(double(v)));
      int expected = std::clamp(int(std::floor(std::log2(amax))) - element.maxExponent,
                                -127, 127);
      ASSERT_EQ(int(scale), expected + 127) << element.name;
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(codes[i], bruteForceNearest(format.element,
                                              block[i] / std::ldexp(1.0, expected)))
            << element.name << " element " << i << " value " << block[i];
    }
  }
}

TEST(MXFormat, OCPSaturatesTheTopOfTheBinade) {
  // amax = 7 has exponent 2 = emax(E2M1): scale 2^0, and 7 saturates to 6.
  std::vector<float> block(32, 0.0f);
  block[3] = 7.0f;
  block[4] = -7.0f;
  std::vector<uint8_t> codes(32);
  EXPECT_EQ(quantizeBlock(MXFormat::mxfp4(), block.data(), 32, 1, codes.data()), 127u);
  EXPECT_EQ(codes[3], 0x7);
  EXPECT_EQ(codes[4], 0xF);
}

TEST(MXFormat, ZeroNaNAndInfBlocks) {
  std::vector<float> block(32, 0.0f);
  std::vector<uint8_t> codes(32, 0xAA);
  EXPECT_EQ(quantizeBlock(MXFormat::mxfp4(), block.data(), 32, 1, codes.data()), 0u);
  for (uint8_t c : codes)
    EXPECT_EQ(c, 0);
  std::vector<float> out(32);
  dequantizeBlock(MXFormat::mxfp4(), codes.data(), 32, 0, 1, out.data());
  for (float v : out)
    EXPECT_EQ(v, 0.0f);
  block[7] = NAN;
  EXPECT_EQ(quantizeBlock(MXFormat::mxfp4(), block.data(), 32, 1, codes.data()), 0xFFu);
  EXPECT_EQ(quantizeBlock(MXFormat::nvfp4(), block.data(), 16, 1, codes.data()), 0x7Fu);
  block[7] = INFINITY;
  EXPECT_EQ(quantizeBlock(MXFormat::mxfp8E5M2(), block.data(), 32, 1, codes.data()), 0xFFu);
  dequantizeBlock(MXFormat::mxfp4(), codes.data(), 32, 0xFF, 1, out.data());
  EXPECT_TRUE(std::isnan(out[0]));
  dequantizeBlock(MXFormat::mxfp4(), codes.data(), 32, 0xFF, 1, out.data(),
                  E8M0Edges::ZeroInf);
  EXPECT_TRUE(std::isnan(out[0])); // 0 * inf
}

TEST(MXFormat, NVFP4ScaleAndElementsMatchBruteForce) {
  std::mt19937 rng(2);
  for (const MXFormat &format : {MXFormat::nvfp4(), MXFormat::nvfp4B32()}) {
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<float> block = randomBlock(rng, format.blockSize, 6);
      const float global = 0.0078125f * (1 + trial % 5);
      std::vector<uint8_t> codes(format.blockSize);
      uint32_t scale = quantizeBlock(format, block.data(), block.size(), global,
                                     codes.data());
      double amax = 0;
      for (float v : block)
        amax = std::max(amax, std::fabs(double(v)));
      ASSERT_EQ(scale, bruteForceNearest(ScalarFormat::E4M3FN, amax / 6 / global));
      double s = decode(ScalarFormat::E4M3FN, scale) * global;
      for (size_t i = 0; i < block.size(); ++i)
        ASSERT_EQ(codes[i], bruteForceNearest(ScalarFormat::E2M1, block[i] / s));
    }
  }
}

TEST(MXFormat, NVFP4DefaultGlobalScale) {
  std::vector<float> data = {0.5f, -2688.0f, 3.0f};
  EXPECT_EQ(defaultGlobalScale(MXFormat::nvfp4(), data.data(), 3), 1.0f);
  data[1] = -26.88f;
  EXPECT_FLOAT_EQ(defaultGlobalScale(MXFormat::nvfp4(), data.data(), 3), 0.01f);
  EXPECT_EQ(defaultGlobalScale(MXFormat::mxfp4(), data.data(), 3), 1.0f);
  std::vector<float> zeros(4, 0.0f);
  EXPECT_EQ(defaultGlobalScale(MXFormat::nvfp4(), zeros.data(), 4), 1.0f);
}

TEST(MXFormat, RepresentableTensorsRoundTripExactly) {
  // Values that are element codes times a power of two, with each block
  // holding its format's largest element, quantize and dequantize exactly.
  std::mt19937 rng(3);
  for (const MXFormat &format : kMXFormats) {
    const ScalarFormatInfo &element = getInfo(format.element);
    std::vector<int64_t> shape = {3, 64, 5};
    std::vector<float> data(3 * 64 * 5);
    std::uniform_int_distribution<int> codeDist(0, (1 << element.bits) - 1);
    for (float &v : data) {
      double d;
      do
        d = decode(format.element, codeDist(rng));
      while (!std::isfinite(d));
      v = static_cast<float>(d * 0.25);
    }
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 5; ++i)
          data[(o * 64 + b * 32 + 7) * 5 + i] = float(element.maxFinite * 0.25);
    QuantizedTensor q = quantize(format, shape, 1, data.data());
    EXPECT_EQ(q.scaleShape, (std::vector<int64_t>{3, 2, 5}));
    for (uint8_t s : q.scales)
      EXPECT_EQ(s, 125);
    std::vector<float> back = dequantize(q);
    for (size_t i = 0; i < data.size(); ++i)
      ASSERT_EQ(back[i], data[i]) << element.name << " at " << i;
  }
}

TEST(MXFormat, AxisSelectsTheBlocks) {
  // Quantizing [64, 3] along axis 0 equals quantizing its transpose along 1.
  std::mt19937 rng(4);
  std::vector<float> data = randomBlock(rng, 64 * 3, 0);
  for (int i = 0; i < 3; ++i)
    data[5 * 3 + i] *= float(1 << (4 * i)); // different scale per column
  std::vector<float> transposed(64 * 3);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 3; ++c)
      transposed[c * 64 + r] = data[r * 3 + c];
  QuantizedTensor a = quantize(MXFormat::mxfp4(), {64, 3}, 0, data.data());
  QuantizedTensor b = quantize(MXFormat::mxfp4(), {3, 64}, 1, transposed.data());
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(a.scales[r * 3 + c], b.scales[c * 2 + r]);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(a.elements[r * 3 + c], b.elements[c * 64 + r]);
}

TEST(MXFormat, DequantizeRoundsTheGlobalScaleOnceInF32) {
  QuantizedTensor q;
  q.format = MXFormat::nvfp4();
  q.shape = {16};
  q.axis = 0;
  q.scaleShape = {1};
  q.elements.assign(16, 0x3); // 1.5
  q.scales = {0x39};          // E4M3 1.125
  q.globalScale = 0.1f;
  std::vector<float> out = dequantize(q);
  EXPECT_EQ(out[0], static_cast<float>(1.5 * 1.125 * double(0.1f)));
}

} // namespace
