//===- TCGen05Descriptors.cpp - tcgen05 descriptor and scale-atom packing -===//
#include "microscale/Conversion/NVVM/TCGen05Descriptors.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::microscale::nvvm;

namespace {
bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

const char *kindName(BlockScaledKind kind) {
  switch (kind) {
  case BlockScaledKind::MXF8F6F4:
    return "kind::mxf8f6f4";
  case BlockScaledKind::MXF4:
    return "kind::mxf4";
  case BlockScaledKind::MXF4NVF4:
    return "kind::mxf4nvf4";
  }
  return "?";
}

/// The A/B type field. mxf8f6f4 takes the f8f6f4 codes (E4M3 0, E5M2 1,
/// E2M3 3, E3M2 4, E2M1 5); the FP4-only kinds encode E2M1 as 1.
std::optional<uint32_t> typeCode(BlockScaledKind kind, OperandType type) {
  if (kind != BlockScaledKind::MXF8F6F4)
    return type == OperandType::E2M1 ? std::optional<uint32_t>(1)
                                     : std::nullopt;
  switch (type) {
  case OperandType::E4M3:
    return 0;
  case OperandType::E5M2:
    return 1;
  case OperandType::E2M3:
    return 3;
  case OperandType::E3M2:
    return 4;
  case OperandType::E2M1:
    return 5;
  }
  return std::nullopt;
}

bool isEightBit(OperandType type) {
  return type == OperandType::E4M3 || type == OperandType::E5M2;
}

/// The scale IDs the scale vector size allows: 1X (mxf8f6f4) any byte of
/// the 32-bit column, 2X (FP4 kinds, block32) the half-word at byte 0 or 2,
/// 4X (block16) the whole column.
bool validScaleId(BlockScaledKind kind, ScaleBlock block, unsigned id) {
  if (kind == BlockScaledKind::MXF8F6F4)
    return id < 4;
  if (block == ScaleBlock::Block32)
    return id == 0 || id == 2;
  return id == 0;
}
} // namespace

std::optional<uint32_t>
mlir::microscale::nvvm::encode(const BlockScaledInstrDescriptor &d,
                               std::string *error) {
  const std::string kind = kindName(d.kind);
  std::optional<uint32_t> a = typeCode(d.kind, d.typeA);
  std::optional<uint32_t> b = typeCode(d.kind, d.typeB);
  if (!a || !b)
    return fail(error, kind + " takes E2M1 operands only"), std::nullopt;
  // Block size and scale type per kind (the valid-combinations table of
  // the block-scaling subsection).
  if (d.kind == BlockScaledKind::MXF4NVF4) {
    if (d.block == ScaleBlock::Block32 && d.scaleType != ScaleType::UE8M0)
      return fail(error, kind + ".block32 takes UE8M0 scales"), std::nullopt;
  } else {
    if (d.block != ScaleBlock::Block32)
      return fail(error, kind + " has no .block16 (only mxf4nvf4 does)"),
             std::nullopt;
    if (d.scaleType != ScaleType::UE8M0)
      return fail(error, kind + " takes UE8M0 scales"), std::nullopt;
  }
  // MN-major operands only where the element is a whole byte.
  if ((d.majorA == OperandMajor::MN && !isEightBit(d.typeA)) ||
      (d.majorB == OperandMajor::MN && !isEightBit(d.typeB)) ||
      (d.kind != BlockScaledKind::MXF8F6F4 &&
       (d.majorA == OperandMajor::MN || d.majorB == OperandMajor::MN)))
    return fail(error, kind + ": MN-major operands need 8-bit elements "
                              "(E4M3, E5M2) under kind::mxf8f6f4"),
           std::nullopt;
  // cta_group::1 dense block-scaled shapes: M = 128, N = 8..256 by 8.
  if (d.m != 128)
    return fail(error, "block-scaled tcgen05.mma (cta_group::1) has M = 128, "
                       "got " +
                           std::to_string(d.m)),
           std::nullopt;
  if (d.n < 8 || d.n > 256 || d.n % 8)
    return fail(error, "N must be a multiple of 8 in [8, 256], got " +
                           std::to_string(d.n)),
           std::nullopt;
  if (!validScaleId(d.kind, d.block, d.scaleIdA) ||
      !validScaleId(d.kind, d.block, d.scaleIdB))
    return fail(error, kind + ": scale IDs " + std::to_string(d.scaleIdA) +
                           ", " + std::to_string(d.scaleIdB) +
                           " are not allowed for this scale vector size "
                           "(1X: 0-3, 2X: 0 or 2, 4X: 0)"),
           std::nullopt;
  using namespace idesc;
  uint32_t word = 0;
  word |= d.scaleIdB << kScaleIdBShift;
  word |= *a << kTypeAShift;
  word |= *b << kTypeBShift;
  word |= uint32_t(d.negateA) << kNegateAShift;
  word |= uint32_t(d.negateB) << kNegateBShift;
  word |= uint32_t(d.majorA) << kMajorAShift;
  word |= uint32_t(d.majorB) << kMajorBShift;
  word |= uint32_t(d.n >> 3) << kNShift;
  word |= uint32_t(d.scaleType) << kScaleTypeShift;
  word |= uint32_t(d.m >> 4) << kMShift;
  word |= d.scaleIdA << kScaleIdAShift;
  // Bit 31 (K = 96, sm_103a only) stays 0: K = 64 for the FP4 kinds, 32 for
  // mxf8f6f4.
  return word;
}

std::optional<uint64_t>
mlir::microscale::nvvm::encode(const SharedMemoryDescriptor &d,
                               std::string *error) {
  // 14 bits of each address / 16: 256 KiB of shared memory.
  auto field = [&](uint32_t bytes, const char *name) -> std::optional<uint64_t> {
    if (bytes % 16)
      return fail(error, std::string(name) + " must be a multiple of 16, got " +
                             std::to_string(bytes)),
             std::nullopt;
    if ((bytes >> 4) >= (1u << 14))
      return fail(error, std::string(name) + " exceeds 14 bits of 16-byte "
                                             "units, got " +
                             std::to_string(bytes)),
             std::nullopt;
    return uint64_t(bytes >> 4);
  };
  std::optional<uint64_t> start = field(d.startAddress, "start address");
  if (!start)
    return std::nullopt;
  std::optional<uint64_t> leading =
      field(d.leadingByteOffset, "leading byte offset");
  if (!leading)
    return std::nullopt;
  std::optional<uint64_t> stride =
      field(d.strideByteOffset, "stride byte offset");
  if (!stride)
    return std::nullopt;
  if (d.baseOffset > 7)
    return fail(error, "base offset is 3 bits, got " +
                           std::to_string(d.baseOffset)),
           std::nullopt;
  // A mode built from raw bits may be none of the enumerators.
  const SwizzleMode knownModes[] = {
      SwizzleMode::None, SwizzleMode::Swizzle128BBase32B,
      SwizzleMode::Swizzle128B, SwizzleMode::Swizzle64B,
      SwizzleMode::Swizzle32B};
  if (!llvm::is_contained(knownModes, d.swizzle))
    return fail(error, "swizzle mode " +
                           std::to_string(unsigned(d.swizzle)) +
                           " is not one of 0, 1, 2, 4, 6"),
           std::nullopt;
  uint64_t word = *start;
  word |= *leading << 16;
  word |= *stride << 32;
  word |= uint64_t(1) << 46; // the fixed 0b001 of bits [46, 49)
  word |= uint64_t(d.baseOffset) << 49;
  word |= uint64_t(d.absoluteLeadingByteOffset) << 52;
  word |= uint64_t(d.swizzle) << 61;
  return word;
}

SharedMemoryDescriptor
mlir::microscale::nvvm::scaleAtomDescriptor(uint32_t address) {
  SharedMemoryDescriptor d;
  d.startAddress = address;
  d.leadingByteOffset = 0;
  d.strideByteOffset = 128;
  d.swizzle = SwizzleMode::None;
  return d;
}
