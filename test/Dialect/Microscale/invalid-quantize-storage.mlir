// RUN: mx-opt %s -split-input-file -verify-diagnostics

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%x: memref<100xf32>, %v: memref<64xi8>, %s: memref<4xi8>) {
  // expected-error @+1 {{'microscale.quantize_storage' op input must hold the 128 logical elements, got 'memref<100xf32>'}}
  microscale.quantize_storage %x into %v, %s : !w, memref<100xf32>, memref<64xi8>, memref<4xi8>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%x: memref<128xf32>, %v: memref<128xi8>, %s: memref<4xi8>) {
  // expected-error @+1 {{values must hold the 64 storage bytes of its layout, got 'memref<128xi8>'}}
  microscale.quantize_storage %x into %v, %s : !w, memref<128xf32>, memref<128xi8>, memref<4xi8>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @f(%x: memref<128xf32>, %v: memref<64xi8>, %s: memref<8xi8>) {
  // expected-error @+1 {{scales must hold the 4 storage bytes of its layout, got 'memref<8xi8>'}}
  microscale.quantize_storage %x into %v, %s : !w, memref<128xf32>, memref<64xi8>, memref<8xi8>
  return
}

// -----

!w = !microscale.qtensor<2x64, nvfp4_b32, axis = 1>
func.func @f(%x: memref<128xf32>, %v: memref<64xi8>, %s: memref<4xi8>) {
  // expected-error @+1 {{format #microscale.format<nvfp4_b32> needs its f32 global scale}}
  microscale.quantize_storage %x into %v, %s : !w, memref<128xf32>, memref<64xi8>, memref<4xi8>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp8_e5m2, axis = 1>
func.func @f(%x: memref<128xf32>, %g: f32, %v: memref<128xi8>, %s: memref<4xi8>) {
  // expected-error @+1 {{format #microscale.format<mxfp8_e5m2> has no global scale}}
  microscale.quantize_storage %x, %g into %v, %s : !w, memref<128xf32>, memref<128xi8>, memref<4xi8>
  return
}
