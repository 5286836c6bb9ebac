//===- mx-opt.cpp - The microscale optimizer driver -----------------------===//
//
// MlirOptMain with the microscale dialect and every upstream dialect, pass and
// extension that the lowerings (CPU/LLVM, NVVM, ROCDL) need, plus the LLVM IR
// translations that `gpu-module-to-binary` uses to emit PTX and gfx950 ISA.
//
// This file is the one place that includes the heavy "register everything"
// headers, so it rarely needs recompiling.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/ROCDL/Passes.h"
#include "microscale/Conversion/CPU/Passes.h"
#include "microscale/Conversion/CPU/Pipeline.h"
#include "microscale/Conversion/NVVM/Passes.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

// Test-only registrations (test/lib), as upstream's mlir-opt has.
namespace mlir::microscale::test {
void registerTestLayoutsDialect(DialectRegistry &registry);
} // namespace mlir::microscale::test

static void registerTestDialects(mlir::DialectRegistry &registry) {
  mlir::microscale::test::registerTestLayoutsDialect(registry);
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  registry.insert<mlir::microscale::MicroscaleDialect>();
  mlir::microscale::registerMicroscalePasses();
  mlir::microscale::registerMicroscaleCPUPasses();
  mlir::microscale::registerMicroscaleCPUPipelines();
  mlir::microscale::registerMicroscaleNVVMPasses();
  mlir::microscale::registerMicroscaleGPUPipelines();
  mlir::microscale::registerMicroscaleROCDLPasses();
  mlir::microscale::registerMicroscaleGFX950Pipelines();
  registerTestDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "microscale optimizer driver\n", registry));
}
