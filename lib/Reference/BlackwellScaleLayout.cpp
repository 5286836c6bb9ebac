//===- BlackwellScaleLayout.cpp - Triton's BlackwellMXScaleLayout ---------===//
//
// E8M0 scales [*L, Ks, N] in the tcgen05 "128x4" scale-factor layout: 512-byte
// atoms of 128 n x 4 ks, the 16 bytes of atom row (n mod 32) being
// [(n/32) mod 4][ks mod 4], atoms K-fastest within each 128-wide N block;
// docs/layouts.md section 7.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

namespace microscale::ref {

namespace {
class BlackwellScaleLayout final : public Layout {
public:
  explicit BlackwellScaleLayout(std::vector<int64_t> shape)
      : Layout(std::move(shape), 8) {
    const size_t rank = logicalShape.size();
    const int64_t batch = detail::batchCount(logicalShape);
    paddedKs = (logicalShape[rank - 2] + 7) / 8 * 8;
    nBlocks = (logicalShape[rank - 1] + 127) / 128;
    storageShape = {1, batch * nBlocks, paddedKs / 4, 2, 256};
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    const int64_t b = detail::batchIndex(logicalShape, index);
    const int64_t ks = index[rank - 2], n = index[rank - 1];
    const int64_t atom = (b * nBlocks + n / 128) * (paddedKs / 4) + ks / 4;
    const int64_t byte =
        atom * 512 + 16 * (n % 32) + 4 * ((n / 32) % 4) + ks % 4;
    for (int i = 0; i < 8; ++i)
      bitOffsets[i] = byte * 8 + i;
  }

private:
  int64_t paddedKs = 0;
  int64_t nBlocks = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

std::unique_ptr<Layout>
makeBlackwellScaleLayout(std::vector<int64_t> logicalShape,
                         std::string *error) {
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "Blackwell MX scale layout");
      !bad.empty())
    return fail(bad);
  return std::make_unique<BlackwellScaleLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
