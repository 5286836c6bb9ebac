//===- Transcode.cpp - NVFP4 B32 -> MXFP6 E2M3 on-chip transcode ----------===//
//
// Every product here is exact in double (at most 2 + 4 significant bits), so
// the single rounding to E2M3 is the only place the two variants can differ.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/Transcode.h"

#include <cmath>
#include <limits>

namespace microscale::ref {

namespace {
constexpr uint8_t kE4M3SignBit = 0x80;
constexpr uint8_t kE2M1SignBit = 0x8;
constexpr uint8_t kE2M3SignBit = 0x20;

bool needsBump(unsigned mantissa, ExponentBumpRule rule) {
  return rule == ExponentBumpRule::NonzeroMantissa ? mantissa != 0
                                                   : mantissa >= 3;
}

/// The E2M3 magnitude code for a non-negative value that is a multiple of
/// 2^-6 and below 8 (always true for the products above).
uint8_t roundToE2M3(double value, TranscodeVariant variant) {
  uint32_t code = encode(ScalarFormat::E2M3, value); // nearest, ties to even
  if (variant == TranscodeVariant::HWCVT || code == 0)
    return static_cast<uint8_t>(code);
  // LUT: at an exact midpoint, take the lower magnitude instead.
  const double chosen = decode(ScalarFormat::E2M3, code);
  const double below = decode(ScalarFormat::E2M3, code - 1);
  if (chosen > value && chosen - value == value - below)
    --code;
  return static_cast<uint8_t>(code);
}

/// A tensor blocked on `axis` seen as [outer, extent, inner].
struct BlockedExtents {
  int64_t outer = 1, extent = 0, inner = 1, blocks = 0;
};
BlockedExtents blockedExtents(const QuantizedTensor &tensor) {
  BlockedExtents e;
  for (int64_t d = 0; d < tensor.axis; ++d)
    e.outer *= tensor.shape[d];
  for (size_t d = tensor.axis + 1; d < tensor.shape.size(); ++d)
    e.inner *= tensor.shape[d];
  e.extent = tensor.shape[tensor.axis];
  e.blocks = tensor.scaleShape[tensor.axis];
  return e;
}

std::array<uint8_t, 64> buildTable(TranscodeVariant variant,
                                   ExponentBumpRule rule) {
  std::array<uint8_t, 64> table{};
  for (unsigned mantissa = 0; mantissa < 8; ++mantissa) {
    const double factor =
        (1.0 + mantissa / 8.0) / (needsBump(mantissa, rule) ? 2.0 : 1.0);
    for (unsigned magnitude = 0; magnitude < 8; ++magnitude)
      table[(mantissa << 3) | magnitude] = roundToE2M3(
          decode(ScalarFormat::E2M1, magnitude) * factor, variant);
  }
  return table;
}
} // namespace

SplitScale splitE4M3Scale(uint8_t e4m3Code, ExponentBumpRule rule) {
  SplitScale split{};
  split.negative = (e4m3Code & kE4M3SignBit) != 0;
  const unsigned magnitude = e4m3Code & 0x7F;
  if (magnitude == 0x7F) {
    split.nan = true;
    split.e8m0Code = 0xFF;
    return split;
  }
  if (magnitude == 0) {
    split.zero = true;
    split.e8m0Code = 0; // 2^-127: the block decodes to +-0 all the same
    return split;
  }
  const unsigned exponentField = magnitude >> 3;
  unsigned mantissa = magnitude & 0x7;
  int exponent; // unbiased exponent of the normalised scale
  if (exponentField != 0) {
    exponent = static_cast<int>(exponentField) - 7;
  } else {
    // Subnormal: mantissa * 2^-9. Shift the leading one into the implicit
    // position; at most two fraction bits survive, so m' fits in 3 bits.
    const unsigned leading = mantissa >= 4 ? 2 : mantissa >= 2 ? 1 : 0;
    exponent = static_cast<int>(leading) - 9;
    mantissa = ((mantissa << (3 - leading)) - 8) & 0x7;
  }
  split.mantissa = static_cast<uint8_t>(mantissa);
  split.bump = needsBump(mantissa, rule);
  split.e8m0Code = static_cast<uint8_t>(exponent + (split.bump ? 1 : 0) + 127);
  return split;
}

const std::array<uint8_t, 64> &transcodeTable(TranscodeVariant variant,
                                              ExponentBumpRule rule) {
  static const std::array<uint8_t, 64> tables[2][2] = {
      {buildTable(TranscodeVariant::LUT, ExponentBumpRule::NonzeroMantissa),
       buildTable(TranscodeVariant::LUT, ExponentBumpRule::MantissaAtLeast3)},
      {buildTable(TranscodeVariant::HWCVT, ExponentBumpRule::NonzeroMantissa),
       buildTable(TranscodeVariant::HWCVT,
                  ExponentBumpRule::MantissaAtLeast3)}};
  return tables[static_cast<unsigned>(variant)][static_cast<unsigned>(rule)];
}

uint8_t transcodeElement(uint8_t e2m1Code, const SplitScale &scale,
                         TranscodeVariant variant, ExponentBumpRule rule) {
  const bool negative =
      ((e2m1Code & kE2M1SignBit) != 0) != scale.negative;
  const uint8_t sign = negative ? kE2M3SignBit : 0;
  if (scale.nan)
    return 0;
  if (scale.zero)
    return sign;
  const uint8_t magnitude =
      transcodeTable(variant, rule)[(scale.mantissa << 3) | (e2m1Code & 0x7)];
  return sign | magnitude;
}

std::string transcode(const QuantizedTensor &source, TranscodeVariant variant,
                      ExponentBumpRule rule, TranscodedTensor &result) {
  if (!(source.format == MXFormat::nvfp4B32()))
    return "transcode supports nvfp4_b32 sources only (got '" +
           std::string(formatName(source.format)) + "')";
  const int64_t rank = static_cast<int64_t>(source.shape.size());
  if (source.axis < 0 || source.axis >= rank)
    return "block axis out of range";
  if (source.scaleShape != scaleShapeFor(source.shape, source.axis, 32))
    return "scale shape does not match the shape";
  const auto [outer, extent, inner, blocks] = blockedExtents(source);
  if (static_cast<int64_t>(source.elements.size()) != outer * extent * inner ||
      static_cast<int64_t>(source.scales.size()) != outer * blocks * inner)
    return "element or scale count does not match the shape";

  TranscodedTensor out;
  out.mx.format = MXFormat::mxfp6E2M3();
  out.mx.shape = source.shape;
  out.mx.axis = source.axis;
  out.mx.scaleShape = source.scaleShape;
  out.mx.elements.resize(source.elements.size());
  out.mx.scales.resize(source.scales.size());
  out.globalScale = source.globalScale;
  out.mx.globalScale = 1.0f;

  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t scaleIndex = (o * blocks + b) * inner + j;
        const SplitScale split =
            splitE4M3Scale(source.scales[scaleIndex], rule);
        out.mx.scales[scaleIndex] = split.e8m0Code;
        const int64_t end = std::min<int64_t>(extent, (b + 1) * 32);
        for (int64_t i = b * 32; i < end; ++i) {
          const int64_t index = (o * extent + i) * inner + j;
          out.mx.elements[index] =
              transcodeElement(source.elements[index], split, variant, rule);
        }
      }
  result = std::move(out);
  return "";
}

std::vector<float> dequantize(const TranscodedTensor &tensor) {
  // element * scale * global once in double, rounded once to f32: the same
  // convention as the NVFP4 source's dequantization, so an exact transcode
  // gives identical floats.
  const QuantizedTensor &mx = tensor.mx;
  const auto [outer, extent, inner, blocks] = blockedExtents(mx);
  std::vector<float> values(mx.elements.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < extent; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t index = (o * extent + i) * inner + j;
        const double scale =
            decode(ScalarFormat::E8M0, mx.scales[(o * blocks + i / 32) * inner + j]);
        const double value = decode(ScalarFormat::E2M3, mx.elements[index]) *
                             scale * tensor.globalScale;
        values[index] = std::isnan(value)
                            ? std::numeric_limits<float>::quiet_NaN()
                            : static_cast<float>(value);
      }
  return values;
}

} // namespace microscale::ref
