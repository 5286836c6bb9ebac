//===- CDNA4ScaleLayout.cpp - Triton's CDNA4MXScaleLayout -----------------===//
//
// E8M0 scales [*L, Ks, N] for CDNA4 / gfx950 scaled MFMA: every 32-wide N
// block of a batch owns a contiguous run of 32*Kp bytes, a 32-bit word
// holding n in {n', n'+16} x ks in {k', k'+4}; docs/layouts.md section 8.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

namespace microscale::ref {

namespace {
class CDNA4ScaleLayout final : public Layout {
public:
  explicit CDNA4ScaleLayout(std::vector<int64_t> shape)
      : Layout(std::move(shape), 8) {
    const size_t rank = logicalShape.size();
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < rank; ++d)
      batch *= logicalShape[d];
    paddedKs = (logicalShape[rank - 2] + 7) / 8 * 8;
    nBlocks = (logicalShape[rank - 1] + 31) / 32;
    storageShape = {batch, nBlocks, 32 * paddedKs};
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    int64_t b = 0;
    for (size_t d = 0; d + 2 < rank; ++d)
      b = b * logicalShape[d] + index[d];
    const int64_t ks = index[rank - 2], n = index[rank - 1];
    const int64_t byte = (b * nBlocks + n / 32) * 32 * paddedKs +
                         256 * (ks / 8) + 64 * (ks % 4) + 4 * (n % 16) +
                         2 * ((ks / 4) % 2) + (n / 16) % 2;
    for (int i = 0; i < 8; ++i)
      bitOffsets[i] = byte * 8 + i;
  }

private:
  int64_t paddedKs = 0;
  int64_t nBlocks = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

std::unique_ptr<Layout> makeCDNA4ScaleLayout(std::vector<int64_t> logicalShape,
                                             std::string *error) {
  auto fail = [&](std::string message) -> std::unique_ptr<Layout> {
    if (error)
      *error = std::move(message);
    return nullptr;
  };
  const size_t rank = logicalShape.size();
  if (rank < 2)
    return fail("CDNA4 MX scale layout needs a tensor of rank >= 2, got rank " +
                std::to_string(rank));
  for (int64_t d : logicalShape)
    if (d < 0)
      return fail("CDNA4 MX scale layout: negative extent " +
                  std::to_string(d));
  return std::make_unique<CDNA4ScaleLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
