//===- GFX950Transcode.h - NVFP4 B32 block -> MXFP6 on gfx950 ---*- C++ -*-===//
//
// The two ways a gfx950 kernel turns one NVFP4 B32 block (four i32 words of
// E2M1 codes and an E4M3 scale) into the six words of packed E2M3 codes and
// the E8M0 scale that `amdgpu.scaled_mfma` takes (seed 002):
//
//  * lut: the table sequence of TranscodeBlock.h with the byte permute as
//    v_perm_b32 (llvm.amdgcn.perm): VALU bit operations and permutes only;
//  * hwcvt: v_cvt_scalef32_pk_f16_fp4 (two E2M1 codes to two f16, exact),
//    v_pk_mul_f16 by the scale's mantissa factor (exact in f16), then one
//    v_cvt_scalef32_pk32_fp6_f16 (32 f16 to packed FP6, round to nearest
//    even): the reference's HWCVT variant.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_ROCDL_GFX950TRANSCODE_H
#define MICROSCALE_CONVERSION_ROCDL_GFX950TRANSCODE_H

#include "microscale/Dialect/Microscale/Utils/TranscodeBlock.h"

namespace mlir::microscale {

/// v_perm_b32 through the amdgcn intrinsic.
Value emitAMDGCNBytePermute(codegen::Emitter &e, Value high, Value low,
                            Value selector);

/// One block, `variant` choosing the sequence (see above).
TranscodedBlock emitGFX950TranscodeBlock(codegen::Emitter &e,
                                         ArrayRef<Value> fp4Words,
                                         Value e4m3Code,
                                         TranscodeVariant variant,
                                         ExponentBump rule);

} // namespace mlir::microscale

#endif
