//===- FloatFormats.cpp - Bit-exact minifloat encode/decode ---------------===//
//
// Every operation here is exact in double precision: the formats have at most
// 8 significant bits, so scaling by powers of two and rounding a quotient to
// an integer never loses information before the single rounding step.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/FloatFormats.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace microscale::ref {

namespace {
const ScalarFormatInfo kInfos[] = {
    // name, mlir, bits, eb, mb, bias, signed, inf, nan, max, emax
    {"e2m1", "f4E2M1FN", 4, 2, 1, 1, true, false, false, 6.0, 2},
    {"e2m3", "f6E2M3FN", 6, 2, 3, 1, true, false, false, 7.5, 2},
    {"e3m2", "f6E3M2FN", 6, 3, 2, 3, true, false, false, 28.0, 4},
    {"e4m3fn", "f8E4M3FN", 8, 4, 3, 7, true, false, true, 448.0, 8},
    {"e5m2", "f8E5M2", 8, 5, 2, 15, true, true, true, 57344.0, 15},
    {"e8m0", "f8E8M0FNU", 8, 8, 0, 127, false, false, true,
     0x1p127, 127},
};
} // namespace

const ScalarFormatInfo &getInfo(ScalarFormat format) {
  return kInfos[static_cast<unsigned>(format)];
}

std::optional<ScalarFormat> parseScalarFormat(std::string_view name) {
  for (unsigned i = 0; i < sizeof(kInfos) / sizeof(kInfos[0]); ++i)
    if (kInfos[i].name == name || kInfos[i].mlirName == name)
      return static_cast<ScalarFormat>(i);
  return std::nullopt;
}

bool isNaNCode(ScalarFormat format, uint32_t code) {
  const ScalarFormatInfo &info = getInfo(format);
  code &= (1u << info.bits) - 1;
  switch (format) {
  case ScalarFormat::E4M3FN:
    return (code & 0x7F) == 0x7F;
  case ScalarFormat::E5M2:
    return (code & 0x7C) == 0x7C && (code & 0x3) != 0;
  case ScalarFormat::E8M0:
    return code == 0xFF;
  default:
    return false;
  }
}

double decode(ScalarFormat format, uint32_t code, E8M0Edges edges) {
  const ScalarFormatInfo &info = getInfo(format);
  code &= (1u << info.bits) - 1;
  if (format == ScalarFormat::E8M0) {
    if (code == 0xFF)
      return edges == E8M0Edges::OCP ? std::numeric_limits<double>::quiet_NaN()
                                     : std::numeric_limits<double>::infinity();
    if (code == 0 && edges == E8M0Edges::ZeroInf)
      return 0.0;
    return std::ldexp(1.0, static_cast<int>(code) - 127);
  }
  const bool negative = (code >> (info.bits - 1)) & 1;
  const uint32_t exponentField =
      (code >> info.mantissaBits) & ((1u << info.exponentBits) - 1);
  const uint32_t mantissa = code & ((1u << info.mantissaBits) - 1);
  double magnitude;
  if (isNaNCode(format, code)) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (info.hasInf && exponentField == (1u << info.exponentBits) - 1) {
    magnitude = std::numeric_limits<double>::infinity();
  } else if (exponentField == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa),
                           1 - info.bias - static_cast<int>(info.mantissaBits));
  } else {
    magnitude = std::ldexp(
        static_cast<double>((1u << info.mantissaBits) | mantissa),
        static_cast<int>(exponentField) - info.bias -
            static_cast<int>(info.mantissaBits));
  }
  return negative ? -magnitude : magnitude;
}

static uint32_t encodeE8M0(double value) {
  if (std::isnan(value) || value < 0)
    return 0xFF;
  if (value == 0)
    return 0x00;
  if (std::isinf(value))
    return 0xFE;
  int exponent = std::ilogb(value); // floor(log2(value)) for finite values
  if (exponent < -127)
    exponent = -127;
  if (exponent > 127)
    exponent = 127;
  return static_cast<uint32_t>(exponent + 127);
}

uint32_t encode(ScalarFormat format, double value) {
  if (format == ScalarFormat::E8M0)
    return encodeE8M0(value);
  const ScalarFormatInfo &info = getInfo(format);
  const uint32_t signBit = std::signbit(value) ? 1u << (info.bits - 1) : 0u;
  if (std::isnan(value)) {
    if (!info.hasNaN)
      return 0; // documented: formats without NaN encode it as +0
    return signBit | ((1u << (info.bits - 1)) - 1);
  }
  const double magnitude = std::fabs(value);
  // Largest finite code: for E4M3FN the all-ones mantissa at the top exponent
  // is NaN, so the maximum is S.1111.110; for E5M2 the top exponent is
  // reserved, so it is S.11110.11; otherwise all magnitude bits are ones.
  uint32_t maxMagnitudeCode = (1u << (info.bits - 1)) - 1;
  if (format == ScalarFormat::E4M3FN)
    maxMagnitudeCode = 0x7E;
  else if (format == ScalarFormat::E5M2)
    maxMagnitudeCode = 0x7B;
  if (magnitude >= info.maxFinite) // includes +-Inf: saturate
    return signBit | maxMagnitudeCode;

  const int minNormalExponent = 1 - info.bias;
  int exponent = magnitude == 0 ? minNormalExponent : std::ilogb(magnitude);
  if (exponent < minNormalExponent)
    exponent = minNormalExponent; // subnormal range shares the quantum
  const int quantumExponent = exponent - static_cast<int>(info.mantissaBits);
  // Exact: magnitude has 53 bits and the quotient only shifts the exponent.
  const double scaled = std::ldexp(magnitude, -quantumExponent);
  double rounded = std::nearbyint(scaled); // default mode: ties to even
  if (rounded == 0)
    return signBit;
  uint32_t significand = static_cast<uint32_t>(rounded);
  if (significand >> (info.mantissaBits + 1)) { // rounded up a binade
    significand >>= 1;
    ++exponent;
  }
  if (std::ldexp(static_cast<double>(significand),
                 exponent - static_cast<int>(info.mantissaBits)) >
      info.maxFinite)
    return signBit | maxMagnitudeCode;
  uint32_t exponentField;
  uint32_t mantissa;
  if (significand >> info.mantissaBits) {
    exponentField = static_cast<uint32_t>(exponent + info.bias);
    mantissa = significand & ((1u << info.mantissaBits) - 1);
  } else {
    exponentField = 0; // subnormal
    mantissa = significand;
  }
  return signBit | (exponentField << info.mantissaBits) | mantissa;
}

uint16_t toBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float fromBF16Bits(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

uint16_t toF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if (std::isnan(value))
    return sign | 0x7E00;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude >= 65520.0) // rounds to Inf under ties-to-even
    return sign | 0x7C00;
  int exponent = magnitude == 0 ? -14 : std::ilogb(magnitude);
  if (exponent < -14)
    exponent = -14;
  double rounded = std::nearbyint(std::ldexp(magnitude, 10 - exponent));
  uint32_t significand = static_cast<uint32_t>(rounded);
  if (significand >> 11) {
    significand >>= 1;
    ++exponent;
  }
  if (significand >> 10)
    return sign | static_cast<uint16_t>(((exponent + 15) << 10) |
                                        (significand & 0x3FF));
  return sign | static_cast<uint16_t>(significand);
}

float fromF16Bits(uint16_t bits) {
  const double magnitude =
      ((bits >> 10) & 0x1F) == 0x1F
          ? ((bits & 0x3FF) ? std::numeric_limits<double>::quiet_NaN()
                            : std::numeric_limits<double>::infinity())
      : ((bits >> 10) & 0x1F) == 0
          ? std::ldexp(static_cast<double>(bits & 0x3FF), -24)
          : std::ldexp(static_cast<double>(0x400 | (bits & 0x3FF)),
                       ((bits >> 10) & 0x1F) - 25);
  return static_cast<float>((bits & 0x8000) ? -magnitude : magnitude);
}

} // namespace microscale::ref
