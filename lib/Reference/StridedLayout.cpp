//===- StridedLayout.cpp - Triton's StridedLayout(major_dim) --------------===//
#include "microscale/Reference/Layout.h"

#include <numeric>

namespace microscale::ref {

namespace {
class StridedLayout final : public Layout {
public:
  StridedLayout(std::vector<int64_t> shape, unsigned bits, int64_t packDim)
      : Layout(std::move(shape), bits), packDim(packDim) {
    const int64_t rank = static_cast<int64_t>(logicalShape.size());
    // Memory order, outermost first: the other dims in order, then packDim.
    for (int64_t d = 0; d < rank; ++d)
      if (d != packDim)
        memoryOrder.push_back(d);
    memoryOrder.push_back(packDim);
    storageShape.resize(rank);
    for (int64_t i = 0; i < rank; ++i)
      storageShape[i] = logicalShape[memoryOrder[i]];
    storageShape[rank - 1] = logicalShape[packDim] * elementBits / 8;
    strides.assign(rank, 1); // bytes, indexed by memory-order position
    for (int64_t i = rank - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * storageShape[i + 1];
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const int64_t rank = static_cast<int64_t>(logicalShape.size());
    int64_t rowByte = 0;
    for (int64_t i = 0; i + 1 < rank; ++i)
      rowByte += index[memoryOrder[i]] * strides[i];
    const int64_t firstBit = rowByte * 8 + index[packDim] * elementBits;
    for (unsigned b = 0; b < elementBits; ++b)
      bitOffsets[b] = firstBit + b;
  }

private:
  int64_t packDim;
  std::vector<int64_t> memoryOrder;
  std::vector<int64_t> storageShape;
  std::vector<int64_t> strides;
};
} // namespace

std::unique_ptr<Layout> makeStridedLayout(std::vector<int64_t> logicalShape,
                                          unsigned elementBits,
                                          int64_t majorDim,
                                          std::string *error) {
  auto fail = [&](std::string message) -> std::unique_ptr<Layout> {
    if (error)
      *error = std::move(message);
    return nullptr;
  };
  const int64_t rank = static_cast<int64_t>(logicalShape.size());
  if (rank == 0)
    return fail("strided layout needs a tensor of rank >= 1");
  if (majorDim < -rank || majorDim >= rank)
    return fail("major_dim " + std::to_string(majorDim) +
                " is out of range for rank " + std::to_string(rank));
  if (elementBits != 4 && elementBits != 6 && elementBits != 8)
    return fail("element width must be 4, 6 or 8 bits, got " +
                std::to_string(elementBits));
  const int64_t packDim = majorDim < 0 ? majorDim + rank : majorDim;
  const int64_t extent = logicalShape[packDim];
  // Bit-exact wording of Triton's ValueError for FP4.
  if (elementBits == 4 && extent % 2 != 0)
    return fail("FP4 packing dimension " + std::to_string(majorDim) +
                " must have an even size, got " + std::to_string(extent));
  if (elementBits == 6 && extent % 4 != 0)
    return fail("FP6 packing dimension " + std::to_string(majorDim) +
                " must have a size divisible by 4, got " +
                std::to_string(extent));
  return std::make_unique<StridedLayout>(std::move(logicalShape), elementBits,
                                         packDim);
}

} // namespace microscale::ref
