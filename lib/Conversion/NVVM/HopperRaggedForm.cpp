//===- HopperRaggedForm.cpp - The ragged (experts) form, both kernels -----===//
#include "HopperRaggedForm.h"
#include "InlinePtx.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <tuple>

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

/// Expert `expert`'s slice (offsets[expert], counts[expert]) cut to the
/// ragged rows [0, raggedRows): its first row and its rows (signed index
/// arithmetic: a negative offset or count, or a slice past the rows, cuts
/// to what lies inside; rows outside are skipped by the op's definition).
static std::pair<Value, Value> slicedRows(Emitter &e, Value offsets,
                                          Value counts, Value raggedRows,
                                          Value expert) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  auto signedIndex = [&](Value buffer) -> Value {
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, buffer, ValueRange{expert}));
  };
  Value offset = signedIndex(offsets);
  Value end = arith::MinSIOp::create(
      b, loc, e.add(offset, arith::MaxSIOp::create(b, loc, signedIndex(counts),
                                                   e.index(0))),
      raggedRows);
  Value start = arith::MaxSIOp::create(b, loc, offset, e.index(0));
  Value rows = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, start), e.index(0));
  return {start, rows};
}

namespace {
/// The tile counts of 32 experts (32 c + l on lane l) and their inclusive
/// scan over the lanes. On the device each lane holds its own values and
/// the scan is five shuffles up; on the host (`onHost`) two arrays of the
/// 32 lanes' values, scanned by the same five steps as loops.
class TileScan {
public:
  /// Chunk `chunk`'s tile counts; on the device, lane `lane`'s (see
  /// RaggedTileMap::find for why it is opaque). The scan comes later
  /// (`scan`), so that every chunk's loads are in flight first.
  TileScan(Emitter &e, const RaggedTileMap &map, int64_t chunk, Value lane)
      : e(e), map(map), lane(lane) {
    if (!map.onHost) {
      own = tilesOf(e, e.add(e.toIndex(lane), 32 * chunk));
      return;
    }
    // The arrays live at the function's entry: the map is read inside
    // loops, where allocas would grow the stack each iteration.
    OpBuilder &b = e.builder();
    Location loc = e.location();
    {
      OpBuilder::InsertionGuard guard(b);
      Operation *function = b.getInsertionBlock()->getParentOp();
      while (!isa<FunctionOpInterface>(function))
        function = function->getParentOp();
      b.setInsertionPointToStart(&function->getRegion(0).front());
      auto type = MemRefType::get({32}, b.getI32Type());
      ownArray = memref::AllocaOp::create(b, loc, type);
      scanArray = memref::AllocaOp::create(b, loc, type);
      copyArray = memref::AllocaOp::create(b, loc, type);
    }
    forLanes([&](Emitter &x, Value l) {
      Value tiles = tilesOf(x, x.add(l, 32 * chunk));
      memref::StoreOp::create(x.builder(), x.location(), tiles, ownArray,
                              ValueRange{l});
      memref::StoreOp::create(x.builder(), x.location(), tiles, scanArray,
                              ValueRange{l});
    });
  }

  /// The inclusive scan over the lanes: five steps of shuffles up (the
  /// host: of loops over the lane arrays).
  void scan() {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    if (!map.onHost) {
      scanned = own;
      for (int64_t d = 1; d < 32; d *= 2) {
        Value up = NVVM::ShflOp::create(b, loc, b.getI32Type(), e.i32(-1),
                                        scanned, e.i32(d), e.i32(0),
                                        NVVM::ShflKind::up, UnitAttr());
        Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          lane, e.i32(d));
        scanned = e.select(has, arith::AddIOp::create(b, loc, scanned, up),
                           scanned);
      }
      return;
    }
    for (int64_t d = 1; d < 32; d *= 2) {
      forLanes([&](Emitter &x, Value l) {
        memref::StoreOp::create(
            x.builder(), x.location(),
            memref::LoadOp::create(x.builder(), x.location(), scanArray,
                                   ValueRange{l}),
            copyArray, ValueRange{l});
      });
      forLanes([&](Emitter &x, Value l) {
        OpBuilder &lb = x.builder();
        Location ll = x.location();
        Value has = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::uge, l,
                                          x.index(d));
        Value from = x.select(has, arith::SubIOp::create(lb, ll, l,
                                                         x.index(d)),
                              l);
        Value mine = memref::LoadOp::create(lb, ll, copyArray, ValueRange{l});
        Value up = memref::LoadOp::create(lb, ll, copyArray, ValueRange{from});
        memref::StoreOp::create(
            lb, ll,
            x.select(has, arith::AddIOp::create(lb, ll, mine, up), mine),
            scanArray, ValueRange{l});
      });
    }
  }

  /// Lane `l`'s (uniform over the warp) inclusive sum, and its own count.
  Value inclusiveAt(Value l) { return at(scanned, scanArray, l); }
  Value ownAt(Value l) { return at(own, ownArray, l); }
  /// The ballot of lanes whose inclusive sum is above `remaining` (i32).
  Value ballotAbove(Value remaining) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    auto above = [&](Emitter &x, Value sum) {
      return arith::CmpIOp::create(x.builder(), x.location(),
                                   arith::CmpIPredicate::ugt, sum, remaining);
    };
    if (!map.onHost)
      return NVVM::VoteSyncOp::create(b, loc, b.getI32Type(), e.i32(-1),
                                      above(e, scanned),
                                      NVVM::VoteSyncKind::ballot);
    auto lanes = scf::ForOp::create(
        b, loc, e.index(0), e.index(32), e.index(1), ValueRange{e.i32(0)},
        [&](OpBuilder &lb, Location ll, Value l, ValueRange mask) {
          Emitter x(lb, ll);
          Value sum = memref::LoadOp::create(lb, ll, scanArray, ValueRange{l});
          Value bit = x.shlV(
              arith::ExtUIOp::create(lb, ll, lb.getI32Type(), above(x, sum)),
              x.toI32(l));
          scf::YieldOp::create(lb, ll, ValueRange{x.bor(mask[0], bit)});
        });
    return lanes.getResult(0);
  }

private:
  /// Expert `expert`'s tiles (i32; 0 past the experts).
  Value tilesOf(Emitter &x, Value expert) {
    Value clamped = arith::MinUIOp::create(x.builder(), x.location(), expert,
                                           x.index(map.experts - 1));
    Value rows = slicedRows(x, map.offsets, map.counts, map.raggedRows,
                            clamped)
                     .second;
    Value tiles = x.div(x.add(rows, map.tileRows - 1), map.tileRows);
    return x.toI32(x.select(below(x, expert, x.index(map.experts)), tiles,
                            x.index(0)));
  }
  void forLanes(function_ref<void(Emitter &, Value)> body) {
    OpBuilder &b = e.builder();
    auto lanes =
        scf::ForOp::create(b, e.location(), e.index(0), e.index(32), e.index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(lanes.getBody()->getTerminator());
    Emitter x(b, e.location());
    body(x, lanes.getInductionVar());
  }
  Value at(Value value, Value array, Value l) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    if (map.onHost)
      return memref::LoadOp::create(b, loc, array, ValueRange{l});
    return NVVM::ShflOp::create(b, loc, b.getI32Type(), e.i32(-1), value,
                                e.toI32(l), e.i32(31), NVVM::ShflKind::idx,
                                UnitAttr());
  }

  Emitter &e;
  const RaggedTileMap &map;
  Value lane;                              // the device's (i32), opaque
  Value own, scanned;                      // the device's lane values
  Value ownArray, scanArray, copyArray;    // the host's lane arrays
};
} // namespace

RaggedTile RaggedTileMap::find(Emitter &e, Value tile, Value lane) const {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type i32 = b.getI32Type();
  // The lane through an opaque move: the counts' loads and the scan then
  // stay where the map is read (in the block's tile loop, where LLVM
  // would otherwise hoist them, invariant as they are, and keep their
  // values live across the whole pipeline: 11 registers, a block fewer
  // per SM).
  Value opaqueLane;
  if (!onHost)
    opaqueLane = inlinePtx(b, loc, i32, {e.toI32(lane)}, "mov.b32 $0, $1;",
                           "=r,r")
                     .getResult(0);
  // Every chunk's counts loaded before any scan: their latencies overlap.
  SmallVector<std::unique_ptr<TileScan>> scans;
  for (int64_t c = 0; c * 32 < experts; ++c)
    scans.push_back(std::make_unique<TileScan>(e, *this, c, opaqueLane));
  Value remaining = e.toI32(tile), expert = e.index(0), local = e.i32(0);
  Value total = e.i32(0);
  Value present =
      arith::ConstantIntOp::create(b, loc, /*value=*/0, /*width=*/1);
  for (auto [c, scan] : llvm::enumerate(scans)) {
    scan->scan();
    Value chunkTotal = scan->inclusiveAt(e.index(31));
    total = arith::AddIOp::create(b, loc, total, chunkTotal);
    // Sums are non-decreasing over the lanes: the first lane above the
    // remaining tiles owns the tile.
    Value mask = scan->ballotAbove(remaining);
    Value first = e.toIndex(arith::MinUIOp::create(
        b, loc,
        LLVM::CountTrailingZerosOp::create(b, loc, i32, mask,
                                           /*is_zero_poison=*/false),
        e.i32(31)));
    Value inChunk = e.andI1(
        arith::XOrIOp::create(b, loc, present,
                              arith::ConstantIntOp::create(b, loc, 1, 1)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, mask,
                              e.i32(0)));
    Value before = arith::SubIOp::create(b, loc, scan->inclusiveAt(first),
                                         scan->ownAt(first));
    expert = e.select(inChunk, e.add(first, 32 * static_cast<int64_t>(c)),
                      expert);
    local = e.select(inChunk,
                     arith::SubIOp::create(b, loc, remaining, before), local);
    present = arith::OrIOp::create(b, loc, present, inChunk);
    remaining = e.select(present, remaining,
                         arith::SubIOp::create(b, loc, remaining, chunkTotal));
  }
  return {expert, e.toIndex(local), e.toIndex(total)};
}

/// The kernel's ragged rows (index): an argument where known at run time.
static Value raggedRowsOf(Emitter &e, const RaggedForm &ragged,
                          ValueRange indices) {
  if (!ragged.dynamicRows)
    return e.index(ragged.raggedRows);
  return indices[2 + ragged.gather + ragged.scatter];
}

RaggedTileMap RaggedTileMap::get(Emitter &e, const RaggedForm &ragged,
                                 int64_t tileRows, ValueRange indices,
                                 bool onHost) {
  RaggedTileMap map;
  map.offsets = indices[0];
  map.counts = indices[1];
  map.raggedRows = raggedRowsOf(e, ragged, indices);
  map.experts = ragged.experts;
  map.tileRows = tileRows;
  map.onHost = onHost;
  return map;
}

RaggedSlice hopperlayout::beginRaggedSlice(Emitter &e,
                                           HopperMatmulEmitter &weights,
                                           int64_t groupRows,
                                           const RaggedForm &ragged,
                                           Value expert,
                                           ValueRange indices) {
  RaggedSlice slice;
  slice.groupRows = groupRows;
  unsigned next = 2;
  slice.gather = ragged.gather ? indices[next++] : Value();
  slice.scatter = ragged.scatter ? indices[next++] : Value();
  slice.raggedRows = raggedRowsOf(e, ragged, indices);
  if (ragged.dynamicRows) {
    slice.lhsRows = indices[next + 1];
    slice.outRows = indices[next + 2];
  } else {
    slice.lhsRows = e.index(ragged.lhsRows);
    slice.outRows = e.index(ragged.outRows);
  }
  std::tie(slice.start, slice.count) =
      slicedRows(e, indices[0], indices[1], slice.raggedRows, expert);
  slice.groups = e.div(e.add(slice.count, groupRows - 1), groupRows);
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
