//===- LowerMixedMatmul.cpp - mixed_matmul_storage to host loops ----------===//
//
// The reference-grade host lowering of float activations times a quantized
// weight: every weight element dequantized exactly (element x scale in f32,
// through the decode tables), each product added in f32 in increasing K,
// the global scale applied to the sum, one rounding to the result type. It
// is what the GPU kernels are checked against, not a fast GEMM.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/StorageConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

LogicalResult mlir::microscale::lowerMixedMatmulStorage(MixedMatmulStorageOp op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return op.emitOpError() << "needs an enclosing module for its tables";
  QTensorType rhs = op.getRhsType();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  auto [elementTable, scaleTable] = getDecodeTables(
      builder, loc, module, rhs.getFormat(), E8M0Edges::ocp);
  const int64_t k = rhs.getShape()[0], n = rhs.getShape()[1];
  const int64_t m = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  const int64_t block = rhs.getFormat().getBlockSize();
  const unsigned bits = rhs.getFormat().getElementBits();
  SmallVector<int64_t> shape(rhs.getShape());
  SmallVector<int64_t> scaleShape = rhs.getScaleShape();
  Value lhs = op.getLhs(), out = op.getOut(), values = op.getRhsValues(),
        scales = op.getRhsScales(), global = op.getRhsGlobalScale();
  Type f32 = builder.getF32Type();
  Type outType = cast<MemRefType>(out.getType()).getElementType();
  Value zero = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0));
  scf::ParallelOp::create(
      builder, loc, ValueRange{e.index(0), e.index(0)},
      ValueRange{e.index(m), e.index(n)}, ValueRange{e.index(1), e.index(1)},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Emitter in(b, l);
        auto sum = scf::ForOp::create(
            b, l, in.index(0), in.index(k), in.index(1), ValueRange{zero},
            [&](OpBuilder &fb, Location fl, Value kk, ValueRange acc) {
              Emitter body(fb, fl);
              Value a = memref::LoadOp::create(fb, fl, lhs,
                                               ValueRange{ivs[0], kk});
              if (a.getType() != f32)
                a = arith::ExtFOp::create(fb, fl, f32, a);
              Value code = rhs.getValueLayout().emitLoadElement(
                  fb, fl, values, shape, bits, ValueRange{kk, ivs[1]});
              Value scaleCode = rhs.getScaleLayout().emitLoadElement(
                  fb, fl, scales, scaleShape, 8,
                  ValueRange{body.div(kk, block), ivs[1]});
              Value w = arith::MulFOp::create(
                  fb, fl,
                  memref::LoadOp::create(fb, fl, elementTable,
                                         ValueRange{body.toIndex(code)}),
                  memref::LoadOp::create(fb, fl, scaleTable,
                                         ValueRange{body.toIndex(scaleCode)}));
              Value product = arith::MulFOp::create(fb, fl, a, w);
              scf::YieldOp::create(
                  fb, fl, ValueRange{arith::AddFOp::create(fb, fl, acc[0],
                                                           product)});
            });
        Value result = arith::MulFOp::create(b, l, sum.getResult(0), global);
        if (result.getType() != outType)
          result = arith::TruncFOp::create(b, l, outType, result);
        memref::StoreOp::create(b, l, result, out, ivs);
      });
  op.erase();
  return success();
}
