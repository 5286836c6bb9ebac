//===- TranscodeBlock.cpp - One NVFP4 B32 block to MXFP6, in registers ----===//
#include "microscale/Dialect/Microscale/Utils/TranscodeBlock.h"

#include "microscale/Reference/Transcode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
namespace ref = ::microscale::ref;

static Value eq(Emitter &e, Value x, int64_t y) {
  return arith::CmpIOp::create(e.builder(), e.location(),
                               arith::CmpIPredicate::eq, x, e.i32(y));
}
static Value ne(Emitter &e, Value x, int64_t y) {
  return arith::CmpIOp::create(e.builder(), e.location(),
                               arith::CmpIPredicate::ne, x, e.i32(y));
}
static Value bxor(Emitter &e, Value x, Value y) {
  return arith::XOrIOp::create(e.builder(), e.location(), x, y);
}
static Value orI1(Emitter &e, Value x, Value y) {
  return arith::OrIOp::create(e.builder(), e.location(), x, y);
}
static Value sub(Emitter &e, Value x, Value y) {
  return arith::SubIOp::create(e.builder(), e.location(), x, y);
}

SplitScaleValues mlir::microscale::emitSplitE4M3Scale(Emitter &e,
                                                       Value e4m3Code,
                                                       ExponentBump rule) {
  SplitScaleValues split;
  Value code = e.band(e4m3Code, 0xFF);
  Value magnitude = e.band(code, 0x7F);
  split.negative = ne(e, e.band(code, 0x80), 0);
  split.nan = eq(e, magnitude, 0x7F);
  split.zero = eq(e, magnitude, 0);
  Value exponent = e.shr(magnitude, 3);
  Value mantissa = e.band(magnitude, 7);
  // A subnormal m * 2^-9 normalises to 2^(p - 9) (1 + m'/8), p the position
  // of m's leading one: the exponent field becomes p - 2. (m | 1 has the
  // same leading one for m > 0 and keeps ctlz defined for the zero scale,
  // whose result is overridden below.)
  Value leadingZeros = math::CountLeadingZerosOp::create(
      e.builder(), e.location(), e.bor(mantissa, e.i32(1)));
  Value leading = sub(e, e.i32(31), leadingZeros);
  Value subnormalMantissa =
      e.band(e.shlV(mantissa, sub(e, e.i32(3), leading)), 7);
  Value subnormal = eq(e, exponent, 0);
  Value normalisedExponent =
      e.select(subnormal, sub(e, leading, e.i32(2)), exponent);
  split.mantissa = e.select(subnormal, subnormalMantissa, mantissa);
  split.bump =
      rule == ExponentBump::nonzero_mantissa
          ? ne(e, split.mantissa, 0)
          : arith::CmpIOp::create(e.builder(), e.location(),
                                  arith::CmpIPredicate::uge, split.mantissa,
                                  e.i32(3));
  // E8M0 = (field - 7) + 127 + bump.
  Value bump32 = arith::ExtUIOp::create(e.builder(), e.location(),
                                        e.builder().getI32Type(), split.bump);
  Value e8m0 = e.add(e.add(normalisedExponent, e.i32(120)), bump32);
  e8m0 = e.select(split.zero, e.i32(0), e8m0);
  split.e8m0 = e.select(split.nan, e.i32(0xFF), e8m0);
  return split;
}

Value mlir::microscale::emitBytePermuteEmulation(Emitter &e, Value high,
                                                 Value low, Value selector) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  Value pair = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, high),
                            c64(32)),
      arith::ExtUIOp::create(b, loc, i64, low));
  Value result = e.i32(0);
  for (int j = 0; j < 4; ++j) {
    Value index = e.band(e.shr(selector, 8 * j), 7);
    Value shift = arith::ExtUIOp::create(b, loc, i64, e.shl(index, 3));
    Value byte = arith::TruncIOp::create(
        b, loc, b.getI32Type(), arith::ShRUIOp::create(b, loc, pair, shift));
    result = e.bor(result, e.shl(e.band(byte, 0xFF), 8 * j));
  }
  return result;
}

/// Eight 24-bit chunks (four codes each, in order) -> six words.
static SmallVector<Value, 6> emitPackChunks(Emitter &e, ArrayRef<Value> chunks) {
  SmallVector<Value, 6> words;
  for (int half = 0; half < 2; ++half) {
    const Value *c = &chunks[4 * half];
    words.push_back(e.bor(c[0], e.shl(c[1], 24)));
    words.push_back(e.bor(e.shr(c[1], 8), e.shl(c[2], 16)));
    words.push_back(e.bor(e.shr(c[2], 16), e.shl(c[3], 8)));
  }
  return words;
}

SmallVector<Value, 6>
mlir::microscale::emitPackSixBitCodes(Emitter &e, ArrayRef<Value> byteWords) {
  assert(byteWords.size() == 8 && "32 codes");
  // Four byte codes -> 24 bits: byte k moves down by 2k bits.
  SmallVector<Value, 8> chunks;
  for (Value d : byteWords)
    chunks.push_back(e.bor(e.bor(e.band(d, 0x3F), e.band(e.shr(d, 2), 0xFC0)),
                           e.bor(e.band(e.shr(d, 4), 0x3F000),
                                 e.band(e.shr(d, 6), 0xFC0000))));
  return emitPackChunks(e, chunks);
}

Value mlir::microscale::emitExtractSixBitCode(Emitter &e, ArrayRef<Value> words,
                                              unsigned i) {
  const unsigned bit = 6 * i, word = bit / 32, offset = bit % 32;
  Value code = e.shr(words[word], offset);
  if (offset > 26)
    code = e.bor(code, e.shl(words[word + 1], 32 - offset));
  return e.band(code, 0x3F);
}

TranscodedBlock mlir::microscale::emitTableTranscodeBlock(
    Emitter &e, ArrayRef<Value> fp4Words, Value e4m3Code,
    TranscodeVariant variant, ExponentBump rule, BytePermuteFn permute) {
  assert(fp4Words.size() == 4 && "32 codes");
  SplitScaleValues split = emitSplitE4M3Scale(e, e4m3Code, rule);
  const std::array<uint8_t, 64> &table =
      ref::transcodeTable(toReference(variant), toReference(rule));

  // The block's 8 entries as two words (entries 0-3 low, 4-7 high), chosen
  // by a select tree on the mantissa's bits.
  auto entries = [&](unsigned m, unsigned first) {
    uint32_t word = 0;
    for (unsigned k = 0; k < 4; ++k)
      word |= static_cast<uint32_t>(table[(m << 3) | (first + k)]) << (8 * k);
    return static_cast<int64_t>(static_cast<int32_t>(word));
  };
  auto selectByMantissa = [&](unsigned first) {
    SmallVector<Value, 8> level;
    for (unsigned m = 0; m < 8; ++m)
      level.push_back(e.i32(entries(m, first)));
    for (unsigned bit = 0; level.size() > 1; ++bit) {
      Value set = ne(e, e.band(split.mantissa, 1 << bit), 0);
      SmallVector<Value, 8> next;
      for (size_t k = 0; k < level.size(); k += 2)
        next.push_back(e.select(set, level[k + 1], level[k]));
      level = std::move(next);
    }
    // Zero and NaN scales give zero magnitudes.
    return e.select(orI1(e, split.zero, split.nan), e.i32(0), level[0]);
  };
  Value tableLow = selectByMantissa(0), tableHigh = selectByMantissa(4);

  // A negative scale flips every element's sign (one xor of the E2M1 sign
  // bits); a NaN scale zeroes the elements, signs included (a zero sign
  // mask: its magnitudes are already zero).
  Value flip = e.select(split.negative, e.i32(0x88888888), e.i32(0));
  Value signMask = e.select(split.nan, e.i32(0), e.i32(0x20202020));
  SmallVector<Value, 8> chunks;
  for (Value word : fp4Words) {
    Value signed_ = bxor(e, word, flip);
    // Even elements' magnitudes (low nibbles) and odd ones' (high nibbles),
    // one per byte, index the table; signs move from bit 3 to bit 5.
    Value even = e.bor(permute(e, tableHigh, tableLow,
                               e.band(word, 0x07070707)),
                       arith::AndIOp::create(e.builder(), e.location(),
                                             e.shl(signed_, 2), signMask));
    Value odd = e.bor(permute(e, tableHigh, tableLow,
                              e.band(e.shr(word, 4), 0x07070707)),
                      arith::AndIOp::create(e.builder(), e.location(),
                                            e.shr(signed_, 2), signMask));
    // Pairs of neighbours into 16-bit lanes: a = (e0 e1 e4 e5),
    // b = (e2 e3 e6 e7); each lane's two codes then become one 12-bit pair.
    Value a = permute(e, odd, even, e.i32(0x06020400));
    Value b = permute(e, odd, even, e.i32(0x07030501));
    Value pairsA = e.bor(e.band(a, 0x003F003F), e.band(e.shr(a, 2), 0x0FC00FC0));
    Value pairsB = e.bor(e.band(b, 0x003F003F), e.band(e.shr(b, 2), 0x0FC00FC0));
    // Elements 0-3 and 4-7 as two 24-bit chunks.
    chunks.push_back(e.bor(e.band(pairsA, 0xFFF), e.shl(e.band(pairsB, 0xFFF), 12)));
    chunks.push_back(e.bor(e.shr(pairsA, 16), e.band(e.shr(pairsB, 4), 0xFFF000)));
  }
  return {emitPackChunks(e, chunks), split.e8m0};
}

/// The kind of `type` (the op's `which` operand), or failure with a
/// diagnostic at `op` when the lowerings do not handle it.
static FailureOr<MatmulOperandKind>
getMatmulOperandKind(Operation *op, QTensorType type, bool hasVariant,
                     StringRef which) {
  StringRef format = type.getFormat().getShortName();
  if (format == "mxfp6_e2m3")
    return MatmulOperandKind::MXFP6;
  if (format == "nvfp4_b32" && hasVariant)
    return MatmulOperandKind::TranscodedNVFP4B32;
  op->emitOpError() << "is lowered for mxfp6_e2m3 operands and for nvfp4_b32 "
                       "operands with a transcode variant; the "
                    << which << " is " << Attribute(type.getFormat())
                    << (format == "nvfp4_b32" ? " without a variant" : "");
  return failure();
}

FailureOr<MatmulOperandKinds>
mlir::microscale::getMatmulOperandKinds(ScaledMatmulStorageOp op) {
  const bool hasVariant = op.getVariant().has_value();
  FailureOr<MatmulOperandKind> lhs =
      getMatmulOperandKind(op, op.getLhsType(), hasVariant, "lhs");
  if (failed(lhs))
    return failure();
  FailureOr<MatmulOperandKind> rhs =
      getMatmulOperandKind(op, op.getRhsType(), hasVariant, "rhs");
  if (failed(rhs))
    return failure();
  return MatmulOperandKinds{*lhs, *rhs};
}

Value mlir::microscale::emitDecodeE2M3(Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  // Magnitude in eighths: m for subnormals, (8 + m) << (exponent - 1).
  Value exponent = e.band(e.shr(code, 3), 3);
  Value mantissa = e.band(code, 7);
  Value normal = e.shlV(e.bor(mantissa, e.i32(8)),
                        sub(e, arith::MaxUIOp::create(b, loc, exponent, e.i32(1)),
                            e.i32(1)));
  Value eighths = e.select(eq(e, exponent, 0), mantissa, normal);
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), eighths),
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.125f)));
  return e.select(ne(e, e.band(code, 0x20), 0),
                  arith::NegFOp::create(b, loc, magnitude), magnitude);
}

Value mlir::microscale::emitE8M0Bits(Emitter &e, Value code) {
  // 2^-127 is an f32 subnormal; 0xFF is NaN.
  Value bits = e.select(eq(e, code, 0), e.i32(0x00400000), e.shl(code, 23));
  return e.select(eq(e, code, 0xFF), e.i32(0x7FC00000), bits);
}

Value mlir::microscale::emitDecodeE8M0(Emitter &e, Value code) {
  return arith::BitcastOp::create(e.builder(), e.location(),
                                  e.builder().getF32Type(),
                                  emitE8M0Bits(e, code));
}
