//===- DialectPlugin.cpp - The microscale dialect as an mlir-opt plugin ---===//
//
//   mlir-opt --load-dialect-plugin=lib/MicroscaleDialectPlugin.so input.mlir
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Microscale", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::microscale::registerMicroscaleDialect(*registry);
          }};
}
