//===- ConvertStorageToGPU.cpp - One GPU kernel per convert_storage -------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "microscale/Conversion/KernelModule.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/StorageConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALECONVERTSTORAGETOGPU
#include "microscale/Conversion/GPU/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

static constexpr StringLiteral kKernelModule = "microscale_kernels";


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
  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("convert_storage_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType({sourceBytes, destBytes, indexType, indexType},
                              {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  // The buffers never alias, and device allocations are 256-byte aligned:
  // this lets the backend load shared source bytes once and merge stores.
  for (unsigned arg = 0; arg < 2; ++arg) {
    function.setArgAttr(arg, "llvm.noalias", builder.getUnitAttr());
    function.setArgAttr(arg, "llvm.align", builder.getI64IntegerAttr(16));
  }
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
  const int64_t groups = (grid.columns + perThread - 1) / perThread;
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
  auto asBytes = [&](Value buffer, Type type) -> Value {
    if (buffer.getType() == type)
      return buffer;
    return memref::CastOp::create(builder, loc, type, buffer);
  };
  Value begin = op.getUnitRange().empty() ? host.index(0)
                                          : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty()
                  ? host.index(conversion.getNumUnits())
                  : op.getUnitRange()[1];
  Value blocks;
  if (columnMajor) {
    int64_t threads = grid.outer * grid.rows * groups;
    blocks = host.index((threads + blockSize - 1) / blockSize);
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
      ValueRange{asBytes(op.getSource(), sourceBytes),
                 asBytes(op.getDest(), destBytes), begin, end});
  op.erase();
  return success();
}

namespace {
struct ConvertStorageToGPUPass
    : public mlir::microscale::impl::MicroscaleConvertStorageToGPUBase<
          ConvertStorageToGPUPass> {
  using MicroscaleConvertStorageToGPUBase::MicroscaleConvertStorageToGPUBase;
  void runOnOperation() override {
    if (traversal != "row-major" && traversal != "column-major") {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: traversal must be row-major "
             "or column-major, got '"
          << traversal.getValue() << "'";
      return signalPassFailure();
    }
    if (unitsPerThread <= 0 || unitsPerThread > 64) {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: units-per-thread must be in "
             "[1, 64], got "
          << unitsPerThread.getValue();
      return signalPassFailure();
    }
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: block-size must be in "
             "[1, 1024], got "
          << blockSize.getValue();
      return signalPassFailure();
    }
    // Tiles per block (both staged kernels): a power of two up to 8.
    auto validTiles = [&](int64_t tiles, StringRef option) {
      if (tiles >= 1 && tiles <= 8 && llvm::isPowerOf2_64(tiles))
        return true;
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: " << option
          << " must be 1, 2, 4 or 8, got " << tiles;
      return false;
    };
    if (!validTiles(dequantizeTilesPerBlock, "dequantize-tiles-per-block") ||
        !validTiles(conversionTilesPerBlock, "conversion-tiles-per-block"))
      return signalPassFailure();
    if (dequantizeTileOrder != "output" && dequantizeTileOrder != "image") {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: dequantize-tile-order must "
             "be output or image, got '"
          << dequantizeTileOrder.getValue() << "'";
      return signalPassFailure();
    }
    SmallVector<ConvertStorageOp> ops;
    SmallVector<DequantizeStorageOp> dequantizes;
    SmallVector<MixedMatmulStorageOp> products;
    bool unsupported = false;
    getOperation()->walk([&](Operation *op) {
      if (op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (auto convert = dyn_cast<ConvertStorageOp>(op))
        ops.push_back(convert);
      else if (auto dequantize = dyn_cast<DequantizeStorageOp>(op))
        dequantizes.push_back(dequantize);
      else if (auto product = dyn_cast<MixedMatmulStorageOp>(op))
        products.push_back(product);
      else if (isa<TranscodeStorageOp, ScaledMatmulStorageOp>(op)) {
        // Not silently left on the host: the NVIDIA path has no transcode.
        op->emitOpError() << "has no NVIDIA lowering (the CPU one is "
                             "microscale-lower-storage-conversions)";
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();
    if (ops.empty() && dequantizes.empty() && products.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kKernelModule);
    unsigned index = 0;
    for (ConvertStorageOp op : ops)
      if (stageConversions &&
          outlineTiledConversion(op, kernels, index, conversionTilesPerBlock))
        ++index;
      else if (failed(outline(op, kernels, blockSize, unitsPerThread,
                         traversal == "column-major" &&
                             op.getUnitRange().empty(),
                         index++)))
        return signalPassFailure();
    HopperDequantizeOptions dequantizeOptions;
    dequantizeOptions.staged = stageDequantize;
    dequantizeOptions.blockSize = blockSize;
    dequantizeOptions.columnMajor = traversal == "column-major";
    dequantizeOptions.foldScaleBias = foldScaleBias;
    dequantizeOptions.tilesPerBlock = dequantizeTilesPerBlock;
    dequantizeOptions.outputOrder = dequantizeTileOrder == "output";
    for (DequantizeStorageOp op : dequantizes)
      if (failed(outlineHopperDequantize(op, kernels, dequantizeOptions,
                                         index++)))
        return signalPassFailure();
    MixedMatmulOptions matmulOptions;
    matmulOptions.splitK = matmulSplitK;
    matmulOptions.unroll = matmulUnroll;
    matmulOptions.warpColumns = matmulWarpColumns;
    matmulOptions.warpRows = matmulWarpRows;
    matmulOptions.columnWarps = matmulColumnWarps;
    matmulOptions.activationStages = matmulActivationStages;
    matmulOptions.weightStages = matmulWeightStages;
    matmulOptions.chunkK = matmulChunkK;
    matmulOptions.maxRegisters = matmulMaxRegisters;
    for (MixedMatmulStorageOp op : products)
      if (failed(outlineMixedMatmul(op, kernels, index++, matmulOptions)))
        return signalPassFailure();
  }
};
} // namespace
