//===- downstream-opt.cpp - microscale inside a compiler of your own -----===//
//
// What a downstream compiler does with microscale: one call registers the
// dialect, one call registers the passes; then it parses IR and runs a
// pipeline that names a microscale pass.
//
//   downstream-opt weights.mlir
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: downstream-opt FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  mlir::microscale::registerMicroscaleDialect(registry); // one call
  mlir::microscale::registerMicroscalePasses();          // one call

  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1; // the parser has reported why

  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  // The pipeline is parsed from text, as a compiler's driver would: this
  // works because registerMicroscalePasses() made the name known.
  if (mlir::failed(mlir::parsePassPipeline("microscale-fold-constants", pm,
                                           llvm::errs())) ||
      mlir::failed(pm.run(*module)))
    return 1;

  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
