//===- Passes.h - Microscale transformation passes --------------*- C++ -*-===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_PASSES_H
#define MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_PASSES_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::microscale {

#define GEN_PASS_DECL
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "microscale/Dialect/Microscale/Transforms/Passes.h.inc"

} // namespace mlir::microscale

#endif
