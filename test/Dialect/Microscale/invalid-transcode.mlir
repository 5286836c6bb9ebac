// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+1 {{'microscale.transcode' op unsupported transcode from #microscale.format<mxfp4> to #microscale.format<mxfp6_e2m3>: supported is nvfp4_b32 to mxfp6_e2m3}}
  %r, %g = microscale.transcode %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> !microscale.qtensor<64x32, mxfp6_e2m3, axis = 1>
  return
}

// -----

// NVFP4 with 16-element blocks cannot become one E8M0 scale per 32.
func.func @f(%q: !microscale.qtensor<64x32, nvfp4, axis = 1>) {
  // expected-error @+1 {{unsupported transcode from #microscale.format<nvfp4> to #microscale.format<mxfp6_e2m3>}}
  %r, %g = microscale.transcode %q : !microscale.qtensor<64x32, nvfp4, axis = 1> -> !microscale.qtensor<64x32, mxfp6_e2m3, axis = 1>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, nvfp4_b32, axis = 1>) {
  // expected-error @+1 {{unsupported transcode from #microscale.format<nvfp4_b32> to #microscale.format<mxfp6_e3m2>}}
  %r, %g = microscale.transcode %q : !microscale.qtensor<64x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<64x32, mxfp6_e3m2, axis = 1>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, nvfp4_b32, axis = 1>) {
  // expected-error @+1 {{cannot change the logical shape: [64, 32] vs [32, 64]}}
  %r, %g = microscale.transcode %q : !microscale.qtensor<64x32, nvfp4_b32, axis = 1> -> !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x64, nvfp4_b32, axis = 1>) {
  // expected-error @+1 {{cannot change the block axis: 1 vs 0}}
  %r, %g = microscale.transcode %q : !microscale.qtensor<64x64, nvfp4_b32, axis = 1> -> !microscale.qtensor<64x64, mxfp6_e2m3, axis = 0>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x64, nvfp4_b32, axis = 1>) {
  // expected-error @+2 {{expected ::mlir::microscale::TranscodeVariant to be one of: lut, hwcvt}}
  // expected-error @+1 {{failed to parse Microscale_TranscodeVariantAttr parameter 'value'}}
  %r, %g = microscale.transcode %q {variant = #microscale.transcode_variant<nearest>} : !microscale.qtensor<64x64, nvfp4_b32, axis = 1> -> !microscale.qtensor<64x64, mxfp6_e2m3, axis = 1>
  return
}

// -----

!nv = !microscale.qtensor<2x64, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<2x64, mxfp6_e2m3, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<4xi8>, %ov: memref<64xi8>, %os: memref<4xi8>) {
  // expected-error @+1 {{'microscale.transcode_storage' op out_values must hold the 96 storage bytes of its layout, got 'memref<64xi8>'}}
  microscale.transcode_storage %v, %s into %ov, %os : !nv -> !mx, memref<64xi8>, memref<4xi8>, memref<64xi8>, memref<4xi8>
  return
}

// -----

!nv = !microscale.qtensor<2x64, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<2x64, mxfp8_e4m3, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<4xi8>, %ov: memref<128xi8>, %os: memref<4xi8>) {
  // expected-error @+1 {{'microscale.transcode_storage' op unsupported transcode from #microscale.format<nvfp4_b32> to #microscale.format<mxfp8_e4m3>}}
  microscale.transcode_storage %v, %s into %ov, %os : !nv -> !mx, memref<64xi8>, memref<4xi8>, memref<128xi8>, memref<4xi8>
  return
}
