//===- Pipeline.cpp - microscale to LLVM for the host CPU -----------------===//
#include "microscale/Conversion/CPU/Pipeline.h"

#include "microscale/Conversion/CPU/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

mlir::microscale::CPUPipelineOptions
mlir::microscale::getHostCPUPipelineOptions() {
  CPUPipelineOptions options;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  options.gfni = features.lookup("gfni") && features.lookup("avx512bw");
  // The architectural vector registers: zmm0-31, else ymm0-15 or xmm0-15.
  options.registerFileBytes = features.lookup("avx512f") ? 32 * 64
                              : features.lookup("avx")   ? 16 * 32
                                                         : 16 * 16;
  return options;
}

void mlir::microscale::buildMicroscaleCPUToLLVMPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  MicroscaleCPULowerStorageOptions lowering;
  lowering.gfni = options.gfni;
  lowering.registerFileBytes = options.registerFileBytes;
  pm.addPass(createMicroscaleCPULowerStorage(lowering));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // bf16 truncation as integer arithmetic (round to nearest even): x86
  // without AVX512-BF16 would call compiler-rt's __truncsfbf2, which a JIT
  // process does not have.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // Reshapes of buffers (collapse/expand) become plain descriptors.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<bool> gfni{*this, "gfni",
                    llvm::cl::desc("The target has x86 GFNI and AVX-512BW"),
                    llvm::cl::init(false)};
  Option<int64_t> registerFileBytes{
      *this, "register-file-bytes",
      llvm::cl::desc("Bytes of vector registers the block route may hold "
                     "(2048 with AVX-512; 0: no register model)"),
      llvm::cl::init(0)};
};
} // namespace

void mlir::microscale::registerMicroscaleCPUPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "microscale-cpu-to-llvm",
      "Lower microscale buffer conversions to loops and then to the LLVM "
      "dialect for the host CPU",
      [](OpPassManager &pm, const PipelineOptions &options) {
        CPUPipelineOptions cpu;
        cpu.gfni = options.gfni;
        cpu.registerFileBytes = options.registerFileBytes;
        buildMicroscaleCPUToLLVMPipeline(pm, cpu);
      });
}
