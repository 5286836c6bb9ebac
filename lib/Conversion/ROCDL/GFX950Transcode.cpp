//===- GFX950Transcode.cpp - NVFP4 B32 block -> MXFP6 on gfx950 -----------===//
#include "microscale/Conversion/ROCDL/GFX950Transcode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

Value mlir::microscale::emitAMDGCNBytePermute(Emitter &e, Value high,
                                              Value low, Value selector) {
  OpBuilder &b = e.builder();
  return LLVM::CallIntrinsicOp::create(
             b, e.location(), b.getI32Type(),
             b.getStringAttr("llvm.amdgcn.perm"),
             ValueRange{high, low, selector})
      .getResult(0);
}

/// The hardware-conversion sequence.
static TranscodedBlock emitHardwareConversionBlock(Emitter &e,
                                                   ArrayRef<Value> fp4Words,
                                                   Value e4m3Code,
                                                   ExponentBump rule) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  SplitScaleValues split = emitSplitE4M3Scale(e, e4m3Code, rule);
  // The factor (1 + m'/8) / 2^bump with the scale's sign, as f16 bits:
  // exponent field 15 - bump, mantissa m' in its top three bits. A zero
  // scale multiplies by +-0 (element signs flip with the scale's); a NaN
  // scale by +0 after its elements are zeroed, so its codes are all 0.
  Value sign = e.select(split.negative, e.i32(0x8000), e.i32(0));
  Value bump = arith::ExtUIOp::create(b, loc, b.getI32Type(), split.bump);
  Value factor = e.bor(
      sign, e.bor(e.shlV(arith::SubIOp::create(b, loc, e.i32(15), bump),
                         e.i32(10)),
                  e.shl(split.mantissa, 7)));
  factor = e.select(split.zero, sign, factor);
  factor = e.select(split.nan, e.i32(0), factor);
  auto halves = VectorType::get({2}, b.getF16Type());
  Value factors = vector::BroadcastOp::create(
      b, loc, halves,
      arith::BitcastOp::create(
          b, loc, b.getF16Type(),
          arith::TruncIOp::create(b, loc, b.getI16Type(), factor)));
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));

  // Sixteen f16 pairs in element order, concatenated by a tree of
  // shuffles (register moves once allocated).
  SmallVector<Value, 16> parts;
  for (unsigned w = 0; w < 4; ++w) {
    Value word = e.select(split.nan, e.i32(0), fp4Words[w]);
    for (unsigned byte = 0; byte < 4; ++byte) {
      // Byte `byte` holds elements 2k (low nibble, result lane 0) and 2k+1.
      Value pair = ROCDL::CvtScaleF32PkF16Fp4Op::create(
          b, loc, halves, word, one, byte);
      parts.push_back(arith::MulFOp::create(b, loc, pair, factors));
    }
  }
  while (parts.size() > 1) {
    SmallVector<Value, 16> joined;
    for (size_t i = 0; i < parts.size(); i += 2) {
      const int64_t width =
          2 * cast<VectorType>(parts[i].getType()).getNumElements();
      joined.push_back(vector::ShuffleOp::create(
          b, loc, parts[i], parts[i + 1],
          llvm::to_vector(llvm::seq<int64_t>(0, width))));
    }
    parts = std::move(joined);
  }
  Value products = parts.front();
  auto packedType = VectorType::get({6}, b.getI32Type());
  Value packed = ROCDL::CvtScaleF32Pk32Fp6F16Op::create(b, loc, packedType,
                                                        products, one);
  TranscodedBlock block;
  for (int64_t w = 0; w < 6; ++w)
    block.words.push_back(vector::ExtractOp::create(b, loc, packed, w));
  block.e8m0 = split.e8m0;
  return block;
}

TranscodedBlock mlir::microscale::emitGFX950TranscodeBlock(
    Emitter &e, ArrayRef<Value> fp4Words, Value e4m3Code,
    TranscodeVariant variant, ExponentBump rule) {
  if (variant == TranscodeVariant::hwcvt)
    return emitHardwareConversionBlock(e, fp4Words, e4m3Code, rule);
  return emitTableTranscodeBlock(e, fp4Words, e4m3Code, variant, rule,
                                 emitAMDGCNBytePermute);
}
