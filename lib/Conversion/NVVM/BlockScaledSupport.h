//===- BlockScaledSupport.h - What the block-scaled kernels share -*- C++ -*-===//
//
// The pieces the two FP4 x FP4 scaled_matmul kernels (sm_120a's mma.sync in
// BlackwellScaledMatmulKernel.cpp, sm_100a's tcgen05 in
// TCGen05ScaledMatmulKernel.cpp) have in common: which operand layouts are
// K-major, and the element and scale decoders their host emulations
// multiply with (written from the OCP MX and NVFP4 definitions, not from
// the kernels, so that an emulation checks the kernel's data movement
// against the formats).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_BLOCKSCALEDSUPPORT_H
#define MICROSCALE_LIB_CONVERSION_NVVM_BLOCKSCALEDSUPPORT_H

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::microscale::blockscaled {

/// Whether the weight (rhs, axis 0) or activations (lhs, axis 1) are stored
/// K-major: K-contiguous rows of packed codes, one row per column (weight)
/// or row (activations).
inline bool isKMajor(QTensorType type) {
  const int64_t axis = type.getAxis();
  if (auto strided = dyn_cast<StridedAttr>(type.getValueLayout()))
    return strided.getMajorDim() == axis || strided.getMajorDim() == axis - 2;
  // [K, N] stored as [N, K/2 padded]: K-major by construction.
  return axis == 0 && isa<BlackwellValueAttr>(type.getValueLayout());
}

/// The magnitude of an E2M1 code times 4 (an integer: 0, 2, 4, 6, 8, 12,
/// 16, 24) with its sign.
inline Value e2m1TimesFour(codegen::Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value exponent = e.band(e.shr(code, 1), 3), mantissa = e.band(code, 1);
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, e.i32(0));
  Value normal = e.shlV(arith::AddIOp::create(b, loc, mantissa, e.i32(2)),
                        exponent);
  Value magnitude = e.select(isSubnormal, e.shl(mantissa, 1), normal);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         e.band(code, 8), e.i32(0));
  return e.select(negative,
                  arith::SubIOp::create(b, loc, e.i32(0), magnitude),
                  magnitude);
}

/// An E8M0 code as f32 (OCP: code 0 is 2^-127, 255 is NaN).
inline Value e8m0ToF32(codegen::Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code,
                                       e.i32(0));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code,
                                      e.i32(255));
  Value bits = e.select(isZero, e.i32(0x00400000), e.shl(code, 23));
  bits = e.select(isNaN, e.i32(0x7FC00000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// An E4M3 (FN) code as f32: s.eeee.mmm, bias 7, subnormals m 2^-9, NaN
/// for s.1111.111.
inline Value e4m3ToF32(codegen::Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value exponent = e.band(e.shr(code, 3), 0xF), mantissa = e.band(code, 7);
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, e.i32(0));
  Value normal = e.bor(
      e.shl(arith::AddIOp::create(b, loc, exponent, e.i32(127 - 7)), 23),
      e.shl(mantissa, 20));
  Value magnitude = e.select(
      isSubnormal,
      arith::BitcastOp::create(
          b, loc, b.getI32Type(),
          arith::MulFOp::create(
              b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), mantissa),
              arith::ConstantOp::create(b, loc,
                                        b.getF32FloatAttr(1.0f / 512)))),
      normal);
  Value bits = e.bor(magnitude, e.shl(e.band(code, 0x80), 24));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      e.band(code, 0x7F), e.i32(0x7F));
  bits = e.select(isNaN, e.i32(0x7FC00000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// An E5M2 code as f32: s.eeeee.mm, bias 15, subnormals m 2^-16,
/// s.11111.00 infinite, s.11111.mm (mm != 0) NaN (OCP FP8).
inline Value e5m2ToF32(codegen::Emitter &e, Value code) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value exponent = e.band(e.shr(code, 2), 0x1F), mantissa = e.band(code, 3);
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, e.i32(0));
  Value normal =
      e.bor(e.shl(arith::AddIOp::create(b, loc, exponent, e.i32(127 - 15)), 23),
            e.shl(mantissa, 21));
  Value magnitude = e.select(
      isSubnormal,
      arith::BitcastOp::create(
          b, loc, b.getI32Type(),
          arith::MulFOp::create(
              b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), mantissa),
              arith::ConstantOp::create(b, loc,
                                        b.getF32FloatAttr(1.0f / 65536)))),
      normal);
  Value isSpecial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          exponent, e.i32(0x1F));
  magnitude =
      e.select(isSpecial,
               e.select(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              mantissa, e.i32(0)),
                        e.i32(0x7F800000), e.i32(0x7FC00000)),
               magnitude);
  Value bits = e.bor(magnitude, e.shl(e.band(code, 0x80), 24));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// `buffer` (bytes) as the kernel argument type `type`: the same memory,
/// static-shaped, and viewed as 32-bit words for the value operands.
inline Value viewAsArgument(OpBuilder &builder, Location loc, Value buffer,
                            MemRefType type, int64_t bytes) {
  auto from = cast<MemRefType>(buffer.getType());
  auto staticBytes = MemRefType::get({bytes}, from.getElementType());
  Value flat = from == staticBytes
                   ? buffer
                   : memref::CastOp::create(builder, loc, staticBytes, buffer)
                         .getResult();
  if (type.getElementType() == from.getElementType())
    return flat;
  return memref::ViewOp::create(builder, loc, type, flat,
                                codegen::Emitter(builder, loc).index(0),
                                ValueRange());
}

/// The op's operands as `kernelArguments`, with the global scales
/// multiplied.
inline SmallVector<Value> argumentValues(OpBuilder &builder, Location loc,
                                         ScaledMatmulStorageOp op,
                                         ArrayRef<Type> types) {
  QTensorType lhs = op.getLhsType(), rhs = op.getRhsType();
  auto bytes = [](ArrayRef<int64_t> storage) {
    return ShapedType::getNumElements(storage);
  };
  return {viewAsArgument(builder, loc, op.getLhsValues(),
                         cast<MemRefType>(types[0]),
                         bytes(lhs.getValueStorageShape())),
          viewAsArgument(builder, loc, op.getLhsScales(),
                         cast<MemRefType>(types[1]),
                         bytes(lhs.getScaleStorageShape())),
          viewAsArgument(builder, loc, op.getRhsValues(),
                         cast<MemRefType>(types[2]),
                         bytes(rhs.getValueStorageShape())),
          viewAsArgument(builder, loc, op.getRhsScales(),
                         cast<MemRefType>(types[3]),
                         bytes(rhs.getScaleStorageShape())),
          viewAsArgument(builder, loc, op.getOut(), cast<MemRefType>(types[4]),
                         cast<MemRefType>(types[4]).getNumElements()),
          arith::MulFOp::create(builder, loc, op.getLhsGlobalScale(),
                                op.getRhsGlobalScale())};
}

} // namespace mlir::microscale::blockscaled

#endif
