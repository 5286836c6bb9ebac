//===- TranscodeBlock.h - One NVFP4 B32 block to MXFP6, in registers -*- C++ -*-===//
//
// The register-level transcode that a matrix-core kernel runs as a weight
// block enters the GEMM (seed 002): 32 E2M1 codes (four i32 words, element i
// in bits [4(i%8), 4(i%8)+4) of word i/8) and their E4M3 scale become 32
// packed E2M3 codes (six i32 words, element i in bits [6i, 6i+6) of the
// 192-bit little-endian string: the operand format of gfx950's scaled MFMA
// and of MXFP6's canonical storage) and an E8M0 scale.
//
// No memory tables: the scale split is integer arithmetic, and the element
// rounding is a 64-entry table held as constants. The 8 entries of the
// block's scale mantissa are selected into two i32 registers once per block,
// then each 4 elements cost one byte permute (gfx950's v_perm_b32). The
// permute is a callback so the same sequence runs on the host (an arith
// emulation, which the CPU lowering uses and the JIT tests execute against
// the C++ reference) and on gfx950 (the amdgcn intrinsic).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_UTILS_TRANSCODEBLOCK_H
#define MICROSCALE_DIALECT_MICROSCALE_UTILS_TRANSCODEBLOCK_H

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

namespace mlir::microscale {

/// An E4M3 scale code split into its E8M0 scale and the per-element factor,
/// as i32 / i1 values (see ref::SplitScale).
struct SplitScaleValues {
  Value e8m0;     ///< i32, the E8M0 code
  Value mantissa; ///< i32, the normalised mantissa field m' in [0, 8)
  Value bump;     ///< i1
  Value negative; ///< i1, the scale's sign bit
  Value zero;     ///< i1, the scale is +-0
  Value nan;      ///< i1, the scale is NaN
};
SplitScaleValues emitSplitE4M3Scale(codegen::Emitter &e, Value e4m3Code,
                                    ExponentBump rule);

/// Byte permute of the 8 bytes {high, low} (low = bytes 0-3): byte j of the
/// result is byte (selector >> 8j) & 7 of the pair. Selector bytes are in
/// [0, 8). This is v_perm_b32's behaviour on that range.
using BytePermuteFn =
    function_ref<Value(codegen::Emitter &, Value high, Value low, Value sel)>;
/// The portable emulation (shifts of an i64), for host code.
Value emitBytePermuteEmulation(codegen::Emitter &e, Value high, Value low,
                               Value selector);

struct TranscodedBlock {
  SmallVector<Value, 6> words; ///< six i32: 32 packed E2M3 codes
  Value e8m0;                  ///< i32, the E8M0 code
};

/// The LUT sequence: `variant`'s 64-entry table (LUT, or HWCVT's table,
/// which gives the hardware conversion's bits) selected by the block's
/// mantissa, applied with `permute`. `fp4Words` holds four i32.
TranscodedBlock emitTableTranscodeBlock(codegen::Emitter &e,
                                        ArrayRef<Value> fp4Words,
                                        Value e4m3Code,
                                        TranscodeVariant variant,
                                        ExponentBump rule,
                                        BytePermuteFn permute);

/// Packs eight i32 of byte codes (code i in byte i%4 of word i/4, each
/// < 64) into six i32 of 6-bit codes.
SmallVector<Value, 6> emitPackSixBitCodes(codegen::Emitter &e,
                                          ArrayRef<Value> byteWords);

/// Code i (an i32 in [0, 64)) of six packed words; `i` is a constant.
Value emitExtractSixBitCode(codegen::Emitter &e, ArrayRef<Value> words,
                            unsigned i);

/// How a scaled_matmul operand reaches a matrix core that multiplies MXFP6:
/// as it is, or through the register transcode.
enum class MatmulOperandKind { MXFP6, TranscodedNVFP4B32 };
struct MatmulOperandKinds {
  MatmulOperandKind lhs, rhs;
};
/// The kinds of the op's two operands, or failure with a diagnostic at the
/// op naming the operand the lowerings do not handle.
FailureOr<MatmulOperandKinds>
getMatmulOperandKinds(ScaledMatmulStorageOp op);

/// E2M3 code (an i32 < 64) to its f32 value.
Value emitDecodeE2M3(codegen::Emitter &e, Value code);
/// E8M0 code (an i32 < 256) to the f32 bits of 2^(code - 127): code 0 the
/// subnormal 2^-127, 0xFF the quiet NaN. Their high 16 bits are the same
/// value in bf16 (same exponent range), which the GPU lowerings use.
Value emitE8M0Bits(codegen::Emitter &e, Value code);
/// The same as an f32 value.
Value emitDecodeE8M0(codegen::Emitter &e, Value code);

} // namespace mlir::microscale

#endif
