//===- MicroscaleDialect.cpp - The microscale dialect ---------------------===//
#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::microscale;

#include "microscale/Dialect/Microscale/IR/MicroscaleDialect.cpp.inc"


void MicroscaleDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "microscale/Dialect/Microscale/IR/MicroscaleOps.cpp.inc"
      >();
}

void mlir::microscale::registerMicroscaleDialect(DialectRegistry &registry) {
  registry.insert<MicroscaleDialect>();
}
