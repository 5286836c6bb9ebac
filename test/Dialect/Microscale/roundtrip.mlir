// RUN: mx-opt %s | FileCheck %s
// RUN: mx-opt %s | mx-opt | FileCheck %s
// RUN: mx-opt %s --mlir-print-op-generic | mx-opt | FileCheck %s

// Every named format, the explicit format spelling, both layouts' spellings,
// negative block axes, and every op.

// CHECK-LABEL: func @formats
// CHECK-SAME: !microscale.qtensor<2x64x128, mxfp4, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, mxfp6_e2m3, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, mxfp6_e3m2, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, mxfp8_e4m3, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, mxfp8_e5m2, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, nvfp4, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, nvfp4_b32, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x128, f4E2M1FN, f8E8M0FNU, block = 64, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, nvfp4, axis = 1>
// CHECK-SAME: !microscale.qtensor<64x32, f8E4M3FN, f8E4M3FN, block = 16, axis = 1>
func.func @formats(
    %a: !microscale.qtensor<2x64x128, mxfp4, axis = -2>,
    %b: !microscale.qtensor<64x32, mxfp6_e2m3, axis = 1>,
    %c: !microscale.qtensor<64x32, mxfp6_e3m2, axis = 1>,
    %d: !microscale.qtensor<64x32, mxfp8_e4m3, axis = 1>,
    %e: !microscale.qtensor<64x32, mxfp8_e5m2, axis = 1>,
    %f: !microscale.qtensor<64x32, nvfp4, axis = 1>,
    %g: !microscale.qtensor<64x32, nvfp4_b32, axis = -1>,
    %h: !microscale.qtensor<64x128, f4E2M1FN, f8E8M0FNU, block = 64, axis = 1>,
    %i: !microscale.qtensor<64x32, f4E2M1FN, f8E4M3FN, block = 16, global_scale, axis = 1>,
    %j: !microscale.qtensor<64x32, f8E4M3FN, f8E4M3FN, block = 16, axis = 1>) {
  return
}

// CHECK-LABEL: func @attributes
// CHECK-SAME: test.edges = #microscale.e8m0_edges<zero_inf>
// CHECK-SAME: test.format = #microscale.format<mxfp4>
// CHECK-SAME: test.format_full = #microscale.format<f6E2M3FN, f8E8M0FNU, block = 16>
// CHECK-SAME: test.layout = #microscale.strided,
// CHECK-SAME: test.layout2 = #microscale.strided<major_dim = -2>
func.func @attributes() attributes {
    test.format = #microscale.format<mxfp4>,
    test.format_full = #microscale.format<f6E2M3FN, f8E8M0FNU, block = 16>,
    test.layout = #microscale.strided,
    test.layout2 = #microscale.strided<major_dim = -2>,
    test.edges = #microscale.e8m0_edges<zero_inf>} {
  return
}

// CHECK-LABEL: func @layouts
// CHECK-SAME: !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
// CHECK-SAME: !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = 0>>
// CHECK-SAME: !microscale.qtensor<256x512, mxfp4, axis = 0>
func.func @layouts(
    %a: !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>,
    %b: !microscale.qtensor<256x512, mxfp4, axis = 0, scales = #microscale.strided<major_dim = 0>, values = #microscale.strided<major_dim = -2>>,
    %c: !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.strided<major_dim = -1>, scales = #microscale.strided>) {
  return
}

// CHECK-LABEL: func @ops
func.func @ops(%v: tensor<2x64x64xi8>, %s: tensor<2x2x128xi8>,
               %x: tensor<2x64x128xbf16>, %nv: tensor<64x16xi8>,
               %ns: tensor<64x2xi8>, %g: f32)
    -> (tensor<2x64x128xf32>, tensor<2x64x128xbf16>) {
  // CHECK: %[[Q:.*]] = microscale.from_bytes %{{.*}}, %{{.*}} : tensor<2x64x64xi8>, tensor<2x2x128xi8> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1>
  %q = microscale.from_bytes %v, %s : tensor<2x64x64xi8>, tensor<2x2x128xi8> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1>
  // CHECK: microscale.to_bytes %[[Q]] : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> tensor<2x64x64xi8>, tensor<2x2x128xi8>
  %v2, %s2 = microscale.to_bytes %q : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> tensor<2x64x64xi8>, tensor<2x2x128xi8>
  // CHECK: microscale.from_bytes %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xi8>, tensor<64x2xi8> -> !microscale.qtensor<64x32, nvfp4, axis = 1>
  %n = microscale.from_bytes %nv, %ns, %g : tensor<64x16xi8>, tensor<64x2xi8> -> !microscale.qtensor<64x32, nvfp4, axis = 1>
  // CHECK: microscale.to_bytes %{{.*}} : !microscale.qtensor<64x32, nvfp4, axis = 1> -> tensor<64x16xi8>, tensor<64x2xi8>, f32
  %nv2, %ns2, %g2 = microscale.to_bytes %n : !microscale.qtensor<64x32, nvfp4, axis = 1> -> tensor<64x16xi8>, tensor<64x2xi8>, f32
  // CHECK: microscale.quantize %{{.*}} : tensor<2x64x128xbf16> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1>
  %q2 = microscale.quantize %x : tensor<2x64x128xbf16> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1>
  // CHECK: microscale.convert_layout %{{.*}} : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
  %c = microscale.convert_layout %q2 : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
  // CHECK: microscale.dequantize %{{.*}} : !microscale.qtensor<2x64x128, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>> -> tensor<2x64x128xf32>
  %d = microscale.dequantize %c : !microscale.qtensor<2x64x128, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>> -> tensor<2x64x128xf32>
  // CHECK: microscale.dequantize %{{.*}} {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> tensor<2x64x128xbf16>
  %e = microscale.dequantize %q {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> tensor<2x64x128xbf16>
  // CHECK: microscale.quantize %{{.*}}, %{{.*}} : tensor<64x32xf32> -> !microscale.qtensor<64x32, nvfp4, axis = 1>
  %f = microscale.dequantize %n : !microscale.qtensor<64x32, nvfp4, axis = 1> -> tensor<64x32xf32>
  %n2 = microscale.quantize %f, %g : tensor<64x32xf32> -> !microscale.qtensor<64x32, nvfp4, axis = 1>
  return %d, %e : tensor<2x64x128xf32>, tensor<2x64x128xbf16>
}

// Storage shapes of the other element widths: FP6 packs 4 codes in 3 bytes,
// FP8 one per byte, and a major_dim = -2 layout puts that dim last.
// CHECK-LABEL: func @storage_shapes
func.func @storage_shapes(%a: tensor<32x48xi8>, %b: tensor<32x2xi8>,
                          %c: tensor<64x32xi8>, %d: tensor<64x1xi8>,
                          %e: tensor<64x16xi8>, %f: tensor<2x32xi8>,
                          %g: tensor<32x32xi8>) {
  %0 = microscale.from_bytes %a, %b : tensor<32x48xi8>, tensor<32x2xi8> -> !microscale.qtensor<32x64, mxfp6_e3m2, axis = 1>
  %1 = microscale.from_bytes %c, %d : tensor<64x32xi8>, tensor<64x1xi8> -> !microscale.qtensor<64x32, mxfp8_e5m2, axis = 1>
  %2 = microscale.from_bytes %e, %f : tensor<64x16xi8>, tensor<2x32xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 0>
  // 64x32 FP4 packed along dim 0: storage [32 (dim 1), 32 bytes (dim 0)]
  %3 = microscale.from_bytes %g, %f : tensor<32x32xi8>, tensor<2x32xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
  return
}

// Every Triton layout, with the storage shapes of layouts.md's worked example
// ([E=2, K=256, N=512] weights blocked along K; scales [2, 8, 512]).
// CHECK-LABEL: func @triton_layouts
// CHECK: values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK: values = #microscale.hopper_value<mx_axis = -1, mma_version = 2>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 4>>
// CHECK: values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
// CHECK: values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>, scales = #microscale.cdna4_scale>
func.func @triton_layouts(%hv: tensor<2x128x512xi8>, %hs: tensor<2x16x256xi8>,
                          %hv1: tensor<2x64x1024xi8>, %hs1: tensor<2x8x512xi8>,
                          %bv: tensor<2x512x128xi8>, %bs: tensor<1x8x2x2x256xi8>,
                          %sv: tensor<2x2x2x256x64xi8>, %cs: tensor<2x16x256xi8>) {
  %0 = microscale.from_bytes %hv, %hs : tensor<2x128x512xi8>, tensor<2x16x256xi8> -> !microscale.qtensor<2x256x512, mxfp4, axis = -2, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
  // The same numbers read as [2, M=256, K=512] blocked along the last axis.
  %1 = microscale.from_bytes %hv1, %hs1 : tensor<2x64x1024xi8>, tensor<2x8x512xi8> -> !microscale.qtensor<2x256x512, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 2>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 4>>
  %2 = microscale.from_bytes %bv, %bs : tensor<2x512x128xi8>, tensor<1x8x2x2x256xi8> -> !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
  %3 = microscale.from_bytes %sv, %cs : tensor<2x2x2x256x64xi8>, tensor<2x16x256xi8> -> !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>, scales = #microscale.cdna4_scale>
  return
}
