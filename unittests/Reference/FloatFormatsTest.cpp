//===- FloatFormatsTest.cpp - Exhaustive tests of the scalar formats ------===//
//
// Our encoders and decoders are checked against llvm::APFloat, an independent
// implementation of the same formats, over every code and every rounding
// tie, plus the behaviour APFloat does not share (saturation, NaN policy,
// E8M0 edge choice).
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/FloatFormats.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace microscale::ref;

namespace {

const ScalarFormat kAllFormats[] = {ScalarFormat::E2M1,   ScalarFormat::E2M3,
                                    ScalarFormat::E3M2,   ScalarFormat::E4M3FN,
                                    ScalarFormat::E5M2,   ScalarFormat::E8M0};
const ScalarFormat kElementFormats[] = {
    ScalarFormat::E2M1, ScalarFormat::E2M3, ScalarFormat::E3M2,
    ScalarFormat::E4M3FN, ScalarFormat::E5M2};

const llvm::fltSemantics &semanticsOf(ScalarFormat format) {
  switch (format) {
  case ScalarFormat::E2M1:
    return llvm::APFloat::Float4E2M1FN();
  case ScalarFormat::E2M3:
    return llvm::APFloat::Float6E2M3FN();
  case ScalarFormat::E3M2:
    return llvm::APFloat::Float6E3M2FN();
  case ScalarFormat::E4M3FN:
    return llvm::APFloat::Float8E4M3FN();
  case ScalarFormat::E5M2:
    return llvm::APFloat::Float8E5M2();
  case ScalarFormat::E8M0:
    return llvm::APFloat::Float8E8M0FNU();
  }
  return llvm::APFloat::IEEEdouble();
}

double apfloatDecode(ScalarFormat format, uint32_t code) {
  unsigned bits = getInfo(format).bits;
  llvm::APFloat value(semanticsOf(format), llvm::APInt(bits, code));
  // Ask before converting: APFloat 22 converts the E8M0 NaN (0xFF) to a
  // double +inf, so the NaN-ness must be read in the source semantics.
  if (value.isNaN())
    return std::nan("");
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEdouble(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

uint32_t apfloatEncode(ScalarFormat format, double v) {
  llvm::APFloat value(v);
  bool losesInfo;
  value.convert(semanticsOf(format), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return static_cast<uint32_t>(value.bitcastToAPInt().getZExtValue());
}

uint32_t numCodes(ScalarFormat format) { return 1u << getInfo(format).bits; }

TEST(FloatFormats, DecodeMatchesAPFloatForEveryCode) {
  for (ScalarFormat format : kAllFormats) {
    for (uint32_t code = 0; code < numCodes(format); ++code) {
      double ours = decode(format, code);
      double theirs = apfloatDecode(format, code);
      if (std::isnan(theirs)) {
        EXPECT_TRUE(std::isnan(ours)) << getInfo(format).name << " " << code;
        EXPECT_TRUE(isNaNCode(format, code));
        continue;
      }
      EXPECT_FALSE(isNaNCode(format, code));
      EXPECT_EQ(ours, theirs) << getInfo(format).name << " code " << code;
      EXPECT_EQ(std::signbit(ours), std::signbit(theirs));
    }
  }
}

TEST(FloatFormats, EncodeInvertsDecodeForEveryCode) {
  for (ScalarFormat format : kAllFormats) {
    for (uint32_t code = 0; code < numCodes(format); ++code) {
      if (isNaNCode(format, code))
        continue;
      double value = decode(format, code);
      if (std::isinf(value))
        continue; // saturates, tested below
      EXPECT_EQ(encode(format, value), code)
          << getInfo(format).name << " code " << code << " value " << value;
    }
  }
}

TEST(FloatFormats, MaxFiniteAndEmaxAreConsistent) {
  for (ScalarFormat format : kElementFormats) {
    const ScalarFormatInfo &info = getInfo(format);
    double largest = 0;
    for (uint32_t code = 0; code < numCodes(format); ++code) {
      double v = decode(format, code);
      if (std::isfinite(v))
        largest = std::max(largest, v);
    }
    EXPECT_EQ(largest, info.maxFinite) << info.name;
    EXPECT_EQ(std::ilogb(largest), info.maxExponent) << info.name;
  }
}

/// Every midpoint between two adjacent representable magnitudes rounds to
/// the code with an even mantissa (the even code), and anything off the
/// midpoint rounds to the nearer neighbour. Upstream arith-expand rounds
/// E2M1 ties away from zero; this is the test that catches that.
TEST(FloatFormats, EveryTieRoundsToEven) {
  for (ScalarFormat format : kElementFormats) {
    const ScalarFormatInfo &info = getInfo(format);
    const uint32_t signBit = 1u << (info.bits - 1);
    int ties = 0;
    for (uint32_t code = 0; code + 1 < signBit; ++code) {
      double lo = decode(format, code), hi = decode(format, code + 1);
      if (!std::isfinite(hi) || hi > info.maxFinite)
        break;
      double mid = (lo + hi) / 2;
      uint32_t even = (code % 2 == 0) ? code : code + 1;
      for (uint32_t sign : {0u, signBit}) {
        double s = sign ? -1.0 : 1.0;
        EXPECT_EQ(encode(format, s * mid), sign | even)
            << info.name << " tie between " << lo << " and " << hi;
        EXPECT_EQ(apfloatEncode(format, s * mid), sign | even);
        EXPECT_EQ(encode(format, s * std::nextafter(mid, hi)), sign | (code + 1));
        EXPECT_EQ(encode(format, s * std::nextafter(mid, lo)), sign | code);
      }
      ++ties;
    }
    EXPECT_GT(ties, 0);
  }
}

TEST(FloatFormats, E2M1TiesAreNotRoundedAwayFromZero) {
  // arith-expand maps 1.25 -> 1.5, 2.5 -> 3, 5 -> 6. Nearest even:
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, 1.25)), 1.0);
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, 2.5)), 2.0);
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, 5.0)), 4.0);
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, 0.25)), 0.0);
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, 0.75)), 1.0);
  EXPECT_EQ(decode(ScalarFormat::E2M1, encode(ScalarFormat::E2M1, -1.75)), -2.0);
}

TEST(FloatFormats, RandomValuesMatchAPFloatInRange) {
  std::mt19937_64 rng(42);
  for (ScalarFormat format : kElementFormats) {
    const double max = getInfo(format).maxFinite;
    std::uniform_real_distribution<double> uniform(-max, max);
    std::uniform_int_distribution<int> exponent(-30, 0);
    for (int i = 0; i < 20000; ++i) {
      double v = std::ldexp(uniform(rng), exponent(rng));
      EXPECT_EQ(encode(format, v), apfloatEncode(format, v))
          << getInfo(format).name << " " << v;
    }
  }
}

TEST(FloatFormats, SaturatesInsteadOfOverflowing) {
  struct Case {
    ScalarFormat format;
    uint32_t maxCode;
  } cases[] = {{ScalarFormat::E2M1, 0x7},
               {ScalarFormat::E2M3, 0x1F},
               {ScalarFormat::E3M2, 0x1F},
               {ScalarFormat::E4M3FN, 0x7E},
               {ScalarFormat::E5M2, 0x7B}};
  for (const Case &c : cases) {
    const ScalarFormatInfo &info = getInfo(c.format);
    const uint32_t sign = 1u << (info.bits - 1);
    EXPECT_EQ(decode(c.format, c.maxCode), info.maxFinite);
    for (double v : {info.maxFinite, info.maxFinite * 1.01,
                     info.maxFinite * 1e6, HUGE_VAL}) {
      EXPECT_EQ(encode(c.format, v), c.maxCode) << info.name << " " << v;
      EXPECT_EQ(encode(c.format, -v), sign | c.maxCode) << info.name;
    }
  }
  // E4M3FN: 464 is the midpoint between 448 and the (NaN) 480 slot.
  EXPECT_EQ(encode(ScalarFormat::E4M3FN, 464.0), 0x7Eu);
  EXPECT_EQ(encode(ScalarFormat::E4M3FN, 470.0), 0x7Eu);
}

TEST(FloatFormats, NaNPolicy) {
  const double nan = std::nan("");
  EXPECT_EQ(encode(ScalarFormat::E4M3FN, nan), 0x7Fu);
  EXPECT_EQ(encode(ScalarFormat::E4M3FN, -nan), 0xFFu);
  EXPECT_EQ(encode(ScalarFormat::E5M2, nan), 0x7Fu);
  EXPECT_EQ(encode(ScalarFormat::E8M0, nan), 0xFFu);
  // Formats without NaN encode it as +0 (block quantization flags the block
  // with a NaN scale instead).
  EXPECT_EQ(encode(ScalarFormat::E2M1, nan), 0u);
  EXPECT_EQ(encode(ScalarFormat::E2M3, nan), 0u);
  EXPECT_EQ(encode(ScalarFormat::E3M2, nan), 0u);
  EXPECT_TRUE(std::isinf(decode(ScalarFormat::E5M2, 0x7C)));
  EXPECT_TRUE(std::isnan(decode(ScalarFormat::E5M2, 0x7D)));
}

TEST(FloatFormats, E8M0EdgeCodesAreExplicit) {
  EXPECT_EQ(decode(ScalarFormat::E8M0, 0, E8M0Edges::OCP), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(decode(ScalarFormat::E8M0, 255, E8M0Edges::OCP)));
  EXPECT_EQ(decode(ScalarFormat::E8M0, 0, E8M0Edges::ZeroInf), 0.0);
  EXPECT_EQ(decode(ScalarFormat::E8M0, 255, E8M0Edges::ZeroInf), HUGE_VAL);
  for (uint32_t code = 1; code < 255; ++code) {
    EXPECT_EQ(decode(ScalarFormat::E8M0, code, E8M0Edges::OCP),
              decode(ScalarFormat::E8M0, code, E8M0Edges::ZeroInf));
    EXPECT_EQ(decode(ScalarFormat::E8M0, code), std::ldexp(1.0, int(code) - 127));
  }
  // Encoding takes the exponent of the value (floor), clamped.
  EXPECT_EQ(encode(ScalarFormat::E8M0, 1.0), 127u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, 1.99), 127u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, 0.75), 126u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, 1e-300), 0u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, 1e300), 254u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, 0.0), 0u);
  EXPECT_EQ(encode(ScalarFormat::E8M0, -1.0), 255u);
}

TEST(FloatFormats, BF16AndF16RoundingMatchAPFloat) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bitsDist;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = bitsDist(rng);
    float value;
    std::memcpy(&value, &bits, 4);
    if (std::isnan(value))
      continue;
    for (auto [sem, ours] :
         {std::pair(&llvm::APFloat::BFloat(), toBF16Bits(value)),
          std::pair(&llvm::APFloat::IEEEhalf(), toF16Bits(value))}) {
      llvm::APFloat ap(value);
      bool losesInfo;
      ap.convert(*sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      EXPECT_EQ(ours, ap.bitcastToAPInt().getZExtValue()) << value;
    }
  }
  EXPECT_EQ(fromBF16Bits(toBF16Bits(1.5f)), 1.5f);
  EXPECT_EQ(fromF16Bits(toF16Bits(-0.000061035156f)), -0.000061035156f);
  EXPECT_EQ(fromF16Bits(0x7C00), HUGE_VALF);
}

TEST(FloatFormats, ParseNames) {
  EXPECT_EQ(parseScalarFormat("f4E2M1FN"), ScalarFormat::E2M1);
  EXPECT_EQ(parseScalarFormat("e8m0"), ScalarFormat::E8M0);
  EXPECT_FALSE(parseScalarFormat("f16").has_value());
}

} // namespace
