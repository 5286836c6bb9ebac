// What the Hopper-layout mixed_matmul kernel does not take is reported at the
// op, naming what to do.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels -split-input-file -verify-diagnostics

!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 2>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @mma_version_2(%a: memref<2x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<2x16xbf16>) {
  // expected-error @+1 {{the Hopper-layout matmul reads #microscale.hopper_value<mx_axis = -2, mma_version = 3> (one word per mma.sync A fragment), got #microscale.hopper_value<mx_axis = -2, mma_version = 2>; convert_layout to it (or to #microscale.strided<major_dim = -2> for the K-major kernel)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<2x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
func.func @strided_scales(%a: memref<2x64xbf16>, %v: memref<16384xi8>, %s: memref<32xi8>, %g: f32, %o: memref<2x16xbf16>) {
  // expected-error @+1 {{the Hopper-layout matmul reads its scales in #microscale.hopper_scale<mx_axis = -2, num_warps = W>, got #microscale.strided; convert_layout first}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<2x64xbf16>, !w, memref<16384xi8>, memref<32xi8>, memref<2x16xbf16>
  return
}

// -----

// The ragged form with rows known at run time: the wgmma kernel's, not the
// decode kernel's (split_k asks for that one).
!w = !microscale.qtensor<2x64x16, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @experts_dynamic_decode(%a: memref<?x64xbf16>, %v: memref<32768xi8>, %s: memref<512xi8>, %g: f32, %o: memref<?x16xbf16>, %off: memref<2xi32>, %cnt: memref<2xi32>) {
  // expected-error @+1 {{the decode kernel's ragged (experts) form takes static row counts; without split_k, unroll and chunk_k the wgmma kernel takes rows known at run time (or convert_layout the expert weights to #microscale.strided<major_dim = -2> for the K-major kernel)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<2xi32>, memref<2xi32>) {microscale.tiling = {split_k = 1}} : memref<?x64xbf16>, !w, memref<32768xi8>, memref<512xi8>, memref<?x16xbf16>
  return
}

// -----

// A gather of rows known at run time must be contiguous (it is passed as a
// flat array).
!w = !microscale.qtensor<2x64x16, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @experts_strided_gather(%a: memref<?x64xbf16>, %v: memref<32768xi8>, %s: memref<512xi8>, %g: f32, %o: memref<?x16xbf16>, %off: memref<2xi32>, %cnt: memref<2xi32>, %ga: memref<?xi32, strided<[2]>>) {
  // expected-error @+1 {{NVIDIA lowering with rows known at run time needs contiguous gather and scatter indices (identity layout), got 'memref<?xi32, strided<[2]>>'}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<2xi32>, memref<2xi32>) gather(%ga : memref<?xi32, strided<[2]>>) : memref<?x64xbf16>, !w, memref<32768xi8>, memref<512xi8>, memref<?x16xbf16>
  return
}

// -----

// A gather without experts.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @gather_only(%a: memref<2x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<3x16xbf16>, %ga: memref<3xi32>) {
  // expected-error @+1 {{gather or scatter without experts with a Hopper-layout weight is not built yet}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o gather(%ga : memref<3xi32>) : memref<2x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<3x16xbf16>
  return
}

// -----

// Rows known at run time need row-major buffers.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @dynamic_rows_strided(%a: memref<?x64xbf16, strided<[128, 1]>>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<?x16xbf16>) {
  // expected-error @+1 {{NVIDIA lowering with rows known at run time needs row-major lhs and out buffers (identity layout)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x64xbf16, strided<[128, 1]>>, !w, memref<16384xi8>, memref<256xi8>, memref<?x16xbf16>
  return
}

// -----

// A static lhs beside out rows known at run time is passed as the same
// unbounded flat array: it needs the row-major layout too (an offset would
// be lost).
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @static_lhs_offset_beside_dynamic_out(%a: memref<4x64xbf16, strided<[64, 1], offset: 64>>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<?x16xbf16>) {
  // expected-error @+1 {{NVIDIA lowering with rows known at run time needs row-major lhs and out buffers (identity layout)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x64xbf16, strided<[64, 1], offset: 64>>, !w, memref<16384xi8>, memref<256xi8>, memref<?x16xbf16>
  return
}

// -----

// Above 64 rows (the wgmma kernel): a token tile wgmma has no shape for.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @prefill_tokens(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling warp_rows = 20 (tokens per wgmma tile) must be a multiple of 8 from 8 to 256}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {warp_rows = 20}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// A token tile whose stages do not fit in static shared memory (the
// activations by cp.async; TMA's dynamic shared memory holds three).
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @prefill_stages(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{the Hopper-layout wgmma matmul needs at least 2 stages of 32768 bytes (256 tokens) in its 49152 bytes of shared memory}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {warp_rows = 256, activation_copies = "cp.async"}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// TMA: more stages than the dynamic shared memory of two blocks per SM.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @prefill_tma_stages(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{the Hopper-layout wgmma matmul needs at least 2 stages of 32768 bytes (256 tokens) in its 113664 bytes of shared memory}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {warp_rows = 256, activation_stages = 4}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// A split of K is the decode kernel's, not the wgmma kernel's.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @prefill_split(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling split_k does not apply to the Hopper-layout wgmma matmul}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {split_k = 2}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// The ragged form on the wgmma kernel gathers its rows: no TMA copies.
!w = !microscale.qtensor<2x64x16, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @experts_tma(%a: memref<8x64xbf16>, %v: memref<32768xi8>, %s: memref<512xi8>, %g: f32, %o: memref<8x16xbf16>, %off: memref<2xi32>, %cnt: memref<2xi32>) {
  // expected-error @+1 {{tiling activation_copies = "tma" does not apply to the ragged (experts) form: its rows come through the gather (cp.async per row)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<2xi32>, memref<2xi32>) {microscale.tiling = {activation_copies = "tma"}} : memref<8x64xbf16>, !w, memref<32768xi8>, memref<512xi8>, memref<8x16xbf16>
  return
}

// -----

// The decode kernel's chunks ahead: at most 8.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @decode_depth(%a: memref<4x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<4x16xbf16>) {
  // expected-error @+1 {{tiling weight_stages = 9 must be 1 to 8 for the Hopper-layout decode matmul (chunks loaded ahead)}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {weight_stages = 9}} : memref<4x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<4x16xbf16>
  return
}

// -----

// 64 rows split over K (the decode kernel): 8 chunks of the activation
// ring per warp do not fit in static shared memory.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @decode_ring(%a: memref<64x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<64x16xbf16>) {
  // expected-error @+1 {{tiling weight_stages = 8 needs 77824 bytes of shared memory per warp (the activation ring and the split sums); at most 49152 fit}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {split_k = 1, weight_stages = 8}} : memref<64x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<64x16xbf16>
  return
}
