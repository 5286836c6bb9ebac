// The user guide's transcode example gives what the guide says: keep it
// true. The example itself lives in examples/.
// RUN: mx-opt %microscale_src_root/examples/transcode-nvfp4-b32.mlir --microscale-fold-constants | FileCheck %s
// 3 x 1.125 = 3.375 becomes E8M0 2^1 x E2M3 1.625 (LUT: the lower of the
// two nearest values); the global scale 2.0 comes out beside it.
// CHECK-DAG: %[[G:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[D:.*]] = arith.constant dense<3.250000e+00> : tensor<1x32xf32>
// CHECK: return %[[D]], %[[G]]
