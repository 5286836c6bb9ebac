// RUN: mx-opt %s -split-input-file -verify-diagnostics

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 0>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{'microscale.scaled_matmul' op expects lhs blocked along K (axis 1), got axis 0}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x32xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 1>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{expects rhs blocked along K (axis 0), got axis 1}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x32xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<96x32, nvfp4_b32, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{contraction extents differ: lhs K = 64, rhs K = 96}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x32xf32>
  return
}

// -----

!a = !microscale.qtensor<2x32x64, mxfp6_e2m3, axis = 2>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{expects rank-2 operands, got ranks 3 and 2}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x32xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{result shape must be [M, N] = [32, 32], got [32, 64]}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x64xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, mxfp6_e2m3, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{has a transcode variant but no nvfp4_b32 operand to transcode}}
  %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>} : !a, !w -> tensor<32x32xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%a: !a, %w: !w) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %c = microscale.scaled_matmul %a, %w : !a, !w -> tensor<32x32xi32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%av: memref<1536xi8>, %as: memref<64xi8>, %g: f32, %wv: memref<1024xi8>, %ws: memref<64xi8>, %out: memref<1000xf32>) {
  // expected-error @+1 {{'microscale.scaled_matmul_storage' op out must hold the 1024 result elements}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      {variant = #microscale.transcode_variant<lut>}
      : !a, !w, memref<1536xi8>, memref<64xi8>, memref<1024xi8>, memref<64xi8>, memref<1000xf32>
  return
}

// -----

!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%av: memref<1536xi8>, %as: memref<64xi8>, %g: f32, %wv: memref<1000xi8>, %ws: memref<64xi8>, %out: memref<1024xf32>) {
  // expected-error @+1 {{rhs values must hold the 1024 storage bytes of its layout, got 'memref<1000xi8>'}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      {variant = #microscale.transcode_variant<lut>}
      : !a, !w, memref<1536xi8>, memref<64xi8>, memref<1000xi8>, memref<64xi8>, memref<1024xf32>
  return
}

// -----

!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @f(%a: tensor<32x64xbf16>, %w: !w) {
  // expected-error @+1 {{a transcode variant needs a quantized lhs (w4a6_tc, w4a4_tc); this lhs is 'tensor<32x64xbf16>'}}
  %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>} : tensor<32x64xbf16>, !w -> tensor<32x32xf32>
  return
}

// -----

!w = !microscale.qtensor<64x32, mxfp4, axis = 0>
func.func @f(%a: tensor<32x96xbf16>, %w: !w) {
  // expected-error @+1 {{contraction extents differ: lhs K = 96, rhs K = 64}}
  %c = microscale.scaled_matmul %a, %w : tensor<32x96xbf16>, !w -> tensor<32x32xf32>
  return
}

// -----

!w = !microscale.qtensor<64x32, mxfp4, axis = 0>
func.func @f(%a: memref<4x64xbf16>, %v: memref<1024xi8>, %s: memref<64xi8>, %g: f32, %o: memref<4x16xbf16>) {
  // expected-error @+1 {{'microscale.mixed_matmul_storage' op out must be [rows, N] with N = 32, got 'memref<4x16xbf16>'}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x64xbf16>, !w, memref<1024xi8>, memref<64xi8>, memref<4x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x32, mxfp4, axis = 0>
func.func @f(%a: memref<4x?xbf16>, %v: memref<1024xi8>, %s: memref<64xi8>, %g: f32, %o: memref<4x32xbf16>) {
  // expected-error @+1 {{expects static K and N extents (only the rows may be dynamic), got 'memref<4x?xbf16>' and 'memref<4x32xbf16>'}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x?xbf16>, !w, memref<1024xi8>, memref<64xi8>, memref<4x32xbf16>
  return
}
