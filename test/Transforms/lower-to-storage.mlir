// RUN: mx-opt %s --split-input-file --microscale-lower-to-storage --verify-diagnostics | FileCheck %s

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>

// A conversion allocates exactly its output: one buffer of the destination
// layout's storage bytes (16384 for the Hopper values); the scales, whose
// layout does not change, are passed through untouched.
// CHECK-LABEL: func @convert
// CHECK-SAME: (%[[V:.*]]: tensor<64x64xi8>, %[[S:.*]]: tensor<2x128xi8>)
// CHECK: %[[SRC:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[SRC]]
// CHECK: %[[DST:.*]] = memref.alloc() : memref<16384xi8>
// CHECK-NOT: memref.alloc
// CHECK: microscale.convert_storage values %[[FLAT]], %[[DST]]
// CHECK: %[[OUT:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<64x256xi8>
// CHECK: return %[[OUT]], %[[S]]
func.func @convert(%v: tensor<64x64xi8>, %s: tensor<2x128xi8>) -> (tensor<64x256xi8>, tensor<2x128xi8>) {
  %q = microscale.from_bytes %v, %s : tensor<64x64xi8>, tensor<2x128xi8> -> !canon
  %h = microscale.convert_layout %q : !canon -> !hopper
  %hv, %hs = microscale.to_bytes %h : !hopper -> tensor<64x256xi8>, tensor<2x128xi8>
  return %hv, %hs : tensor<64x256xi8>, tensor<2x128xi8>
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
func.func @from_argument(%q: !canon) -> tensor<64x128xbf16> {
  // expected-error @+1 {{'microscale.dequantize' op cannot be lowered to byte buffers: its quantized operand does not come from from_bytes}}
  %x = microscale.dequantize %q : !canon -> tensor<64x128xbf16>
  return %x : tensor<64x128xbf16>
}

// -----

!nv = !microscale.qtensor<64x128, nvfp4, axis = 1>
func.func @quantize_default_global(%x: tensor<64x128xf32>) -> !nv {
  // expected-error @+1 {{'microscale.quantize' op cannot be lowered to byte buffers: an NVFP4 quantize needs an explicit global scale operand (the amax-based default is not lowered yet)}}
  %q = microscale.quantize %x : tensor<64x128xf32> -> !nv
  return %q : !nv
}

// -----

// quantize writes exactly its two outputs (and a one-byte-per-block
// temporary once lowered further).
!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
// CHECK-LABEL: func @quantize
// CHECK: %[[X:.*]] = memref.collapse_shape
// CHECK: %[[V:.*]] = memref.alloc() : memref<4096xi8>
// CHECK: %[[S:.*]] = memref.alloc() : memref<256xi8>
// CHECK: microscale.quantize_storage %[[X]] into %[[V]], %[[S]]
// CHECK-NOT: memref.alloc
func.func @quantize(%x: tensor<64x128xf32>) -> (tensor<64x64xi8>, tensor<2x128xi8>) {
  %q = microscale.quantize %x : tensor<64x128xf32> -> !canon
  %v, %s = microscale.to_bytes %q : !canon -> tensor<64x64xi8>, tensor<2x128xi8>
  return %v, %s : tensor<64x64xi8>, tensor<2x128xi8>
}

// -----

// A transcode of bytes becomes a transcode_storage into fresh buffers; the
// global scale passes through.
// CHECK-LABEL: func @transcode
// CHECK-SAME: (%[[V:.*]]: tensor<1x16xi8>, %[[S:.*]]: tensor<1x1xi8>, %[[G:.*]]: f32)
// CHECK: %[[OV:.*]] = memref.alloc() : memref<24xi8>
// CHECK: %[[OS:.*]] = memref.alloc() : memref<1xi8>
// CHECK: microscale.transcode_storage %{{.*}}, %{{.*}} into %[[OV]], %[[OS]] {variant = #microscale.transcode_variant<hwcvt>} : !microscale.qtensor<1x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
// CHECK: return %{{.*}}, %[[G]]
func.func @transcode(%v: tensor<1x16xi8>, %s: tensor<1x1xi8>, %g: f32) -> (!microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>, f32) {
  %q = microscale.from_bytes %v, %s, %g : tensor<1x16xi8>, tensor<1x1xi8> -> !microscale.qtensor<1x32, nvfp4_b32, axis = 1>
  %m, %mg = microscale.transcode %q {variant = #microscale.transcode_variant<hwcvt>} : !microscale.qtensor<1x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
  return %m, %mg : !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>, f32
}

// -----

// An operand that is not bytes (a function argument) cannot be lowered: an
// error, not a silently kept op.
func.func @opaque(%q: !microscale.qtensor<1x32, nvfp4_b32, axis = 1>) -> !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1> {
  // expected-error @+1 {{'microscale.transcode' op cannot be lowered to byte buffers: its quantized operand does not come from from_bytes}}
  %m, %g = microscale.transcode %q : !microscale.qtensor<1x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
  return %m : !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
}

// -----

// scaled_matmul: one scaled_matmul_storage into a fresh allocation of the
// result; the MXFP6 operand has no global scale and multiplies by 1.0.
!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
// CHECK-LABEL: func.func @scaled_matmul
// CHECK-SAME: %[[WG:[a-z0-9]+]]: f32)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() : memref<1024xbf16>
// CHECK: microscale.scaled_matmul_storage(%{{.*}}, %{{.*}}, %[[ONE]]) times(%{{.*}}, %{{.*}}, %[[WG]]) into %[[OUT]] {exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>, variant = #microscale.transcode_variant<lut>}
// CHECK-NOT: microscale.scaled_matmul %
func.func @scaled_matmul(%av: tensor<32x48xi8>, %as: tensor<32x2xi8>, %wv: tensor<64x16xi8>, %ws: tensor<2x32xi8>, %wg: f32) -> tensor<32x32xbf16> {
  %a = microscale.from_bytes %av, %as : tensor<32x48xi8>, tensor<32x2xi8> -> !a
  %w = microscale.from_bytes %wv, %ws, %wg : tensor<64x16xi8>, tensor<2x32xi8> -> !w
  %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>, exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>} : !a, !w -> tensor<32x32xbf16>
  return %c : tensor<32x32xbf16>
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @opaque_matmul(%a: !a, %wv: tensor<64x16xi8>, %ws: tensor<2x32xi8>, %wg: f32) -> tensor<32x32xf32> {
  %w = microscale.from_bytes %wv, %ws, %wg : tensor<64x16xi8>, tensor<2x32xi8> -> !w
  // expected-error @+1 {{'microscale.scaled_matmul' op cannot be lowered to byte buffers: its quantized operands do not both come from from_bytes}}
  %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>} : !a, !w -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}
