//===- TritonLayoutsTest.cpp - Tests of the Triton MX layouts -------------===//
//
// (a) byte-exact vectors produced by Triton itself (shared/vectors/triton-layouts),
//     both directions;
// (b) the worked examples and (c) the bit-level check words of
//     docs/layouts.md section 9;
// (d) round trips, bijectivity and the closed-form inverses on padded shapes;
// (e) empty tensors (docs/layouts.md section 10);
// (f) unsupported shapes and parameters.
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/Layout.h"
#include "microscale/Reference/TritonLayouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#ifndef MICROSCALE_TRITON_VECTORS_DIR
#error "MICROSCALE_TRITON_VECTORS_DIR must name the triton-layouts vector directory"
#endif

using namespace microscale::ref;

namespace {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

enum class Kind {
  HopperValue,
  HopperScale,
  BlackwellValue,
  BlackwellShuffled,
  BlackwellScale,
  CDNA4Scale
};

struct Params {
  Kind kind;
  int64_t mxAxis = -1;
  int mmaVersion = 3;
  int numWarps = 8;
  int64_t blockK = 128;
  int64_t blockN = 256;
};

bool isValueLayout(Kind kind) {
  return kind == Kind::HopperValue || kind == Kind::BlackwellValue ||
         kind == Kind::BlackwellShuffled;
}

std::unique_ptr<Layout> makeTarget(const Params &p, const Shape &shape,
                                   std::string *error = nullptr) {
  switch (p.kind) {
  case Kind::HopperValue:
    return makeHopperValueLayout(shape, p.mxAxis, p.mmaVersion, error);
  case Kind::HopperScale:
    return makeHopperScaleLayout(shape, p.mxAxis, p.numWarps, error);
  case Kind::BlackwellValue:
    return makeBlackwellValueLayout(shape, error);
  case Kind::BlackwellShuffled:
    return makeBlackwellShuffledValueLayout(shape, p.blockK, p.blockN, error);
  case Kind::BlackwellScale:
    return makeBlackwellScaleLayout(shape, error);
  case Kind::CDNA4Scale:
    return makeCDNA4ScaleLayout(shape, error);
  }
  return nullptr;
}

/// The canonical form Triton converts from: StridedLayout(-1).
std::unique_ptr<Layout> makeCanonical(Kind kind, const Shape &shape) {
  std::string error;
  auto layout = makeStridedLayout(shape, isValueLayout(kind) ? 4 : 8, -1,
                                  &error);
  EXPECT_NE(layout, nullptr) << error;
  return layout;
}

std::string shapeString(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

/// Buffers never have a null data() pointer, even for 0 bytes.
std::vector<uint8_t> buffer(int64_t bytes) {
  std::vector<uint8_t> v(static_cast<size_t>(bytes) + 1, 0xA5);
  v.resize(static_cast<size_t>(bytes));
  return v;
}

std::vector<uint8_t> readBinary(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                              std::istreambuf_iterator<char>());
}

std::string dataPath(const std::string &name) {
  return std::string(MICROSCALE_TRITON_VECTORS_DIR) + "/" + name;
}

/// Triton's vectors live outside the repository (shared/vectors, beside the
/// checkout); the tests that need them skip when they are absent.
bool haveVectors() { return std::ifstream(dataPath("manifest.json")).good(); }

/// Calls fn(index) for every logical element in row-major order.
template <typename Fn> void forEachElement(const Shape &shape, Fn fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  Shape index(shape.size(), 0);
  while (true) {
    fn(index);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Checks that locate() maps every bit of every element to a distinct bit
/// inside the storage.
void expectInjective(const Layout &layout) {
  const int64_t totalBits = layout.getStorageBytes() * 8;
  std::vector<bool> used(static_cast<size_t>(totalBits), false);
  int64_t bits[8];
  int64_t failures = 0;
  forEachElement(layout.getLogicalShape(), [&](const Shape &index) {
    layout.locate(index.data(), bits);
    for (unsigned b = 0; b < layout.getElementBits(); ++b) {
      const bool ok =
          bits[b] >= 0 && bits[b] < totalBits && !used[bits[b]];
      if (!ok) {
        if (++failures <= 5)
          ADD_FAILURE() << "element " << shapeString(index) << " bit " << b
                        << " -> " << bits[b] << " out of range or reused";
        continue;
      }
      used[bits[b]] = true;
    }
  });
}

/// Random codes through canonical -> target -> canonical; padding must be 0.
void expectRoundTrip(const Params &p, const Shape &shape, uint32_t seed) {
  SCOPED_TRACE("shape " + shapeString(shape));
  std::string error;
  auto target = makeTarget(p, shape, &error);
  ASSERT_NE(target, nullptr) << error;
  auto canonical = makeCanonical(p.kind, shape);
  ASSERT_NE(canonical, nullptr);
  expectInjective(*target);

  const unsigned bits = target->getElementBits();
  std::mt19937 rng(seed);
  std::vector<uint8_t> codes(static_cast<size_t>(target->getNumElements()));
  for (auto &c : codes)
    c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
  auto in = buffer(canonical->getStorageBytes());
  canonical->store(codes.data(), in.data());

  auto out = buffer(target->getStorageBytes());
  convert(*canonical, in.data(), *target, out.data());
  auto back = buffer(canonical->getStorageBytes());
  convert(*target, out.data(), *canonical, back.data());
  EXPECT_EQ(back, in);

  // Padding bits are those no element maps to; store writes them as zero.
  std::vector<bool> used(static_cast<size_t>(out.size()) * 8, false);
  int64_t pos[8];
  forEachElement(shape, [&](const Shape &index) {
    target->locate(index.data(), pos);
    for (unsigned b = 0; b < bits; ++b)
      used[pos[b]] = true;
  });
  int64_t dirty = 0;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i] && ((out[i / 8] >> (i % 8)) & 1))
      ++dirty;
  EXPECT_EQ(dirty, 0) << "padding bits not zero";

  // Loading the target must reproduce the codes.
  std::vector<uint8_t> loaded(codes.size());
  target->load(out.data(), loaded.data());
  EXPECT_EQ(loaded, codes);
}

//===----------------------------------------------------------------------===//
// (a) Triton's own byte vectors (shared/vectors/triton-layouts/manifest.json)
//===----------------------------------------------------------------------===//

struct VectorCase {
  const char *name; // file stem; files are <name>.in.bin / <name>.out.bin
  Params params;
  Shape logicalShape;
  // Triton's out_shape permuted by out_storage_dim_order: the storage shape
  // in memory order.
  Shape storageShape;
};

const VectorCase kVectorCases[] = {
    {"HOPPER_VALUE_mma_version2_mx_axis-1_2x64x128",
     {Kind::HopperValue, -1, 2},
     {2, 64, 128},
     {2, 64, 256}},
    {"HOPPER_VALUE_mma_version2_mx_axis-2_2x64x128",
     {Kind::HopperValue, -2, 2},
     {2, 64, 128},
     {2, 64, 256}},
    {"HOPPER_VALUE_mma_version3_mx_axis-1_2x64x128",
     {Kind::HopperValue, -1, 3},
     {2, 64, 128},
     {2, 64, 256}},
    {"HOPPER_VALUE_mma_version3_mx_axis-2_2x64x128",
     {Kind::HopperValue, -2, 3},
     {2, 64, 128},
     {2, 64, 256}},
    {"HOPPER_SCALE_mx_axis-2_num_warps8_2x64x128",
     {Kind::HopperScale, -2, 3, 8},
     {2, 64, 128},
     {2, 8, 2048}},
    {"HOPPER_SCALE_mx_axis-1_num_warps8_2x64x128",
     {Kind::HopperScale, -1, 3, 8},
     {2, 64, 128},
     {2, 8, 4096}},
    // Triton leaves this layout's padding unspecified; the vector has zeros.
    {"BLACKWELL_MX_VALUE__2x64x128",
     {Kind::BlackwellValue},
     {2, 64, 128},
     {2, 128, 128}},
    {"BLACKWELL_MX4_VALUE_SHUFFLED_block_k128_block_n256_2x64x128",
     {Kind::BlackwellShuffled, -1, 3, 8, 128, 256},
     {2, 64, 128},
     {2, 2, 1, 256, 64}},
    {"BLACKWELL_SCALE__2x64x128",
     {Kind::BlackwellScale},
     {2, 64, 128},
     {1, 2, 16, 2, 256}},
    {"CDNA4_SCALE__2x64x128", {Kind::CDNA4Scale}, {2, 64, 128}, {2, 4, 2048}},
};

/// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const VectorCase &c, std::ostream *os) { *os << c.name; }

TEST(TritonVectors, ManifestListsEveryCase) {
  if (!haveVectors())
    GTEST_SKIP() << "no Triton vectors at " << MICROSCALE_TRITON_VECTORS_DIR;
  std::ifstream in(dataPath("manifest.json"));
  ASSERT_TRUE(in.good());
  const std::string manifest((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  size_t count = 0;
  for (size_t at = manifest.find("\"in_file\""); at != std::string::npos;
       at = manifest.find("\"in_file\"", at + 1))
    ++count;
  EXPECT_EQ(count, std::size(kVectorCases));
  for (const VectorCase &c : kVectorCases) {
    EXPECT_NE(manifest.find("\"" + std::string(c.name) + ".in.bin\""),
              std::string::npos)
        << c.name;
    EXPECT_NE(manifest.find("\"" + std::string(c.name) + ".out.bin\""),
              std::string::npos)
        << c.name;
  }
}

class TritonVectorTest : public ::testing::TestWithParam<VectorCase> {};

TEST_P(TritonVectorTest, ByteExactBothDirections) {
  if (!haveVectors())
    GTEST_SKIP() << "no Triton vectors at " << MICROSCALE_TRITON_VECTORS_DIR;
  const VectorCase &c = GetParam();
  const auto input = readBinary(dataPath(std::string(c.name) + ".in.bin"));
  const auto expected = readBinary(dataPath(std::string(c.name) + ".out.bin"));
  std::string error;
  auto target = makeTarget(c.params, c.logicalShape, &error);
  ASSERT_NE(target, nullptr) << error;
  auto canonical = makeCanonical(c.params.kind, c.logicalShape);
  ASSERT_NE(canonical, nullptr);

  EXPECT_EQ(target->getStorageShape(), c.storageShape);
  ASSERT_EQ(canonical->getStorageBytes(), static_cast<int64_t>(input.size()));
  ASSERT_EQ(target->getStorageBytes(), static_cast<int64_t>(expected.size()));

  auto out = buffer(target->getStorageBytes());
  convert(*canonical, input.data(), *target, out.data());
  size_t mismatches = 0, first = out.size();
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != expected[i] && mismatches++ == 0)
      first = i;
  EXPECT_EQ(mismatches, 0u) << "first mismatch at byte " << first;

  auto back = buffer(canonical->getStorageBytes());
  convert(*target, expected.data(), *canonical, back.data());
  EXPECT_EQ(back, input);
  expectInjective(*target);
}

INSTANTIATE_TEST_SUITE_P(
    Triton, TritonVectorTest, ::testing::ValuesIn(kVectorCases),
    [](const ::testing::TestParamInfo<VectorCase> &info) {
      std::string name = info.param.name;
      for (char &ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return name;
    });

//===----------------------------------------------------------------------===//
// (b) Worked examples of docs/layouts.md section 9
//===----------------------------------------------------------------------===//

/// Absolute bit offset from "byte.bit".
constexpr int64_t at(int64_t byte, int64_t bit) { return byte * 8 + bit; }

std::vector<int64_t> locateAll(const Layout &layout, const Shape &index) {
  int64_t bits[8];
  layout.locate(index.data(), bits);
  return std::vector<int64_t>(bits, bits + layout.getElementBits());
}

/// An FP4 element in the given nibble of `byte`.
void expectNibble(const Layout &layout, const Shape &index, int64_t byte,
                  bool high) {
  const int64_t base = at(byte, high ? 4 : 0);
  EXPECT_EQ(locateAll(layout, index),
            (std::vector<int64_t>{base, base + 1, base + 2, base + 3}))
      << "element " << shapeString(index);
}

/// An 8-bit element at `byte`.
void expectByte(const Layout &layout, const Shape &index, int64_t byte) {
  std::vector<int64_t> bits;
  for (int i = 0; i < 8; ++i)
    bits.push_back(at(byte, i));
  EXPECT_EQ(locateAll(layout, index), bits)
      << "element " << shapeString(index);
}

/// A Hopper FP4 element, bits given as (mantissa, e0, e1, sign).
void expectHopperBits(const Layout &layout, const Shape &index, int64_t m,
                      int64_t e0, int64_t e1, int64_t sign) {
  EXPECT_EQ(locateAll(layout, index), (std::vector<int64_t>{m, e0, e1, sign}))
      << "element " << shapeString(index);
}

std::unique_ptr<Layout> must(std::unique_ptr<Layout> layout,
                             const std::string &error) {
  EXPECT_NE(layout, nullptr) << error;
  return layout;
}

const Shape kValueShape = {2, 256, 512};
const Shape kScaleShape = {2, 8, 512};

TEST(WorkedExamples, Strided) {
  std::string e;
  auto canonical = must(makeStridedLayout(kValueShape, 4, -1, &e), e);
  ASSERT_TRUE(canonical);
  EXPECT_EQ(canonical->getStorageShape(), (Shape{2, 256, 256}));
  expectNibble(*canonical, {0, 5, 3}, 1281, true);

  auto kMajor = must(makeStridedLayout(kValueShape, 4, -2, &e), e);
  ASSERT_TRUE(kMajor);
  // Triton's storage [2,128,512] with strides (65536,1,128): memory order
  // [2,512,128].
  EXPECT_EQ(kMajor->getStorageBytes(), 2 * 128 * 512);
  expectNibble(*kMajor, {0, 5, 3}, 386, true);
}

TEST(WorkedExamples, HopperValue) {
  std::string e;
  auto mx2v3 = must(makeHopperValueLayout(kValueShape, -2, 3, &e), e);
  auto mx2v2 = must(makeHopperValueLayout(kValueShape, -2, 2, &e), e);
  auto mx1v3 = must(makeHopperValueLayout(kValueShape, -1, 3, &e), e);
  auto mx1v2 = must(makeHopperValueLayout(kValueShape, -1, 2, &e), e);
  ASSERT_TRUE(mx2v3 && mx2v2 && mx1v3 && mx1v2);
  // Image 128x512 per batch for mx=-2, 64x1024 for mx=-1.
  EXPECT_EQ(mx2v3->getStorageShape(), (Shape{2, 128, 512}));
  EXPECT_EQ(mx1v3->getStorageShape(), (Shape{2, 64, 1024}));

  // m=3, kb=2, h=1 -> R=1, C=96: word at 608.
  expectHopperBits(*mx2v3, {0, 5, 3}, at(610, 6), at(610, 7), at(611, 0),
                   at(611, 7));
  // R=1, C=66 (slot 2): word at 576.
  expectHopperBits(*mx2v2, {0, 5, 3}, at(578, 0), at(578, 1), at(578, 2),
                   at(579, 1));
  // m=5, kb=1, h=1 -> R=2, C=80: word at 2128.
  expectHopperBits(*mx1v3, {0, 5, 3}, at(2130, 6), at(2130, 7), at(2131, 0),
                   at(2131, 7));
  // R=2, C=65 (slot 1): word at 2112.
  expectHopperBits(*mx1v2, {0, 5, 3}, at(2114, 3), at(2114, 4), at(2114, 5),
                   at(2115, 4));

  // m=200, kb=18, h=1 -> R=48, C=41: word at 90152, sign at 90155.4.
  auto bits = locateAll(*mx2v3, {1, 37, 200});
  EXPECT_EQ(bits[3], at(90155, 4));
  for (int64_t b : bits) {
    EXPECT_GE(b, at(90152, 0));
    EXPECT_LT(b, at(90156, 0));
  }
  // m=1 -> R=0, C=64 (the m mod 2 term): word at 64, low lane (h=0).
  bits = locateAll(*mx2v3, {0, 0, 1});
  for (int64_t b : bits) {
    EXPECT_GE(b, at(64, 0));
    EXPECT_LT(b, at(66, 0)); // bits 0..15 of the word
  }
  EXPECT_EQ(bits[3], at(65, 7)); // slot 0 sign at word bit 15

  // Padded [K=130, N=66]: Mp=256, KBp=128, image 64x512; R=16, C=320.
  auto padded = must(makeHopperValueLayout({130, 66}, -2, 3, &e), e);
  ASSERT_TRUE(padded);
  EXPECT_EQ(padded->getStorageShape(), (Shape{64, 512}));
  expectHopperBits(*padded, {129, 65}, at(8514, 6), at(8514, 7), at(8515, 0),
                   at(8515, 7));
}

TEST(WorkedExamples, BlackwellValue) {
  std::string e;
  auto plain = must(makeBlackwellValueLayout(kValueShape, &e), e);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->getStorageShape(), (Shape{2, 512, 128}));
  expectNibble(*plain, {0, 5, 3}, 386, true);
  expectNibble(*plain, {1, 37, 200}, 91154, true);

  auto shuffled = must(makeBlackwellShuffledValueLayout(kValueShape, 128, 256,
                                                        &e),
                       e);
  ASSERT_TRUE(shuffled);
  EXPECT_EQ(shuffled->getStorageShape(), (Shape{2, 2, 2, 256, 64}));
  expectNibble(*shuffled, {0, 5, 3}, 194, true);
  expectNibble(*shuffled, {1, 37, 200}, 78354, true);
  expectNibble(*shuffled, {0, 255, 511}, 65535, true);

  auto shuffled2 = must(makeBlackwellShuffledValueLayout(kValueShape, 256, 128,
                                                         &e),
                        e);
  ASSERT_TRUE(shuffled2);
  EXPECT_EQ(shuffled2->getStorageShape(), (Shape{2, 1, 4, 128, 128}));
  expectNibble(*shuffled2, {0, 5, 3}, 386, true);
}

TEST(WorkedExamples, HopperScale) {
  std::string e;
  auto w8 = must(makeHopperScaleLayout(kScaleShape, -2, 8, &e), e);
  ASSERT_TRUE(w8);
  EXPECT_EQ(w8->getStorageShape(), (Shape{2, 16, 256})); // image 16x256
  expectByte(*w8, {0, 5, 3}, 142);   // (0,142)
  expectByte(*w8, {0, 5, 100}, 1682); // (6,146)
  expectByte(*w8, {1, 7, 200}, 5347); // (4,227) in batch 1

  auto w4 = must(makeHopperScaleLayout(kScaleShape, -2, 4, &e), e);
  ASSERT_TRUE(w4);
  expectByte(*w4, {0, 5, 100}, 690); // (2,178)
}

TEST(WorkedExamples, BlackwellScale) {
  std::string e;
  auto layout = must(makeBlackwellScaleLayout(kScaleShape, &e), e);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getStorageShape(), (Shape{1, 8, 2, 2, 256}));
  expectByte(*layout, {0, 5, 3}, 561);    // (0,0,1,0,49)
  expectByte(*layout, {1, 7, 200}, 5771); // (0,5,1,0,139)
}

TEST(WorkedExamples, CDNA4Scale) {
  std::string e;
  auto layout = must(makeCDNA4ScaleLayout(kScaleShape, &e), e);
  ASSERT_TRUE(layout);
  // Triton's view (2,256,16) with stride(-2)=1: memory order (2,16,256).
  EXPECT_EQ(layout->getStorageShape(), (Shape{2, 16, 256}));
  expectByte(*layout, {0, 5, 3}, 78);     // view (0,78,0)
  expectByte(*layout, {1, 7, 200}, 5858); // view (1,226,6)
}

//===----------------------------------------------------------------------===//
// (c) Bit-level check words of section 9 (Hopper Step B)
//===----------------------------------------------------------------------===//

/// Builds word 0 of a Hopper value layout (mx=-1, mma3) from four image-slot
/// bytes. With R=0, the slots C=0..3 hold (m, kb) = (0,0), (8,0), (0,4),
/// (8,4) (the section 3 inverse); a slot byte's low nibble is element
/// (m, 2kb) and its high nibble element (m, 2kb+1).
uint32_t hopperWord(const uint8_t slots[4]) {
  const Shape shape = {256, 128};
  std::string e;
  auto layout = makeHopperValueLayout(shape, -1, 3, &e);
  EXPECT_NE(layout, nullptr) << e;
  if (!layout)
    return 0;
  std::vector<uint8_t> codes(256 * 128, 0);
  const int64_t slotM[4] = {0, 8, 0, 8}, slotKB[4] = {0, 0, 4, 4};
  for (int s = 0; s < 4; ++s) {
    codes[slotM[s] * 128 + 2 * slotKB[s]] = slots[s] & 0xF;
    codes[slotM[s] * 128 + 2 * slotKB[s] + 1] = slots[s] >> 4;
  }
  auto storage = buffer(layout->getStorageBytes());
  layout->store(codes.data(), storage.data());
  return uint32_t(storage[0]) | uint32_t(storage[1]) << 8 |
         uint32_t(storage[2]) << 16 | uint32_t(storage[3]) << 24;
}

/// The PTX decode contract: 8 values in the order (slot0.lo, slot0.hi, ...).
std::vector<float> decodeHopperWord(uint32_t x) {
  const uint32_t lanes[4] = {x & 0x81C081C0u, (x << 3) & 0x81C081C0u,
                             (x << 6) & 0x81C081C0u,
                             ((x << 1) & 0x80008000u) |
                                 ((x >> 3) & 0x01800180u) |
                                 ((x >> 7) & 0x00400040u)};
  std::vector<float> out;
  for (uint32_t lane : lanes)
    for (int half = 0; half < 2; ++half) {
      const uint32_t bf16 = (lane >> (16 * half)) & 0xFFFF;
      const uint32_t f32 = bf16 << 16;
      float value;
      std::memcpy(&value, &f32, sizeof(value));
      out.push_back(value * std::ldexp(1.0f, 126)); // 0x7e80 = 2^126
    }
  return out;
}

float e2m1(unsigned code) {
  const float sign = (code & 8) ? -1.0f : 1.0f;
  const unsigned e = (code >> 1) & 3, m = code & 1;
  if (e == 0)
    return sign * 0.5f * m;
  return sign * std::ldexp(1.0f + 0.5f * m, static_cast<int>(e) - 1);
}

TEST(HopperBitCheck, Words) {
  const uint8_t a[4] = {0x21, 0x43, 0x65, 0x87};
  const uint32_t wa = hopperWord(a);
  EXPECT_EQ(wa, 0x40a62c5du);
  const auto values = decodeHopperWord(wa);
  const float expected[8] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(values[i], expected[i]) << "value " << i;
    EXPECT_EQ(std::signbit(values[i]), std::signbit(expected[i]))
        << "value " << i;
  }

  const uint8_t b[4] = {0x00, 0x00, 0x00, 0xB0}; // -1.5 in slot 3 high
  EXPECT_EQ(hopperWord(b), 0x64000000u);
  const uint8_t c[4] = {0xB0, 0x00, 0x00, 0x00}; // -1.5 in slot 0 high
  EXPECT_EQ(hopperWord(c), 0x80c00000u);
}

TEST(HopperBitCheck, EveryNibbleDecodesThroughPTXContract) {
  for (unsigned code = 0; code < 16; ++code)
    for (int slot = 0; slot < 4; ++slot)
      for (int h = 0; h < 2; ++h) {
        uint8_t slots[4] = {0, 0, 0, 0};
        slots[slot] = static_cast<uint8_t>(code << (4 * h));
        const auto values = decodeHopperWord(hopperWord(slots));
        for (int i = 0; i < 8; ++i) {
          const float want = i == 2 * slot + h ? e2m1(code) : 0.0f;
          EXPECT_EQ(values[i], want)
              << "code " << code << " slot " << slot << " h " << h;
          EXPECT_EQ(std::signbit(values[i]), std::signbit(want));
        }
      }
}

//===----------------------------------------------------------------------===//
// (d) Round trips on padded shapes, and the closed-form inverses
//===----------------------------------------------------------------------===//

const Shape kValueShapes[] = {
    {64, 128}, {130, 66}, {2, 34, 18}, {2, 3, 66, 34}, {256, 256}, {2, 2}};

TEST(RoundTrip, HopperValue) {
  uint32_t seed = 1;
  for (int64_t mx : {-1, -2})
    for (int mma : {2, 3})
      for (const Shape &shape : kValueShapes) {
        SCOPED_TRACE("mx_axis " + std::to_string(mx) + " mma " +
                     std::to_string(mma));
        expectRoundTrip({Kind::HopperValue, mx, mma}, shape, seed++);
      }
}

TEST(RoundTrip, HopperScale) {
  uint32_t seed = 100;
  const Shape shapes[] = {{130, 66}, {2, 34, 18}, {2, 3, 66, 34},
                          {5, 7},    {64, 128},   {1, 1}};
  for (int64_t mx : {-1, -2})
    for (int warps : {1, 2, 4, 8})
      for (const Shape &shape : shapes) {
        SCOPED_TRACE("mx_axis " + std::to_string(mx) + " num_warps " +
                     std::to_string(warps));
        expectRoundTrip({Kind::HopperScale, mx, 3, warps}, shape, seed++);
      }
}

TEST(RoundTrip, BlackwellValue) {
  uint32_t seed = 200;
  for (const Shape &shape : kValueShapes)
    expectRoundTrip({Kind::BlackwellValue}, shape, seed++);
  expectRoundTrip({Kind::BlackwellValue}, {258, 258}, seed++);
}

TEST(RoundTrip, BlackwellShuffledValue) {
  uint32_t seed = 300;
  const Shape shapes[] = {{256, 256}, {258, 258}, {2, 66, 66},
                          {2, 3, 130, 130}, {130, 66}, {2, 34, 18}};
  for (int64_t blockK : {128, 256})
    for (int64_t blockN : {128, 256})
      for (const Shape &shape : shapes) {
        SCOPED_TRACE("block_k " + std::to_string(blockK) + " block_n " +
                     std::to_string(blockN));
        expectRoundTrip({Kind::BlackwellShuffled, -1, 3, 8, blockK, blockN},
                        shape, seed++);
      }
  // A small tile (TKP = 32 < 128): K bytes still pad to 128.
  std::string e;
  auto small = makeBlackwellShuffledValueLayout({2, 66, 66}, 64, 32, &e);
  ASSERT_NE(small, nullptr) << e;
  EXPECT_EQ(small->getStorageShape(), (Shape{2, 4, 3, 32, 32}));
  expectRoundTrip({Kind::BlackwellShuffled, -1, 3, 8, 64, 32}, {2, 66, 66},
                  seed++);
}

TEST(RoundTrip, BlackwellAndCDNA4Scale) {
  uint32_t seed = 400;
  const Shape shapes[] = {{130, 66}, {2, 34, 18}, {2, 3, 66, 35},
                          {3, 1},    {8, 512},    {2, 9, 129}};
  for (const Shape &shape : shapes) {
    expectRoundTrip({Kind::BlackwellScale}, shape, seed++);
    expectRoundTrip({Kind::CDNA4Scale}, shape, seed++);
  }
}

/// Leading index b, row-major over all but the last two dims.
int64_t batchIndex(const Shape &shape, const Shape &index) {
  int64_t b = 0;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    b = b * shape[d] + index[d];
  return b;
}

// Recovers (R, C) from the located bits and checks the section 3 inverse.
TEST(Inverse, HopperValueStepA) {
  const Shape shapes[] = {{130, 66}, {2, 34, 18}, {2, 3, 66, 34}};
  for (int64_t mx : {-1, -2})
    for (int mma : {2, 3})
      for (const Shape &shape : shapes) {
        std::string e;
        auto layout = makeHopperValueLayout(shape, mx, mma, &e);
        ASSERT_NE(layout, nullptr) << e;
        const Shape storage = layout->getStorageShape();
        const int64_t rowBytes = storage.back();
        const int64_t batchBytes = storage[storage.size() - 2] * rowBytes;
        int64_t failures = 0;
        forEachElement(shape, [&](const Shape &index) {
          const auto bits = locateAll(*layout, index);
          const int64_t wordByte = bits[3] / 32 * 4;
          const int64_t h = bits[3] % 32 / 16;
          // The sign's lane bit identifies the slot.
          const int64_t signBit = bits[3] % 16;
          const int64_t slot =
              signBit == 15 ? 0 : signBit == 12 ? 1 : signBit == 9 ? 2 : 3;
          const int64_t b = wordByte / batchBytes;
          const int64_t R = wordByte % batchBytes / rowBytes;
          const int64_t C = wordByte % rowBytes + slot;
          const int64_t s0 = (C / 64) % 2;
          int64_t w0, kb;
          if (mma == 3) {
            w0 = C % 2;
            kb = 32 * (C / 128) + 8 * ((C / 4) % 4) + 4 * ((C / 2) % 2) +
                 (C / 16) % 4;
          } else {
            w0 = (C / 4) % 2;
            kb = 32 * (C / 128) + 16 * ((C / 8) % 2) + 4 * ((C / 16) % 4) +
                 C % 4;
          }
          const int64_t m = 16 * (R / 4) + 8 * w0 + 2 * (R % 4) + s0;
          const size_t rank = shape.size();
          const int64_t r = index[rank - 2], c = index[rank - 1];
          const int64_t wantM = mx == -2 ? c : r;
          const int64_t wantK = mx == -2 ? r : c;
          const bool ok = b == batchIndex(shape, index) && m == wantM &&
                          kb == wantK / 2 && h == wantK % 2;
          if (!ok && ++failures <= 5)
            ADD_FAILURE() << "mx " << mx << " mma " << mma << " element "
                          << shapeString(index) << ": R=" << R << " C=" << C;
        });
      }
}

// The word interleave that Hopper's layout declares, applied to its
// locateBeforeInterleave, must give its locate exactly; before the interleave
// every element is one whole nibble; the interleave is a permutation.
TEST(WordInterleave, HopperValueIsStepB) {
  for (int64_t mx : {-1, -2})
    for (int mma : {2, 3}) {
      auto layout = makeHopperValueLayout({2, 66, 34}, mx, mma);
      ASSERT_NE(layout, nullptr);
      const int8_t *interleave = layout->getWordInterleave();
      ASSERT_NE(interleave, nullptr);
      std::vector<int> seen(32, 0);
      for (int b = 0; b < 32; ++b)
        ++seen.at(interleave[b]);
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32);
      int64_t failures = 0;
      forEachElement(layout->getLogicalShape(), [&](const Shape &index) {
        int64_t before[4], after[4];
        layout->locateBeforeInterleave(index.data(), before);
        layout->locate(index.data(), after);
        bool ok = before[0] % 4 == 0;
        for (int i = 0; i < 4; ++i)
          ok &= before[i] == before[0] + i &&
                after[i] == before[i] - before[i] % 32 +
                                interleave[before[i] % 32];
        if (!ok && ++failures <= 5)
          ADD_FAILURE() << "mx " << mx << " mma " << mma << " element "
                        << shapeString(index);
      });
    }
  // Layouts without an interleave say so.
  auto blackwell = makeBlackwellValueLayout({64, 32});
  ASSERT_NE(blackwell, nullptr);
  EXPECT_EQ(blackwell->getWordInterleave(), nullptr);
}

TEST(Inverse, HopperScale) {
  const Shape shape = {2, 70, 300};
  for (int64_t mx : {-1, -2})
    for (int64_t W : {1, 2, 4, 8}) {
      std::string e;
      auto layout = makeHopperScaleLayout(shape, mx, static_cast<int>(W), &e);
      ASSERT_NE(layout, nullptr) << e;
      const Shape storage = layout->getStorageShape();
      const int64_t rowBytes = storage[2], batchBytes = storage[1] * storage[2];
      int64_t failures = 0;
      forEachElement(shape, [&](const Shape &index) {
        const int64_t off = locateAll(*layout, index)[0] / 8;
        const int64_t b = off / batchBytes;
        const int64_t row = off % batchBytes / rowBytes;
        const int64_t col = off % rowBytes;
        const int64_t i0 = row / W, i2 = row % W, i5 = col / 64,
                      i1 = (col / 32) % 2, i4 = (col / 4) % 8,
                      i6 = (col / 2) % 2, i3 = col % 2;
        const int64_t m = 32 * W * i0 + 16 * W * i1 + 16 * i2 + 8 * i3 + i4;
        const int64_t ks = 2 * i5 + i6;
        const int64_t wantM = mx == -2 ? index[2] : index[1];
        const int64_t wantKs = mx == -2 ? index[1] : index[2];
        if ((b != index[0] || m != wantM || ks != wantKs) && ++failures <= 5)
          ADD_FAILURE() << "mx " << mx << " W " << W << " element "
                        << shapeString(index);
      });
    }
}

TEST(Inverse, BlackwellAndCDNA4Scale) {
  const Shape shape = {2, 3, 19, 200};
  std::string e;
  auto bw = makeBlackwellScaleLayout(shape, &e);
  auto cdna = makeCDNA4ScaleLayout(shape, &e);
  ASSERT_TRUE(bw && cdna);
  const int64_t Kp = 24, NbBw = 2, NbCdna = 7;
  EXPECT_EQ(bw->getStorageShape(), (Shape{1, 6 * NbBw, Kp / 4, 2, 256}));
  EXPECT_EQ(cdna->getStorageShape(), (Shape{6, NbCdna, 32 * Kp}));
  int64_t failures = 0;
  forEachElement(shape, [&](const Shape &index) {
    const int64_t b = batchIndex(shape, index);
    // Blackwell: atoms of 512 bytes in radix (B*Np/128, Kp/4).
    int64_t off = locateAll(*bw, index)[0] / 8;
    const int64_t atom = off / 512, t = off % 512;
    const int64_t nb = atom / (Kp / 4), kb = atom % (Kp / 4);
    int64_t n = 128 * (nb % NbBw) + 32 * ((t / 4) % 4) + t / 16;
    int64_t ks = 4 * kb + t % 4;
    bool ok = nb / NbBw == b && n == index[3] && ks == index[2];
    // CDNA4: runs of 32*Kp bytes per (b, n/32).
    off = locateAll(*cdna, index)[0] / 8;
    const int64_t n0 = off / (32 * Kp), u = off % (32 * Kp);
    ks = 8 * (u / 256) + 4 * ((u / 2) % 2) + (u / 64) % 4;
    n = 32 * (n0 % NbCdna) + 16 * (u % 2) + (u / 4) % 16;
    ok = ok && n0 / NbCdna == b && n == index[3] && ks == index[2];
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "element " << shapeString(index);
  });
}

//===----------------------------------------------------------------------===//
// (e) Empty tensors (docs/layouts.md section 10)
//===----------------------------------------------------------------------===//

struct EmptyCase {
  Params params;
  Shape logicalShape;
  Shape storageShape;
};

TEST(Empty, StorageShapesAndRoundTrips) {
  // Logical FP4 shapes of the canonical storage shapes (0,64), (64,0), (2,0),
  // (0,2), (0,64,64), plus logical (2,0,6,8); scale layouts use the same
  // shapes as logical scale shapes.
  const Params hv1{Kind::HopperValue, -1, 3}, hv2{Kind::HopperValue, -2, 2};
  const Params hs1{Kind::HopperScale, -1, 3, 4}, hs2{Kind::HopperScale, -2, 3, 8};
  const Params bv{Kind::BlackwellValue};
  const Params sh{Kind::BlackwellShuffled, -1, 3, 8, 128, 256};
  const Params sh2{Kind::BlackwellShuffled, -1, 3, 8, 256, 128};
  const Params bs{Kind::BlackwellScale}, cd{Kind::CDNA4Scale};
  const EmptyCase cases[] = {
      {hv1, {0, 128}, {0, 256}},
      {hv1, {64, 0}, {64, 0}},
      {hv1, {2, 0}, {64, 0}},
      {hv1, {0, 4}, {0, 256}},
      {hv1, {0, 64, 128}, {0, 64, 256}},
      {hv1, {2, 0, 6, 8}, {2, 0, 64, 256}},
      {hv2, {0, 128}, {64, 0}},
      {hv2, {64, 0}, {0, 256}},
      {hv2, {2, 0}, {0, 256}},
      {hv2, {0, 4}, {64, 0}},
      {hv2, {0, 64, 128}, {0, 64, 256}},
      {hv2, {2, 0, 6, 8}, {2, 0, 64, 256}},
      {hs1, {0, 128}, {0, 4096}},
      {hs1, {64, 0}, {4, 0}},
      {hs1, {0, 64, 128}, {0, 4, 4096}},
      {hs2, {0, 128}, {8, 0}},
      {hs2, {64, 0}, {0, 2048}},
      {hs2, {2, 0, 6, 8}, {2, 0, 8, 192}},
      {bv, {0, 128}, {128, 0}},
      {bv, {64, 0}, {0, 128}},
      {bv, {0, 64, 128}, {0, 128, 128}},
      {bv, {2, 0, 6, 8}, {2, 0, 8, 128}},
      {sh, {0, 128}, {1, 0, 1, 256, 64}},
      {sh, {64, 0}, {1, 2, 0, 256, 64}},
      {sh, {2, 0}, {1, 2, 0, 256, 64}},
      {sh, {0, 4}, {1, 0, 1, 256, 64}},
      {sh, {0, 64, 128}, {0, 2, 1, 256, 64}},
      {sh, {2, 0, 6, 8}, {0, 2, 1, 256, 64}},
      {sh2, {64, 0}, {1, 1, 0, 128, 128}},
      {bs, {0, 128}, {1, 1, 0, 2, 256}},
      {bs, {64, 0}, {1, 0, 16, 2, 256}},
      {bs, {0, 64, 128}, {1, 0, 16, 2, 256}},
      {bs, {2, 0, 6, 8}, {1, 0, 2, 2, 256}},
      {cd, {0, 128}, {1, 4, 0}},
      {cd, {64, 0}, {1, 0, 2048}},
      {cd, {0, 64, 128}, {0, 4, 2048}},
      {cd, {2, 0, 6, 8}, {0, 1, 256}},
  };
  uint32_t seed = 500;
  for (const EmptyCase &c : cases) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(c.params.kind)) +
                 " shape " + shapeString(c.logicalShape));
    std::string e;
    auto layout = makeTarget(c.params, c.logicalShape, &e);
    ASSERT_NE(layout, nullptr) << e;
    EXPECT_EQ(layout->getNumElements(), 0);
    EXPECT_EQ(layout->getStorageShape(), c.storageShape);
    expectRoundTrip(c.params, c.logicalShape, seed++);
    // Whatever storage the formulas give is all padding: stored as zeros.
    auto storage = buffer(layout->getStorageBytes());
    std::fill(storage.begin(), storage.end(), 0xFF);
    layout->store(nullptr, storage.data());
    for (uint8_t byte : storage)
      ASSERT_EQ(byte, 0);
  }
}

//===----------------------------------------------------------------------===//
// (f) Unsupported shapes and parameters
//===----------------------------------------------------------------------===//

void expectError(std::unique_ptr<Layout> layout, const std::string &error,
                 const std::string &expected) {
  EXPECT_EQ(layout, nullptr);
  EXPECT_NE(error.find(expected), std::string::npos)
      << "message '" << error << "' lacks '" << expected << "'";
}

TEST(Errors, HopperValue) {
  std::string e;
  for (int64_t k : {1, 3})
    for (int64_t n : {0, 64}) {
      e.clear();
      expectError(makeHopperValueLayout({k, n}, -2, 3, &e), e,
                  "FP4 packing dimension -2 must have an even size, got " +
                      std::to_string(k));
    }
  expectError(makeHopperValueLayout({4, 3}, -1, 3, &e), e,
              "FP4 packing dimension -1 must have an even size, got 3");
  expectError(makeHopperValueLayout({2, 4, 3}, -2, 2, &e), e,
              "FP4 packing dimension -1 must have an even size, got 3");
  expectError(makeHopperValueLayout({64, 128}, -1, 1, &e), e,
              "mma_version must be 2 or 3, got 1");
  expectError(makeHopperValueLayout({64, 128}, -1, 4, &e), e,
              "mma_version must be 2 or 3, got 4");
  expectError(makeHopperValueLayout({64, 128}, 0, 3, &e), e,
              "mx_axis must be -1 or -2, got 0");
  expectError(makeHopperValueLayout({64, 128}, -3, 3, &e), e,
              "mx_axis must be -1 or -2, got -3");
  expectError(makeHopperValueLayout({128}, -1, 3, &e), e, "rank >= 2");
  expectError(makeHopperValueLayout({-2, 128}, -1, 3, &e), e,
              "negative extent");
  // Odd non-MX extent is fine for mx=-1.
  EXPECT_NE(makeHopperValueLayout({3, 128}, -1, 3, &e), nullptr);
  // A null error pointer is allowed.
  EXPECT_EQ(makeHopperValueLayout({3, 4}, -2, 3), nullptr);
}

TEST(Errors, HopperScale) {
  std::string e;
  for (int warps : {0, 3, 6, -4}) {
    e.clear();
    expectError(makeHopperScaleLayout({8, 64}, -2, warps, &e), e,
                "num_warps must be a power of 2");
    EXPECT_NE(e.find(std::to_string(warps)), std::string::npos) << e;
  }
  expectError(makeHopperScaleLayout({8, 64}, 1, 4, &e), e,
              "mx_axis must be -1 or -2, got 1");
  expectError(makeHopperScaleLayout({8}, -1, 4, &e), e, "rank >= 2");
  // Scales have no packing: odd extents are fine.
  EXPECT_NE(makeHopperScaleLayout({3, 5}, -2, 4, &e), nullptr);
}

TEST(Errors, BlackwellValue) {
  std::string e;
  expectError(makeBlackwellValueLayout({3, 64}, &e), e,
              "FP4 packing dimension -2 must have an even size, got 3");
  expectError(makeBlackwellValueLayout({1, 0}, &e), e,
              "FP4 packing dimension -2 must have an even size, got 1");
  expectError(makeBlackwellValueLayout({2, 4, 3}, &e), e,
              "FP4 packing dimension -1 must have an even size, got 3");
  expectError(makeBlackwellValueLayout({4}, &e), e, "rank >= 2");
}

TEST(Errors, BlackwellShuffledValue) {
  std::string e;
  for (int64_t k : {1, 3})
    for (int64_t n : {0, 64}) {
      e.clear();
      expectError(makeBlackwellShuffledValueLayout({k, n}, 128, 256, &e), e,
                  "FP4 packing dimension -2 must have an even size, got " +
                      std::to_string(k));
    }
  expectError(makeBlackwellShuffledValueLayout({64, 3}, 128, 256, &e), e,
              "FP4 packing dimension -1 must have an even size, got 3");
  expectError(makeBlackwellShuffledValueLayout({64, 64}, 127, 256, &e), e,
              "block_k must be a positive even number, got 127");
  expectError(makeBlackwellShuffledValueLayout({64, 64}, 0, 256, &e), e,
              "block_k must be a positive even number, got 0");
  expectError(makeBlackwellShuffledValueLayout({64, 64}, 128, 0, &e), e,
              "block_n must be positive, got 0");
  expectError(makeBlackwellShuffledValueLayout({64, 64}, 128, -256, &e), e,
              "block_n must be positive, got -256");
  expectError(makeBlackwellShuffledValueLayout({64}, 128, 256, &e), e,
              "rank >= 2");
}

TEST(Errors, ScaleLayoutsNeedRankTwo) {
  std::string e;
  expectError(makeBlackwellScaleLayout({8}, &e), e, "rank >= 2, got rank 1");
  expectError(makeCDNA4ScaleLayout({}, &e), e, "rank >= 2, got rank 0");
  expectError(makeBlackwellScaleLayout({2, -1}, &e), e, "negative extent");
  expectError(makeCDNA4ScaleLayout({-8, 2}, &e), e, "negative extent");
}

} // namespace
