// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+1 {{'microscale.convert_layout' op cannot change the logical shape: [64, 32] vs [32, 64]}}
  %r = microscale.convert_layout %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> !microscale.qtensor<32x64, mxfp4, axis = 1>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+1 {{cannot change the format: #microscale.format<mxfp4> vs #microscale.format<nvfp4_b32> (use a transcode, not a layout conversion)}}
  %r = microscale.convert_layout %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> !microscale.qtensor<64x32, nvfp4_b32, axis = 1>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x64, mxfp4, axis = 1>) {
  // expected-error @+1 {{cannot change the block axis: 1 vs 0}}
  %r = microscale.convert_layout %q : !microscale.qtensor<64x64, mxfp4, axis = 1> -> !microscale.qtensor<64x64, mxfp4, axis = 0>
  return
}

// -----

func.func @f(%q: tensor<64x64xi8>) {
  // expected-error @+1 {{'microscale.convert_layout' op operand #0 must be quantized tensor, but got 'tensor<64x64xi8>'}}
  %r = microscale.convert_layout %q : tensor<64x64xi8> -> !microscale.qtensor<64x64, mxfp4, axis = 1>
  return
}
