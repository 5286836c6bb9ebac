// The README's first command runs this example; this test keeps its output
// true. The example itself lives in examples/.
// RUN: mx-opt %microscale_src_root/examples/quantize-mxfp4.mlir --canonicalize | FileCheck %s

// Column 0 (amax 7.75) gets scale 2^0 (127); column 1 (amax 0.121) 2^-6
// (121). Ties round to even (0.25 -> 0, 0.75 -> 1, 2.5 -> 2) and values past
// 6 saturate. Packed along K: row 0 holds column 0, row 1 column 1.
// CHECK: arith.constant dense<{{\[}}[0, 33, 34, 67, 68, 84, 85, 102, 102, 102, 118, 119, 119, 119, 119, 119], [-120, -87, -86, -53, -52, -36, -35, -18, -18, -18, -2, -1, -1, -1, -1, -1]]> : tensor<2x16xi8>
// CHECK: arith.constant dense<{{\[}}[127, 121]]> : tensor<1x2xi8>
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, -0.000000e+00], [0.000000e+00, -0.000000e+00], [5.000000e-01, -7.812500e-03], [1.000000e+00, -1.562500e-02]
// CHECK-NOT: microscale.
