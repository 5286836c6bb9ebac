//===- HopperValueLayout.cpp - Triton's HopperMXValueLayout ---------------===//
//
// FP4 values for Hopper's mixed-precision MMA (docs/layouts.md section 3).
// Each batch is a row-major byte image [Mp/4, 4*KBp]; packed byte (m, kb)
// (m: non-MX index, kb: MX byte index) moves to image byte (R, C) (Step A),
// then the bits of the eight nibbles of every little-endian 32-bit word are
// interleaved for the PTX decoder (Step B).
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "TritonLayoutSupport.h"

#include <array>

namespace microscale::ref {

namespace {

/// Step B: word bit position (within the 16-bit lane of the nibble) of
/// element bit i (0 = mantissa, 1 = e0, 2 = e1, 3 = sign), per image slot
/// (byte position within the word before interleaving).
constexpr int kLaneBit[4][4] = {
    {6, 7, 8, 15},   // slot 0
    {3, 4, 5, 12},   // slot 1
    {0, 1, 2, 9},    // slot 2
    {13, 10, 11, 14} // slot 3
};

/// Step B as a map of word bits: 16h + 4 slot + i -> 16h + kLaneBit[slot][i].
constexpr std::array<int8_t, 32> makeStepB() {
  std::array<int8_t, 32> map{};
  for (int h = 0; h < 2; ++h)
    for (int slot = 0; slot < 4; ++slot)
      for (int i = 0; i < 4; ++i)
        map[16 * h + 4 * slot + i] =
            static_cast<int8_t>(16 * h + kLaneBit[slot][i]);
  return map;
}

class HopperValueLayout final : public Layout {
public:
  HopperValueLayout(std::vector<int64_t> shape, int64_t mxAxis, int mmaVersion)
      : Layout(std::move(shape), 4), mxAxis(mxAxis), mmaVersion(mmaVersion) {
    const size_t rank = logicalShape.size();
    const int64_t rows = logicalShape[rank - 2];
    const int64_t cols = logicalShape[rank - 1];
    const int64_t m = mxAxis == -2 ? cols : rows;
    const int64_t kb = (mxAxis == -2 ? rows : cols) / 2;
    paddedM = (m + 255) / 256 * 256;
    paddedKB = (kb + 63) / 64 * 64;
    storageShape.assign(logicalShape.begin(), logicalShape.end() - 2);
    storageShape.push_back(paddedM / 4);
    storageShape.push_back(4 * paddedKB);
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    locateBeforeInterleave(index, bitOffsets);
    for (int i = 0; i < 4; ++i)
      bitOffsets[i] = bitOffsets[i] - bitOffsets[i] % 32 +
                      interleave[bitOffsets[i] % 32];
  }

  const int8_t *getWordInterleave() const override { return interleave.data(); }

  /// Step A, with the word's eight nibbles still whole: the nibble of slot
  /// `slot` and MX parity h sits at word bits 16h + 4 slot .. + 3. (This
  /// order, rather than 8 slot + 4h, is the one whose Step B needs the
  /// fewest distinct shifts: 8.)
  void locateBeforeInterleave(const int64_t *index,
                              int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    const int64_t b = detail::batchIndex(logicalShape, index);
    const int64_t r = index[rank - 2], c = index[rank - 1];
    int64_t m, kb, h;
    if (mxAxis == -2) {
      m = c;
      kb = r / 2;
      h = r % 2;
    } else {
      m = r;
      kb = c / 2;
      h = c % 2;
    }
    // Step A: tile permutation.
    const int64_t row = 4 * (m / 16) + (m / 2) % 4;
    int64_t col = 128 * (kb / 32) + 64 * (m % 2);
    if (mmaVersion == 3)
      col += 16 * (kb % 4) + 4 * ((kb / 8) % 4) + 2 * ((kb / 4) % 2) +
             (m / 8) % 2;
    else
      col += 16 * ((kb / 4) % 4) + 8 * ((kb / 16) % 2) + 4 * ((m / 8) % 2) +
             kb % 4;
    const int64_t wordByte =
        b * paddedM * paddedKB + row * 4 * paddedKB + (col - col % 4);
    const int slot = static_cast<int>(col % 4);
    for (int i = 0; i < 4; ++i)
      bitOffsets[i] = wordByte * 8 + 16 * h + 4 * slot + i;
  }

private:
  static constexpr std::array<int8_t, 32> interleave = makeStepB();
  int64_t mxAxis;
  int mmaVersion;
  int64_t paddedM = 0;
  int64_t paddedKB = 0;
  std::vector<int64_t> storageShape;
};

} // namespace

std::unique_ptr<Layout> makeHopperValueLayout(std::vector<int64_t> logicalShape,
                                              int64_t mxAxis, int mmaVersion,
                                              std::string *error) {
  auto fail = [&](std::string message) {
    return detail::refuse(error, std::move(message));
  };
  if (std::string bad = detail::checkTritonShape(logicalShape, "Hopper MX value layout");
      !bad.empty())
    return fail(bad);
  if (mxAxis != -1 && mxAxis != -2)
    return fail("Hopper MX value layout: mx_axis must be -1 or -2, got " +
                std::to_string(mxAxis));
  if (mmaVersion != 2 && mmaVersion != 3)
    return fail("Hopper MX value layout: mma_version must be 2 or 3, got " +
                std::to_string(mmaVersion));
  // The MX axis is packed by this layout; the last axis is packed in the
  // canonical input. Check -2 first, as Triton does for odd K.
  if (std::string bad = detail::checkFP4Packing(logicalShape, mxAxis == -2);
      !bad.empty())
    return fail(bad);
  return std::make_unique<HopperValueLayout>(std::move(logicalShape), mxAxis,
                                             mmaVersion);
}

} // namespace microscale::ref
