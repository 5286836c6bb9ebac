//===- LowerQuantize.cpp - quantize_storage to loops ----------------------===//
//
// Mirrors microscale::ref::quantizeBlock operation for operation, in f64, so
// that the generated code and the reference agree bit for bit:
//  1. per block (parallel): finiteness, amax, and the scale code (OCP shared
//     exponent, or the E4M3 encoding of amax / max / global), into a
//     temporary of one byte per block;
//  2. the scale bytes, gathered through the scale layout (padding zero);
//  3. the element bytes, gathered through the value layout: each element is
//     x / (decoded scale * global), rounded to nearest even and saturated.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
namespace ref = ::microscale::ref;

namespace {
/// f64 and i64 helpers on top of the index/i32 Emitter.
struct FloatEmitter {
  OpBuilder &b;
  Location loc;
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value bits(Value x) {
    return arith::BitcastOp::create(b, loc, b.getI64Type(), x);
  }
  /// |x| by clearing the sign bit (NaN stays NaN, -0 becomes +0).
  Value abs(Value x) {
    return arith::BitcastOp::create(
        b, loc, b.getF64Type(),
        arith::AndIOp::create(b, loc, bits(x),
                              i64(std::numeric_limits<int64_t>::max())));
  }
  /// floor(log2(x)) for a positive, normal double: its exponent field.
  Value ilogb(Value x) {
    Value field = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits(x), i64(52)), i64(0x7FF));
    return arith::SubIOp::create(b, loc, field, i64(1023));
  }
  /// 2^k for an i64 k in the normal double range.
  Value pow2(Value k) {
    Value field = arith::AddIOp::create(b, loc, k, i64(1023));
    return arith::BitcastOp::create(
        b, loc, b.getF64Type(),
        arith::ShLIOp::create(b, loc, field, i64(52)));
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value icmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};
} // namespace

/// Round-to-nearest-even, saturating encode of the double `value` into
/// `format` (an element format or E4M3), as ref::encode does for finite
/// inputs. Returns the code in an i32.
static Value emitEncode(OpBuilder &b, Location loc, ref::ScalarFormat format,
                        Value value) {
  const ref::ScalarFormatInfo &info = ref::getInfo(format);
  FloatEmitter f{b, loc};
  const int64_t mb = info.mantissaBits;
  const int64_t minExponent = 1 - info.bias;
  int64_t maxMagnitudeCode = (1 << (info.bits - 1)) - 1;
  if (format == ref::ScalarFormat::E4M3FN)
    maxMagnitudeCode = 0x7E;
  else if (format == ref::ScalarFormat::E5M2)
    maxMagnitudeCode = 0x7B;
  Value negative = f.icmp(arith::CmpIPredicate::slt, f.bits(value), f.i64(0));
  Value magnitude = f.abs(value);
  // The binade, clamped to the subnormal range's.
  Value exponent = f.ilogb(magnitude);
  exponent = f.select(
      f.icmp(arith::CmpIPredicate::slt, exponent, f.i64(minExponent)),
      f.i64(minExponent), exponent);
  exponent = f.select(
      f.icmp(arith::CmpIPredicate::sgt, exponent, f.i64(info.maxExponent)),
      f.i64(info.maxExponent), exponent);
  // q = magnitude / 2^(exponent - mb), exact; RNE by the 2^52 trick.
  Value quantum = f.pow2(arith::SubIOp::create(b, loc, exponent, f.i64(mb)));
  Value scaled = arith::DivFOp::create(b, loc, magnitude, quantum);
  Value magic = f.f64(4503599627370496.0); // 2^52
  Value rounded = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, scaled, magic), magic);
  Value significand =
      arith::FPToUIOp::create(b, loc, b.getI64Type(), rounded);
  // Rounded up into the next binade.
  Value carried = f.icmp(arith::CmpIPredicate::uge, significand,
                         f.i64(int64_t(1) << (mb + 1)));
  significand = f.select(
      carried, arith::ShRUIOp::create(b, loc, significand, f.i64(1)),
      significand);
  exponent = f.select(carried,
                      arith::AddIOp::create(b, loc, exponent, f.i64(1)),
                      exponent);
  Value normal = f.icmp(arith::CmpIPredicate::uge, significand,
                        f.i64(int64_t(1) << mb));
  Value normalCode = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, exponent, f.i64(info.bias)),
          f.i64(mb)),
      arith::SubIOp::create(b, loc, significand, f.i64(int64_t(1) << mb)));
  Value code = f.select(normal, normalCode, significand);
  // Saturate: past the largest finite code (and anything >= max, inf too).
  Value tooBig = f.icmp(arith::CmpIPredicate::ugt, code, f.i64(maxMagnitudeCode));
  Value atMax = f.cmp(arith::CmpFPredicate::OGE, magnitude, f.f64(info.maxFinite));
  code = f.select(arith::OrIOp::create(b, loc, tooBig, atMax),
                  f.i64(maxMagnitudeCode), code);
  code = f.select(negative,
                  arith::OrIOp::create(b, loc, code,
                                       f.i64(int64_t(1) << (info.bits - 1))),
                  code);
  return arith::TruncIOp::create(b, loc, b.getI32Type(), code);
}

/// One parallel loop over the store units of `layout`'s storage of
/// `shape`, gathering each unit's elements from `loadElement` and storing it
/// into `dest` (zeros everywhere when the tensor is empty).
void mlir::microscale::emitGatherLoop(OpBuilder &builder, Location loc,
                           LayoutAttrInterface layout, ArrayRef<int64_t> shape,
                           unsigned bits, int64_t storageBytes, Value dest,
                           function_ref<Value(OpBuilder &, Location, ValueRange)>
                               loadElement) {
  Emitter e(builder, loc);
  const int64_t unitBytes = layout.getStoreUnitBytes(bits);
  const bool empty = ShapedType::getNumElements(shape) == 0;
  scf::ParallelOp::create(
      builder, loc, ValueRange{e.index(0)},
      ValueRange{e.index(storageBytes / unitBytes)}, ValueRange{e.index(1)},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value unitBits =
            empty ? Emitter(b, l).i32(0)
                  : layout.emitStoreUnit(b, l, shape, bits, ivs[0],
                                         loadElement);
        emitStoreUnitBytes(b, l, dest, ivs[0], unitBits, unitBytes);
      });
}

/// The decode table of a scale format (256 f64 values): a constant global
/// of the enclosing module, shared by every quantize of that scale format;
/// without a module, a stack table filled where the op was.
static Value scaleDecodeTable(OpBuilder &b, Location loc, ModuleOp module,
                              ref::ScalarFormat format) {
  SmallVector<double> table;
  for (uint32_t code = 0; code < 256; ++code)
    table.push_back(ref::decode(format, code, ref::E8M0Edges::OCP));
  if (module) {
    return getConstantTable(
        b, loc, module,
        "microscale_quantize_scale_" + std::string(ref::getInfo(format).name),
        ArrayRef(table), b.getF64Type());
  }
  auto type = MemRefType::get({256}, b.getF64Type());
  Value buffer = memref::AllocaOp::create(b, loc, type);
  for (uint32_t code = 0; code < 256; ++code)
    memref::StoreOp::create(
        b, loc, arith::ConstantOp::create(b, loc, b.getF64FloatAttr(table[code])),
        buffer, ValueRange{arith::ConstantIndexOp::create(b, loc, code)});
  return buffer;
}

void mlir::microscale::lowerQuantizeStorage(QuantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  FloatEmitter f{builder, loc};
  ref::MXFormat format = type.getFormat().getReferenceFormat();
  const ref::ScalarFormatInfo &element = ref::getInfo(format.element);
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<int64_t> scaleShape = type.getScaleShape();
  const int64_t axis = type.getAxis();
  const int64_t block = format.blockSize;
  const unsigned bits = element.bits;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  const int64_t blocks = shape[axis] / block;
  const int64_t numScales = outer * blocks * inner;
  Value input = op.getInput();
  Value global = op.getGlobalScale()
                     ? arith::ExtFOp::create(builder, loc, builder.getF64Type(),
                                             op.getGlobalScale())
                           .getResult()
                     : f.f64(1.0);
  auto loadInput = [&](OpBuilder &b, Location l, Value linear) -> Value {
    Value x = memref::LoadOp::create(b, l, input, ValueRange{linear});
    return arith::ExtFOp::create(b, l, b.getF64Type(), x);
  };

  // 1. Block scale codes, one byte per block, in scale-tensor order.
  auto tempType = MemRefType::get({std::max<int64_t>(numScales, 1)},
                                  builder.getI8Type());
  Value scaleCodes = memref::AllocOp::create(builder, loc, tempType);
  scf::ParallelOp::create(
      builder, loc, ValueRange{e.index(0)}, ValueRange{e.index(numScales)},
      ValueRange{e.index(1)}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        Emitter in(b, l);
        FloatEmitter fl{b, l};
        Value scaleLinear = ivs[0];
        Value i = in.rem(scaleLinear, inner);
        Value rest = in.div(scaleLinear, inner);
        Value blk = in.rem(rest, blocks);
        Value o = in.div(rest, blocks);
        Value first = in.add(
            in.mul(in.add(in.mul(o, shape[axis]), in.mul(blk, block)), inner),
            i);
        auto loop = scf::ForOp::create(
            b, l, in.index(0), in.index(block), in.index(1),
            ValueRange{fl.f64(0.0), arith::ConstantIntOp::create(b, l, b.getI1Type(), 1)},
            [&](OpBuilder &lb, Location ll, Value k, ValueRange carried) {
              Emitter le(lb, ll);
              FloatEmitter lf{lb, ll};
              Value x = loadInput(lb, ll, le.add(first, le.mul(k, inner)));
              Value magnitude = lf.abs(x);
              Value finite = lf.cmp(arith::CmpFPredicate::OLT, magnitude,
                                    lf.f64(std::numeric_limits<double>::infinity()));
              Value larger = lf.cmp(arith::CmpFPredicate::OGT, magnitude,
                                    carried[0]);
              Value amax = lf.select(larger, magnitude, carried[0]);
              Value allFinite = arith::AndIOp::create(lb, ll, carried[1], finite);
              scf::YieldOp::create(lb, ll, ValueRange{amax, allFinite});
            });
        Value amax = loop.getResult(0), allFinite = loop.getResult(1);
        Value code;
        if (format.scale == ref::ScalarFormat::E8M0) {
          Value shared = arith::SubIOp::create(b, l, fl.ilogb(amax),
                                               fl.i64(element.maxExponent));
          Value zero = fl.cmp(arith::CmpFPredicate::OEQ, amax, fl.f64(0.0));
          shared = fl.select(zero, fl.i64(-127), shared);
          shared = fl.select(fl.icmp(arith::CmpIPredicate::slt, shared, fl.i64(-127)),
                             fl.i64(-127), shared);
          shared = fl.select(fl.icmp(arith::CmpIPredicate::sgt, shared, fl.i64(127)),
                             fl.i64(127), shared);
          code = arith::TruncIOp::create(
              b, l, b.getI32Type(),
              arith::AddIOp::create(b, l, shared, fl.i64(127)));
          code = in.select(allFinite, code, in.i32(0xFF));
        } else {
          Value ratio = arith::DivFOp::create(
              b, l, arith::DivFOp::create(b, l, amax, fl.f64(element.maxFinite)),
              global);
          code = emitEncode(b, l, format.scale, ratio);
          code = in.select(allFinite, code, in.i32(0x7F));
        }
        memref::StoreOp::create(
            b, l, arith::TruncIOp::create(b, l, b.getI8Type(), code),
            scaleCodes, ValueRange{scaleLinear});
      });

  // Reads the code of a scale from the temporary (scale-tensor order).
  auto scaleCodeAt = [&](OpBuilder &b, Location l, ValueRange index) -> Value {
    Emitter in(b, l);
    Value linear = in.index(0);
    for (size_t d = 0; d < scaleShape.size(); ++d)
      linear = in.add(in.mul(linear, scaleShape[d]), index[d]);
    return in.loadByte(scaleCodes, linear);
  };

  // 2. The scale bytes, through the scale layout.
  emitGatherLoop(builder, loc, type.getScaleLayout(), scaleShape, 8,
                 ShapedType::getNumElements(type.getScaleStorageShape()),
                 op.getScales(), scaleCodeAt);

  // 3. The element bytes, through the value layout.
  Value decodeTable = scaleDecodeTable(
      builder, loc, op->getParentOfType<ModuleOp>(), format.scale);
  auto encodeElement = [&](OpBuilder &b, Location l, ValueRange index) -> Value {
    Emitter in(b, l);
    FloatEmitter fl{b, l};
    Value linear = in.index(0);
    for (size_t d = 0; d < shape.size(); ++d)
      linear = in.add(in.mul(linear, shape[d]), index[d]);
    SmallVector<Value> scaleIndex(index.begin(), index.end());
    scaleIndex[axis] = in.div(index[axis], block);
    Value scaleCode = scaleCodeAt(b, l, scaleIndex);
    Value scale = arith::MulFOp::create(
        b, l,
        memref::LoadOp::create(b, l, decodeTable,
                               ValueRange{in.toIndex(scaleCode)}),
        global);
    Value x = loadInput(b, l, linear);
    Value code = emitEncode(b, l, format.element,
                            arith::DivFOp::create(b, l, x, scale));
    // A zero, infinite or NaN scale leaves the block's elements zero.
    Value usable = arith::AndIOp::create(
        b, l, fl.cmp(arith::CmpFPredicate::ONE, scale, fl.f64(0.0)),
        fl.cmp(arith::CmpFPredicate::OLT, fl.abs(scale),
               fl.f64(std::numeric_limits<double>::infinity())));
    return in.select(usable, code, in.i32(0));
  };
  emitGatherLoop(builder, loc, type.getValueLayout(), shape, bits,
                 ShapedType::getNumElements(type.getValueStorageShape()),
                 op.getValues(), encodeElement);
  memref::DeallocOp::create(builder, loc, scaleCodes);
  op.erase();
}
