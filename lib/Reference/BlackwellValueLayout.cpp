//===- BlackwellValueLayout.cpp - Triton's BlackwellMXValueLayout ---------===//
//
// FP4 values [*L, K, N] packed along K, column-major within each batch, with
// the packed K extent padded to a multiple of 128 bytes (TMA alignment);
// docs/layouts.md section 5.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

namespace microscale::ref {

namespace {
class BlackwellValueLayout final : public Layout {
public:
  explicit BlackwellValueLayout(std::vector<int64_t> shape)
      : Layout(std::move(shape), 4) {
    const size_t rank = logicalShape.size();
    n = logicalShape[rank - 1];
    paddedKB = (logicalShape[rank - 2] / 2 + 127) / 128 * 128;
    storageShape.assign(logicalShape.begin(), logicalShape.end() - 2);
    storageShape.push_back(n);
    storageShape.push_back(paddedKB);
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    int64_t b = 0;
    for (size_t d = 0; d + 2 < rank; ++d)
      b = b * logicalShape[d] + index[d];
    const int64_t k = index[rank - 2], col = index[rank - 1];
    const int64_t byte = (b * n + col) * paddedKB + k / 2;
    const int64_t first = byte * 8 + 4 * (k % 2);
    for (int i = 0; i < 4; ++i)
      bitOffsets[i] = first + i;
  }

private:
  int64_t n = 0;
  int64_t paddedKB = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

std::unique_ptr<Layout>
makeBlackwellValueLayout(std::vector<int64_t> logicalShape,
                         std::string *error) {
  auto fail = [&](std::string message) -> std::unique_ptr<Layout> {
    if (error)
      *error = std::move(message);
    return nullptr;
  };
  const size_t rank = logicalShape.size();
  if (rank < 2)
    return fail(
        "Blackwell MX value layout needs a tensor of rank >= 2, got rank " +
        std::to_string(rank));
  for (int64_t d : logicalShape)
    if (d < 0)
      return fail("Blackwell MX value layout: negative extent " +
                  std::to_string(d));
  // K is packed by this layout, N by the canonical form the data comes from.
  if (logicalShape[rank - 2] % 2 != 0)
    return fail("FP4 packing dimension -2 must have an even size, got " +
                std::to_string(logicalShape[rank - 2]));
  if (logicalShape[rank - 1] % 2 != 0)
    return fail("FP4 packing dimension -1 must have an even size, got " +
                std::to_string(logicalShape[rank - 1]));
  return std::make_unique<BlackwellValueLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
