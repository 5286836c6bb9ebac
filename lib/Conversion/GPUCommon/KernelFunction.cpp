//===- KernelFunction.cpp - The gpu.func every kernel starts from ---------===//
#include "microscale/Conversion/GPUCommon/KernelFunction.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::microscale;

gpu::GPUModuleOp mlir::microscale::getOrCreateKernelModule(ModuleOp module,
                                                           StringRef name) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), name);
}

gpu::GPUFuncOp
mlir::microscale::buildKernelFunction(gpu::GPUModuleOp kernels, Location loc,
                                      const KernelSignature &signature) {
  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  auto function = gpu::GPUFuncOp::create(
      builder, loc, signature.name,
      builder.getFunctionType(signature.arguments, {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  if (signature.blockSize)
    function.setKnownBlockSizeAttr(
        builder.getDenseI32ArrayAttr({*signature.blockSize, 1, 1}));
  for (unsigned arg = 0; arg < signature.noAliasBuffers; ++arg) {
    function.setArgAttr(arg, LLVM::LLVMDialect::getNoAliasAttrName(),
                        builder.getUnitAttr());
    function.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(),
                        builder.getI64IntegerAttr(signature.bufferAlignment));
  }
  return function;
}

MemRefType mlir::microscale::getSharedMemRefType(ArrayRef<int64_t> shape,
                                                 Type elementType) {
  return MemRefType::get(
      shape, elementType, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(elementType.getContext(),
                                 gpu::AddressSpace::Workgroup));
}

Value mlir::microscale::addSharedBuffer(gpu::GPUFuncOp function,
                                        MemRefType type, Location loc,
                                        int64_t alignment) {
  Value buffer = function.addWorkgroupAttribution(type, loc);
  if (alignment)
    function.setWorkgroupAttributionAttr(
        function.getNumWorkgroupAttributions() - 1,
        LLVM::LLVMDialect::getAlignAttrName(),
        IntegerAttr::get(IntegerType::get(type.getContext(), 64), alignment));
  return buffer;
}
