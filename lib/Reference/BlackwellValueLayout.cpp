//===- BlackwellValueLayout.cpp - Triton's BlackwellMXValueLayout ---------===//
//
// FP4 values [*L, K, N] packed along K, column-major within each batch, with
// the packed K extent padded to a multiple of 128 bytes (TMA alignment);
// docs/layouts.md section 5.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

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
    const int64_t b = detail::batchIndex(logicalShape, index);
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
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "Blackwell MX value layout");
      !bad.empty())
    return fail(bad);
  // K is packed by this layout, N by the canonical form the data comes from.
  if (std::string bad = detail::checkFP4Packing(logicalShape, true);
      !bad.empty())
    return fail(bad);
  return std::make_unique<BlackwellValueLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
