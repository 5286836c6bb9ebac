//===- CompileConversion.cpp - A layout conversion compiled for CUDA ------===//
#include "microscale/Conversion/NVVM/CompileConversion.h"

#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::microscale;

std::optional<::microscale::cuda::ConversionKernel>
mlir::microscale::compileConversionForCUDA(QTensorType from, QTensorType to,
                                           StoragePart part,
                                           const NVVMPipelineOptions &options,
                                           std::string &error) {
  MLIRContext *context = from.getContext();
  // What the pipeline needs besides our dialects: the dialects' lowerings
  // to LLVM and NVVM (interfaces the GPU-to-NVVM pass collects), the NVVM
  // target and the translations to LLVM IR.
  DialectRegistry registry;
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  context->appendDialectRegistry(registry);
  // func @convert(%src: memref<?xi8>, %dst: memref<?xi8>): the whole
  // conversion, so that the compiler chooses the whole launch.
  OwningOpRef<ModuleOp> module =
      buildConversionModule(from, to, part, /*unitRange=*/false, error);
  if (!module)
    return std::nullopt;
  ConvertStorageOp convert;
  module->walk([&](ConvertStorageOp op) { convert = op; });
  ::microscale::cuda::ConversionKernel kernel;
  {
    StorageConversion conversion(convert);
    kernel.units = conversion.getNumUnits();
    kernel.destBytes = conversion.destBytes;
    kernel.sourceBytes = ShapedType::getNumElements(
        part == StoragePart::values ? from.getValueStorageShape()
                                    : from.getScaleStorageShape());
  }

  // The pipeline's diagnostics (e.g. ptxas not found) become the error.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
    llvm::raw_string_ostream os(diagnostics);
    os << (diagnostics.empty() ? "" : "; ") << diagnostic.str();
    return success();
  });
  PassManager pm(context);
  buildMicroscaleGPUToPTXPipeline(pm, options);
  if (failed(pm.run(*module))) {
    error = "compiling the conversion for " + options.chip + " failed" +
            (diagnostics.empty() ? "" : ": " + diagnostics);
    return std::nullopt;
  }

  // The kernel image and the launch the compiler chose.
  bool found = false;
  module->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto o = dyn_cast<gpu::ObjectAttr>(object)) {
        kernel.image = o.getObject().getValue().str();
        found = true;
      }
  });
  gpu::LaunchFuncOp launch;
  module->walk([&](gpu::LaunchFuncOp op) { launch = op; });
  if (!found || !launch) {
    // An empty conversion launches nothing.
    if (kernel.destBytes == 0)
      return kernel;
    error = "the compiled conversion has no kernel";
    return std::nullopt;
  }
  kernel.name = launch.getKernelName().getValue().str();
  kernel.takesUnitRange = launch.getKernelOperands().size() == 4;
  auto constant = [&](Value v, unsigned &out) {
    APInt value;
    if (!matchPattern(v, m_ConstantInt(&value)))
      return false;
    out = static_cast<unsigned>(value.getZExtValue());
    return true;
  };
  unsigned one = 0;
  if (!constant(launch.getGridSizeX(), kernel.grid) ||
      !constant(launch.getBlockSizeX(), kernel.block) ||
      !constant(launch.getGridSizeY(), one) || one != 1 ||
      !constant(launch.getBlockSizeY(), one) || one != 1) {
    error = "the compiled conversion's launch is not a constant 1-D grid";
    return std::nullopt;
  }
  return kernel;
}

std::string mlir::microscale::findCUDAToolkit() {
  auto hasPtxas = [](StringRef toolkit) {
    llvm::SmallString<256> ptxas(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    return !toolkit.empty() && llvm::sys::fs::can_execute(ptxas);
  };
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> toolkit =
            llvm::sys::Process::GetEnv(variable);
        toolkit && hasPtxas(*toolkit))
      return *toolkit;
  if (llvm::ErrorOr<std::string> ptxas =
          llvm::sys::findProgramByName("ptxas")) {
    std::string toolkit =
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str();
    if (hasPtxas(toolkit))
      return toolkit;
  }
  if (hasPtxas(NVVM::getCUDAToolkitPath()))
    return NVVM::getCUDAToolkitPath().str();
  return "";
}
