//===- TCGen05DescriptorsTest.cpp - tcgen05 descriptors against the PTX ISA ===//
//
// The packers of Conversion/NVVM/TCGen05Descriptors.h against the PTX ISA
// 8.8 tables, with every expected word worked out by hand from the table
// (the sum of each field shifted to its position is written next to it):
//
//  * 9.7.16.4.2 "Instruction descriptor", the table for .kind::mxf8f6f4,
//    .kind::mxf4 and .kind::mxf4nvf4: [4,6) SFB ID, [7,10) atype,
//    [10,13) btype, 13/14 negate A/B, 15/16 transpose (major) A/B,
//    [17,23) N >> 3, 23 scale type (UE4M3 0, UE8M0 1), [24,29) M >> 4,
//    [29,31) SFA ID, 31 K size;
//  * 9.7.16.4.1 "Shared memory descriptor": [0,14) start >> 4, [16,30)
//    LBO >> 4, [32,46) SBO >> 4, [46,49) fixed 0b001, [49,52) base offset,
//    52 LBO mode, [61,64) swizzle (none 0, 128B with 32B atom 1, 128B 2,
//    64B 4, 32B 6);
//  * the scale-factor layout of the block-scaling subsections of 9.7.16.10.7
//    with tcgen05.cp's 32x128b.warpx4 shape: 128 rows x 4 K blocks per
//    512-byte atom, row r at 16 (r % 32) + 4 (r / 32), K block k at byte k;
//    and `#microscale.blackwell_scale` is byte for byte those atoms.
//
// The field positions and the E2M1 code (1 under the FP4 kinds, 5 under
// mxf8f6f4) also agree with two independent encoders, read, not copied:
// CUTLASS's InstrDescriptorBlockScaled bitfields and Triton's
// createScaleInstDescriptor (MMAv5.cpp). None of this was run on a GPU.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/TCGen05Descriptors.h"
#include "microscale/Reference/TritonLayouts.h"

#include "gtest/gtest.h"

#include <set>
#include <vector>

using namespace mlir::microscale::nvvm;
namespace ref = ::microscale::ref;

namespace {

uint32_t mustEncode(const BlockScaledInstrDescriptor &d) {
  std::string error;
  std::optional<uint32_t> word = encode(d, &error);
  EXPECT_TRUE(word) << error;
  return word.value_or(0xDEADBEEF);
}

// 9.7.16.4.2: MXFP4 x MXFP4, the kernel's own descriptor at the smallest N.
TEST(TCGen05InstrDescriptor, Mxf4Block32) {
  BlockScaledInstrDescriptor d; // mxf4, block32, UE8M0, E2M1, K-major
  d.m = 128;
  d.n = 8;
  // atype E2M1 (1) << 7 = 0x80, btype 1 << 10 = 0x400, N >> 3 = 1 << 17 =
  // 0x20000, UE8M0 1 << 23 = 0x800000, M >> 4 = 8 << 24 = 0x08000000.
  EXPECT_EQ(mustEncode(d), 0x08820480u);
  // N = 256 (32 << 17 = 0x400000) and the second MMA of an atom: scale IDs
  // 2 (2 << 4 = 0x20, 2 << 29 = 0x40000000).
  d.n = 256;
  d.scaleIdA = 2;
  d.scaleIdB = 2;
  EXPECT_EQ(mustEncode(d), 0x48C004A0u);
}

// NVFP4: mxf4nvf4 .block16 with UE4M3 scales: bit 23 clear.
TEST(TCGen05InstrDescriptor, Mxf4Nvf4Block16) {
  BlockScaledInstrDescriptor d;
  d.kind = BlockScaledKind::MXF4NVF4;
  d.block = ScaleBlock::Block16;
  d.scaleType = ScaleType::UE4M3;
  d.n = 64;
  // 0x80 | 0x400 | (8 << 17 = 0x100000) | 0 | 0x08000000.
  EXPECT_EQ(mustEncode(d), 0x08100480u);
  // mxf4nvf4 .block32 is MXFP4 through the nvf4 kind: UE8M0 again.
  d.block = ScaleBlock::Block32;
  d.scaleType = ScaleType::UE8M0;
  EXPECT_EQ(mustEncode(d), 0x08900480u);
}

// mxf8f6f4: the f8f6f4 type codes (E4M3 0, E2M1 5), 1X scale IDs are bytes.
TEST(TCGen05InstrDescriptor, Mxf8f6f4W4A8) {
  BlockScaledInstrDescriptor d;
  d.kind = BlockScaledKind::MXF8F6F4;
  d.typeA = OperandType::E4M3;
  d.typeB = OperandType::E2M1;
  d.n = 128;
  d.scaleIdA = 3;
  d.scaleIdB = 1;
  // atype 0, btype 5 << 10 = 0x1400, 16 << 17 = 0x200000, 0x800000,
  // 0x08000000, SFB ID 1 << 4 = 0x10, SFA ID 3 << 29 = 0x60000000.
  EXPECT_EQ(mustEncode(d), 0x68A01410u);
  // An MN-major 8-bit A (1 << 15) and a negated B (1 << 14).
  d.majorA = OperandMajor::MN;
  d.negateB = true;
  EXPECT_EQ(mustEncode(d), 0x68A01410u | 0x8000u | 0x4000u);
  // Every other type code.
  const std::pair<OperandType, uint32_t> codes[] = {
      {OperandType::E4M3, 0}, {OperandType::E5M2, 1}, {OperandType::E2M3, 3},
      {OperandType::E3M2, 4}, {OperandType::E2M1, 5}};
  d = BlockScaledInstrDescriptor();
  d.kind = BlockScaledKind::MXF8F6F4;
  for (auto [type, code] : codes) {
    d.typeA = d.typeB = type;
    EXPECT_EQ((mustEncode(d) >> idesc::kTypeAShift) & 7, code);
    EXPECT_EQ((mustEncode(d) >> idesc::kTypeBShift) & 7, code);
  }
}

// The descriptors of the sm_100a kernel's kind::mxf8f6f4 MMAs (swap-AB: A
// the MXFP4 weight, B the MXFP8 activations), the E2M1 A in the padded
// shared-memory form of 9.7.16.10.4.4 (its type code is 5 whatever the
// packing), four 1X MMAs per scale atom, byte IDs 0-3.
TEST(TCGen05InstrDescriptor, Mxf8f6f4KernelW4A8) {
  BlockScaledInstrDescriptor d;
  d.kind = BlockScaledKind::MXF8F6F4;
  d.typeA = OperandType::E2M1;
  d.typeB = OperandType::E4M3;
  d.n = 16;
  // atype 5 << 7 = 0x280, btype 0, N >> 3 = 2 << 17 = 0x40000, UE8M0
  // 0x800000, M >> 4 = 8 << 24 = 0x08000000.
  EXPECT_EQ(mustEncode(d), 0x08840280u);
  // E5M2 activations: btype 1 << 10 = 0x400.
  d.typeB = OperandType::E5M2;
  EXPECT_EQ(mustEncode(d), 0x08840680u);
  // The fourth MMA of an atom: byte 3 of the column for both (3 << 4 =
  // 0x30, 3 << 29 = 0x60000000); a 48-token tile (6 << 17 = 0xC0000).
  d.typeB = OperandType::E4M3;
  d.scaleIdA = d.scaleIdB = 3;
  d.n = 48;
  EXPECT_EQ(mustEncode(d), 0x688C02B0u);
  // Every byte ID is a 1X ID; the type fields sit where the table says.
  for (unsigned id = 0; id < 4; ++id) {
    d.scaleIdA = d.scaleIdB = id;
    const uint32_t word = mustEncode(d);
    EXPECT_EQ((word >> idesc::kScaleIdAShift) & 3, id);
    EXPECT_EQ((word >> idesc::kScaleIdBShift) & 3, id);
    EXPECT_EQ((word >> idesc::kTypeAShift) & 7, 5u);
    EXPECT_EQ((word >> idesc::kTypeBShift) & 7, 0u);
    EXPECT_EQ((word >> idesc::kScaleTypeShift) & 1, 1u);
  }
}

// mxf8f6f4 is block32 with UE8M0 scales only, its 1X IDs are bytes 0-3,
// and an E2M1 operand (4 bits) cannot be MN-major.
TEST(TCGen05InstrDescriptor, RefusesMxf8f6f4OutsideTheTable) {
  auto refused = [](BlockScaledInstrDescriptor d, const char *needle) {
    std::string error;
    EXPECT_FALSE(encode(d, &error));
    EXPECT_NE(error.find(needle), std::string::npos) << error;
  };
  BlockScaledInstrDescriptor base;
  base.kind = BlockScaledKind::MXF8F6F4;
  base.typeA = OperandType::E2M1;
  base.typeB = OperandType::E4M3;
  BlockScaledInstrDescriptor d = base;
  d.block = ScaleBlock::Block16;
  refused(d, "no .block16");
  d = base;
  d.scaleType = ScaleType::UE4M3;
  refused(d, "UE8M0");
  d = base;
  d.scaleIdA = 4;
  refused(d, "scale IDs");
  d = base;
  d.majorA = OperandMajor::MN;
  refused(d, "MN-major");
  // The MN-major 8-bit B is allowed.
  d = base;
  d.majorB = OperandMajor::MN;
  EXPECT_EQ(mustEncode(d), 0x08820280u | 0x10000u);
}

// Combinations the table does not allow are refused, never packed.
TEST(TCGen05InstrDescriptor, RefusesWhatTheISADoesNotAllow) {
  auto refused = [](BlockScaledInstrDescriptor d, const char *needle) {
    std::string error;
    EXPECT_FALSE(encode(d, &error));
    EXPECT_NE(error.find(needle), std::string::npos) << error;
  };
  BlockScaledInstrDescriptor d;
  d.block = ScaleBlock::Block16; // mxf4.block16 is illegal
  refused(d, "no .block16");
  d = {};
  d.scaleType = ScaleType::UE4M3;
  refused(d, "UE8M0");
  d = {};
  d.typeA = OperandType::E4M3; // mxf4 is E2M1 only
  refused(d, "E2M1 operands only");
  d = {};
  d.m = 64;
  refused(d, "M = 128");
  d = {};
  d.n = 12;
  refused(d, "multiple of 8");
  d.n = 264;
  refused(d, "multiple of 8");
  d = {};
  d.scaleIdA = 1; // 2X: half-word IDs 0 or 2
  refused(d, "scale IDs");
  d = {};
  d.kind = BlockScaledKind::MXF4NVF4;
  d.block = ScaleBlock::Block16;
  d.scaleIdB = 2; // 4X: ID 0 only
  refused(d, "scale IDs");
  d = {};
  d.majorB = OperandMajor::MN; // FP4 operands are K-major
  refused(d, "MN-major");
}

// 9.7.16.4.1: a 128B-swizzled operand tile and the scale atom's copy.
TEST(TCGen05SharedMemoryDescriptor, Fields) {
  SharedMemoryDescriptor d;
  d.startAddress = 0x400;
  d.leadingByteOffset = 16;
  d.strideByteOffset = 1024;
  d.swizzle = SwizzleMode::Swizzle128B;
  std::string error;
  // 0x40 | (1 << 16) | (64 << 32) | (1 << 46) | (2 << 61).
  EXPECT_EQ(encode(d, &error).value_or(0), 0x4000404000010040ull) << error;
  d.baseOffset = 5;
  d.absoluteLeadingByteOffset = true;
  EXPECT_EQ(encode(d, &error).value_or(0),
            0x4000404000010040ull | (5ull << 49) | (1ull << 52));
  // The scale atom at 0x2000: start 0x200, SBO 128 (8 << 32), no swizzle.
  EXPECT_EQ(encode(scaleAtomDescriptor(0x2000), &error).value_or(0),
            0x0000400800000200ull);
  // The fixed bits alone.
  EXPECT_EQ(encode(SharedMemoryDescriptor(), &error).value_or(0), 1ull << 46);
  // Every swizzle mode lands in bits [61, 64).
  for (SwizzleMode mode :
       {SwizzleMode::None, SwizzleMode::Swizzle128BBase32B,
        SwizzleMode::Swizzle128B, SwizzleMode::Swizzle64B,
        SwizzleMode::Swizzle32B}) {
    SharedMemoryDescriptor s;
    s.swizzle = mode;
    EXPECT_EQ(encode(s).value_or(0) >> 61, uint64_t(mode));
  }
}

TEST(TCGen05SharedMemoryDescriptor, RefusesUnencodableFields) {
  std::string error;
  SharedMemoryDescriptor d;
  d.startAddress = 8; // not 16-byte aligned
  EXPECT_FALSE(encode(d, &error));
  EXPECT_NE(error.find("multiple of 16"), std::string::npos);
  d = {};
  d.strideByteOffset = 1u << 18; // 2^14 units of 16 bytes
  EXPECT_FALSE(encode(d, &error));
  EXPECT_NE(error.find("14 bits"), std::string::npos);
  d = {};
  d.baseOffset = 8;
  EXPECT_FALSE(encode(d, &error));
  d = {};
  d.swizzle = static_cast<SwizzleMode>(3);
  EXPECT_FALSE(encode(d, &error));
}

// The atom is a permutation of its 512 bytes: 32 copy rows of 16 bytes,
// row r's four K blocks contiguous in the 32-bit column r / 32.
TEST(TCGen05ScaleAtom, CopyRowsOf128Bits) {
  std::set<int64_t> bytes;
  for (int64_t r = 0; r < kScaleAtomRows; ++r)
    for (int64_t k = 0; k < kScaleAtomKBlocks; ++k) {
      const int64_t byte = scaleAtomByte(r, k);
      bytes.insert(byte);
      EXPECT_EQ(byte / 16, r % 32) << "copy row (tensor-memory lane)";
      EXPECT_EQ(byte % 16 / 4, r / 32) << "32-bit column";
      EXPECT_EQ(byte % 4, k) << "byte within the column";
    }
  EXPECT_EQ(bytes.size(), size_t(kScaleAtomBytes));
  EXPECT_EQ(*bytes.rbegin(), kScaleAtomBytes - 1);
  // Hand-worked: row 37 (copy row 5, column 1), K block 2: 80 + 4 + 2.
  EXPECT_EQ(scaleAtomByte(37, 2), 86);
  // Row 130 of a 2-slab tensor with 8 K blocks, K block 5: slab 1, atom
  // 1 of the slab: (1 * 2 + 1) * 512 + 2 * 16 + 0 * 4 + 1.
  EXPECT_EQ(scaleAtomsByte(130, 5, 8), 3 * 512 + 33);
}

// `#microscale.blackwell_scale`'s reference map is byte for byte the atoms
// of this file: every scale of several shapes (padded K blocks and rows,
// batches) at scaleAtomsByte of its batch's atoms.
TEST(TCGen05ScaleAtom, IsTheBlackwellScaleLayout) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{4, 128}, std::vector<int64_t>{8, 256},
        std::vector<int64_t>{90, 5760}, std::vector<int64_t>{2, 12, 300},
        std::vector<int64_t>{3, 5, 130}}) {
    std::string error;
    auto layout = ref::makeBlackwellScaleLayout(shape, &error);
    ASSERT_TRUE(layout) << error;
    const size_t rank = shape.size();
    const int64_t batches = rank == 3 ? shape[0] : 1;
    const int64_t kBlocks = shape[rank - 2], rows = shape[rank - 1];
    const int64_t paddedK = (kBlocks + 7) / 8 * 8; // Triton pads to 8
    const int64_t paddedRows = (rows + 127) / 128 * 128;
    const int64_t batchBytes = paddedRows * paddedK;
    EXPECT_EQ(layout->getStorageBytes(), batches * batchBytes);
    std::vector<int64_t> index(rank);
    int64_t bits[8];
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t k = 0; k < kBlocks; ++k)
        for (int64_t r = 0; r < rows; ++r) {
          if (rank == 3)
            index[0] = b;
          index[rank - 2] = k;
          index[rank - 1] = r;
          layout->locate(index.data(), bits);
          ASSERT_EQ(bits[0], 8 * (b * batchBytes +
                                  scaleAtomsByte(r, k, paddedK)))
              << "batch " << b << " k " << k << " row " << r;
        }
  }
}

} // namespace
