//===- HopperWordDecode.h - Seed 000's decode of Hopper value words -*- C++ -*-===//
//
// The decode of one word of #microscale.hopper_value<mma_version = 3> (eight
// bit-interleaved FP4 values) into four bf16x2 registers with their E8M0
// scales, as inline PTX (layouts.md section 3, "Decode contract"): 13 bit
// operations, then one mul.rn.bf16x2 per pair with the 2^126 bias folded
// into the scale (codes <= 128), or the exact two multiplies. Shared by the
// Hopper dequantization kernel and the Hopper-layout matmul, whose decoded
// registers are the mma.sync A fragment as they come: slot 0 holds (m, kb)
// = rows g, K 2q..2q+1 of an m16n8k16 A tile, slot 1 row g + 8, slots 2 and
// 3 the same rows at K + 8.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWORDDECODE_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOPPERWORDDECODE_H

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/IR/Builders.h"

namespace mlir::microscale {

/// Emits the decode of Hopper value words with their scales: four bf16x2
/// registers per word (slot s: MX elements 2kb, 2kb + 1 of the slot's m).
class ScaledWordDecoder {
public:
  ScaledWordDecoder(OpBuilder &builder, Location loc, bool fold)
      : builder(builder), loc(loc), e(builder, loc), fold(fold) {}

  /// `evenCode` and `oddCode` are the E8M0 codes (i32) of the word's slots
  /// 0, 2 (non-MX index m) and 1, 3 (m + 8). With `fold`, the folded
  /// sequence where both codes are <= 128 (a branch per word), else the
  /// exact one.
  SmallVector<Value> decode(Value bits, Value evenCode, Value oddCode);

  /// 2^(s-1) as bf16 in both lanes (exponent field s + 126): the folded
  /// multiplier of code s, exact for s <= 128 (code 0, OCP's 2^-127, gives
  /// 2^-1 with no special case).
  Value foldedPair(Value code);
  /// The folded multipliers of the four scale codes in the bytes of
  /// `codes` (each below 128) as two registers: the exponent fields of
  /// bytes 0 and 2 in the low and high lanes of the first, of bytes 1 and
  /// 3 in the second (one add and two shift-and-masks for four codes,
  /// where foldedPair takes an extract, an add and a shift-or per code).
  std::pair<Value, Value> foldedLanes(Value codes);
  /// The folded decode (exact when both codes are below 128) with each
  /// multiplier one lane, `lane` (0 low, 1 high), of `evenLanes` and
  /// `oddLanes` (foldedLanes' registers), broadcast to both lanes of the
  /// multiply's operand in the PTX (the form ptxas can fold into the
  /// operand's lane selector).
  SmallVector<Value> decodeFoldedLanes(Value bits, Value evenLanes,
                                       Value oddLanes, int64_t lane);
  /// The exact decode for every code: bias, then scale, then OCP's NaN.
  SmallVector<Value> decodeExact(Value bits, Value evenCode, Value oddCode);

  /// Bit operations and bf16 multiplies in arith instead of PTX (the host
  /// emulation of the kernels): the same bits.
  bool onHost = false;

private:
  /// The decode with (the biased PTX) or without (the folded sequence) its
  /// own 2^126 multiply.
  SmallVector<Value> inlineDecode(bool biased, Value bits, Value evenScale,
                                  Value oddScale);
  /// One decode sequence `ptx` ($0-$3 the slots, $4 the word, $5 and $6
  /// the even and odd multipliers) as a pure inline asm statement.
  SmallVector<Value> decodePTX(StringRef ptx, Value bits, Value evenScale,
                               Value oddScale);
  /// The PTX sequences as integer operations and bf16 multiplies rounded
  /// to nearest even, which is what mul.rn.bf16x2 does.
  SmallVector<Value> hostDecode(bool biased, Value x, Value evenScale,
                                Value oddScale);
  /// The scale code in both bf16 exponent fields. OCP edges: code 0 is
  /// 2^-127, the bf16 subnormal 0x0040; code 255 is handled in decodeExact.
  Value scalePair(Value code);

  OpBuilder &builder;
  Location loc;
  codegen::Emitter e;
  bool fold;
};

} // namespace mlir::microscale

#endif
