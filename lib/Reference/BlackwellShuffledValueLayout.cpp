//===- BlackwellShuffledValueLayout.cpp - BlackwellMX4ValueShuffledLayout -===//
//
// FP4 values [*L, K, N] packed along K and cut into [block_n, block_k/2]-byte
// TMA boxes stored contiguously, K-tiles outermost; docs/layouts.md section 6.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

#include <numeric>

namespace microscale::ref {

namespace {
class BlackwellShuffledValueLayout final : public Layout {
public:
  BlackwellShuffledValueLayout(std::vector<int64_t> shape, int64_t blockK,
                               int64_t blockN)
      : Layout(std::move(shape), 4), tileKB(blockK / 2), tileN(blockN) {
    const size_t rank = logicalShape.size();
    const int64_t batch = detail::batchCount(logicalShape);
    // 128 bytes is the TMA alignment of the packed K extent.
    const int64_t alignKB = std::lcm<int64_t>(128, tileKB);
    const int64_t paddedKB =
        (logicalShape[rank - 2] / 2 + alignKB - 1) / alignKB * alignKB;
    tilesK = paddedKB / tileKB;
    tilesN = (logicalShape[rank - 1] + tileN - 1) / tileN;
    storageShape = {batch, tilesK, tilesN, tileN, tileKB};
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    const int64_t e = detail::batchIndex(logicalShape, index);
    const int64_t k = index[rank - 2], n = index[rank - 1];
    const int64_t kb = k / 2;
    const int64_t byte =
        (((e * tilesK + kb / tileKB) * tilesN + n / tileN) * tileN +
         n % tileN) *
            tileKB +
        kb % tileKB;
    const int64_t first = byte * 8 + 4 * (k % 2);
    for (int i = 0; i < 4; ++i)
      bitOffsets[i] = first + i;
  }

private:
  int64_t tileKB;
  int64_t tileN;
  int64_t tilesK = 0;
  int64_t tilesN = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

std::unique_ptr<Layout>
makeBlackwellShuffledValueLayout(std::vector<int64_t> logicalShape,
                                 int64_t blockK, int64_t blockN,
                                 std::string *error) {
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "Blackwell MX4 shuffled value layout");
      !bad.empty())
    return fail(bad);
  // block_k counts FP4 elements along K; a tile holds block_k/2 whole bytes.
  if (blockK <= 0 || blockK % 2 != 0)
    return fail("Blackwell MX4 shuffled value layout: block_k must be a "
                "positive even number, got " +
                std::to_string(blockK));
  if (blockN <= 0)
    return fail("Blackwell MX4 shuffled value layout: block_n must be "
                "positive, got " +
                std::to_string(blockN));
  // Triton's wording: K is packed here, N in the canonical intermediate.
  if (std::string bad = detail::checkFP4Packing(logicalShape, true);
      !bad.empty())
    return fail(bad);
  return std::make_unique<BlackwellShuffledValueLayout>(std::move(logicalShape),
                                                        blockK, blockN);
}

} // namespace microscale::ref
