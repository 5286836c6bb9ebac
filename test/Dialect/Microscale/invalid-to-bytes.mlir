// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: !microscale.qtensor<64x64, mxfp4, axis = 1>) {
  // expected-error @+1 {{'microscale.to_bytes' op result values must have the storage shape [64, 32] of layout #microscale.strided for logical shape [64, 64], got 'tensor<64x64xi8>'}}
  %v, %s = microscale.to_bytes %q : !microscale.qtensor<64x64, mxfp4, axis = 1> -> tensor<64x64xi8>, tensor<64x2xi8>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x64, mxfp4, axis = 0>) {
  // expected-error @+1 {{result scales must have the storage shape [2, 64] of layout #microscale.strided for logical shape [2, 64], got 'tensor<64x2xi8>'}}
  %v, %s = microscale.to_bytes %q : !microscale.qtensor<64x64, mxfp4, axis = 0> -> tensor<64x32xi8>, tensor<64x2xi8>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, nvfp4_b32, axis = 1>) {
  // expected-error @+1 {{format #microscale.format<nvfp4_b32> has a global scale: the f32 global scale result is missing}}
  %v, %s = microscale.to_bytes %q : !microscale.qtensor<64x32, nvfp4_b32, axis = 1> -> tensor<64x16xi8>, tensor<64x1xi8>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, mxfp8_e4m3, axis = 1>) {
  // expected-error @+1 {{format #microscale.format<mxfp8_e4m3> has no global scale, but an f32 global scale result is present}}
  %v, %s, %g = microscale.to_bytes %q : !microscale.qtensor<64x32, mxfp8_e4m3, axis = 1> -> tensor<64x32xi8>, tensor<64x1xi8>, f32
  return
}
