//===- TritonLayoutSupport.h - Shared pieces of the Triton layouts -*- C++ -*-===//
//
// Internal to lib/Reference: the checks every Triton layout factory starts
// with (Triton's own wording where Triton raises) and the batch index over
// the leading dims of a [*L, R, C] tensor.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_REFERENCE_TRITONLAYOUTSUPPORT_H
#define MICROSCALE_LIB_REFERENCE_TRITONLAYOUTSUPPORT_H

#include "microscale/Reference/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace microscale::ref::detail {

/// How a factory refuses: sets *error (when non-null), returns null.
inline std::unique_ptr<Layout> refuse(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return nullptr;
}

/// Rank >= 2 and no negative extent; returns what is wrong, or "".
inline std::string checkTritonShape(const std::vector<int64_t> &shape,
                                    const std::string &layout) {
  if (shape.size() < 2)
    return layout + " needs a tensor of rank >= 2, got rank " +
           std::to_string(shape.size());
  for (int64_t d : shape)
    if (d < 0)
      return layout + ": negative extent " + std::to_string(d);
  return {};
}

/// Triton's errors for FP4 data packed along dim -2 by the layout (when
/// `minusTwoPacked`) and along dim -1 by the canonical form it comes from.
/// Dim -2 is checked first, as Triton does for an odd K.
inline std::string checkFP4Packing(const std::vector<int64_t> &shape,
                                   bool minusTwoPacked) {
  const size_t rank = shape.size();
  if (minusTwoPacked && shape[rank - 2] % 2 != 0)
    return "FP4 packing dimension -2 must have an even size, got " +
           std::to_string(shape[rank - 2]);
  if (shape[rank - 1] % 2 != 0)
    return "FP4 packing dimension -1 must have an even size, got " +
           std::to_string(shape[rank - 1]);
  return {};
}

/// The number of [R, C] matrices: the product of the leading dims.
inline int64_t batchCount(const std::vector<int64_t> &shape) {
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    batch *= shape[d];
  return batch;
}

/// The row-major index of `index`'s matrix among the leading dims.
inline int64_t batchIndex(const std::vector<int64_t> &shape,
                          const int64_t *index) {
  int64_t batch = 0;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    batch = batch * shape[d] + index[d];
  return batch;
}

} // namespace microscale::ref::detail

#endif
