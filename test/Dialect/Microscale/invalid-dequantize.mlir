// RUN: mx-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+1 {{'microscale.dequantize' op result shape [64, 64] does not match the logical shape [64, 32] of the input}}
  %x = microscale.dequantize %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> tensor<64x64xbf16>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, nvfp4, axis = 1>) {
  // expected-error @+1 {{e8m0_edges = zero_inf applies to E8M0 scales, but format #microscale.format<nvfp4> has 'f8E4M3FN' scales}}
  %x = microscale.dequantize %q {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !microscale.qtensor<64x32, nvfp4, axis = 1> -> tensor<64x32xbf16>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %x = microscale.dequantize %q : !microscale.qtensor<64x32, mxfp4, axis = 1> -> tensor<64x32xf8E4M3FN>
  return
}

// -----

func.func @f(%q: !microscale.qtensor<64x32, mxfp4, axis = 1>) {
  // expected-error @+2 {{expected ::mlir::microscale::E8M0Edges to be one of: ocp, zero_inf}}
  // expected-error @+1 {{failed to parse Microscale_E8M0EdgesAttr parameter 'value'}}
  %x = microscale.dequantize %q {e8m0_edges = #microscale.e8m0_edges<nan>} : !microscale.qtensor<64x32, mxfp4, axis = 1> -> tensor<64x32xf32>
  return
}
