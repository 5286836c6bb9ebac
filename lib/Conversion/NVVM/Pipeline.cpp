//===- Pipeline.cpp - microscale to PTX -----------------------------------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::microscale::buildMicroscaleNVVMOutlinePipeline(
    OpPassManager &pm, StringRef chip, int64_t smCount) {
  MicroscaleNVVMOutlineConversionsOptions conversions;
  conversions.chip = chip.str();
  conversions.smCount = smCount;
  pm.addPass(createMicroscaleNVVMOutlineConversions(conversions));
  // Before the Hopper dequantization, which reports every other layout.
  MicroscaleNVVMOutlineBlackwellDequantizeOptions blackwell;
  blackwell.chip = chip.str();
  pm.addPass(createMicroscaleNVVMOutlineBlackwellDequantize(blackwell));
  MicroscaleNVVMOutlineDequantizeOptions dequantize;
  dequantize.chip = chip.str();
  pm.addPass(createMicroscaleNVVMOutlineDequantize(dequantize));
  // Before the mixed matmul, which reports every scaled_matmul left.
  MicroscaleNVVMOutlineScaledMatmulOptions scaled;
  scaled.chip = chip.str();
  pm.addPass(createMicroscaleNVVMOutlineScaledMatmul(scaled));
  MicroscaleNVVMOutlineMatmulOptions matmul;
  matmul.chip = chip.str();
  matmul.smCount = smCount;
  pm.addPass(createMicroscaleNVVMOutlineMatmul(matmul));
}

void mlir::microscale::buildMicroscaleGPUToPTXPipeline(
    OpPassManager &pm, const NVVMPipelineOptions &options) {
  buildMicroscaleNVVMOutlinePipeline(pm, options.chip, options.smCount);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  if (target.features.empty()) {
    // PTX 8.0 at least (what the kernels' inline PTX needs), newer where
    // the chip needs it. An unknown chip is reported by the outlining.
    std::optional<nvvm::NVIDIAChip> chip =
        nvvm::NVIDIAChip::lookup(options.chip);
    unsigned ptx = std::max(80u, chip ? chip->minimumPTXVersion : 0u);
    // The tcgen05 scaled_matmul's kind::mxf4nvf4 (NVFP4) needs PTX 8.7.
    if (chip && chip->hasTcgen05)
      ptx = std::max(ptx, 87u);
    target.features = "+ptx" + std::to_string(ptx);
  }
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createMicroscaleVerifyNVVMTarget());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  // Kernels take static-shaped buffers as plain pointers (noalias, aligned).
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("NVIDIA chip"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (default: the "
                                              "PTX version the chip needs)"),
                               llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa: PTX text; bin: a cubin assembled by ptxas"),
      llvm::cl::init("isa")};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("SMs of the GPU the kernels' grids "
                                         "are planned for (0: the chip "
                                         "model's default)"),
                          llvm::cl::init(0)};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit with ptxas, for "
                                             "format=bin"),
                              llvm::cl::init("")};
};

struct OutlineOptions : public PassPipelineOptions<OutlineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("NVIDIA chip"),
                           llvm::cl::init("sm_90a")};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("SMs of the GPU the kernels' grids "
                                         "are planned for (0: the chip "
                                         "model's default)"),
                          llvm::cl::init(0)};
};
} // namespace

void mlir::microscale::registerMicroscaleGPUPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "microscale-gpu-to-ptx",
      "Outline microscale buffer conversions into GPU kernels and compile "
      "them to PTX (gpu.binary with the assembly)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        NVVMPipelineOptions nvvm;
        nvvm.chip = options.chip;
        nvvm.features = options.features;
        nvvm.format = options.format;
        nvvm.toolkit = options.toolkit;
        nvvm.smCount = options.smCount;
        buildMicroscaleGPUToPTXPipeline(pm, nvvm);
      });
  PassPipelineRegistration<OutlineOptions>(
      "microscale-nvvm-outline-kernels",
      "Outline every buffer-level op with an NVIDIA kernel (conversions, "
      "Hopper dequantization, mixed matmul) into gpu.func kernels and "
      "their launches",
      [](OpPassManager &pm, const OutlineOptions &options) {
        buildMicroscaleNVVMOutlinePipeline(pm, options.chip, options.smCount);
      });
}
