// RUN: mx-opt %s | mx-opt | FileCheck %s --check-prefix=ROUND
// RUN: mx-opt %s --microscale-fold-constants | FileCheck %s
// RUN: mx-opt %s --canonicalize | FileCheck %s --check-prefix=CANON

// NVFP4 B32 -> MXFP6 E2M3 on constants, through the C++ reference. Every
// element is 3.0 (E2M1 0x5, two per byte: 0x55), the block scale 1.125
// (E4M3 0x39: m = 1), the global scale 2.0. The nonzero mantissa bumps the
// exponent: E8M0 2^1 (code 128, printed as i8 -128), elements
// 3 x 1.125 / 2 = 0.84375 x 2 = 1.6875, a midpoint of E2M3 1.625 (0x0D) and
// 1.75 (0x0E). LUT takes the lower, HWCVT the even code; four 6-bit codes
// pack little-endian into three bytes: 0x0D -> 4D D3 34 (i8 77 -45 52),
// 0x0E -> 8E E3 38 (i8 -114 -29 56).

!nv = !microscale.qtensor<1x32, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>

// ROUND-LABEL: func @lut
// ROUND: microscale.transcode %{{.*}} : !microscale.qtensor<1x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
// CHECK-LABEL: func @lut
// CHECK-DAG: %[[V:.*]] = arith.constant dense<{{\[\[}}77, -45, 52, 77, -45, 52, {{.*}}, 77, -45, 52]]> : tensor<1x24xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<-128> : tensor<1x1xi8>
// CHECK-DAG: %[[G:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NOT: microscale.transcode
// CHECK: return %[[V]], %[[S]], %[[G]]
func.func @lut() -> (tensor<1x24xi8>, tensor<1x1xi8>, f32) {
  %v = arith.constant dense<85> : tensor<1x16xi8>
  %s = arith.constant dense<57> : tensor<1x1xi8>
  %g = arith.constant 2.0 : f32
  %q = microscale.from_bytes %v, %s, %g : tensor<1x16xi8>, tensor<1x1xi8> -> !nv
  %m, %mg = microscale.transcode %q : !nv -> !mx
  %mv, %ms = microscale.to_bytes %m : !mx -> tensor<1x24xi8>, tensor<1x1xi8>
  return %mv, %ms, %mg : tensor<1x24xi8>, tensor<1x1xi8>, f32
}

// ROUND-LABEL: func @hwcvt
// ROUND: microscale.transcode %{{.*}} {variant = #microscale.transcode_variant<hwcvt>}
// CHECK-LABEL: func @hwcvt
// CHECK-DAG: arith.constant dense<{{\[\[}}-114, -29, 56, -114, -29, 56, {{.*}}, -114, -29, 56]]> : tensor<1x24xi8>
// CHECK-DAG: arith.constant dense<-128> : tensor<1x1xi8>
func.func @hwcvt() -> (tensor<1x24xi8>, tensor<1x1xi8>) {
  %v = arith.constant dense<85> : tensor<1x16xi8>
  %s = arith.constant dense<57> : tensor<1x1xi8>
  %g = arith.constant 2.0 : f32
  %q = microscale.from_bytes %v, %s, %g : tensor<1x16xi8>, tensor<1x1xi8> -> !nv
  %m, %mg = microscale.transcode %q {variant = #microscale.transcode_variant<hwcvt>} : !nv -> !mx
  %mv, %ms = microscale.to_bytes %m : !mx -> tensor<1x24xi8>, tensor<1x1xi8>
  return %mv, %ms : tensor<1x24xi8>, tensor<1x1xi8>
}

// The minimal rule does not bump for m = 1: E8M0 2^0 (127), elements
// 3 x 1.125 = 3.375, a midpoint of 3.25 (0x15) and 3.5 (0x16); LUT: 3.25.
// Four codes 0x15 pack into 55 55 55.
// CHECK-LABEL: func @minimal_rule
// CHECK-DAG: arith.constant dense<85> : tensor<1x24xi8>
// CHECK-DAG: arith.constant dense<127> : tensor<1x1xi8>
// The dequantized values, folded by the canonicalizer: 3.25 x 2^0 per
// element, before the global scale.
// ROUND-LABEL: func @minimal_rule
// ROUND: microscale.transcode %{{.*}} {exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>}
// CANON-LABEL: func @minimal_rule
// CANON: arith.constant dense<3.250000e+00> : tensor<1x32xf32>
func.func @minimal_rule() -> (tensor<1x24xi8>, tensor<1x1xi8>, tensor<1x32xf32>) {
  %v = arith.constant dense<85> : tensor<1x16xi8>
  %s = arith.constant dense<57> : tensor<1x1xi8>
  %g = arith.constant 2.0 : f32
  %q = microscale.from_bytes %v, %s, %g : tensor<1x16xi8>, tensor<1x1xi8> -> !nv
  %m, %mg = microscale.transcode %q {exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>} : !nv -> !mx
  %mv, %ms = microscale.to_bytes %m : !mx -> tensor<1x24xi8>, tensor<1x1xi8>
  %d = microscale.dequantize %m : !mx -> tensor<1x32xf32>
  return %mv, %ms, %d : tensor<1x24xi8>, tensor<1x1xi8>, tensor<1x32xf32>
}

// A runtime input does not fold.
// CHECK-LABEL: func @runtime
// CHECK: microscale.transcode
func.func @runtime(%q: !nv) -> !mx {
  %m, %mg = microscale.transcode %q : !nv -> !mx
  return %m : !mx
}
