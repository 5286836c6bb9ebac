//===- TranscodeTest.cpp - NVFP4 B32 -> MXFP6 against a brute-force oracle ===//
//
// The oracle never uses the transcoder's split or tables: for every E4M3
// scale code and E2M1 code it takes the exact product in double, derives the
// E8M0 exponent from the decoded scale, and searches all 32 E2M3 magnitudes
// for the nearest one, resolving ties per variant.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/Transcode.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace microscale::ref;

namespace {

constexpr TranscodeVariant kVariants[] = {TranscodeVariant::LUT,
                                          TranscodeVariant::HWCVT};
constexpr ExponentBumpRule kRules[] = {ExponentBumpRule::NonzeroMantissa,
                                       ExponentBumpRule::MantissaAtLeast3};

/// Nearest E2M3 magnitude code to |value|; ties to the lower magnitude (LUT)
/// or to the even code (HWCVT). Also reports whether |value| was a midpoint.
unsigned oracleMagnitude(double value, TranscodeVariant variant,
                         bool *midpoint = nullptr) {
  value = std::fabs(value);
  double best = INFINITY;
  std::vector<unsigned> nearest;
  for (unsigned code = 0; code < 32; ++code) {
    const double error = std::fabs(decode(ScalarFormat::E2M3, code) - value);
    if (error < best) {
      best = error;
      nearest = {code};
    } else if (error == best) {
      nearest.push_back(code);
    }
  }
  if (midpoint)
    *midpoint = nearest.size() == 2;
  if (nearest.size() == 1 || variant == TranscodeVariant::LUT)
    return nearest.front(); // codes are ordered by magnitude
  return nearest[0] % 2 == 0 ? nearest[0] : nearest[1];
}

/// floor(log2 s) and the 3-bit mantissa of a positive E4M3 value s.
void normalise(double scale, int &exponent, unsigned &mantissa) {
  exponent = std::ilogb(scale);
  const double fraction = std::ldexp(scale, -exponent) - 1.0; // [0, 1)
  mantissa = static_cast<unsigned>(fraction * 8);
  ASSERT_EQ(mantissa / 8.0, fraction) << "E4M3 needs more than 3 bits";
}

TEST(Transcode, EveryScaleAndElementCodeMatchesTheOracle) {
  for (TranscodeVariant variant : kVariants)
    for (ExponentBumpRule rule : kRules)
      for (unsigned s = 0; s < 256; ++s) {
        const SplitScale split = splitE4M3Scale(static_cast<uint8_t>(s), rule);
        const double scale = decode(ScalarFormat::E4M3FN, s);
        SCOPED_TRACE(testing::Message() << "scale 0x" << std::hex << s
                                        << " variant " << int(variant)
                                        << " rule " << int(rule));
        if (std::isnan(scale)) {
          EXPECT_EQ(split.e8m0Code, 0xFF);
          for (unsigned e = 0; e < 16; ++e)
            EXPECT_TRUE(std::isnan(decode(ScalarFormat::E8M0, split.e8m0Code) *
                                   decode(ScalarFormat::E2M3,
                                          transcodeElement(e, split, variant,
                                                           rule))));
          continue;
        }
        int exponent = -127;
        unsigned mantissa = 0;
        if (scale != 0)
          normalise(std::fabs(scale), exponent, mantissa);
        const bool bump = rule == ExponentBumpRule::NonzeroMantissa
                              ? mantissa != 0
                              : mantissa >= 3;
        const int e8m0Exponent = scale == 0 ? -127 : exponent + bump;
        EXPECT_EQ(int(split.e8m0Code) - 127, e8m0Exponent);
        for (unsigned e = 0; e < 16; ++e) {
          const uint8_t out = transcodeElement(e, split, variant, rule);
          ASSERT_LT(out, 64u);
          const double exact = decode(ScalarFormat::E2M1, e) * scale;
          const double target =
              scale == 0 ? 0.0 : std::ldexp(exact, -e8m0Exponent);
          ASSERT_LE(std::fabs(target), 7.5) << "the bump failed to prevent "
                                               "saturation";
          EXPECT_EQ(out & 0x1F, oracleMagnitude(target, variant))
              << "element 0x" << std::hex << e;
          // The sign is the product's sign, including for zeros.
          const bool negative = std::signbit(decode(ScalarFormat::E2M1, e)) !=
                                std::signbit(scale);
          EXPECT_EQ((out & 0x20) != 0, negative) << "element 0x" << std::hex
                                                 << e;
        }
      }
}

TEST(Transcode, SeedExample) {
  // Seed 002: E4M3 0x54 (12) x E2M1 6 = 72 -> E8M0 2^4 x E2M3 4.5.
  const SplitScale split =
      splitE4M3Scale(0x54, ExponentBumpRule::NonzeroMantissa);
  EXPECT_EQ(split.e8m0Code, 127 + 4);
  const uint8_t code = transcodeElement(0x7, split, TranscodeVariant::LUT,
                                        ExponentBumpRule::NonzeroMantissa);
  EXPECT_EQ(decode(ScalarFormat::E2M3, code), 4.5);
  // Without the bump 6 x 1.5 = 9 would saturate to 7.5 (72 -> 60): the
  // minimal rule bumps here too.
  EXPECT_TRUE(splitE4M3Scale(0x54, ExponentBumpRule::MantissaAtLeast3).bump);
  EXPECT_FALSE(splitE4M3Scale(0x52, ExponentBumpRule::MantissaAtLeast3).bump);
  EXPECT_TRUE(splitE4M3Scale(0x52, ExponentBumpRule::NonzeroMantissa).bump);
}

TEST(Transcode, TwelveMidpointsSixDifferences) {
  // The seed's counts, for its implementation rule.
  const auto rule = ExponentBumpRule::NonzeroMantissa;
  const auto &lut = transcodeTable(TranscodeVariant::LUT, rule);
  const auto &hwcvt = transcodeTable(TranscodeVariant::HWCVT, rule);
  unsigned midpoints = 0, differences = 0;
  for (unsigned i = 0; i < 64; ++i) {
    const unsigned m = i >> 3;
    const double value = decode(ScalarFormat::E2M1, i & 7) * (1 + m / 8.0) /
                         (m != 0 ? 2 : 1);
    bool midpoint = false;
    oracleMagnitude(value, TranscodeVariant::LUT, &midpoint);
    midpoints += midpoint;
    differences += lut[i] != hwcvt[i];
    if (lut[i] != hwcvt[i])
      EXPECT_TRUE(midpoint) << "the variants differ off a midpoint at " << i;
  }
  EXPECT_EQ(midpoints, 12u);
  EXPECT_EQ(differences, 6u);
  // Under the minimal rule the tables still differ at six entries.
  const auto &lutMin =
      transcodeTable(TranscodeVariant::LUT, ExponentBumpRule::MantissaAtLeast3);
  const auto &hwcvtMin = transcodeTable(TranscodeVariant::HWCVT,
                                        ExponentBumpRule::MantissaAtLeast3);
  unsigned minimalDifferences = 0;
  for (unsigned i = 0; i < 64; ++i)
    minimalDifferences += lutMin[i] != hwcvtMin[i];
  EXPECT_EQ(minimalDifferences, 6u);
}

/// The scale mantissas for which every E2M1 magnitude transcodes exactly.
std::vector<unsigned> exactMantissas(ExponentBumpRule rule) {
  std::vector<unsigned> exact;
  for (unsigned m = 0; m < 8; ++m) {
    bool all = true;
    const SplitScale split =
        splitE4M3Scale(static_cast<uint8_t>((7 << 3) | m), rule); // 1 + m/8
    for (unsigned e = 0; e < 8; ++e) {
      const uint8_t out =
          transcodeElement(e, split, TranscodeVariant::LUT, rule);
      all &= decode(ScalarFormat::E2M3, out) *
                 decode(ScalarFormat::E8M0, split.e8m0Code) ==
             decode(ScalarFormat::E2M1, e) * (1 + m / 8.0);
    }
    if (all)
      exact.push_back(m);
  }
  return exact;
}

TEST(Transcode, ExactMantissas) {
  // {0, 2, 4} holds for the minimal rule only: with the implementation
  // rule's bump, 1.25 x 0.5 / 2 = 0.3125 is not an E2M3 value.
  EXPECT_EQ(exactMantissas(ExponentBumpRule::MantissaAtLeast3),
            (std::vector<unsigned>{0, 2, 4}));
  EXPECT_EQ(exactMantissas(ExponentBumpRule::NonzeroMantissa),
            (std::vector<unsigned>{0, 4}));
}

TEST(Transcode, TensorKeepsShapeGlobalScaleAndAccuracy) {
  std::mt19937 rng(20261129);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const std::vector<int64_t> shape = {3, 70, 5}; // a short tail block
  std::vector<float> values(3 * 70 * 5);
  for (float &v : values)
    v = normal(rng);
  const QuantizedTensor source =
      quantize(MXFormat::nvfp4B32(), shape, /*axis=*/1, values.data());
  ASSERT_NE(source.globalScale, 1.0f);
  const std::vector<float> nvfp4 = dequantize(source);

  for (TranscodeVariant variant : kVariants)
    for (ExponentBumpRule rule : kRules) {
      TranscodedTensor result;
      ASSERT_EQ(transcode(source, variant, rule, result), "");
      EXPECT_EQ(result.mx.format, MXFormat::mxfp6E2M3());
      EXPECT_EQ(result.mx.shape, shape);
      EXPECT_EQ(result.mx.scaleShape, source.scaleShape);
      EXPECT_EQ(result.globalScale, source.globalScale);
      const std::vector<float> mx6 = dequantize(result);
      ASSERT_EQ(mx6.size(), nvfp4.size());
      unsigned exactBlocks = 0, blocks = 0;
      for (int64_t o = 0; o < 3; ++o)
        for (int64_t b = 0; b < 3; ++b)
          for (int64_t j = 0; j < 5; ++j) {
            const uint8_t scaleCode = source.scales[(o * 3 + b) * 5 + j];
            const SplitScale split = splitE4M3Scale(scaleCode, rule);
            // Half an E2M3 step at the top binade, in units of the E8M0
            // scale and the global scale: the worst rounding error.
            const double halfStep =
                0.25 * decode(ScalarFormat::E8M0, split.e8m0Code) *
                source.globalScale;
            bool exact = true;
            for (int64_t i = b * 32; i < std::min<int64_t>(70, b * 32 + 32);
                 ++i) {
              const int64_t index = (o * 70 + i) * 5 + j;
              const double error = std::fabs(double(mx6[index]) - nvfp4[index]);
              // Both sides were rounded to f32 once: allow their ulps.
              EXPECT_LE(error, halfStep * (1 + 1e-5));
              exact &= error == 0;
            }
            ++blocks;
            exactBlocks += exact;
            const auto exactSet = exactMantissas(rule);
            if (std::find(exactSet.begin(), exactSet.end(), split.mantissa) !=
                exactSet.end())
              EXPECT_TRUE(exact) << "block with mantissa "
                                 << int(split.mantissa) << " lost bits";
          }
      EXPECT_GT(exactBlocks, 0u);
      EXPECT_LT(exactBlocks, blocks) << "random data should exercise rounding";
    }
}

TEST(Transcode, RejectsOtherSources) {
  std::vector<float> values(64, 1.0f);
  const QuantizedTensor mxfp4 =
      quantize(MXFormat::mxfp4(), {64}, 0, values.data());
  TranscodedTensor result;
  EXPECT_EQ(transcode(mxfp4, TranscodeVariant::LUT,
                      ExponentBumpRule::NonzeroMantissa, result),
            "transcode supports nvfp4_b32 sources only (got 'mxfp4')");
  const QuantizedTensor nvfp4 =
      quantize(MXFormat::nvfp4(), {64}, 0, values.data());
  EXPECT_NE(transcode(nvfp4, TranscodeVariant::LUT,
                      ExponentBumpRule::NonzeroMantissa, result),
            "");
}

} // namespace
