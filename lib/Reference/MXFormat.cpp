//===- MXFormat.cpp - Microscaling block quantization ---------------------===//
#include "microscale/Reference/MXFormat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cassert>

namespace microscale::ref {

const std::vector<NamedFormat> &namedFormats() {
  static const std::vector<NamedFormat> formats = {
      {"mxfp4", MXFormat::mxfp4()},
      {"mxfp6_e2m3", MXFormat::mxfp6E2M3()},
      {"mxfp6_e3m2", MXFormat::mxfp6E3M2()},
      {"mxfp8_e4m3", MXFormat::mxfp8E4M3()},
      {"mxfp8_e5m2", MXFormat::mxfp8E5M2()},
      {"nvfp4", MXFormat::nvfp4()},
      {"nvfp4_b32", MXFormat::nvfp4B32()},
  };
  return formats;
}

std::optional<MXFormat> lookupFormat(std::string_view name) {
  for (const NamedFormat &named : namedFormats())
    if (named.name == name)
      return named.format;
  return std::nullopt;
}

std::string_view formatName(const MXFormat &format) {
  for (const NamedFormat &named : namedFormats())
    if (named.format == format)
      return named.name;
  return {};
}

std::string verifyFormat(const MXFormat &format) {
  switch (format.element) {
  case ScalarFormat::E2M1:
  case ScalarFormat::E2M3:
  case ScalarFormat::E3M2:
  case ScalarFormat::E4M3FN:
  case ScalarFormat::E5M2:
    break;
  default:
    return "element format must be one of f4E2M1FN, f6E2M3FN, f6E3M2FN, "
           "f8E4M3FN, f8E5M2";
  }
  if (format.scale != ScalarFormat::E8M0 &&
      format.scale != ScalarFormat::E4M3FN)
    return "scale format must be f8E8M0FNU or f8E4M3FN";
  const unsigned b = format.blockSize;
  if (b < 2 || b > 1024 || (b & (b - 1)) != 0)
    return "block size must be a power of two in [2, 1024], got " +
           std::to_string(b);
  if (format.hasGlobalScale && format.scale != ScalarFormat::E4M3FN)
    return "a global scale requires f8E4M3FN block scales (NVFP4 style)";
  return {};
}

static bool allFinite(const float *values, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i]))
      return false;
  return true;
}

static double blockAmax(const float *values, size_t n) {
  double amax = 0;
  for (size_t i = 0; i < n; ++i)
    amax = std::max(amax, std::fabs(static_cast<double>(values[i])));
  return amax;
}

uint32_t quantizeBlock(const MXFormat &format, const float *values, size_t n,
                       float globalScale, uint8_t *elementCodes) {
  std::fill(elementCodes, elementCodes + n, 0);
  if (!allFinite(values, n))
    return format.scale == ScalarFormat::E8M0 ? 0xFF : 0x7F;
  const double amax = blockAmax(values, n);
  const ScalarFormatInfo &element = getInfo(format.element);
  double scale;
  uint32_t scaleCode;
  if (format.scale == ScalarFormat::E8M0) {
    int sharedExponent =
        amax == 0 ? -127 : std::ilogb(amax) - element.maxExponent;
    sharedExponent = std::clamp(sharedExponent, -127, 127);
    scaleCode = static_cast<uint32_t>(sharedExponent + 127);
    scale = std::ldexp(1.0, sharedExponent);
  } else {
    const double global = format.hasGlobalScale ? globalScale : 1.0;
    scaleCode = encode(format.scale, amax / element.maxFinite / global);
    scale = decode(format.scale, scaleCode) * global;
  }
  if (scale == 0 || !std::isfinite(scale))
    return scaleCode; // all elements stay zero
  for (size_t i = 0; i < n; ++i)
    elementCodes[i] = static_cast<uint8_t>(
        encode(format.element, static_cast<double>(values[i]) / scale));
  return scaleCode;
}

void dequantizeBlock(const MXFormat &format, const uint8_t *elementCodes,
                     size_t n, uint32_t scaleCode, float globalScale,
                     float *values, E8M0Edges edges) {
  double scale = decode(format.scale, scaleCode, edges);
  if (format.hasGlobalScale)
    scale *= globalScale;
  for (size_t i = 0; i < n; ++i) {
    const double value = decode(format.element, elementCodes[i]) * scale;
    // One NaN for every target: the host's 0 * inf would be a negative NaN
    // on x86, while GPUs produce a positive canonical NaN.
    values[i] = std::isnan(value) ? std::numeric_limits<float>::quiet_NaN()
                                  : static_cast<float>(value);
  }
}

float defaultGlobalScale(const MXFormat &format, const float *values,
                         size_t n) {
  if (!format.hasGlobalScale)
    return 1.0f;
  double amax = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(values[i]))
      amax = std::max(amax, std::fabs(static_cast<double>(values[i])));
  if (amax == 0)
    return 1.0f;
  return static_cast<float>(amax / (getInfo(format.element).maxFinite *
                                    getInfo(format.scale).maxFinite));
}

std::vector<int64_t> scaleShapeFor(const std::vector<int64_t> &shape,
                                   int64_t axis, unsigned blockSize) {
  std::vector<int64_t> result = shape;
  result[axis] = (shape[axis] + blockSize - 1) / blockSize;
  return result;
}

namespace {
/// Visits the blocks of a row-major tensor along `axis`: calls
/// fn(firstElementOffset, stride, count, scaleOffset) for every block.
template <typename Fn>
void forEachBlock(const std::vector<int64_t> &shape, int64_t axis,
                  unsigned blockSize, Fn fn) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  const int64_t extent = shape[axis];
  const int64_t blocks = (extent + blockSize - 1) / blockSize;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t blk = 0; blk < blocks; ++blk)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t first = (o * extent + blk * blockSize) * inner + i;
        const int64_t count =
            std::min<int64_t>(blockSize, extent - blk * blockSize);
        fn(first, inner, count, (o * blocks + blk) * inner + i);
      }
}
} // namespace

QuantizedTensor quantize(const MXFormat &format,
                         const std::vector<int64_t> &shape, int64_t axis,
                         const float *values,
                         std::optional<float> globalScale) {
  assert(verifyFormat(format).empty() && "quantize needs a valid format");
  assert(axis >= 0 && axis < static_cast<int64_t>(shape.size()) &&
         "block axis out of range");
  QuantizedTensor result;
  result.format = format;
  result.shape = shape;
  result.axis = axis;
  result.scaleShape = scaleShapeFor(shape, axis, format.blockSize);
  int64_t count = 1, scaleCount = 1;
  for (int64_t d : shape)
    count *= d;
  for (int64_t d : result.scaleShape)
    scaleCount *= d;
  result.elements.assign(count, 0);
  result.scales.assign(scaleCount, 0);
  result.globalScale = globalScale.value_or(
      defaultGlobalScale(format, values, static_cast<size_t>(count)));
  std::vector<float> block(format.blockSize);
  std::vector<uint8_t> codes(format.blockSize);
  forEachBlock(shape, axis, format.blockSize,
               [&](int64_t first, int64_t stride, int64_t n, int64_t s) {
                 for (int64_t i = 0; i < n; ++i)
                   block[i] = values[first + i * stride];
                 result.scales[s] = static_cast<uint8_t>(quantizeBlock(
                     format, block.data(), n, result.globalScale,
                     codes.data()));
                 for (int64_t i = 0; i < n; ++i)
                   result.elements[first + i * stride] = codes[i];
               });
  return result;
}

std::vector<float> dequantize(const QuantizedTensor &tensor,
                              E8M0Edges edges) {
  std::vector<float> result(tensor.elements.size());
  std::vector<uint8_t> codes(tensor.format.blockSize);
  std::vector<float> block(tensor.format.blockSize);
  forEachBlock(tensor.shape, tensor.axis, tensor.format.blockSize,
               [&](int64_t first, int64_t stride, int64_t n, int64_t s) {
                 for (int64_t i = 0; i < n; ++i)
                   codes[i] = tensor.elements[first + i * stride];
                 dequantizeBlock(tensor.format, codes.data(), n,
                                 tensor.scales[s], tensor.globalScale,
                                 block.data(), edges);
                 for (int64_t i = 0; i < n; ++i)
                   result[first + i * stride] = block[i];
               });
  return result;
}

} // namespace microscale::ref
