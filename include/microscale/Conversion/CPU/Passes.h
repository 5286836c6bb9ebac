//===- Passes.h - microscale for the host CPU -------------------*- C++ -*-===//
#ifndef MICROSCALE_CONVERSION_CPU_PASSES_H
#define MICROSCALE_CONVERSION_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::microscale {

#define GEN_PASS_DECL
#include "microscale/Conversion/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "microscale/Conversion/CPU/Passes.h.inc"

} // namespace mlir::microscale

#endif
