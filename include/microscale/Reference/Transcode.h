//===- Transcode.h - NVFP4 B32 -> MXFP6 E2M3 on-chip transcode --*- C++ -*-===//
//
// The bit-exact reference for seed 002 (BitDance): an NVFP4 B32 block (E2M1
// elements, one E4M3FN scale per 32, tensor-wide f32 global scale) becomes an
// MXFP6 E2M3 block (one E8M0 scale per 32) without going through f32:
//
//   scale = 2^e * (1 + m/8)           (E4M3 subnormals are normalised first:
//                                      m/8 * 2^-6 is always 2^k * (1 + m'/8))
//   E8M0  = 2^(e + bump)
//   E2M3  = round(x * (1 + m/8) / 2^bump)   for each E2M1 element x
//
// The bump keeps 6 * (1 + m/8) inside E2M3's 7.5. The implementation rule
// of the seed bumps for every nonzero mantissa; the minimal rule bumps only
// when the mantissa field is >= 3 (6 * 1.25 = 7.5 still fits). Element signs
// and the global scale are carried unchanged.
//
// Two rounding variants, one table of 64 entries each (8 scale mantissas x 8
// E2M1 magnitudes):
//  * LUT: nearest, ties to the LOWER magnitude (the seed's reference table);
//  * HWCVT: FP4 -> F16, multiply (exact in F16), hardware F16 -> FP6
//    conversion, i.e. nearest, ties to even, saturating.
// They differ only at exact midpoints.
//
// Edge scales: a zero E4M3 scale gives E8M0 code 0 and zero elements (signs
// kept), so the block still decodes to +-0; a NaN scale gives E8M0 0xFF and
// zero elements, so it decodes to NaN; a negative scale (never produced by
// quantize, but representable) flips the element signs.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_TRANSCODE_H
#define MICROSCALE_REFERENCE_TRANSCODE_H

#include "microscale/Reference/MXFormat.h"

#include <array>
#include <cstdint>
#include <string>

namespace microscale::ref {

enum class TranscodeVariant : uint8_t {
  LUT,   ///< nearest, ties to the lower magnitude
  HWCVT, ///< nearest, ties to even (the hardware F16 -> FP6 conversion)
};

enum class ExponentBumpRule : uint8_t {
  NonzeroMantissa, ///< the seed's implementation rule (the default)
  MantissaAtLeast3, ///< the minimal rule that still avoids saturation
};

/// An E4M3FN scale split into the E8M0 scale and the factor folded into the
/// elements.
struct SplitScale {
  uint8_t e8m0Code;  ///< OCP E8M0 code of 2^(e + bump); 0xFF for NaN
  uint8_t mantissa;  ///< normalised mantissa field m in [0, 8)
  bool bump;         ///< one power of two moved from the elements to E8M0
  bool negative;     ///< the scale's sign: flips every element's sign
  bool zero;         ///< the scale is +-0: every element becomes +-0
  bool nan;          ///< the scale is NaN: every element becomes 0
};

SplitScale splitE4M3Scale(uint8_t e4m3Code, ExponentBumpRule rule);

/// The 64-entry table: index (mantissa << 3) | e2m1 magnitude code (0..7),
/// value the E2M3 magnitude code (0..31). The bump follows `rule`.
const std::array<uint8_t, 64> &transcodeTable(TranscodeVariant variant,
                                              ExponentBumpRule rule);

/// Transcodes one E2M1 code (sign in bit 3) under a split scale; returns the
/// E2M3 code (sign in bit 5).
uint8_t transcodeElement(uint8_t e2m1Code, const SplitScale &scale,
                         TranscodeVariant variant, ExponentBumpRule rule);

/// An MXFP6 tensor carrying the NVFP4 source's global scale, which the MX
/// format itself has no place for.
struct TranscodedTensor {
  QuantizedTensor mx; ///< format mxfp6E2M3(), same shape, axis, scale shape
  float globalScale = 1.0f;
};

/// Transcodes a whole tensor. Returns an error message (and leaves `result`
/// untouched) unless `source` is NVFP4 B32.
std::string transcode(const QuantizedTensor &source, TranscodeVariant variant,
                      ExponentBumpRule rule, TranscodedTensor &result);

/// Dequantizes to f32 with the global scale applied.
std::vector<float> dequantize(const TranscodedTensor &tensor);

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_TRANSCODE_H
