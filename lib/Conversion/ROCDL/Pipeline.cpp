//===- Pipeline.cpp - microscale to gfx950 assembly -----------------------===//
#include "microscale/Conversion/ROCDL/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::microscale::buildMicroscaleGPUToGFX950Pipeline(
    OpPassManager &pm, const std::string &chip, const std::string &format) {
  MicroscaleROCDLOutlineScaledMatmulOptions outline;
  outline.chip = chip;
  pm.addPass(createMicroscaleROCDLOutlineScaledMatmul(outline));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  GpuROCDLAttachTargetOptions target;
  target.chip = chip;
  target.optLevel = 3;
  pm.addPass(createGpuROCDLAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = chip;
  rocdl.indexBitwidth = 64;
  // Kernels take static-shaped buffers as plain pointers (noalias, aligned).
  rocdl.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  ConvertAMDGPUToROCDLPassOptions amdgpu;
  amdgpu.chipset = chip;
  kernels.addPass(createConvertAMDGPUToROCDLPass(amdgpu));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("AMD chip (the scaled MFMA needs "
                                          "gfx950)"),
                           llvm::cl::init("gfx950")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa: assembly text; bin: an HSA code object"),
      llvm::cl::init("isa")};
};
} // namespace

void mlir::microscale::registerMicroscaleGFX950Pipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "microscale-gpu-to-gfx950",
      "Outline scaled_matmul_storage into gfx950 kernels of scaled MFMAs and "
      "compile them through ROCDL to gfx950 assembly (gpu.binary)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildMicroscaleGPUToGFX950Pipeline(pm, options.chip, options.format);
      });
}
