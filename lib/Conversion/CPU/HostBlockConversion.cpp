//===- HostBlockConversion.cpp - What the host adds to the block route ---===//
#include "microscale/Conversion/CPU/HostBlockConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <string>

using namespace mlir;
using namespace mlir::microscale;

/// The same map with vgf2p8affineqb, which applies one 8x8 bit matrix
/// (per 64-bit lane; the same here) to every byte. Output byte k of a
/// word is the OR over input bytes j of A_kj(byte j), A_kj the bits that
/// go from j to k. Rounds: round r brings, for every k, its r-th source
/// byte to position k (one byte shuffle, none when it is k itself); in a
/// round, the positions that need the same matrix share one affine
/// transform, merged by position; the rounds are ORed. Hopper's Step B
/// needs 2 rounds of 2 matrices: 8 operations per vector instead of 16-24.
static Value mapWordBitsAffine(OpBuilder &b, Location loc, Value v,
                               const std::array<int8_t, 32> &map) {
  auto byteVector = cast<VectorType>(v.getType());
  // matrices[k][j]: for output byte k from input byte j, the row of each
  // output bit i (bit b set: output bit i takes input bit b).
  std::array<std::array<std::array<uint8_t, 8>, 4>, 4> matrices{};
  std::array<SmallVector<int, 4>, 4> sources;
  for (int bit = 0; bit < 32; ++bit) {
    int j = bit / 8, k = map[bit] / 8;
    matrices[k][j][map[bit] % 8] |= uint8_t(1) << (bit % 8);
    if (!llvm::is_contained(sources[k], j))
      sources[k].push_back(j);
  }
  const int64_t width = byteVector.getNumElements();
  auto constantBytes = [&](ArrayRef<int8_t> bytes) {
    auto type = VectorType::get({width}, b.getI8Type());
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, bytes));
  };
  std::string intrinsic =
      "llvm.x86.vgf2p8affineqb." + std::to_string(8 * width);
  Value result;
  for (size_t round = 0;; ++round) {
    std::array<int, 4> from{-1, -1, -1, -1};
    bool any = false;
    for (int k = 0; k < 4; ++k)
      if (round < sources[k].size()) {
        from[k] = sources[k][round];
        any = true;
      }
    if (!any)
      break;
    // Bring byte from[k] of each word to position k.
    Value moved = v;
    if (llvm::any_of(llvm::seq(0, 4),
                     [&](int k) { return from[k] >= 0 && from[k] != k; })) {
      SmallVector<int64_t> mask;
      for (int64_t i = 0; i < width; ++i)
        mask.push_back(i - i % 4 + std::max(from[i % 4], 0));
      moved = vector::ShuffleOp::create(b, loc, v, v, mask);
    }
    // One affine transform per distinct matrix, merged by position.
    Value roundResult;
    SmallVector<std::array<uint8_t, 8>> done;
    for (int k = 0; k < 4; ++k) {
      if (from[k] < 0)
        continue;
      const std::array<uint8_t, 8> &rows = matrices[k][from[k]];
      if (llvm::is_contained(done, rows))
        continue;
      done.push_back(rows);
      // The matrix qword: byte 7 - i holds the row of output bit i.
      SmallVector<int8_t> matrixBytes;
      for (int64_t i = 0; i < width; ++i)
        matrixBytes.push_back(static_cast<int8_t>(rows[7 - i % 8]));
      Value transformed =
          LLVM::CallIntrinsicOp::create(
              b, loc, byteVector, b.getStringAttr(intrinsic),
              ValueRange{moved, constantBytes(matrixBytes),
                         arith::ConstantOp::create(b, loc,
                                                   b.getI8IntegerAttr(0))})
              .getResult(0);
      // Keep it at the positions that use this matrix.
      SmallVector<int8_t> keep;
      for (int64_t i = 0; i < width; ++i) {
        int p = i % 4;
        keep.push_back(from[p] >= 0 && matrices[p][from[p]] == rows ? -1 : 0);
      }
      transformed =
          arith::AndIOp::create(b, loc, transformed, constantBytes(keep));
      roundResult = roundResult
                        ? arith::OrIOp::create(b, loc, roundResult,
                                               transformed)
                              .getResult()
                        : transformed;
    }
    result = result ? arith::OrIOp::create(b, loc, result, roundResult)
                          .getResult()
                    : roundResult;
  }
  return result ? result : v;
}

Value HostBlockConversionTarget::emitWordBitMap(
    OpBuilder &builder, Location loc, Value bytes,
    const std::array<int8_t, 32> &map) const {
  if (!gfni)
    return {};
  return mapWordBitsAffine(builder, loc, bytes, map);
}

void HostBlockConversionTarget::emitStreamingFence(OpBuilder &builder,
                                                   Location loc) const {
  // Non-temporal stores are weakly ordered (x86 MOVNT*): a full fence makes
  // them visible before anything the caller stores next.
  LLVM::FenceOp::create(builder, loc, LLVM::AtomicOrdering::seq_cst);
}
