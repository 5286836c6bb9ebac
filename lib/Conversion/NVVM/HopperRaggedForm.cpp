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
  auto flat = [](Type type, int64_t elements) {
    return MemRefType::get({elements}, cast<MemRefType>(type).getElementType());
  };
  types[0] = flat(types[0], r.lhsRows * p.k);
  types[3] = flat(types[3], r.outRows * p.n);
  for (Value index : {op.getExpertOffsets(), op.getExpertCounts(),
                      op.getGatherIndices(), op.getScatterIndices()})
    if (index)
      types.push_back(index.getType());
  return types;
}

SmallVector<Value>
hopperlayout::raggedKernelOperands(OpBuilder &builder, MixedMatmulStorageOp op,
                                   ArrayRef<Type> types) {
  SmallVector<Value> operands =
      kernelOperands(builder, op, types.take_front(5));
  for (Value index : {op.getExpertOffsets(), op.getExpertCounts(),
                      op.getGatherIndices(), op.getScatterIndices()})
    if (index)
      operands.push_back(index);
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
  weights.valueBase = e.mul(expert, ragged.valueBytes);
  weights.scaleBase = e.mul(expert, ragged.scaleBytes);
  return slice;
}

void hopperlayout::enterRaggedGroup(Emitter &e, HopperMatmulEmitter &weights,
                                    const RaggedForm &ragged,
                                    const RaggedSlice &slice, Value group) {
  Value skipped = e.mul(group, slice.groupRows);
  Value left =
      arith::SubIOp::create(e.builder(), e.location(), slice.count, skipped);
  setRaggedRows(weights, e.add(slice.start, skipped), left, slice.gather,
                slice.scatter, e.index(ragged.raggedRows),
                e.index(ragged.lhsRows), e.index(ragged.outRows));
}
