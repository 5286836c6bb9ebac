// What the sm_120a scaled_matmul lowering cannot take is reported at the op.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels=chip=sm_120a -split-input-file -verify-diagnostics

// MXFP6 activations: kind::mxf4 multiplies E2M1 by E2M1.
func.func @mxfp6(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{the sm_120a block-scaled mma.sync kernel multiplies mxfp4 by mxfp4 (kind::mxf4) or nvfp4 by nvfp4 (kind::mxf4nvf4) without a transcode variant; got #microscale.format<mxfp6_e2m3> x #microscale.format<mxfp4>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp6_e2m3, axis = 1>, !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// A weight stored N-major (the default strided layout of [K, N]).
func.func @n_major(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{needs both operands K-major}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp4, axis = 1>, !microscale.qtensor<64x16, mxfp4, axis = 0>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// NVFP4 B32 (E4M3 scales per 32): kind::mxf4nvf4 takes E4M3 scales only
// with scale_vec::4X (per 16).
func.func @nvfp4_b32(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{got #microscale.format<nvfp4_b32> x #microscale.format<nvfp4_b32>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, nvfp4_b32, axis = 1>, !microscale.qtensor<64x16, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
