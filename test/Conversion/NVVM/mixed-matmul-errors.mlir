// What the NVIDIA mixed_matmul lowering cannot take is reported at the op.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels -split-input-file -verify-diagnostics

!w = !microscale.qtensor<64x16, mxfp4, axis = 0>
func.func @n_major(%a: memref<2x64xbf16>, %v: memref<512xi8>, %s: memref<32xi8>, %g: f32, %o: memref<2x16xbf16>) {
  // expected-error @+1 {{NVIDIA lowering needs the weight values stored K-major (#microscale.strided<major_dim = -2>), got #microscale.strided; convert_layout first}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xbf16>, !w, memref<512xi8>, memref<32xi8>, memref<2x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @f32_activations(%a: memref<2x64xf32>, %v: memref<512xi8>, %s: memref<32xi8>, %g: f32, %o: memref<2x16xbf16>) {
  // expected-error @+1 {{NVIDIA lowering takes bf16 activations, got 'memref<2x64xf32>'}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xf32>, !w, memref<512xi8>, memref<32xi8>, memref<2x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, nvfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @nvfp4(%a: memref<2x64xbf16>, %v: memref<512xi8>, %s: memref<64xi8>, %g: f32, %o: memref<2x16xbf16>) {
  // expected-error @+1 {{NVIDIA lowering takes an mxfp4 weight, got #microscale.format<nvfp4>}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xbf16>, !w, memref<512xi8>, memref<64xi8>, memref<2x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x12, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @ragged_n(%a: memref<2x64xbf16>, %v: memref<384xi8>, %s: memref<24xi8>, %g: f32, %o: memref<2x12xbf16>) {
  // expected-error @+1 {{NVIDIA lowering needs K a positive multiple of 32 and N of 8, got K = 64, N = 12}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xbf16>, !w, memref<384xi8>, memref<24xi8>, memref<2x12xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @scaled_matmul(%av: memref<1536xi8>, %as: memref<64xi8>, %g: f32, %wv: memref<512xi8>, %ws: memref<32xi8>, %o: memref<512xf32>) {
  // expected-error @+1 {{has no NVIDIA lowering}}
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>, !w, memref<1536xi8>, memref<64xi8>, memref<512xi8>, memref<32xi8>, memref<512xf32>
  return
}

// -----

// An expert weight stored N-major.
// (Tilings asked for with pass options: mixed-matmul-tiling-errors.mlir.)
!w = !microscale.qtensor<2x64x16, mxfp4, axis = 1>
func.func @experts_n_major(%a: memref<2x64xbf16>, %v: memref<1024xi8>, %s: memref<64xi8>, %g: f32, %o: memref<2x16xbf16>, %off: memref<2xi32>, %cnt: memref<2xi32>) {
  // expected-error @+1 {{NVIDIA lowering needs the weight values stored K-major (#microscale.strided<major_dim = -2>), got #microscale.strided; convert_layout first}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<2xi32>, memref<2xi32>) : memref<2x64xbf16>, !w, memref<1024xi8>, memref<64xi8>, memref<2x16xbf16>
  return
}

// -----

// Uneven K ranges are taken without a ring only: a ring's loop runs the
// same steps on every warp set.
!w = !microscale.qtensor<2880x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @uneven_ring(%a: memref<2x2880xbf16>, %v: memref<92160xi8>, %s: memref<5760xi8>, %g: f32, %o: memref<2x64xbf16>) {
  // expected-error @+1 {{tiling split_k = 7 does not divide the 23 K chunks of 128, which a weight ring needs}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {split_k = 7, weight_stages = 3}} : memref<2x2880xbf16>, !w, memref<92160xi8>, memref<5760xi8>, memref<2x64xbf16>
  return
}

// -----

!w = !microscale.qtensor<2880x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>
func.func @split_past_chunks(%a: memref<2x2880xbf16>, %v: memref<92160xi8>, %s: memref<5760xi8>, %g: f32, %o: memref<2x64xbf16>) {
  // expected-error @+1 {{tiling split_k = 24 must be at most 32 and at most the 23 K chunks of 128}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {split_k = 24}} : memref<2x2880xbf16>, !w, memref<92160xi8>, memref<5760xi8>, memref<2x64xbf16>
  return
}
