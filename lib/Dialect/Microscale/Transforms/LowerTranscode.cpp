//===- LowerTranscode.cpp - transcode_storage to table-driven loops -------===//
//
// The CPU lowering of NVFP4 B32 -> MXFP6 E2M3. Every output code is a pure
// function of one input scale code (the E8M0 scale) or of one (scale code,
// element code) pair (the E2M3 element), so both are constant tables built
// from the C++ reference: the generated code cannot drift from it, and the
// layouts, the gather and the packing are what the JIT tests check. (The
// gfx950 lowering, which must not use memory tables, is not built yet.)
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"
#include "microscale/Reference/Transcode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
namespace ref = ::microscale::ref;

LogicalResult mlir::microscale::lowerTranscodeStorage(TranscodeStorageOp op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return op.emitOpError() << "needs an enclosing module for its tables";
  const ref::TranscodeVariant variant = toReference(op.getVariant());
  const ref::ExponentBumpRule rule = toReference(op.getExponentBump());
  SmallVector<int8_t> scaleTable(256), elementTable(4096);
  for (unsigned s = 0; s < 256; ++s) {
    const ref::SplitScale split = ref::splitE4M3Scale(s, rule);
    scaleTable[s] = static_cast<int8_t>(split.e8m0Code);
    for (unsigned e = 0; e < 16; ++e)
      elementTable[(s << 4) | e] = static_cast<int8_t>(
          ref::transcodeElement(e, split, variant, rule));
  }
  const std::string suffix =
      std::string(variant == ref::TranscodeVariant::LUT ? "lut" : "hwcvt") +
      (rule == ref::ExponentBumpRule::NonzeroMantissa ? "_nonzero_mantissa"
                                                      : "_mantissa_at_least_3");

  OpBuilder builder(op);
  Location loc = op.getLoc();
  QTensorType from = op.getFromType(), to = op.getToType();
  Value scales = getConstantTable(builder, loc, module,
                                  "microscale_transcode_scale_" + suffix,
                                  ArrayRef(scaleTable), builder.getI8Type());
  Value elements = getConstantTable(builder, loc, module,
                                    "microscale_transcode_element_" + suffix,
                                    ArrayRef(elementTable), builder.getI8Type());
  SmallVector<int64_t> shape(from.getShape());
  SmallVector<int64_t> scaleShape = from.getScaleShape();
  const int64_t axis = from.getAxis();
  const int64_t block = from.getFormat().getBlockSize();
  LayoutAttrInterface fromValues = from.getValueLayout();
  LayoutAttrInterface fromScales = from.getScaleLayout();
  Value inValues = op.getValues(), inScales = op.getScales();

  // The E8M0 scales, through the destination's scale layout.
  emitGatherLoop(
      builder, loc, to.getScaleLayout(), scaleShape, 8,
      ShapedType::getNumElements(to.getScaleStorageShape()), op.getOutScales(),
      [&](OpBuilder &b, Location l, ValueRange index) -> Value {
        Emitter e(b, l);
        Value code =
            fromScales.emitLoadElement(b, l, inScales, scaleShape, 8, index);
        return e.loadByte(scales, e.toIndex(code));
      });

  // The E2M3 elements: (scale code << 4 | element code) indexes the table.
  emitGatherLoop(
      builder, loc, to.getValueLayout(), shape, 6,
      ShapedType::getNumElements(to.getValueStorageShape()),
      op.getOutValues(),
      [&](OpBuilder &b, Location l, ValueRange index) -> Value {
        Emitter e(b, l);
        SmallVector<Value> scaleIndex(index.begin(), index.end());
        scaleIndex[axis] = e.div(index[axis], block);
        Value code = fromValues.emitLoadElement(b, l, inValues, shape, 4, index);
        Value scaleCode =
            fromScales.emitLoadElement(b, l, inScales, scaleShape, 8, scaleIndex);
        Value entry = e.bor(e.shl(scaleCode, 4), code);
        return e.loadByte(elements, e.toIndex(entry));
      });
  op.erase();
  return success();
}
