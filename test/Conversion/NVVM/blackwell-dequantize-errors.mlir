// The Blackwell-layout dequantization needs native FP4 conversions, and
// takes mxfp4 in both Blackwell layouts to bf16 only: anything else is
// reported at the op, never passed to the backend.
// RUN: mx-opt %s --split-input-file --verify-diagnostics --microscale-nvvm-outline-blackwell-dequantize='chip=sm_90a'

!bw = !microscale.qtensor<256x128, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
func.func @no_native_conversions(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  // expected-error @+1 {{the Blackwell dequantization kernel needs native FP4 conversions (cvt.rn.f16x2.e2m1x2, cvt.rn.bf16x2.ue8m0x2: sm_100a, sm_120a); sm_90a has none}}
  microscale.dequantize_storage %v, %s into %o : !bw, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// -----

!bw = !microscale.qtensor<256x128, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
func.func @f32_results(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xf32>) {
  // expected-error @+1 {{on the GPU, dequantize_storage from the Blackwell layouts is lowered for mxfp4 in #microscale.blackwell_value with #microscale.blackwell_scale, bf16 results and OCP E8M0 edges}}
  microscale.dequantize_storage %v, %s into %o : !bw, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
