//===- HostEmulation.cpp - PTX instructions as arith for the emulations ---===//
#include "HostEmulation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::microscale;

Value mlir::microscale::emitHostMulBF16x2(codegen::Emitter &e, Value a,
                                          Value b) {
  OpBuilder &builder = e.builder();
  Location loc = e.location();
  auto lane = [&](int64_t h) {
    auto asF32 = [&](Value v) {
      Value bits = e.shl(e.band(e.shr(v, 16 * h), 0xFFFF), 16);
      return arith::BitcastOp::create(builder, loc, builder.getF32Type(),
                                      bits);
    };
    Value product = arith::MulFOp::create(builder, loc, asF32(a), asF32(b));
    Value bits =
        arith::BitcastOp::create(builder, loc, builder.getI32Type(), product);
    Value rounded = e.shr(
        arith::AddIOp::create(builder, loc, bits,
                              arith::AddIOp::create(builder, loc,
                                                    e.i32(0x7FFF),
                                                    e.band(e.shr(bits, 16), 1))),
        16);
    return e.shl(rounded, 16 * h);
  };
  return e.bor(lane(0), lane(1));
}

void mlir::microscale::loadHostEmulationDialects(MLIRContext *context) {
  context->loadDialect<arith::ArithDialect, memref::MemRefDialect,
                       scf::SCFDialect, vector::VectorDialect,
                       LLVM::LLVMDialect>();
}
