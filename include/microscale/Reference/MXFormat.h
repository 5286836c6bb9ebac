//===- MXFormat.h - Microscaling formats and block quantization -*- C++ -*-===//
//
// A microscaling format is an element format, a scale format and a block
// size, plus (NVFP4) a tensor-wide f32 global scale. This header quantizes and
// dequantizes logical tensors along one axis with that format:
//
//  * MX (E8M0 scales), OCP MX v1.0 section 6.3: the shared exponent is
//    floor(log2(max |v|)) - emax_elem, clamped to E8M0's range; elements are
//    v / 2^shared rounded to nearest even and saturated.
//  * NVFP4 (E4M3 scales per 16, or per 32 for "B32"): the block scale is
//    amax_block / 6 / global, rounded to E4M3 (nearest even, saturating);
//    elements are v / (scale * global) rounded to E2M1. The global scale is
//    the factor the dequantizer multiplies by: x ~= e * s * global. Its
//    default is amax_tensor / (6 * 448), or 1 for an all-zero tensor.
//  * A block holding NaN or +-Inf gets a NaN scale (E8M0 0xFF, E4M3 0x7F)
//    and zero elements, so it dequantizes to NaN rather than to a lie.
//  * Dequantization computes element * scale (* global) once in double and
//    rounds it to f32: the same bits as f32 arithmetic on a GPU, because
//    element * scale is exact. Every NaN result is the positive quiet NaN.
//
// Tensors are row-major, one unpacked code per element (byte-per-code);
// packing into bytes is the business of a layout (Layout.h).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_MXFORMAT_H
#define MICROSCALE_REFERENCE_MXFORMAT_H

#include "microscale/Reference/FloatFormats.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace microscale::ref {

struct MXFormat {
  ScalarFormat element;
  ScalarFormat scale;
  unsigned blockSize;
  bool hasGlobalScale;

  bool operator==(const MXFormat &o) const {
    return element == o.element && scale == o.scale &&
           blockSize == o.blockSize && hasGlobalScale == o.hasGlobalScale;
  }
  bool operator!=(const MXFormat &o) const { return !(*this == o); }

  static MXFormat mxfp4() { return {ScalarFormat::E2M1, ScalarFormat::E8M0, 32, false}; }
  static MXFormat mxfp6E2M3() { return {ScalarFormat::E2M3, ScalarFormat::E8M0, 32, false}; }
  static MXFormat mxfp6E3M2() { return {ScalarFormat::E3M2, ScalarFormat::E8M0, 32, false}; }
  static MXFormat mxfp8E4M3() { return {ScalarFormat::E4M3FN, ScalarFormat::E8M0, 32, false}; }
  static MXFormat mxfp8E5M2() { return {ScalarFormat::E5M2, ScalarFormat::E8M0, 32, false}; }
  static MXFormat nvfp4() { return {ScalarFormat::E2M1, ScalarFormat::E4M3FN, 16, true}; }
  static MXFormat nvfp4B32() { return {ScalarFormat::E2M1, ScalarFormat::E4M3FN, 32, true}; }
};

/// The named formats, in the order the dialect prints them.
struct NamedFormat {
  std::string_view name;
  MXFormat format;
};
const std::vector<NamedFormat> &namedFormats();
std::optional<MXFormat> lookupFormat(std::string_view name);
/// The short name of `format`, or an empty view when it has none.
std::string_view formatName(const MXFormat &format);

/// Checks that the format is one this library can quantize: elements E2M1,
/// E2M3, E3M2, E4M3FN or E5M2; scales E8M0 or E4M3FN; a block size that is a
/// power of two in [2, 1024]; a global scale only with E4M3 scales. Returns
/// an empty string when valid, else what is wrong.
std::string verifyFormat(const MXFormat &format);

/// Quantizes one block of `n` <= blockSize values (a short tail block is
/// allowed) into element codes; returns the scale code.
uint32_t quantizeBlock(const MXFormat &format, const float *values, size_t n,
                       float globalScale, uint8_t *elementCodes);

/// Dequantizes one block.
void dequantizeBlock(const MXFormat &format, const uint8_t *elementCodes,
                     size_t n, uint32_t scaleCode, float globalScale,
                     float *values, E8M0Edges edges = E8M0Edges::OCP);

/// The NVFP4 default global scale for a tensor: amax / (6 * 448), 1 if zero.
float defaultGlobalScale(const MXFormat &format, const float *values,
                         size_t n);

/// A quantized tensor in unpacked form.
struct QuantizedTensor {
  MXFormat format;
  std::vector<int64_t> shape;      ///< logical shape
  int64_t axis;                    ///< block axis, in [0, rank)
  std::vector<int64_t> scaleShape; ///< shape with axis -> ceil(n / block)
  std::vector<uint8_t> elements;   ///< one code per logical element
  std::vector<uint8_t> scales;     ///< one code per scale element
  float globalScale = 1.0f;
};

/// The logical scale shape for `shape` blocked along `axis`.
std::vector<int64_t> scaleShapeFor(const std::vector<int64_t> &shape,
                                   int64_t axis, unsigned blockSize);

/// Quantizes a row-major tensor along `axis`. For formats with a global
/// scale, `globalScale` overrides the default when given. Preconditions
/// (checked by callers, e.g. the dialect verifiers): verifyFormat(format) is
/// empty and 0 <= axis < rank.
QuantizedTensor quantize(const MXFormat &format,
                         const std::vector<int64_t> &shape, int64_t axis,
                         const float *values,
                         std::optional<float> globalScale = std::nullopt);

/// Dequantizes to a row-major float tensor.
std::vector<float> dequantize(const QuantizedTensor &tensor,
                              E8M0Edges edges = E8M0Edges::OCP);

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_MXFORMAT_H
