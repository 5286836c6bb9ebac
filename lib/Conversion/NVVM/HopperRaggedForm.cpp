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

Value hopperlayout::countRaggedSlots(Emitter &e, const RaggedForm &ragged,
                                     ArrayRef<Value> operands) {
  if (!ragged.dynamicRows)
    return e.index(std::min(ragged.experts, ragged.raggedRows));
  return arith::MinUIOp::create(e.builder(), e.location(),
                                operands[operands.size() - 3],
                                e.index(ragged.experts));
}

ExpertOfSlot hopperlayout::findExpertOfSlot(Emitter &e, Value counts,
                                            int64_t experts, Value slot,
                                            Value lane, bool onHost) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type i32 = b.getI32Type();
  // The ballot of `predicate(lane)` over the 32 lanes.
  auto ballot = [&](function_ref<Value(Emitter &, Value)> predicate) {
    if (!onHost)
      return NVVM::VoteSyncOp::create(b, loc, i32, e.i32(-1),
                                      predicate(e, lane),
                                      NVVM::VoteSyncKind::ballot)
          .getResult();
    auto lanes = scf::ForOp::create(
        b, loc, e.index(0), e.index(32), e.index(1), ValueRange{e.i32(0)},
        [&](OpBuilder &lb, Location ll, Value l, ValueRange mask) {
          Emitter x(lb, ll);
          Value bit = x.shlV(arith::ExtUIOp::create(lb, ll, i32,
                                                    predicate(x, l)),
                             x.toI32(l));
          scf::YieldOp::create(lb, ll, ValueRange{x.bor(mask[0], bit)});
        });
    return lanes.getResult(0);
  };
  auto popc = [&](Value v) {
    return e.toIndex(LLVM::CtPopOp::create(b, loc, i32, v));
  };
  Value remaining = slot, expert = e.index(0);
  Value present =
      arith::ConstantIntOp::create(b, loc, /*value=*/0, /*width=*/1);
  for (int64_t c = 0; c * 32 < experts; ++c) {
    // Lane l: expert 32 c + l has rows.
    auto hasRows = [&](Emitter &x, Value l) {
      Value candidate = x.add(l, 32 * c);
      Value clamped = arith::MinUIOp::create(x.builder(), x.location(),
                                             candidate, x.index(experts - 1));
      Value count = memref::LoadOp::create(x.builder(), x.location(), counts,
                                           ValueRange{clamped});
      Value positive = arith::CmpIOp::create(
          x.builder(), x.location(), arith::CmpIPredicate::sgt, count,
          arith::ConstantIntOp::create(x.builder(), x.location(),
                                       count.getType(), 0));
      return x.andI1(below(x, candidate, x.index(experts)), positive);
    };
    // The device's lane evaluates its own expert once for both ballots; the
    // host's lane loops evaluate each lane's.
    Value own = onHost ? Value() : hasRows(e, lane);
    auto laneHasRows = [&](Emitter &x, Value l) {
      return own ? own : hasRows(x, l);
    };
    Value mask = ballot(laneHasRows);
    Value here = popc(mask);
    // The lane whose expert has rows and is the remaining-th of the mask.
    Value pick = ballot([&](Emitter &x, Value l) {
      Value lower = arith::SubIOp::create(x.builder(), x.location(),
                                          x.shlV(x.i32(1), x.toI32(l)),
                                          x.i32(1));
      Value rank = x.toIndex(LLVM::CtPopOp::create(
          x.builder(), x.location(), i32,
          arith::AndIOp::create(x.builder(), x.location(), mask, lower)));
      return x.andI1(laneHasRows(x, l),
                     arith::CmpIOp::create(x.builder(), x.location(),
                                           arith::CmpIPredicate::eq, rank,
                                           remaining));
    });
    Value inChunk = e.andI1(
        arith::XOrIOp::create(b, loc, present,
                              arith::ConstantIntOp::create(b, loc, 1, 1)),
        below(e, remaining, here));
    Value index = e.add(
        e.toIndex(LLVM::CountTrailingZerosOp::create(b, loc, i32, pick,
                                                     /*is_zero_poison=*/false)),
        32 * c);
    expert = e.select(inChunk, index, expert);
    present = arith::OrIOp::create(b, loc, present, inChunk);
    // Not found yet: the slot is past this chunk's experts with rows.
    remaining = e.select(present, remaining,
                         arith::SubIOp::create(b, loc, remaining, here));
  }
  return {expert, present};
}

RaggedSlice hopperlayout::beginRaggedSlice(Emitter &e,
                                           HopperMatmulEmitter &weights,
                                           int64_t groupRows,
                                           const RaggedForm &ragged,
                                           Value expert, ValueRange indices,
                                           Value present) {
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
  if (present)
    slice.count = e.select(present, slice.count, e.index(0));
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
