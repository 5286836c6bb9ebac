// RUN: mx-opt %s -split-input-file -verify-diagnostics

!a = !microscale.qtensor<64x64, mxfp4, axis = 0>
!b = !microscale.qtensor<64x64, mxfp4, axis = 1>
func.func @f(%src: memref<2048xi8>, %dst: memref<2048xi8>) {
  // expected-error @+1 {{'microscale.convert_storage' op 'from' and 'to' must be the same logical tensor (shape, format, block axis), got '!microscale.qtensor<64x64, mxfp4, axis = 0>' and '!microscale.qtensor<64x64, mxfp4, axis = 1>'}}
  microscale.convert_storage values %src, %dst : !a -> !b, memref<2048xi8>, memref<2048xi8>
  return
}

// -----

!a = !microscale.qtensor<64x64, mxfp4, axis = 0>
!h = !microscale.qtensor<64x64, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
func.func @f(%src: memref<2048xi8>, %dst: memref<2048xi8>) {
  // expected-error @+1 {{dest must hold the 16384 storage bytes of its layout, got 'memref<2048xi8>'}}
  microscale.convert_storage values %src, %dst : !a -> !h, memref<2048xi8>, memref<2048xi8>
  return
}

// -----

!a = !microscale.qtensor<64x64, mxfp4, axis = 0>
func.func @f(%src: memref<2048xi8>, %dst: memref<128xi8>) {
  // expected-error @+1 {{source must hold the 128 storage bytes of its layout, got 'memref<2048xi8>'}}
  microscale.convert_storage scales %src, %dst : !a -> !a, memref<2048xi8>, memref<128xi8>
  return
}

// -----

!a = !microscale.qtensor<64x64, mxfp4, axis = 0>
func.func @f(%src: memref<?xi8>, %dst: memref<?xi8>, %b: index) {
  // expected-error @+1 {{expects a unit range of two bounds, got 1}}
  microscale.convert_storage values %src, %dst units [%b] : !a -> !a, memref<?xi8>, memref<?xi8>
  return
}

// -----

!a = !microscale.qtensor<64x64, mxfp4, axis = 0>
func.func @f(%src: memref<2048xi16>, %dst: memref<2048xi8>) {
  // expected-error @+1 {{operand #0 must be 1D memref of 8-bit signless integer values}}
  microscale.convert_storage values %src, %dst : !a -> !a, memref<2048xi16>, memref<2048xi8>
  return
}
