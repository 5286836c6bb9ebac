//===- BlackwellScaleAtomTest.cpp - blackwell_scale is the tcgen05 atom ---===//
//
// `#microscale.blackwell_scale` must be, byte for byte, the scale-factor
// layout that tcgen05.mma's block scaling reads after
// `tcgen05.cp.cta_group::1.32x128b.warpx4` (PTX ISA 8.8: the block-scaling
// subsections of 9.7.16.10.7, the scale factors of A and B in tensor
// memory and their IDs; and tcgen05.cp's 32x128b shape with .warpx4
// multicast), as CUTLASS builds it (`Sm1xxBlockScaledConfig`,
// SfKMajorAtom = ((32,4),(SFVec,4)):((16,4),(0,1)) in
// include/cutlass/detail/sm100_blockscaled_layout.hpp).
//
// The atom is stated here from the copy's side, not from the layout's own
// formula: one 512-byte atom covers 128 rows (M or N) x 4 K blocks; the
// copy reads it as 32 rows of 128 bits, row r landing in tensor-memory
// lane r of each of the four 32-lane sub-partitions (.warpx4); the MMA
// finds the scales of row m in sub-partition m / 32, lane m % 32, in the
// 32-bit column m / 32 of that 128-bit row, K block k in byte k of it.
// Atoms follow each other K first (a 128-row slab's atoms for K blocks
// 0-3, 4-7, ...), then 128-row slabs, then batches.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/TritonLayouts.h"

#include "gtest/gtest.h"

#include <vector>

namespace ref = ::microscale::ref;

namespace {

/// The byte of the scale of (batch, K block ks, row n) in the tcgen05
/// scale-factor atoms of a [batches, ks, n] tensor padded to 4 K blocks
/// (the atom) x 128 rows.
int64_t atomByte(int64_t batch, int64_t ks, int64_t n, int64_t kBlocks,
                 int64_t rows) {
  const int64_t paddedK = (kBlocks + 7) / 8 * 8; // Triton pads Ks to 8
  const int64_t slabs = (rows + 127) / 128;
  const int64_t atom = (batch * slabs + n / 128) * (paddedK / 4) + ks / 4;
  const int64_t copyRow = n % 32;         // lane within a sub-partition
  const int64_t column = (n % 128) / 32;  // sub-partition = 32-bit column
  const int64_t byteInColumn = ks % 4;    // K block within the atom
  return atom * 512 + copyRow * 16 + column * 4 + byteInColumn;
}

TEST(BlackwellScaleAtom, IsTheTcgen05ScaleFactorLayoutByteForByte) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{4, 128}, std::vector<int64_t>{8, 256},
        std::vector<int64_t>{2, 12, 300}, std::vector<int64_t>{3, 5, 130}}) {
    std::string error;
    auto layout = ref::makeBlackwellScaleLayout(shape, &error);
    ASSERT_TRUE(layout) << error;
    const size_t rank = shape.size();
    const int64_t batches = rank == 3 ? shape[0] : 1;
    const int64_t kBlocks = shape[rank - 2], rows = shape[rank - 1];
    // The storage is whole atoms.
    const int64_t paddedK = (kBlocks + 7) / 8 * 8;
    EXPECT_EQ(layout->getStorageBytes(),
              batches * (rows + 127) / 128 * paddedK / 4 * 512);
    std::vector<int64_t> index(rank);
    int64_t bits[8];
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t ks = 0; ks < kBlocks; ++ks)
        for (int64_t n = 0; n < rows; ++n) {
          if (rank == 3)
            index[0] = b;
          index[rank - 2] = ks;
          index[rank - 1] = n;
          layout->locate(index.data(), bits);
          ASSERT_EQ(bits[0] % 8, 0);
          ASSERT_EQ(bits[0] / 8, atomByte(b, ks, n, kBlocks, rows))
              << "batch " << b << " ks " << ks << " n " << n;
          for (int i = 1; i < 8; ++i)
            ASSERT_EQ(bits[i], bits[0] + i);
        }
  }
}

/// The scale-factor IDs of mxf4 (scale_vec::2X, K = 64 per MMA): one atom
/// (4 K blocks) feeds two MMAs, the first reading K blocks 0-1 (byte ID 0),
/// the second 2-3 (ID 2) (PTX ISA 8.8 section 9.7.16.10.7.2); so the atom's
/// K-block order is the MMAs' K order.
TEST(BlackwellScaleAtom, FeedsTwoMxf4MmasPerAtom) {
  auto layout = ref::makeBlackwellScaleLayout({8, 128}, nullptr);
  ASSERT_TRUE(layout);
  for (int64_t mma = 0; mma < 2; ++mma) {
    const int64_t id = 2 * mma;
    for (int64_t n = 0; n < 128; ++n)
      for (int64_t block = 0; block < 2; ++block) {
        int64_t index[2] = {id + block, n};
        int64_t bits[8];
        layout->locate(index, bits);
        EXPECT_EQ(bits[0] / 8 % 4, id + block);
      }
  }
}

} // namespace
