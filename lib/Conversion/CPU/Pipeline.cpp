//===- Pipeline.cpp - microscale to LLVM for the host CPU -----------------===//
#include "microscale/Conversion/CPU/Pipeline.h"

#include "microscale/Dialect/Microscale/Transforms/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::microscale::buildMicroscaleCPUToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createMicroscaleLowerStorageConversions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::microscale::registerMicroscaleCPUPipelines() {
  PassPipelineRegistration<>(
      "microscale-cpu-to-llvm",
      "Lower microscale buffer conversions to loops and then to the LLVM "
      "dialect for the host CPU",
      buildMicroscaleCPUToLLVMPipeline);
}
