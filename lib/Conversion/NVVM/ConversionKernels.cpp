//===- ConversionKernels.cpp - One NVIDIA kernel per convert_storage ----===//
#include "microscale/Conversion/NVVM/ByteTileConversionKernel.h"
#include "microscale/Conversion/NVVM/Passes.h"
#include "llvm/Support/MathExtras.h"

#include "OutlineSupport.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMOUTLINECONVERSIONS
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

/// A 1-D i8 memref of `bytes` bytes. The kernels take static shapes, so that
/// they lower with the bare-pointer convention: a kernel's parameters are two
/// pointers and the unit range.
static MemRefType bytesType(MLIRContext *context, int64_t bytes) {
  return MemRefType::get({bytes}, IntegerType::get(context, 8));
}

/// The destination's storage as rows of units: [outer, rows, columns].
struct UnitGrid {
  int64_t outer = 1, rows = 1, columns = 1;
};

static UnitGrid unitGrid(ConvertStorageOp op, const StorageConversion &c) {
  QTensorType to = op.getToType();
  SmallVector<int64_t> storage = op.getPart() == StoragePart::values
                                     ? to.getValueStorageShape()
                                     : to.getScaleStorageShape();
  UnitGrid grid;
  grid.columns = storage.back() / c.unitBytes;
  if (storage.size() >= 2)
    grid.rows = storage[storage.size() - 2];
  for (size_t d = 0; d + 2 < storage.size(); ++d)
    grid.outer *= storage[d];
  return grid;
}

static LogicalResult outline(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                             int64_t blockSize, int64_t perThread,
                             bool columnMajor, unsigned index) {
  StorageConversion conversion(op);
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  QTensorType fromType = op.getFromType();
  const bool values = op.getPart() == StoragePart::values;
  Type sourceBytes = bytesType(
      context, ShapedType::getNumElements(values
                                              ? fromType.getValueStorageShape()
                                              : fromType.getScaleStorageShape()));
  Type destBytes = bytesType(context, conversion.destBytes);
  Type indexType = IndexType::get(context);

  // The kernel: unit = begin + block * blockDim + thread; if unit < end.
  KernelSignature signature;
  signature.name = ("convert_storage_" + Twine(index)).str();
  signature.arguments = {sourceBytes, destBytes, indexType, indexType};
  signature.noAliasBuffers = 2;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder builder(context);
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value blockId = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value blockDim = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x);
  Value threadId = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value source = entry.getArgument(0), dest = entry.getArgument(1);
  Value kernelEnd = entry.getArgument(3);
  // Each thread computes perThread consecutive units of one row of the
  // destination. Row-major: consecutive threads take consecutive groups of a
  // row. Column-major (whole conversions only): consecutive threads take the
  // same group of consecutive rows, so that a warp's loads hit neighbouring
  // source bytes when the two layouts' fast axes differ.
  Value thread = e.add(e.mul(blockId, blockDim), threadId);
  UnitGrid grid = unitGrid(op, conversion);
  const int64_t groups = llvm::divideCeil(grid.columns, perThread);
  Value first, rowEnd;
  if (columnMajor) {
    Value row = e.rem(thread, grid.rows);
    Value rest = e.div(thread, grid.rows);
    Value group = e.rem(rest, groups);
    Value outer = e.div(rest, groups);
    Value rowStart = e.mul(e.add(e.mul(outer, grid.rows), row), grid.columns);
    first = e.add(rowStart, e.mul(group, perThread));
    rowEnd = e.add(rowStart, e.index(grid.columns));
  } else {
    first = e.add(entry.getArgument(2), e.mul(thread, perThread));
    rowEnd = kernelEnd;
  }
  // Units past the row's end or the range's: the tail, done one by one.
  Value limit = arith::MinUIOp::create(builder, loc, rowEnd, kernelEnd);
  // All units in range: compute them all, then store them all. At the end of
  // the range: each unit on its own, behind its bounds check.
  Value lastInRange = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::ule, e.add(first, perThread), limit);
  auto whole = scf::IfOp::create(builder, loc, lastInRange, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&whole.getThenRegion().front());
    SmallVector<Value> units, unitBits;
    for (int64_t k = 0; k < perThread; ++k) {
      units.push_back(e.add(first, k));
      unitBits.push_back(
          conversion.emitUnitBits(builder, loc, source, units.back()));
    }
    for (int64_t k = 0; k < perThread; ++k)
      conversion.emitUnitStore(builder, loc, dest, units[k], unitBits[k]);
    builder.setInsertionPointToStart(&whole.getElseRegion().front());
    for (int64_t k = 0; k < perThread; ++k) {
      Value unit = e.add(first, k);
      Value inRange = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::ult, unit, limit);
      auto one = scf::IfOp::create(builder, loc, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard inner(builder);
      builder.setInsertionPointToStart(&one.getThenRegion().front());
      conversion.emitUnit(builder, loc, source, dest, unit);
    }
  }
  gpu::ReturnOp::create(builder, loc);

  // The launch, in place of the op.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  Value begin = op.getUnitRange().empty() ? host.index(0)
                                          : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty()
                  ? host.index(conversion.getNumUnits())
                  : op.getUnitRange()[1];
  Value blocks;
  if (columnMajor) {
    int64_t threads = grid.outer * grid.rows * groups;
    blocks = host.index(llvm::divideCeil(threads, blockSize));
  } else {
    Value count = arith::SubIOp::create(builder, loc, end, begin);
    blocks = arith::CeilDivUIOp::create(builder, loc, count,
                                        host.index(blockSize * perThread));
  }
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function, gpu::KernelDim3{blocks, one, one},
      gpu::KernelDim3{host.index(blockSize), one, one},
      /*dynamicSharedMemorySize=*/Value(),
      ValueRange{castToArgument(builder, loc, op.getSource(), sourceBytes),
                 castToArgument(builder, loc, op.getDest(), destBytes), begin,
                 end});
  op.erase();
  return success();
}

namespace {
struct OutlineConversionsPass
    : public mlir::microscale::impl::MicroscaleNVVMOutlineConversionsBase<
          OutlineConversionsPass> {
  using MicroscaleNVVMOutlineConversionsBase::
      MicroscaleNVVMOutlineConversionsBase;
  void runOnOperation() override {
    std::optional<nvvm::NVIDIAChip> target =
        lookupChip(getOperation(), chip, getArgument());
    if (!target)
      return signalPassFailure();
    if (failed(reportNoNVIDIALowering<TranscodeStorageOp>(getOperation())))
      return signalPassFailure();
    SmallVector<ConvertStorageOp> ops =
        collectOpsToOutline<ConvertStorageOp>(getOperation());
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kNVVMKernelModule);
    for (ConvertStorageOp op : ops) {
      FailureOr<ConversionTiling> tiling = getConversionTiling(op);
      if (failed(tiling) || failed(checkBlockSize(op, tiling->blockSize,
                                                  *target)))
        return signalPassFailure();
      op->removeAttr(kTilingAttrName);
      unsigned index = getNextKernelIndex(kernels);
      ByteTileKernelOptions byteTile;
      byteTile.threads = tiling->blockSize;
      byteTile.wordGather = tiling->wordGather;
      byteTile.transposedCopies = tiling->transposedCopies;
      byteTile.blocksPerSM = tiling->residentBlocks;
      byteTile.buffers = tiling->buffers;
      byteTile.smCount = smCount;
      byteTile.hoistTables = tiling->hoistTables;
      byteTile.minTileBytes = tiling->minTileBytes;
      byteTile.minRun = tiling->minRun;
      // Batches above the byte tile plan's limit go to the staged kernel
      // first, and only where it fails to the byte tile kernel's blocks:
      // on Llama-3.1-405B's scales the staged kernel is the faster of the
      // two on the pairs it takes (docs/performance.md).
      byteTile.blocksOfLargeBatches = false;
      if (tiling->staged && tiling->byteTiles &&
          outlineByteTileConversion(op, kernels, index, *target, byteTile))
        continue;
      if (tiling->staged &&
          outlineTiledConversion(op, kernels, index, tiling->tilesPerBlock))
        continue;
      byteTile.blocksOfLargeBatches = true;
      if (tiling->staged && tiling->byteTiles &&
          outlineByteTileConversion(op, kernels, index, *target, byteTile))
        continue;
      if (failed(outline(op, kernels, tiling->blockSize,
                         tiling->unitsPerThread,
                         tiling->traversal == Traversal::ColumnMajor &&
                             op.getUnitRange().empty(),
                         index)))
        return signalPassFailure();
    }
  }
};
} // namespace
