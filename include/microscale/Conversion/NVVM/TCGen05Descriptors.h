//===- TCGen05Descriptors.h - tcgen05 descriptor and scale-atom packing -*- C++ -*-===//
//
// The bit-level encodings a tcgen05 block-scaled MMA kernel (sm_100a) hands
// to the tensor cores, as plain C++ so that they can be unit-tested against
// the PTX ISA's tables without a GPU:
//
//  * the 32-bit instruction descriptor of `tcgen05.mma ... .block_scale`
//    for `.kind::mxf8f6f4`, `.kind::mxf4` and `.kind::mxf4nvf4` (PTX ISA
//    8.8, section 9.7.16.4.2, the block-scaled table);
//  * the 64-bit shared-memory matrix descriptor (section 9.7.16.4.1);
//  * the 512-byte scale-factor atom (128 rows x 4 K blocks) that
//    `tcgen05.cp ... 32x128b.warpx4` copies into tensor memory, the layout
//    the block scaling reads (sections 9.7.16.10.7.x) and the one
//    `#microscale.blackwell_scale` stores.
//
// ptxas checks none of these bits: a wrong field assembles and computes
// garbage. Every encoder therefore validates the combination the PTX ISA
// allows and reports the first violation instead of packing it.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_TCGEN05DESCRIPTORS_H
#define MICROSCALE_CONVERSION_NVVM_TCGEN05DESCRIPTORS_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::microscale::nvvm {

/// The `.kind` of a block-scaled tcgen05.mma.
enum class BlockScaledKind { MXF8F6F4, MXF4, MXF4NVF4 };

/// K values per scale factor: `.block32` (scale_vec::1X for mxf8f6f4, 2X
/// for the FP4 kinds) or `.block16` (4X; mxf4nvf4 only).
enum class ScaleBlock { Block32, Block16 };

/// The scale factors' type (instruction descriptor bit 23).
enum class ScaleType { UE4M3 = 0, UE8M0 = 1 };

/// Element types of the A and B operands.
enum class OperandType { E4M3, E5M2, E2M3, E3M2, E2M1 };

/// Which dimension of an operand is contiguous in shared memory.
enum class OperandMajor { K = 0, MN = 1 };

/// The fields of a block-scaled instruction descriptor (dense, cta_group::1).
struct BlockScaledInstrDescriptor {
  BlockScaledKind kind = BlockScaledKind::MXF4;
  ScaleBlock block = ScaleBlock::Block32;
  ScaleType scaleType = ScaleType::UE8M0;
  OperandType typeA = OperandType::E2M1, typeB = OperandType::E2M1;
  OperandMajor majorA = OperandMajor::K, majorB = OperandMajor::K;
  bool negateA = false, negateB = false;
  /// The MMA's M (rows of A and D) and N (columns of B and D).
  int64_t m = 128, n = 8;
  /// Which scale factors of the tensor-memory column the MMA reads: byte
  /// (1X), half-word start (2X: 0 or 2) or 0 (4X).
  unsigned scaleIdA = 0, scaleIdB = 0;
};

/// The 32-bit instruction descriptor, or std::nullopt with `*error` (when
/// given) saying which field the PTX ISA does not allow.
std::optional<uint32_t> encode(const BlockScaledInstrDescriptor &descriptor,
                               std::string *error = nullptr);

/// Field positions of the block-scaled instruction descriptor, for tests and
/// for kernels that patch the scale IDs per MMA.
namespace idesc {
inline constexpr unsigned kScaleIdBShift = 4;   // bits [4, 6)
inline constexpr unsigned kTypeAShift = 7;      // bits [7, 10)
inline constexpr unsigned kTypeBShift = 10;     // bits [10, 13)
inline constexpr unsigned kNegateAShift = 13;
inline constexpr unsigned kNegateBShift = 14;
inline constexpr unsigned kMajorAShift = 15;
inline constexpr unsigned kMajorBShift = 16;
inline constexpr unsigned kNShift = 17;         // bits [17, 23): N >> 3
inline constexpr unsigned kScaleTypeShift = 23;
inline constexpr unsigned kMShift = 24;         // bits [24, 29): M >> 4
inline constexpr unsigned kScaleIdAShift = 29;  // bits [29, 31)
} // namespace idesc

/// Shared-memory layouts (swizzling modes) of the matrix descriptor.
enum class SwizzleMode : uint8_t {
  None = 0,
  Swizzle128BBase32B = 1,
  Swizzle128B = 2,
  Swizzle64B = 4,
  Swizzle32B = 6,
};

/// The fields of a shared-memory matrix descriptor. Byte addresses and
/// offsets: the descriptor keeps them divided by 16 in 14 bits each.
struct SharedMemoryDescriptor {
  uint32_t startAddress = 0;
  uint32_t leadingByteOffset = 0;
  uint32_t strideByteOffset = 0;
  /// Bits [49, 52): the pattern start's offset within the swizzle repeat
  /// (0 when the operand starts on a swizzle-aligned address).
  unsigned baseOffset = 0;
  /// Bit 52: leading byte offset absolute (1) or relative (0).
  bool absoluteLeadingByteOffset = false;
  SwizzleMode swizzle = SwizzleMode::None;
};

/// The 64-bit descriptor (with the fixed 0b001 at bits [46, 49)), or
/// std::nullopt with `*error` for an unaligned or out-of-range field.
std::optional<uint64_t> encode(const SharedMemoryDescriptor &descriptor,
                               std::string *error = nullptr);

/// The scale-factor atom: 128 rows (M of A, N of B) x 4 K blocks, 512
/// bytes, as tcgen05.cp's 32x128b.warpx4 copies it: row r lands in lane
/// r % 32 of every sub-partition and the MMA finds row r's scales in the
/// 32-bit column r / 32 of that 128-bit row, K block k in its byte k.
inline constexpr int64_t kScaleAtomRows = 128;
inline constexpr int64_t kScaleAtomKBlocks = 4;
inline constexpr int64_t kScaleAtomBytes = 512;

/// The byte of (row, K block) within one atom.
constexpr int64_t scaleAtomByte(int64_t row, int64_t kBlock) {
  return (row % 32) * 16 + (row / 32) * 4 + kBlock;
}

/// The byte of scale (row, kBlock) in a [rows, kBlocks] scale matrix stored
/// as whole atoms, K-atoms first then 128-row slabs; `kBlocks` is the
/// padded count of K blocks (a multiple of 4).
constexpr int64_t scaleAtomsByte(int64_t row, int64_t kBlock,
                                 int64_t kBlocks) {
  return ((row / kScaleAtomRows) * (kBlocks / kScaleAtomKBlocks) +
          kBlock / kScaleAtomKBlocks) *
             kScaleAtomBytes +
         scaleAtomByte(row % kScaleAtomRows, kBlock % kScaleAtomKBlocks);
}

/// The shared-memory descriptor that tcgen05.cp reads one atom at `address`
/// through: no swizzle, 128 bytes (one 32x128b row block of 8 rows of 16
/// bytes) between core matrices, no leading offset.
SharedMemoryDescriptor scaleAtomDescriptor(uint32_t address);

} // namespace mlir::microscale::nvvm

#endif
