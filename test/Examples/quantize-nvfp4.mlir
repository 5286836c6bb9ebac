// The user guide shows this output; keep it true.
// RUN: mx-opt %microscale_src_root/examples/quantize-nvfp4.mlir --canonicalize | FileCheck %s
// CHECK: arith.constant dense<{{\[}}[-111, 50, 68, 85, 101, 102, 118, 119]]> : tensor<1x8xi8>
// CHECK: arith.constant dense<126> : tensor<1x1xi8>
// CHECK: arith.constant 5.95238118E-4 : f32
