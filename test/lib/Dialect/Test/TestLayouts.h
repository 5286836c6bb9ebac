//===- TestLayouts.h - Test-only layouts -------------------------*- C++ -*-===//
#ifndef MICROSCALE_TEST_LIB_DIALECT_TEST_TESTLAYOUTS_H
#define MICROSCALE_TEST_LIB_DIALECT_TEST_TESTLAYOUTS_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/IR/Dialect.h"

#include "TestLayoutsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TestLayoutsAttrs.h.inc"

namespace mlir::microscale::test {
/// Registers the `microscale_test` dialect (mx-opt does with its test
/// registrations).
void registerTestLayoutsDialect(DialectRegistry &registry);
} // namespace mlir::microscale::test

#endif
