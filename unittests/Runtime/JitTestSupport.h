//===- JitTestSupport.h - Compile test IR for the host ----------*- C++ -*-===//
//
// The JIT tests' common setup: a context with the dialects and translations
// the CPU pipeline needs, and IR text compiled through
// microscale-cpu-to-llvm into an ExecutionEngine.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_UNITTESTS_RUNTIME_JITTESTSUPPORT_H
#define MICROSCALE_UNITTESTS_RUNTIME_JITTESTSUPPORT_H

#include "microscale/Conversion/CPU/Pipeline.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <memory>
#include <string>

namespace microscale::testing {

/// A context ready for microscale IR and the host JIT.
inline std::unique_ptr<mlir::MLIRContext> makeJitContext() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadDialect<mlir::microscale::MicroscaleDialect,
                       mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                       mlir::memref::MemRefDialect>();
  return context;
}

/// Parses `text`, lowers it with microscale-cpu-to-llvm and JIT-compiles it;
/// on failure returns null and says why in `error`.
/// `prepare`, when given, may rewrite the parsed module first.
inline std::unique_ptr<mlir::ExecutionEngine>
compileForHost(mlir::MLIRContext &context, const std::string &text,
               std::string &error,
               llvm::function_ref<void(mlir::ModuleOp)> prepare = nullptr) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module) {
    error = "cannot parse:\n" + text;
    return nullptr;
  }
  if (prepare)
    prepare(*module);
  mlir::PassManager pm(&context);
  mlir::microscale::buildMicroscaleCPUToLLVMPipeline(pm);
  if (mlir::failed(pm.run(*module))) {
    error = "the CPU pipeline failed on:\n" + text;
    return nullptr;
  }
  auto engine = mlir::ExecutionEngine::create(*module);
  if (!engine) {
    error = llvm::toString(engine.takeError());
    return nullptr;
  }
  return std::move(*engine);
}

} // namespace microscale::testing

#endif
