//===- ChipResidencyTest.cpp - Blocks per SM in the NVIDIA chip model -----===//
//
// NVIDIAChip::residentBlocks against counts worked out by hand for sm_90a
// (65536 registers in four schedulers' files of 16384, 2048 threads, 8
// registers per thread the allocation unit): a warp of R registers per
// thread takes ceil(R / 8) * 8 * 32 of its scheduler's 16384, and an SM
// holds b blocks of w warps when b * w warps spread evenly over the four
// files fit them and b * w * 32 <= 2048.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/Chip.h"

#include <gtest/gtest.h>

using mlir::microscale::nvvm::NVIDIAChip;

namespace {

TEST(ChipResidency, Sm90aBlocksPerSM) {
  std::optional<NVIDIAChip> chip = NVIDIAChip::lookup("sm_90a");
  ASSERT_TRUE(chip);
  // 64 registers: 2048 per warp, 8 warps per file, 32 per SM.
  EXPECT_EQ(chip->residentBlocks(10, 64), 3); // 30 warps (the light plan)
  EXPECT_EQ(chip->residentBlocks(8, 64), 4);
  EXPECT_EQ(chip->residentBlocks(16, 64), 2);
  EXPECT_EQ(chip->residentBlocks(12, 68), 2); // 72: 7 warps per file, 28
  EXPECT_EQ(chip->residentBlocks(32, 64), 1);
  EXPECT_EQ(chip->residentBlocks(33, 64), 0);
  // 121 registers count as 128: 4 warps per file, 16 per SM.
  EXPECT_EQ(chip->residentBlocks(8, 121), 2);
  // 168 registers: 3 warps per file; a block of 9 warps needs 3 per file.
  EXPECT_EQ(chip->residentBlocks(9, 168), 1);
  EXPECT_EQ(chip->residentBlocks(13, 168), 0);
  // Threads bound it before registers: 32 registers, 64 warps per SM.
  EXPECT_EQ(chip->residentBlocks(4, 32), 16);
  EXPECT_EQ(chip->residentBlocks(1, 16), 64);
  EXPECT_EQ(chip->residentBlocks(0, 64), 0);
}

TEST(ChipResidency, FewerThreadsPerSM) {
  // sm_86: 1536 threads per SM, 48 warps.
  std::optional<NVIDIAChip> chip = NVIDIAChip::lookup("sm_86");
  ASSERT_TRUE(chip);
  EXPECT_EQ(chip->residentBlocks(8, 32), 6);
  EXPECT_EQ(chip->residentBlocks(8, 64), 4);
}

} // namespace
