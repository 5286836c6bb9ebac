//===- HopperRaggedForm.cpp - The ragged (experts) form, both kernels -----===//
#include "HopperRaggedForm.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::hopperlayout;

bool hopperlayout::isRagged(MixedMatmulStorageOp op) {
  return static_cast<bool>(op.getExpertOffsets());
}

RaggedForm hopperlayout::getRaggedForm(MixedMatmulStorageOp op) {
  QTensorType rhs = op.getRhsType();
  RaggedForm r;
  r.experts = rhs.getShape()[0];
  r.lhsRows = cast<MemRefType>(op.getLhs().getType()).getShape()[0];
  r.outRows = cast<MemRefType>(op.getOut().getType()).getShape()[0];
  r.gather = static_cast<bool>(op.getGatherIndices());
  r.scatter = static_cast<bool>(op.getScatterIndices());
  Value indices = r.gather ? op.getGatherIndices() : op.getScatterIndices();
  r.raggedRows = indices ? cast<MemRefType>(indices.getType()).getShape()[0]
                         : r.lhsRows;
  r.dynamicRows = ShapedType::isDynamic(r.raggedRows) ||
                  ShapedType::isDynamic(r.lhsRows) ||
                  ShapedType::isDynamic(r.outRows);
  // Each expert's images follow one another (the batch dimension is the
  // layouts' outermost).
  if (r.experts) {
    r.valueBytes =
        ShapedType::getNumElements(rhs.getValueStorageShape()) / r.experts;
    r.scaleBytes =
        ShapedType::getNumElements(rhs.getScaleStorageShape()) / r.experts;
  }
  return r;
}

SmallVector<Type>
hopperlayout::raggedKernelArguments(MixedMatmulStorageOp op,
                                    const HopperMatmulPlan &p,
                                    const RaggedForm &r) {
  SmallVector<Type> types = kernelArguments(op, p);
  auto flat = [](Type type, int64_t rows, int64_t columns) {
    return MemRefType::get({ShapedType::isDynamic(rows) ? kDynamicRowsBound
                                                        : rows * columns},
                           cast<MemRefType>(type).getElementType());
  };
  types[0] = flat(types[0], r.lhsRows, p.k);
  types[3] = flat(types[3], r.outRows, p.n);
  for (Value index : {op.getExpertOffsets(), op.getExpertCounts(),
                      op.getGatherIndices(), op.getScatterIndices()})
    if (index)
      types.push_back(flat(index.getType(),
                           cast<MemRefType>(index.getType()).getShape()[0],
                           1));
  if (r.dynamicRows)
    types.append(3, IndexType::get(op.getContext()));
  return types;
}

SmallVector<Value>
hopperlayout::raggedKernelOperands(OpBuilder &builder, MixedMatmulStorageOp op,
                                   ArrayRef<Type> types, const RaggedForm &r) {
  Location loc = op.getLoc();
  SmallVector<Value> operands =
      kernelOperands(builder, op, types.take_front(5));
  for (Value index : {op.getExpertOffsets(), op.getExpertCounts(),
                      op.getGatherIndices(), op.getScatterIndices()}) {
    if (!index)
      continue;
    auto target = cast<MemRefType>(types[operands.size()]);
    if (cast<MemRefType>(index.getType()).isDynamicDim(0))
      index = memref::ReinterpretCastOp::create(
          builder, loc, target, index, /*offset=*/0,
          /*sizes=*/ArrayRef<int64_t>{target.getShape()[0]},
          /*strides=*/ArrayRef<int64_t>{1});
    operands.push_back(index);
  }
  if (r.dynamicRows) {
    auto extent = [&](Value buffer) -> Value {
      return memref::DimOp::create(builder, loc, buffer, 0);
    };
    Value indices = r.gather    ? op.getGatherIndices()
                    : r.scatter ? op.getScatterIndices()
                                : op.getLhs();
    operands.append(
        {extent(indices), extent(op.getLhs()), extent(op.getOut())});
  }
  return operands;
}

RaggedSlice hopperlayout::beginRaggedSlice(Emitter &e,
                                           HopperMatmulEmitter &weights,
                                           int64_t groupRows,
                                           const RaggedForm &ragged,
                                           Value expert, ValueRange indices) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  auto signedIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  RaggedSlice slice;
  slice.groupRows = groupRows;
  slice.start = signedIndex(
      memref::LoadOp::create(b, loc, indices[0], ValueRange{expert}));
  slice.count = arith::MaxSIOp::create(
      b, loc,
      signedIndex(
          memref::LoadOp::create(b, loc, indices[1], ValueRange{expert})),
      e.index(0));
  slice.groups = e.div(e.add(slice.count, groupRows - 1), groupRows);
  unsigned next = 2;
  slice.gather = ragged.gather ? indices[next++] : Value();
  slice.scatter = ragged.scatter ? indices[next++] : Value();
  if (ragged.dynamicRows) {
    slice.raggedRows = indices[next];
    slice.lhsRows = indices[next + 1];
    slice.outRows = indices[next + 2];
  } else {
    slice.raggedRows = e.index(ragged.raggedRows);
    slice.lhsRows = e.index(ragged.lhsRows);
    slice.outRows = e.index(ragged.outRows);
  }
  weights.valueBase = e.mul(expert, ragged.valueBytes);
  weights.scaleBase = e.mul(expert, ragged.scaleBytes);
  return slice;
}

void hopperlayout::enterRaggedGroup(Emitter &e, HopperMatmulEmitter &weights,
                                    const RaggedSlice &slice, Value group) {
  Value skipped = e.mul(group, slice.groupRows);
  Value left =
      arith::SubIOp::create(e.builder(), e.location(), slice.count, skipped);
  setRaggedRows(weights, e.add(slice.start, skipped), left, slice.gather,
                slice.scatter, slice.raggedRows, slice.lhsRows,
                slice.outRows);
}
