//===- LowerMixedMatmul.cpp - mixed_matmul_storage to host loops ----------===//
//
// The reference-grade host lowering of float activations times a quantized
// weight: every weight element dequantized exactly (element x scale in f32,
// through the decode tables), each product added in f32 in increasing K,
// the global scale applied to the sum, one rounding to the result type. It
// is what the GPU kernels are checked against, not a fast GEMM.
//
// The ragged forms walk each expert's slice of ragged rows (a dense product
// is one slice of every row), map a row through the gather and the scatter
// where given, and skip a row whose slice position, gather or scatter index
// falls outside its tensor, exactly as the GPU kernel does. Row counts
// known at run time only (dynamic lhs, out, gather or scatter lengths)
// are read from the buffers.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "microscale/Dialect/Microscale/Transforms/StorageLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

/// `indices[row]` as an index, and whether it lies in [0, bound).
static std::pair<Value, Value> loadRowIndex(Emitter &e, Value indices,
                                            Value row, Value bound) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Value raw = memref::LoadOp::create(b, loc, indices, row);
  Value mapped = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), raw);
  return {mapped, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        mapped, bound)};
}

/// The extent of `buffer`'s first dimension: a constant where static.
static Value rowExtent(Emitter &e, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!type.isDynamicDim(0))
    return e.index(type.getShape()[0]);
  return memref::DimOp::create(e.builder(), e.location(), buffer, 0);
}

LogicalResult mlir::microscale::lowerMixedMatmulStorage(MixedMatmulStorageOp op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return op.emitOpError() << "needs an enclosing module for its tables";
  QTensorType rhs = op.getRhsType();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Emitter e(builder, loc);
  // Named values, not structured bindings: lambdas below capture them.
  auto tables = getDecodeTables(
      builder, loc, module, rhs.getFormat(), E8M0Edges::ocp);
  Value elementTable = tables.element, scaleTable = tables.scale;
  const int64_t rank = rhs.getRank();
  const int64_t k = rhs.getShape()[rank - 2], n = rhs.getShape()[rank - 1];
  Value gather = op.getGatherIndices(), scatter = op.getScatterIndices();
  Value lhsRowsBuffer = op.getLhs(), outRowsBuffer = op.getOut();
  Value rowsBuffer = gather ? gather : scatter ? scatter : op.getLhs();
  auto staticRows = [](Value buffer) {
    return cast<MemRefType>(buffer.getType()).getShape()[0];
  };
  // Statically no row to read or write: nothing to emit.
  for (Value buffer : {rowsBuffer, lhsRowsBuffer, outRowsBuffer})
    if (staticRows(buffer) == 0) {
      op.erase();
      return success();
    }
  Value lhsRows = rowExtent(e, lhsRowsBuffer);
  Value outRows = rowExtent(e, outRowsBuffer);
  Value rows = rowExtent(e, rowsBuffer);
  const int64_t block = rhs.getFormat().getBlockSize();
  const unsigned bits = rhs.getFormat().getElementBits();
  SmallVector<int64_t> shape(rhs.getShape());
  SmallVector<int64_t> scaleShape = rhs.getScaleShape();
  Value lhs = op.getLhs(), out = op.getOut(), values = op.getRhsValues(),
        scales = op.getRhsScales(), global = op.getRhsGlobalScale();
  Type f32 = builder.getF32Type();
  Type outType = cast<MemRefType>(out.getType()).getElementType();
  Value zero = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0));

  // One slice of ragged rows [rowBase, rowBase + count) times the weight of
  // `expert` (null: the [K, N] weight).
  auto emitSlice = [&](OpBuilder &sb, Location sl, Value expert, Value rowBase,
                       Value count) {
    Emitter se(sb, sl);
    scf::ParallelOp::create(
        sb, sl, ValueRange{se.index(0), se.index(0)},
        ValueRange{count, se.index(n)}, ValueRange{se.index(1), se.index(1)},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          Emitter in(b, l);
          Value ragged = in.add(rowBase, ivs[0]);
          Value valid = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ult, ragged, rows);
          // Clamped so that no index is read out of bounds; the row is
          // skipped when invalid (rows is at least 1 here: a slice of an
          // empty product has no rows).
          Value safeRow = arith::MinUIOp::create(
              b, l, ragged, arith::SubIOp::create(b, l, rows, in.index(1)));
          Value source = safeRow, dest = safeRow;
          if (gather) {
            auto [mapped, ok] = loadRowIndex(in, gather, safeRow, lhsRows);
            source = mapped;
            valid = in.andI1(valid, ok);
          }
          if (scatter) {
            auto [mapped, ok] = loadRowIndex(in, scatter, safeRow, outRows);
            dest = mapped;
            valid = in.andI1(valid, ok);
          }
          auto inside = scf::IfOp::create(b, l, valid, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&inside.getThenRegion().front());
          auto sum = scf::ForOp::create(
              b, l, in.index(0), in.index(k), in.index(1), ValueRange{zero},
              [&](OpBuilder &fb, Location fl, Value kk, ValueRange acc) {
                Emitter body(fb, fl);
                Value a = memref::LoadOp::create(fb, fl, lhs,
                                                 ValueRange{source, kk});
                if (a.getType() != f32)
                  a = arith::ExtFOp::create(fb, fl, f32, a);
                SmallVector<Value, 3> valueIndex, scaleIndex;
                if (expert) {
                  valueIndex.push_back(expert);
                  scaleIndex.push_back(expert);
                }
                valueIndex.append({kk, ivs[1]});
                scaleIndex.append({body.div(kk, block), ivs[1]});
                Value code = rhs.getValueLayout().emitLoadElement(
                    fb, fl, values, shape, bits, valueIndex);
                Value scaleCode = rhs.getScaleLayout().emitLoadElement(
                    fb, fl, scales, scaleShape, 8, scaleIndex);
                Value w = arith::MulFOp::create(
                    fb, fl,
                    memref::LoadOp::create(fb, fl, elementTable,
                                           ValueRange{body.toIndex(code)}),
                    memref::LoadOp::create(
                        fb, fl, scaleTable,
                        ValueRange{body.toIndex(scaleCode)}));
                Value product = arith::MulFOp::create(fb, fl, a, w);
                scf::YieldOp::create(
                    fb, fl, ValueRange{arith::AddFOp::create(fb, fl, acc[0],
                                                             product)});
              });
          Value result = arith::MulFOp::create(b, l, sum.getResult(0), global);
          if (result.getType() != outType)
            result = arith::TruncFOp::create(b, l, outType, result);
          memref::StoreOp::create(b, l, result, out, ValueRange{dest, ivs[1]});
        });
  };

  // Rows known at run time: an empty lhs, out, gather or scatter reads
  // and writes nothing (its loops would index an empty buffer).
  if (!isa<arith::ConstantOp>(rows.getDefiningOp()) ||
      !isa<arith::ConstantOp>(lhsRows.getDefiningOp()) ||
      !isa<arith::ConstantOp>(outRows.getDefiningOp())) {
    auto nonEmpty = [&](Value extent) -> Value {
      return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne,
                                   extent, e.index(0));
    };
    auto guard = scf::IfOp::create(
        builder, loc,
        e.andI1(e.andI1(nonEmpty(rows), nonEmpty(lhsRows)), nonEmpty(outRows)),
        /*withElseRegion=*/false);
    builder.setInsertionPointToStart(&guard.getThenRegion().front());
  }
  if (rank == 2) {
    emitSlice(builder, loc, Value(), e.index(0), rows);
  } else {
    // Negative offsets and counts are empty slices; a slice past R is
    // clipped by the row check.
    Value offsets = op.getExpertOffsets(), counts = op.getExpertCounts();
    scf::ForOp::create(
        builder, loc, e.index(0), e.index(rhs.getShape()[0]), e.index(1),
        ValueRange{}, [&](OpBuilder &b, Location l, Value expert, ValueRange) {
          Emitter in(b, l);
          auto load = [&](Value buffer) {
            Value v = memref::LoadOp::create(b, l, buffer, expert);
            v = arith::MaxSIOp::create(b, l, v, in.i32(0));
            return arith::IndexCastUIOp::create(b, l, b.getIndexType(), v)
                .getResult();
          };
          Value rowBase = load(offsets);
          Value count = arith::MinUIOp::create(b, l, load(counts), rows);
          emitSlice(b, l, expert, rowBase, count);
          scf::YieldOp::create(b, l);
        });
  }
  op.erase();
  return success();
}
