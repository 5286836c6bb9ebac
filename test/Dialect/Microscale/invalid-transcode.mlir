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
