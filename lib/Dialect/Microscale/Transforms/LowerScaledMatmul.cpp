//===- LowerScaledMatmul.cpp - scaled_matmul_storage to host loops --------===//
//
// The host lowering runs, for every (row, column, K block), the operand
// blocks through exactly the register sequences of the gfx950 kernel: an
// NVFP4 B32 block through emitTableTranscodeBlock (the byte permute
// emulated), an MXFP6 block packed into the six words the matrix core
// takes. It then unpacks the six words, multiplies and sums the block in
// f32 (exact) and applies the two E8M0 scales. So the JIT tests that compare
// this lowering with the C++ reference also check the transcode, packing
// and operand assembly that the gfx950 kernel uses; only the matrix core
// itself is not run here.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"
#include "microscale/Dialect/Microscale/Utils/TranscodeBlock.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

namespace {
/// One operand: its type, buffers, and whether its K axis is its first
/// (rhs [K, N]) or its second (lhs [M, K]) dimension.
struct Operand {
  QTensorType type;
  Value values, scales;
  MatmulOperandKind kind;
  bool kFirst;

  SmallVector<Value> index(Value other, Value k) const {
    return kFirst ? SmallVector<Value>{k, other} : SmallVector<Value>{other, k};
  }
};
} // namespace

/// Block `kb` of row (lhs) or column (rhs) `other` as the matrix core gets
/// it: six words of packed E2M3 codes and the E8M0 code.
static TranscodedBlock emitOperandBlock(Emitter &e, const Operand &operand,
                                        Value other, Value kb,
                                        TranscodeVariant variant,
                                        ExponentBump rule) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  SmallVector<int64_t> shape(operand.type.getShape());
  SmallVector<int64_t> scaleShape = operand.type.getScaleShape();
  LayoutAttrInterface valueLayout = operand.type.getValueLayout();
  Value scaleCode = operand.type.getScaleLayout().emitLoadElement(
      b, loc, operand.scales, scaleShape, 8, operand.index(other, kb));
  Value firstK = e.mul(kb, 32);
  auto code = [&](unsigned i, unsigned bits) {
    return valueLayout.emitLoadElement(b, loc, operand.values, shape, bits,
                                       operand.index(other, e.add(firstK, i)));
  };
  if (operand.kind == MatmulOperandKind::TranscodedNVFP4B32) {
    SmallVector<Value, 4> words;
    for (unsigned w = 0; w < 4; ++w) {
      Value word = e.i32(0);
      for (unsigned t = 0; t < 8; ++t)
        word = e.bor(word, e.shl(code(8 * w + t, 4), 4 * t));
      words.push_back(word);
    }
    return emitTableTranscodeBlock(e, words, scaleCode, variant, rule,
                                   emitBytePermuteEmulation);
  }
  SmallVector<Value, 8> byteWords;
  for (unsigned w = 0; w < 8; ++w) {
    Value word = e.i32(0);
    for (unsigned t = 0; t < 4; ++t)
      word = e.bor(word, e.shl(code(4 * w + t, 6), 8 * t));
    byteWords.push_back(word);
  }
  return {emitPackSixBitCodes(e, byteWords), scaleCode};
}

LogicalResult mlir::microscale::lowerScaledMatmulStorage(
    ScaledMatmulStorageOp op) {
  FailureOr<MatmulOperandKinds> kinds = getMatmulOperandKinds(op);
  if (failed(kinds))
    return failure();
  const Operand lhs{op.getLhsType(), op.getLhsValues(), op.getLhsScales(),
                    kinds->lhs, /*kFirst=*/false};
  const Operand rhs{op.getRhsType(), op.getRhsValues(), op.getRhsScales(),
                    kinds->rhs, /*kFirst=*/true};
  const TranscodeVariant variant =
      op.getVariant().value_or(TranscodeVariant::lut);
  const ExponentBump rule = op.getExponentBump();
  const int64_t m = lhs.type.getShape()[0], n = rhs.type.getShape()[1];
  const int64_t kBlocks = lhs.type.getScaleShape()[1];

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  Value out = op.getOut();
  Type outType = cast<MemRefType>(out.getType()).getElementType();
  Value globalScale = arith::MulFOp::create(
      builder, loc, op.getLhsGlobalScale(), op.getRhsGlobalScale());
  Value zero =
      arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0.0f));
  scf::ParallelOp::create(
      builder, loc, ValueRange{e.index(0), e.index(0)},
      ValueRange{e.index(m), e.index(n)}, ValueRange{e.index(1), e.index(1)},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Emitter in(b, l);
        auto blocks = scf::ForOp::create(
            b, l, in.index(0), in.index(kBlocks), in.index(1),
            ValueRange{zero},
            [&](OpBuilder &fb, Location fl, Value kb, ValueRange acc) {
              Emitter body(fb, fl);
              TranscodedBlock a =
                  emitOperandBlock(body, lhs, ivs[0], kb, variant, rule);
              TranscodedBlock w =
                  emitOperandBlock(body, rhs, ivs[1], kb, variant, rule);
              // 32 products of E2M3 values and their sum are exact in f32.
              Value sum = zero;
              for (unsigned i = 0; i < 32; ++i) {
                Value x = emitDecodeE2M3(
                    body, emitExtractSixBitCode(body, a.words, i));
                Value y = emitDecodeE2M3(
                    body, emitExtractSixBitCode(body, w.words, i));
                sum = arith::AddFOp::create(
                    fb, fl, sum, arith::MulFOp::create(fb, fl, x, y));
              }
              Value scaled = arith::MulFOp::create(
                  fb, fl,
                  arith::MulFOp::create(fb, fl, sum,
                                        emitDecodeE8M0(body, a.e8m0)),
                  emitDecodeE8M0(body, w.e8m0));
              scf::YieldOp::create(
                  fb, fl, ValueRange{arith::AddFOp::create(fb, fl, acc[0],
                                                           scaled)});
            });
        Value result =
            arith::MulFOp::create(b, l, blocks.getResult(0), globalScale);
        if (outType != result.getType())
          result = arith::TruncFOp::create(b, l, outType, result);
        memref::StoreOp::create(b, l, result, out,
                                ValueRange{in.add(in.mul(ivs[0], n), ivs[1])});
      });
  op.erase();
  return success();
}
