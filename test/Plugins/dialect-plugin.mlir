// Debian's upstream mlir-opt loads our dialect as a plugin: parse, print,
// verify and canonicalize microscale IR without mx-opt.
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so %s | FileCheck %s
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so %s --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so %S/../Dialect/Microscale/invalid-qtensor.mlir -split-input-file -verify-diagnostics
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so %S/../Dialect/Microscale/invalid-layouts.mlir -split-input-file -verify-diagnostics

// CHECK-LABEL: func @plugin
// CHECK: microscale.quantize %{{.*}} : tensor<2x32xf32> -> !microscale.qtensor<2x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
// CANON-LABEL: func @plugin
// CANON-DAG: arith.constant dense<119> : tensor<32x1xi8>
// CANON-DAG: arith.constant dense<126> : tensor<2x1xi8>
func.func @plugin() -> !microscale.qtensor<2x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>> {
  %x = arith.constant dense<3.0> : tensor<2x32xf32>
  %q = microscale.quantize %x : tensor<2x32xf32> -> !microscale.qtensor<2x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
  return %q : !microscale.qtensor<2x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
}
