//===- HopperWordDecode.cpp - Seed 000's decode of Hopper value words ------===//
//
// See HopperWordDecode.h.
//
//===----------------------------------------------------------------------===//
#include "HopperWordDecode.h"
#include "HostEmulation.h"
#include "InlinePtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::microscale;

// The decode of one Hopper value word ($4) into four bf16x2 registers
// ($0-$3; slot s: low half the even MX element, high half the odd one):
// slots 0 and 2 hold non-MX index m, slots 1 and 3 m + 8. Slots 0-2 need one
// mask after a shift (the layout aligns their sign and exponent-mantissa bits
// with bf16's); slot 3 is gathered from three places. The masked lanes are
// the FP4 value times 2^-126. Both sequences below share these bit
// operations (string literals, so that each sequence stays one constant).
#define MICROSCALE_HOPPER_DECODE_BITS                                          \
  "and.b32 $0, $4, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 3;\n"                                                       \
  "and.b32 $1, t0, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 6;\n"                                                       \
  "and.b32 $2, t0, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 1;\n"                                                       \
  "and.b32 t0, t0, 0x80008000;\n"                                              \
  "shr.b32 t1, $4, 3;\n"                                                       \
  "and.b32 t1, t1, 0x01800180;\n"                                              \
  "or.b32 t0, t0, t1;\n"                                                       \
  "shr.b32 t1, $4, 7;\n"                                                       \
  "and.b32 t1, t1, 0x00400040;\n"                                              \
  "or.b32 $3, t0, t1;\n"
// Each slot times its pair of scales ($5 for the even slots, $6 the odd).
#define MICROSCALE_HOPPER_SCALE_SLOTS                                          \
  "mul.rn.bf16x2 $0, $0, $5;\n"                                                \
  "mul.rn.bf16x2 $1, $1, $6;\n"                                                \
  "mul.rn.bf16x2 $2, $2, $5;\n"                                                \
  "mul.rn.bf16x2 $3, $3, $6;\n"

/// The exact decode: one mul.rn.bf16x2 by 0x7E807E80 (2^126 in both lanes)
/// restores the FP4 values exactly, then the scales multiply.
static constexpr const char *kHopperDecodePTX =
    "{\n"
    ".reg .b32 t0, t1, bias;\n"
    "mov.b32 bias, 0x7E807E80;\n"
    MICROSCALE_HOPPER_DECODE_BITS
    "mul.rn.bf16x2 $0, $0, bias;\n"
    "mul.rn.bf16x2 $1, $1, bias;\n"
    "mul.rn.bf16x2 $2, $2, bias;\n"
    "mul.rn.bf16x2 $3, $3, bias;\n"
    MICROSCALE_HOPPER_SCALE_SLOTS
    "}";

/// The same decode with the 2^126 bias folded into the scale: one
/// mul.rn.bf16x2 per pair by 2^(s-1) = 2^126 * 2^(s-127). Exact only when
/// 2^(s-1) is a bf16, i.e. for scale codes s <= 128; the kernel takes this
/// path when both of a word's scale codes are, and the unfolded one
/// otherwise.
static constexpr const char *kHopperDecodeFoldedPTX =
    "{\n"
    ".reg .b32 t0, t1;\n"
    MICROSCALE_HOPPER_DECODE_BITS
    MICROSCALE_HOPPER_SCALE_SLOTS
    "}";

/// The folded decode with its multipliers given as one lane of $5 (even
/// slots) and $6 (odd): each broadcast to both lanes first.
static std::string foldedLanesPTX(int64_t lane) {
  const char *broadcast = lane ? "{h, h}" : "{l, l}";
  return std::string("{\n"
                     ".reg .b32 t0, t1, even, odd;\n"
                     ".reg .b16 l, h;\n"
                     "mov.b32 {l, h}, $5;\n"
                     "mov.b32 even, ") +
         broadcast +
         ";\n"
         "mov.b32 {l, h}, $6;\n"
         "mov.b32 odd, " +
         broadcast +
         ";\n" MICROSCALE_HOPPER_DECODE_BITS
         "mul.rn.bf16x2 $0, $0, even;\n"
         "mul.rn.bf16x2 $1, $1, odd;\n"
         "mul.rn.bf16x2 $2, $2, even;\n"
         "mul.rn.bf16x2 $3, $3, odd;\n"
         "}";
}

#undef MICROSCALE_HOPPER_DECODE_BITS
#undef MICROSCALE_HOPPER_SCALE_SLOTS

SmallVector<Value> ScaledWordDecoder::decode(Value bits, Value evenCode,
                                             Value oddCode) {
  if (!fold)
    return decodeExact(bits, evenCode, oddCode);
  Value small = e.andI1(
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                            evenCode, e.i32(128)),
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                            oddCode, e.i32(128)));
  Type i32 = builder.getI32Type();
  auto branch = scf::IfOp::create(builder, loc,
                                  TypeRange{i32, i32, i32, i32}, small,
                                  /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&branch.getThenRegion().front());
    scf::YieldOp::create(builder, loc,
                         inlineDecode(/*biased=*/false, bits,
                                      foldedPair(evenCode),
                                      foldedPair(oddCode)));
    builder.setInsertionPointToStart(&branch.getElseRegion().front());
    scf::YieldOp::create(builder, loc, decodeExact(bits, evenCode, oddCode));
  }
  return SmallVector<Value>(branch.getResults());
}

Value ScaledWordDecoder::foldedPair(Value code) {
  Value lane = e.shl(arith::AddIOp::create(builder, loc, code, e.i32(126)), 7);
  return e.bor(lane, e.shl(lane, 16));
}

std::pair<Value, Value> ScaledWordDecoder::foldedLanes(Value codes) {
  // Each byte below 128: adding 126 to every byte carries into none.
  Value biased = arith::AddIOp::create(builder, loc, codes,
                                       e.i32(static_cast<int32_t>(0x7E7E7E7E)));
  const int32_t fields = static_cast<int32_t>(0x7F807F80);
  return {e.band(e.shl(biased, 7), fields), e.band(e.shr(biased, 1), fields)};
}

SmallVector<Value> ScaledWordDecoder::decodeFoldedLanes(Value bits,
                                                        Value evenLanes,
                                                        Value oddLanes,
                                                        int64_t lane) {
  if (onHost) {
    auto broadcast = [&](Value lanes) {
      Value half = e.band(e.shr(lanes, 16 * lane), 0xFFFF);
      return e.bor(half, e.shl(half, 16));
    };
    return hostDecode(/*biased=*/false, bits, broadcast(evenLanes),
                      broadcast(oddLanes));
  }
  return decodePTX(foldedLanesPTX(lane), bits, evenLanes, oddLanes);
}

SmallVector<Value> ScaledWordDecoder::inlineDecode(bool biased, Value bits,
                                                   Value evenScale,
                                                   Value oddScale) {
  if (onHost)
    return hostDecode(biased, bits, evenScale, oddScale);
  return decodePTX(biased ? kHopperDecodePTX : kHopperDecodeFoldedPTX, bits,
                   evenScale, oddScale);
}

SmallVector<Value> ScaledWordDecoder::decodePTX(StringRef ptx, Value bits,
                                                Value evenScale,
                                                Value oddScale) {
  Type i32 = builder.getI32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(builder.getContext(),
                                                     {i32, i32, i32, i32});
  auto asmOp = pureInlinePtx(builder, loc, structType,
                             ValueRange{bits, evenScale, oddScale}, ptx,
                             "=r,=r,=r,=r,r,r,r");
  SmallVector<Value> pairs;
  for (int64_t slot = 0; slot < 4; ++slot)
    pairs.push_back(LLVM::ExtractValueOp::create(
        builder, loc, asmOp.getResult(0), ArrayRef<int64_t>{slot}));
  return pairs;
}

SmallVector<Value> ScaledWordDecoder::hostDecode(bool biased, Value x,
                                                 Value evenScale,
                                                 Value oddScale) {
  auto masked = [&](Value v, uint32_t mask) {
    return arith::AndIOp::create(builder, loc, v,
                                 e.i32(static_cast<int32_t>(mask)));
  };
  SmallVector<Value> pairs = {
      masked(x, 0x81C081C0), masked(e.shl(x, 3), 0x81C081C0),
      masked(e.shl(x, 6), 0x81C081C0),
      e.bor(e.bor(masked(e.shl(x, 1), 0x80008000),
                  masked(e.shr(x, 3), 0x01800180)),
            masked(e.shr(x, 7), 0x00400040))};
  auto multiply = [&](Value a, Value b) {
    return emitHostMulBF16x2(e, a, b);
  };
  for (int64_t slot = 0; slot < 4; ++slot) {
    if (biased)
      pairs[slot] = multiply(pairs[slot], e.i32(0x7E807E80));
    pairs[slot] = multiply(pairs[slot], slot % 2 == 0 ? evenScale : oddScale);
  }
  return pairs;
}

Value ScaledWordDecoder::scalePair(Value code) {
  Value lane = e.select(arith::CmpIOp::create(builder, loc,
                                              arith::CmpIPredicate::eq,
                                              code, e.i32(0)),
                        e.i32(0x0040), e.shl(code, 7));
  return e.bor(lane, e.shl(lane, 16));
}

SmallVector<Value> ScaledWordDecoder::decodeExact(Value bits, Value evenCode,
                                                  Value oddCode) {
  SmallVector<Value> pairs = inlineDecode(
      /*biased=*/true, bits, scalePair(evenCode), scalePair(oddCode));
  for (int64_t slot = 0; slot < 4; ++slot) {
    Value code = slot % 2 == 0 ? evenCode : oddCode;
    Value isNaN = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq, code, e.i32(0xFF));
    pairs[slot] = e.select(isNaN, e.i32(0x7FC07FC0), pairs[slot]);
  }
  return pairs;
}
