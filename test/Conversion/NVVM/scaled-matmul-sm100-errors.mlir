// What the sm_100a tcgen05 scaled_matmul kernel cannot take is reported at
// the op, saying what to do instead.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels=chip=sm_100a -split-input-file -verify-diagnostics

// MXFP4 activations x an MXFP8 weight: kind::mxf8f6f4 is written for MXFP8
// activations x an MXFP4 weight only.
func.func @mxfp8_weight(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{the sm_100a tcgen05 kernel multiplies mxfp4 by mxfp4 (kind::mxf4), nvfp4 by nvfp4 (kind::mxf4nvf4) or mxfp8 activations by an mxfp4 weight (kind::mxf8f6f4) without a transcode variant; got #microscale.format<mxfp4> x #microscale.format<mxfp8_e4m3>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp4, axis = 1>, !microscale.qtensor<64x16, mxfp8_e4m3, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// MXFP8 x MXFP8: not one of the kernel's pairs either.
func.func @mxfp8_mxfp8(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{got #microscale.format<mxfp8_e5m2> x #microscale.format<mxfp8_e5m2>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp8_e5m2, axis = 1>, !microscale.qtensor<64x16, mxfp8_e5m2, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// MXFP6: no kind of the kernel multiplies it.
func.func @mxfp6(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{the sm_100a tcgen05 kernel multiplies mxfp4 by mxfp4 (kind::mxf4), nvfp4 by nvfp4 (kind::mxf4nvf4) or mxfp8 activations by an mxfp4 weight (kind::mxf8f6f4) without a transcode variant; got #microscale.format<mxfp6_e2m3> x #microscale.format<mxfp4>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp6_e2m3, axis = 1>, !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// Shuffled boxes whose rows (block_k / 2 bytes) are not whole 32-bit words.
func.func @shuffled(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{the sm_100a tcgen05 kernel copies the weight in 32-bit words; its #microscale.blackwell_shuffled_value boxes have block_k = 12 (a multiple of 8 is needed): convert_layout the weight to #microscale.blackwell_value first}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x128, mxfp4, axis = 1>, !microscale.qtensor<128x256, mxfp4, axis = 0, values = #microscale.blackwell_shuffled_value<block_k = 12, block_n = 256>, scales = #microscale.blackwell_scale>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// A weight stored N-major (the default strided layout of [K, N]).
func.func @n_major(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{the sm_100a tcgen05 kernel needs both operands K-major}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp4, axis = 1>, !microscale.qtensor<64x16, mxfp4, axis = 0>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// NVFP4 B32 (E4M3 per 32): kind::mxf4nvf4 takes E4M3 scales per 16 only.
func.func @nvfp4_b32(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{got #microscale.format<nvfp4_b32> x #microscale.format<nvfp4_b32>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, nvfp4_b32, axis = 1>, !microscale.qtensor<64x16, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// The tcgen05 kernel's TMA switch is a boolean.
!a = !microscale.qtensor<1x128, mxfp4, axis = 1>
!wb = !microscale.qtensor<128x128, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
func.func @maps(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  // expected-error @+1 {{tiling tensor_maps must be true or false}}
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out {microscale.tiling = {tensor_maps = 1}}
      : !a, !wb, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}
