//===- FloatFormats.h - Bit-exact minifloat encode/decode -------*- C++ -*-===//
//
// The plain C++ reference for the element and scale formats of microscaling
// (OCP MX v1.0 and NVIDIA NVFP4). It has no MLIR or LLVM dependency so that
// tests, folders, command-line tools and GPU-side harnesses can all share it.
//
// Conventions (see docs/formats.md):
//  * Encoding rounds to nearest, ties to even, and saturates: any finite or
//    infinite magnitude above the largest finite value encodes to that value.
//  * NaN encodes to the format's NaN code where it has one (E4M3FN 0x7F,
//    E5M2 0x7F, E8M0 0xFF, sign kept for signed formats) and to +0 in formats
//    that have none (E2M1, E2M3, E3M2). Block quantization never relies on the
//    latter: a block holding NaN or Inf gets a NaN scale instead.
//  * E8M0 codes 0 and 255 follow OCP by default (2^-127 and NaN); the Triton
//    Hopper fast path reads them as +0 and +inf. Every decoding entry point
//    that can see an E8M0 code takes an explicit `E8M0Edges`.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_FLOATFORMATS_H
#define MICROSCALE_REFERENCE_FLOATFORMATS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace microscale::ref {

/// The scalar formats of microscaling: element types and scale types.
enum class ScalarFormat : uint8_t {
  E2M1,   ///< FP4 element (MLIR f4E2M1FN): no Inf, no NaN, max 6.
  E2M3,   ///< FP6 element (f6E2M3FN): no Inf, no NaN, max 7.5.
  E3M2,   ///< FP6 element (f6E3M2FN): no Inf, no NaN, max 28.
  E4M3FN, ///< FP8 element or NVFP4 scale (f8E4M3FN): NaN = S.1111.111, max 448.
  E5M2,   ///< FP8 element (f8E5M2): IEEE-like, Inf and NaN, max 57344.
  E8M0,   ///< MX scale (f8E8M0FNU): unsigned power of two, 0xFF = NaN.
};

/// How E8M0 codes 0 and 255 decode.
enum class E8M0Edges : uint8_t {
  /// OCP MX v1.0: code 0 is 2^-127, code 255 is NaN. The project's default.
  OCP,
  /// Triton's Hopper PTX path and torch reference (`s << 23` as f32 bits):
  /// code 0 is +0.0, code 255 is +inf. Selectable where a fast path needs it.
  ZeroInf,
};

/// Static description of one scalar format.
struct ScalarFormatInfo {
  std::string_view name;    ///< e.g. "e2m1"
  std::string_view mlirName; ///< MLIR builtin spelling, e.g. "f4E2M1FN"
  unsigned bits;            ///< storage width of one code
  unsigned exponentBits;
  unsigned mantissaBits;
  int bias;
  bool isSigned;
  bool hasInf;
  bool hasNaN;
  double maxFinite;         ///< largest finite magnitude
  int maxExponent;          ///< floor(log2(maxFinite)): OCP's emax_elem
};

const ScalarFormatInfo &getInfo(ScalarFormat format);
std::optional<ScalarFormat> parseScalarFormat(std::string_view name);

/// Decodes one code (the low `bits` bits of `code`). E8M0 uses `edges`.
double decode(ScalarFormat format, uint32_t code,
              E8M0Edges edges = E8M0Edges::OCP);

/// Encodes `value`: round to nearest even, saturating (see file comment).
/// E8M0 takes the power of two at or below |value| (the exponent field of
/// the value, as upstream `arith.truncf` to f8E8M0FNU does), clamped to
/// [2^-127, 2^127]; NaN, zero and negative values give 0xFF, 0x00, 0xFF.
uint32_t encode(ScalarFormat format, double value);

/// True when `code` is a NaN code of `format` (under OCP edges for E8M0).
bool isNaNCode(ScalarFormat format, uint32_t code);

/// Rounds a float to the nearest bf16 (ties to even) and returns its bits.
uint16_t toBF16Bits(float value);
/// Rounds to IEEE half (ties to even, overflow to Inf) and returns its bits.
uint16_t toF16Bits(float value);
float fromBF16Bits(uint16_t bits);
float fromF16Bits(uint16_t bits);

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_FLOATFORMATS_H
