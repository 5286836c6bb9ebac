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
