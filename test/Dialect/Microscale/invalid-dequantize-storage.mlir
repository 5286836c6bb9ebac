// RUN: mx-opt %s -split-input-file -verify-diagnostics

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%v: memref<32xi8>, %s: memref<4xi8>, %o: memref<128xbf16>) {
  // expected-error @+1 {{'microscale.dequantize_storage' op values must hold the 64 storage bytes of its layout, got 'memref<32xi8>'}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<32xi8>, memref<4xi8>, memref<128xbf16>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<2xi8>, %o: memref<128xbf16>) {
  // expected-error @+1 {{scales must hold the 4 storage bytes of its layout, got 'memref<2xi8>'}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<2xi8>, memref<128xbf16>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<4xi8>, %o: memref<64xbf16>) {
  // expected-error @+1 {{out must hold the 128 logical elements, got 'memref<64xbf16>'}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<4xi8>, memref<64xbf16>
  return
}

// -----

!w = !microscale.qtensor<2x64, nvfp4, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<8xi8>, %o: memref<128xf32>) {
  // expected-error @+1 {{format #microscale.format<nvfp4> needs its f32 global scale}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<8xi8>, memref<128xf32>
  return
}

// -----

!w = !microscale.qtensor<2x64, nvfp4, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<8xi8>, %g: f32, %o: memref<128xf32>) {
  // expected-error @+1 {{e8m0_edges = zero_inf applies to E8M0 scales}}
  microscale.dequantize_storage %v, %s, %g into %o {e8m0_edges = #microscale.e8m0_edges<zero_inf>} : !w, memref<64xi8>, memref<8xi8>, memref<128xf32>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%v: memref<64xi8>, %s: memref<4xi8>, %o: memref<128xi8>) {
  // expected-error @+1 {{operand #2 must be 1D memref of 32-bit float or 16-bit float or bfloat16 type values}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<4xi8>, memref<128xi8>
  return
}
