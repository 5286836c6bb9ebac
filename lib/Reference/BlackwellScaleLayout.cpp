//===- BlackwellScaleLayout.cpp - Triton's BlackwellMXScaleLayout ---------===//
//
// E8M0 scales [*L, Ks, N] in the tcgen05 "128x4" scale-factor layout: 512-byte
// atoms of 128 n x 4 ks, the 16 bytes of atom row (n mod 32) being
// [(n/32) mod 4][ks mod 4], atoms K-fastest within each 128-wide N block;
// docs/layouts.md section 7.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

namespace microscale::ref {

namespace {
class BlackwellScaleLayout final : public Layout {
public:
  explicit BlackwellScaleLayout(std::vector<int64_t> shape)
      : Layout(std::move(shape), 8) {
    const size_t rank = logicalShape.size();
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < rank; ++d)
      batch *= logicalShape[d];
    paddedKs = (logicalShape[rank - 2] + 7) / 8 * 8;
    nBlocks = (logicalShape[rank - 1] + 127) / 128;
    storageShape = {1, batch * nBlocks, paddedKs / 4, 2, 256};
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    int64_t b = 0;
    for (size_t d = 0; d + 2 < rank; ++d)
      b = b * logicalShape[d] + index[d];
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
  auto fail = [&](std::string message) -> std::unique_ptr<Layout> {
    if (error)
      *error = std::move(message);
    return nullptr;
  };
  const size_t rank = logicalShape.size();
  if (rank < 2)
    return fail(
        "Blackwell MX scale layout needs a tensor of rank >= 2, got rank " +
        std::to_string(rank));
  for (int64_t d : logicalShape)
    if (d < 0)
      return fail("Blackwell MX scale layout: negative extent " +
                  std::to_string(d));
  return std::make_unique<BlackwellScaleLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
