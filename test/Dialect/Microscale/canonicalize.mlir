// RUN: mx-opt %s -canonicalize -split-input-file | FileCheck %s

// Quantizing a constant folds through the C++ reference. The block's amax is
// 6 = 1.5 * 2^2 and emax(E2M1) = 2, so the E8M0 scale is 2^0 (code 127 =
// 0x7F = i8 127). Codes: 0.5 -> 1, 1 -> 2, 1.5 -> 3, 2 -> 4, 3 -> 5, 4 -> 6,
// 6 -> 7, -0.5 -> 9; the even element goes in the low nibble: 0x21 = 33,
// 0x43 = 67, 0x65 = 101, 0x97 = -105.
// CHECK-LABEL: func @fold_quantize
// CHECK-DAG: %[[V:.*]] = arith.constant dense<{{\[}}[33, 67, 101, -105, 33, 67, 101, -105, 33, 67, 101, -105, 33, 67, 101, -105]]> : tensor<1x16xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<127> : tensor<1x1xi8>
// CHECK: %[[Q:.*]] = microscale.from_bytes %[[V]], %[[S]]
// CHECK: return %[[Q]]
func.func @fold_quantize() -> !microscale.qtensor<1x32, mxfp4, axis = 1> {
  %x = arith.constant dense<[[0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5,
                              0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5,
                              0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5,
                              0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5]]> : tensor<1x32xf32>
  %q = microscale.quantize %x : tensor<1x32xf32> -> !microscale.qtensor<1x32, mxfp4, axis = 1>
  return %q : !microscale.qtensor<1x32, mxfp4, axis = 1>
}

// -----

// Ties round to nearest even, not away from zero (upstream arith-expand's
// E2M1 truncf maps 1.25 -> 1.5, 2.5 -> 3 and 5 -> 6). With amax 6 the scale
// is 2^0: 1.25 -> 1 (code 2), 2.5 -> 2 (code 4), 5 -> 4 (code 6), 6 -> 7:
// bytes 0x42 = 66, 0x76 = 118.
// CHECK-LABEL: func @fold_quantize_ties_to_even
// CHECK: arith.constant dense<{{\[}}[66, 118]]> : tensor<1x2xi8>
// CHECK: arith.constant dense<127> : tensor<1x1xi8>
func.func @fold_quantize_ties_to_even() -> !microscale.qtensor<1x4, f4E2M1FN, f8E8M0FNU, block = 4, axis = 1> {
  %x = arith.constant dense<[[1.25, 2.5, 5.0, 6.0]]> : tensor<1x4xf32>
  %q = microscale.quantize %x : tensor<1x4xf32> -> !microscale.qtensor<1x4, f4E2M1FN, f8E8M0FNU, block = 4, axis = 1>
  return %q : !microscale.qtensor<1x4, f4E2M1FN, f8E8M0FNU, block = 4, axis = 1>
}

// -----

// NVFP4 folds with its global scale: amax 12 over global 0.5 is 24 / 6 = 4,
// an exact E4M3 code 0x48 = 72; elements are 12 / (4 * 0.5) = 6, code 7,
// two per byte: 0x77 = 119.
// CHECK-LABEL: func @fold_quantize_nvfp4
// CHECK-DAG: %[[V:.*]] = arith.constant dense<119> : tensor<1x8xi8>
// CHECK-DAG: %[[G:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[S:.*]] = arith.constant dense<72> : tensor<1x1xi8>
// CHECK: microscale.from_bytes %[[V]], %[[S]], %[[G]]
func.func @fold_quantize_nvfp4() -> !microscale.qtensor<1x16, nvfp4, axis = 1> {
  %x = arith.constant dense<12.0> : tensor<1x16xf32>
  %g = arith.constant 0.5 : f32
  %q = microscale.quantize %x, %g : tensor<1x16xf32> -> !microscale.qtensor<1x16, nvfp4, axis = 1>
  return %q : !microscale.qtensor<1x16, nvfp4, axis = 1>
}

// -----

// Dequantizing constant bytes folds to a constant: scale code 128 = 2^1.
// CHECK-LABEL: func @fold_dequantize
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00, 1.200000e+01, -1.000000e+00]]> : tensor<1x8xbf16>
// CHECK: return %[[C]]
func.func @fold_dequantize() -> tensor<1x8xbf16> {
  %v = arith.constant dense<[[33, 67, 101, -105]]> : tensor<1x4xi8>
  %s = arith.constant dense<-128> : tensor<1x1xi8>
  %q = microscale.from_bytes %v, %s : tensor<1x4xi8>, tensor<1x1xi8> -> !microscale.qtensor<1x8, f4E2M1FN, f8E8M0FNU, block = 8, axis = 1>
  %x = microscale.dequantize %q : !microscale.qtensor<1x8, f4E2M1FN, f8E8M0FNU, block = 8, axis = 1> -> tensor<1x8xbf16>
  return %x : tensor<1x8xbf16>
}

// -----

// The E8M0 edge codes fold as the op says: 255 is NaN under OCP and +inf
// under zero_inf (0 * inf is still NaN); 0 is 2^-127 under OCP (1 * 2^-127
// underflows bf16 to a subnormal) and 0 under zero_inf.
// CHECK-LABEL: func @fold_dequantize_edges
// CHECK-DAG: arith.constant dense<0x7FC0> : tensor<1x2xbf16>
// CHECK-DAG: arith.constant dense<{{\[}}[0x7FC0, 0x7F80]]> : tensor<1x2xbf16>
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 5.87747175E-39]]> : tensor<1x2xf32>
// CHECK-DAG: arith.constant dense<0.000000e+00> : tensor<1x2xf32>
func.func @fold_dequantize_edges() -> (tensor<1x2xbf16>, tensor<1x2xbf16>, tensor<1x2xf32>, tensor<1x2xf32>) {
  %v = arith.constant dense<[[32]]> : tensor<1x1xi8>
  %nan = arith.constant dense<-1> : tensor<1x1xi8>
  %zero = arith.constant dense<0> : tensor<1x1xi8>
  %q = microscale.from_bytes %v, %nan : tensor<1x1xi8>, tensor<1x1xi8> -> !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1>
  %a = microscale.dequantize %q : !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1> -> tensor<1x2xbf16>
  %b = microscale.dequantize %q {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1> -> tensor<1x2xbf16>
  %r = microscale.from_bytes %v, %zero : tensor<1x1xi8>, tensor<1x1xi8> -> !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1>
  %c = microscale.dequantize %r : !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1> -> tensor<1x2xf32>
  %d = microscale.dequantize %r {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !microscale.qtensor<1x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1> -> tensor<1x2xf32>
  return %a, %b, %c, %d : tensor<1x2xbf16>, tensor<1x2xbf16>, tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// to_bytes(from_bytes(v, s)) is (v, s) and from_bytes(to_bytes(q)) is q.
// CHECK-LABEL: func @bytes_round_trip
// CHECK-SAME: (%[[V:.*]]: tensor<64x16xi8>, %[[S:.*]]: tensor<64x1xi8>, %[[Q:.*]]: !microscale.qtensor
// CHECK-NOT: microscale.{{[a-z_]+}} %
// CHECK: return %[[V]], %[[S]], %[[Q]]
func.func @bytes_round_trip(%v: tensor<64x16xi8>, %s: tensor<64x1xi8>, %q: !microscale.qtensor<64x32, mxfp4, axis = 1>)
    -> (tensor<64x16xi8>, tensor<64x1xi8>, !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  %a = microscale.from_bytes %v, %s : tensor<64x16xi8>, tensor<64x1xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 1>
  %v2, %s2 = microscale.to_bytes %a : !microscale.qtensor<64x32, mxfp4, axis = 1> -> tensor<64x16xi8>, tensor<64x1xi8>
  %v3, %s3 = microscale.to_bytes %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> tensor<64x16xi8>, tensor<64x1xi8>
  %b = microscale.from_bytes %v3, %s3 : tensor<64x16xi8>, tensor<64x1xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 1>
  return %v2, %s2, %b : tensor<64x16xi8>, tensor<64x1xi8>, !microscale.qtensor<64x32, mxfp4, axis = 1>
}

// -----

// A -> A folds away; A -> B -> A cancels; A -> B -> C collapses to A -> C.
// CHECK-LABEL: func @convert_chains
// CHECK-SAME: (%[[Q:.*]]: !microscale.qtensor
// CHECK-NEXT: %[[C:.*]] = microscale.convert_layout %[[Q]] : !microscale.qtensor<64x64, mxfp4, axis = 0> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = -2>>
// CHECK-NEXT: return %[[Q]], %[[Q]], %[[C]]
func.func @convert_chains(%q: !microscale.qtensor<64x64, mxfp4, axis = 0>)
    -> (!microscale.qtensor<64x64, mxfp4, axis = 0>, !microscale.qtensor<64x64, mxfp4, axis = 0>,
        !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = -2>>) {
  %same = microscale.convert_layout %q : !microscale.qtensor<64x64, mxfp4, axis = 0> -> !microscale.qtensor<64x64, mxfp4, axis = 0>
  %b = microscale.convert_layout %q : !microscale.qtensor<64x64, mxfp4, axis = 0> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
  %back = microscale.convert_layout %b : !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>> -> !microscale.qtensor<64x64, mxfp4, axis = 0>
  %c = microscale.convert_layout %b : !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = -2>>
  return %same, %back, %c : !microscale.qtensor<64x64, mxfp4, axis = 0>, !microscale.qtensor<64x64, mxfp4, axis = 0>,
      !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = -2>>
}

// -----

// A conversion of constant bytes folds: 2x2 FP4 packed by rows [[1, 2],
// [3, 4]] (bytes 0x21, 0x43) repacked along dim 0 is bytes 0x31 = 49, 0x42 = 66.
// CHECK-LABEL: func @fold_convert_constant
// CHECK-DAG: %[[V:.*]] = arith.constant dense<{{\[}}[49], [66]]> : tensor<2x1xi8>
// CHECK: microscale.from_bytes %[[V]]
// CHECK-NOT: convert_layout
func.func @fold_convert_constant() -> !microscale.qtensor<2x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>> {
  %v = arith.constant dense<[[33], [67]]> : tensor<2x1xi8>
  %s = arith.constant dense<127> : tensor<2x1xi8>
  %q = microscale.from_bytes %v, %s : tensor<2x1xi8>, tensor<2x1xi8> -> !microscale.qtensor<2x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1>
  %r = microscale.convert_layout %q : !microscale.qtensor<2x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1> -> !microscale.qtensor<2x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
  return %r : !microscale.qtensor<2x2, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
}

// -----

// A conversion after a quantize becomes a quantize into the new layout.
// CHECK-LABEL: func @fuse_into_quantize
// CHECK-NEXT: %[[Q:.*]] = microscale.quantize %{{.*}} : tensor<64x64xbf16> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
// CHECK-NEXT: return %[[Q]]
func.func @fuse_into_quantize(%x: tensor<64x64xbf16>) -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>> {
  %q = microscale.quantize %x : tensor<64x64xbf16> -> !microscale.qtensor<64x64, mxfp4, axis = 0>
  %r = microscale.convert_layout %q : !microscale.qtensor<64x64, mxfp4, axis = 0> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
  return %r : !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
}

// -----

// Triton layouts cancel in inverse pairs and collapse in chains like any
// other: canonical -> Hopper -> canonical is the identity, and
// Blackwell -> shuffled -> Hopper is one conversion.
!canon = !microscale.qtensor<256x512, mxfp4, axis = 0>
!hopper = !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!bw = !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
!shuf = !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>, scales = #microscale.blackwell_scale>
// CHECK-LABEL: func @triton_layout_chains
// CHECK-SAME: (%[[Q:.*]]: !microscale.qtensor<256x512, mxfp4, axis = 0>, %[[B:.*]]: !microscale.qtensor
// CHECK-NEXT: %[[H:.*]] = microscale.convert_layout %[[B]] : {{.*}}#microscale.blackwell_value{{.*}} -> {{.*}}#microscale.hopper_value
// CHECK-NEXT: return %[[Q]], %[[H]]
func.func @triton_layout_chains(%q: !canon, %b: !bw) -> (!canon, !hopper) {
  %h = microscale.convert_layout %q : !canon -> !hopper
  %back = microscale.convert_layout %h : !hopper -> !canon
  %s = microscale.convert_layout %b : !bw -> !shuf
  %h2 = microscale.convert_layout %s : !shuf -> !hopper
  return %back, %h2 : !canon, !hopper
}
