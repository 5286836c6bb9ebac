//===- MicroscaleLayoutInterface.h - Layout attribute interface -*- C++ -*-===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_IR_MICROSCALELAYOUTINTERFACE_H
#define MICROSCALE_DIALECT_MICROSCALE_IR_MICROSCALELAYOUTINTERFACE_H

#include "microscale/Dialect/Microscale/IR/DerivedLayoutCodegen.h"
#include "microscale/Reference/Layout.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <optional>
#include <string>

// What a layout holds (packed element codes or scale codes) is the
// StoragePart enum of the buffer-level ops.
#include "microscale/Dialect/Microscale/IR/MicroscaleEnums.h.inc"

#include "microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.h.inc"

#endif
