// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%v: tensor<64x64xi8>, %s: tensor<2x64xi8>) {
  // expected-error @+1 {{'microscale.from_bytes' op operand values must have the storage shape [64, 32] of layout #microscale.strided<major_dim = -2> for logical shape [64, 64], got 'tensor<64x64xi8>'}}
  %q = microscale.from_bytes %v, %s : tensor<64x64xi8>, tensor<2x64xi8> -> !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
  return
}

// -----

func.func @f(%v: tensor<64x32xi8>, %s: tensor<2x64xi8>) {
  // expected-error @+1 {{operand scales must have the storage shape [64, 2] of layout #microscale.strided for logical shape [64, 2], got 'tensor<2x64xi8>'}}
  %q = microscale.from_bytes %v, %s : tensor<64x32xi8>, tensor<2x64xi8> -> !microscale.qtensor<64x64, mxfp4, axis = 1>
  return
}

// -----

func.func @f(%v: tensor<64x16xi8>, %s: tensor<64x2xi8>) {
  // expected-error @+1 {{format #microscale.format<nvfp4> has a global scale: the f32 global scale operand is missing}}
  %q = microscale.from_bytes %v, %s : tensor<64x16xi8>, tensor<64x2xi8> -> !microscale.qtensor<64x32, nvfp4, axis = 1>
  return
}

// -----

func.func @f(%v: tensor<64x16xi8>, %s: tensor<64x1xi8>, %g: f32) {
  // expected-error @+1 {{format #microscale.format<mxfp4> has no global scale, but an f32 global scale operand is present}}
  %q = microscale.from_bytes %v, %s, %g : tensor<64x16xi8>, tensor<64x1xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 1>
  return
}

// -----

func.func @f(%v: tensor<64x16xi16>, %s: tensor<64x1xi8>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 8-bit signless integer values}}
  %q = microscale.from_bytes %v, %s : tensor<64x16xi16>, tensor<64x1xi8> -> !microscale.qtensor<64x32, mxfp4, axis = 1>
  return
}
