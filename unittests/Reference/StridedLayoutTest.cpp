//===- StridedLayoutTest.cpp - Triton's StridedLayout ---------------------===//
#include "microscale/Reference/Layout.h"

#include "gtest/gtest.h"

#include <random>

using namespace microscale::ref;

namespace {

std::vector<uint8_t> randomCodes(size_t n, unsigned bits, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> codes(n);
  for (uint8_t &c : codes)
    c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
  return codes;
}

TEST(StridedLayout, CanonicalWorkedExample) {
  // layouts.md section 9: canonical [2,256,512] FP4, element [0,5,3] is the
  // high nibble of byte 1281.
  auto layout = makeStridedLayout({2, 256, 512}, 4, -1);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getStorageShape(), (std::vector<int64_t>{2, 256, 256}));
  int64_t index[3] = {0, 5, 3}, bits[4];
  layout->locate(index, bits);
  for (int b = 0; b < 4; ++b)
    EXPECT_EQ(bits[b], 1281 * 8 + 4 + b);
}

TEST(StridedLayout, MajorDimMinusTwoWorkedExample) {
  // Logical [2,256,512] (K=256, N=512) packed along K: storage [2,512,128],
  // element [0,5,3] is the high nibble of byte 386.
  auto layout = makeStridedLayout({2, 256, 512}, 4, -2);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getStorageShape(), (std::vector<int64_t>{2, 512, 128}));
  int64_t index[3] = {0, 5, 3}, bits[4];
  layout->locate(index, bits);
  EXPECT_EQ(bits[0], 386 * 8 + 4);
}

TEST(StridedLayout, LowNibbleHoldsTheEvenElement) {
  auto layout = makeStridedLayout({2, 4}, 4, -1);
  std::vector<uint8_t> codes = {0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8};
  std::vector<uint8_t> bytes(4);
  layout->store(codes.data(), bytes.data());
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x21, 0x43, 0x65, 0x87}));
}

TEST(StridedLayout, SixBitCodesPackFourInThreeBytes) {
  auto layout = makeStridedLayout({4}, 6, -1);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getStorageShape(), (std::vector<int64_t>{3}));
  std::vector<uint8_t> codes = {0x3F, 0x00, 0x15, 0x2A};
  std::vector<uint8_t> bytes(3);
  layout->store(codes.data(), bytes.data());
  // bits: 0..5 = 0x3F, 6..11 = 0, 12..17 = 0x15, 18..23 = 0x2A
  uint32_t word = bytes[0] | bytes[1] << 8 | bytes[2] << 16;
  EXPECT_EQ(word, 0x3Fu | (0x15u << 12) | (0x2Au << 18));
}

TEST(StridedLayout, RoundTripsAndConvertsBetweenMajorDims) {
  for (unsigned bits : {4u, 6u, 8u}) {
    std::vector<int64_t> shape = {4, 8, 12};
    auto codes = randomCodes(4 * 8 * 12, bits, bits);
    for (int64_t major : {-1, -2, 0}) {
      auto layout = makeStridedLayout(shape, bits, major);
      ASSERT_TRUE(layout) << major;
      std::vector<uint8_t> storage(layout->getStorageBytes());
      layout->store(codes.data(), storage.data());
      std::vector<uint8_t> back(codes.size());
      layout->load(storage.data(), back.data());
      EXPECT_EQ(back, codes) << bits << " bits, major " << major;
      // Via another layout and back.
      auto canonical = makeStridedLayout(shape, bits, -1);
      std::vector<uint8_t> converted(canonical->getStorageBytes()), again(storage.size());
      convert(*layout, storage.data(), *canonical, converted.data());
      convert(*canonical, converted.data(), *layout, again.data());
      EXPECT_EQ(again, storage);
    }
  }
}

TEST(StridedLayout, MajorDimMinusTwoIsTheTwoByTwoNibbleTranspose) {
  // layouts.md section 1: repacking from the last axis to axis -2 maps input
  // bytes a (row 2j) and b (row 2j+1) to (a & 0xF) | (b & 0xF) << 4 and
  // (a >> 4) | (b & 0xF0).
  auto rowPacked = makeStridedLayout({2, 2}, 4, -1);
  auto colPacked = makeStridedLayout({2, 2}, 4, -2);
  std::vector<uint8_t> in = {0x21, 0x43}, out(2);
  convert(*rowPacked, in.data(), *colPacked, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0x31, 0x42}));
}

TEST(StridedLayout, EmptyTensors) {
  for (auto shape : std::vector<std::vector<int64_t>>{{0, 64}, {64, 0}, {2, 0, 6, 8}}) {
    auto layout = makeStridedLayout(shape, 4, -2);
    ASSERT_TRUE(layout);
    EXPECT_EQ(layout->getStorageBytes(), 0);
    layout->store(nullptr, nullptr);
  }
}

TEST(StridedLayout, Errors) {
  std::string error;
  EXPECT_FALSE(makeStridedLayout({3, 64}, 4, -2, &error));
  EXPECT_EQ(error, "FP4 packing dimension -2 must have an even size, got 3");
  EXPECT_FALSE(makeStridedLayout({64, 6}, 6, -1, &error));
  EXPECT_EQ(error, "FP6 packing dimension -1 must have a size divisible by 4, got 6");
  EXPECT_FALSE(makeStridedLayout({4, 4}, 4, 2, &error));
  EXPECT_EQ(error, "major_dim 2 is out of range for rank 2");
  EXPECT_FALSE(makeStridedLayout({}, 4, -1, &error));
  EXPECT_FALSE(makeStridedLayout({4}, 5, -1, &error));
  EXPECT_EQ(error, "element width must be 4, 6 or 8 bits, got 5");
}

} // namespace
