//===- HopperScaleLayout.cpp - Triton's HopperMXScaleLayout ---------------===//
//
// E8M0 scales for Hopper (docs/layouts.md section 4). Each batch is a
// row-major byte image [Mp/32, 32*Ksp]; scale (m, ks) (m: non-MX index, ks:
// scale index along the MX axis) moves to image byte (Row, Col).
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

namespace microscale::ref {

namespace {
class HopperScaleLayout final : public Layout {
public:
  HopperScaleLayout(std::vector<int64_t> shape, int64_t mxAxis, int64_t warps)
      : Layout(std::move(shape), 8), mxAxis(mxAxis), warps(warps) {
    const size_t rank = logicalShape.size();
    const int64_t rows = logicalShape[rank - 2];
    const int64_t cols = logicalShape[rank - 1];
    const int64_t m = mxAxis == -2 ? cols : rows;
    const int64_t ks = mxAxis == -2 ? rows : cols;
    const int64_t alignM = 32 * warps;
    paddedM = (m + alignM - 1) / alignM * alignM;
    paddedKs = (ks + 1) / 2 * 2;
    storageShape.assign(logicalShape.begin(), logicalShape.end() - 2);
    storageShape.push_back(paddedM / 32);
    storageShape.push_back(32 * paddedKs);
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    const int64_t b = detail::batchIndex(logicalShape, index);
    const int64_t r = index[rank - 2], c = index[rank - 1];
    const int64_t m = mxAxis == -2 ? c : r;
    const int64_t ks = mxAxis == -2 ? r : c;
    const int64_t row = warps * (m / (32 * warps)) + (m / 16) % warps;
    const int64_t col = 64 * (ks / 2) + 32 * ((m / (16 * warps)) % 2) +
                        4 * (m % 8) + 2 * (ks % 2) + (m / 8) % 2;
    const int64_t byte = b * paddedM * paddedKs + row * 32 * paddedKs + col;
    for (int i = 0; i < 8; ++i)
      bitOffsets[i] = byte * 8 + i;
  }

private:
  int64_t mxAxis;
  int64_t warps;
  int64_t paddedM = 0;
  int64_t paddedKs = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

std::unique_ptr<Layout> makeHopperScaleLayout(std::vector<int64_t> logicalShape,
                                              int64_t mxAxis, int numWarps,
                                              std::string *error) {
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "Hopper MX scale layout");
      !bad.empty())
    return fail(bad);
  if (mxAxis != -1 && mxAxis != -2)
    return fail("Hopper MX scale layout: mx_axis must be -1 or -2, got " +
                std::to_string(mxAxis));
  // Triton asserts "warps_n must be a power of 2" (and 0 passes its bit test
  // but divides by zero later).
  if (numWarps <= 0 || (numWarps & (numWarps - 1)) != 0)
    return fail("Hopper MX scale layout: num_warps must be a power of 2 "
                "greater than 0, got " +
                std::to_string(numWarps));
  return std::make_unique<HopperScaleLayout>(std::move(logicalShape), mxAxis,
                                             numWarps);
}

} // namespace microscale::ref
