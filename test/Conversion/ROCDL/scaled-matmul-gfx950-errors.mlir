// What the gfx950 lowering cannot take is reported at the op.
// RUN: mx-opt %s --microscale-rocdl-outline-scaled-matmul -split-input-file -verify-diagnostics

// The weight's values are N-major: a lane's 32 K values are not contiguous.
!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0>
func.func @n_major(%av: memref<1536xi8>, %as: memref<64xi8>, %g: f32,
                   %wv: memref<1024xi8>, %ws: memref<64xi8>, %out: memref<1024xf32>) {
  // expected-error @+1 {{gfx950 lowering needs the rhs values stored K-major (#microscale.strided<major_dim = 0>), got #microscale.strided; convert_layout first}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      {variant = #microscale.transcode_variant<lut>}
      : !a, !w, memref<1536xi8>, memref<64xi8>, memref<1024xi8>, memref<64xi8>, memref<1024xf32>
  return
}

// -----

// M is not a multiple of the 32-row tile.
!a = !microscale.qtensor<48x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @ragged_m(%av: memref<2304xi8>, %as: memref<96xi8>, %g: f32,
                    %wv: memref<1024xi8>, %ws: memref<64xi8>, %out: memref<1536xf32>) {
  // expected-error @+1 {{gfx950 lowering needs M and N positive multiples of 32 and K a positive multiple of 64, got M = 48, N = 32, K = 64}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      {variant = #microscale.transcode_variant<hwcvt>}
      : !a, !w, memref<2304xi8>, memref<96xi8>, memref<1024xi8>, memref<64xi8>, memref<1536xf32>
  return
}

// -----

// An NVFP4 B32 operand needs a transcode variant to reach the FP6 matrix core.
!a = !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @no_variant(%av: memref<1536xi8>, %as: memref<64xi8>, %g: f32,
                      %wv: memref<1024xi8>, %ws: memref<64xi8>, %out: memref<1024xf32>) {
  // expected-error @+1 {{is lowered for mxfp6_e2m3 operands and for nvfp4_b32 operands with a transcode variant; the rhs is #microscale.format<nvfp4_b32> without a variant}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      : !a, !w, memref<1536xi8>, memref<64xi8>, memref<1024xi8>, memref<64xi8>, memref<1024xf32>
  return
}

// -----

// MXFP4 operands are not lowered (the FP4 scaled MFMA would take them, but
// this kernel is built for the FP6 transcode path).
!a = !microscale.qtensor<32x64, mxfp4, axis = 1>
!w = !microscale.qtensor<64x32, mxfp6_e2m3, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @mxfp4(%av: memref<1024xi8>, %as: memref<64xi8>, %g: f32,
                 %wv: memref<1536xi8>, %ws: memref<64xi8>, %out: memref<1024xf32>) {
  // expected-error @+1 {{the lhs is #microscale.format<mxfp4>}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %out
      : !a, !w, memref<1024xi8>, memref<64xi8>, memref<1536xi8>, memref<64xi8>, memref<1024xf32>
  return
}
