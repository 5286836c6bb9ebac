//===- CDNA4ScaleLayout.cpp - Triton's CDNA4MXScaleLayout -----------------===//
//
// E8M0 scales [*L, Ks, N] for CDNA4 / gfx950 scaled MFMA: every 32-wide N
// block of a batch owns a contiguous run of 32*Kp bytes, a 32-bit word
// holding n in {n', n'+16} x ks in {k', k'+4}; docs/layouts.md section 8.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

namespace microscale::ref {

namespace {
class CDNA4ScaleLayout final : public Layout {
public:
  explicit CDNA4ScaleLayout(std::vector<int64_t> shape)
      : Layout(std::move(shape), 8) {
    const size_t rank = logicalShape.size();
    const int64_t batch = detail::batchCount(logicalShape);
    paddedKs = (logicalShape[rank - 2] + 7) / 8 * 8;
    nBlocks = (logicalShape[rank - 1] + 31) / 32;
    storageShape = {batch, nBlocks, 32 * paddedKs};
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    const int64_t b = detail::batchIndex(logicalShape, index);
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
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "CDNA4 MX scale layout");
      !bad.empty())
    return fail(bad);
  return std::make_unique<CDNA4ScaleLayout>(std::move(logicalShape));
}

} // namespace microscale::ref
