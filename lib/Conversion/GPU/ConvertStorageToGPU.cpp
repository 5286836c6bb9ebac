//===- ConvertStorageToGPU.cpp - One GPU kernel per convert_storage -------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/StorageConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALECONVERTSTORAGETOGPU
#include "microscale/Conversion/GPU/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

static constexpr StringLiteral kKernelModule = "microscale_kernels";

static gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModule);
}

/// A 1-D i8 memref of dynamic size: the kernels' parameter type.
static MemRefType bytesType(MLIRContext *context) {
  return MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8));
}

static LogicalResult outline(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                             int64_t blockSize, unsigned index) {
  StorageConversion conversion(op);
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Type bytes = bytesType(context);
  Type indexType = IndexType::get(context);

  // The kernel: unit = begin + block * blockDim + thread; if unit < end.
  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("convert_storage_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType({bytes, bytes, indexType, indexType}, {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value blockId = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value blockDim = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x);
  Value threadId = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value unit = e.add(entry.getArgument(2),
                     e.add(e.mul(blockId, blockDim), threadId));
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        unit, entry.getArgument(3));
  auto ifOp = scf::IfOp::create(builder, loc, inRange, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
    conversion.emitUnit(builder, loc, entry.getArgument(0),
                        entry.getArgument(1), unit);
  }
  gpu::ReturnOp::create(builder, loc);

  // The launch, in place of the op.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  auto asBytes = [&](Value buffer) -> Value {
    if (buffer.getType() == bytes)
      return buffer;
    return memref::CastOp::create(builder, loc, bytes, buffer);
  };
  Value begin = op.getUnitRange().empty() ? host.index(0)
                                          : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty()
                  ? host.index(conversion.getNumUnits())
                  : op.getUnitRange()[1];
  Value count = arith::SubIOp::create(builder, loc, end, begin);
  Value blocks = arith::CeilDivUIOp::create(builder, loc, count,
                                            host.index(blockSize));
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function, gpu::KernelDim3{blocks, one, one},
      gpu::KernelDim3{host.index(blockSize), one, one},
      /*dynamicSharedMemorySize=*/Value(),
      ValueRange{asBytes(op.getSource()), asBytes(op.getDest()), begin, end});
  op.erase();
  return success();
}

namespace {
struct ConvertStorageToGPUPass
    : public mlir::microscale::impl::MicroscaleConvertStorageToGPUBase<
          ConvertStorageToGPUPass> {
  using MicroscaleConvertStorageToGPUBase::MicroscaleConvertStorageToGPUBase;
  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: block-size must be in "
             "[1, 1024], got "
          << blockSize.getValue();
      return signalPassFailure();
    }
    SmallVector<ConvertStorageOp> ops;
    getOperation()->walk([&](ConvertStorageOp op) {
      if (!op->getParentOfType<gpu::GPUModuleOp>())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(getOperation());
    unsigned index = 0;
    for (ConvertStorageOp op : ops)
      if (failed(outline(op, kernels, blockSize, index++)))
        return signalPassFailure();
  }
};
} // namespace
