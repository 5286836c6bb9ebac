// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'microscale.quantize' op input shape [64, 32] does not match the logical shape [32, 64] of the result}}
  %q = microscale.quantize %x : tensor<64x32xf32> -> !microscale.qtensor<32x64, mxfp4, axis = 1>
  return
}

// -----

func.func @f(%x: tensor<64x32xf32>, %g: f32) {
  // expected-error @+1 {{a global scale operand is given, but format #microscale.format<mxfp6_e3m2> has no global scale}}
  %q = microscale.quantize %x, %g : tensor<64x32xf32> -> !microscale.qtensor<64x32, mxfp6_e3m2, axis = 1>
  return
}

// -----

func.func @f(%x: tensor<64x32xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %q = microscale.quantize %x : tensor<64x32xi32> -> !microscale.qtensor<64x32, mxfp4, axis = 1>
  return
}
