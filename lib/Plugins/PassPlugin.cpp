//===- PassPlugin.cpp - The microscale passes as an mlir-opt plugin -------===//
//
//   mlir-opt --load-dialect-plugin=lib/MicroscaleDialectPlugin.so \
//            --load-pass-plugin=lib/MicroscalePassPlugin.so \
//            --microscale-fold-constants input.mlir
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/Transforms/Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MicroscalePasses", LLVM_VERSION_STRING,
          []() { mlir::microscale::registerMicroscalePasses(); }};
}
