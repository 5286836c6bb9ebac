// The ragged (mixture-of-experts) forms of scaled_matmul and
// mixed_matmul_storage: every mismatch is reported.
// RUN: mx-opt %s -split-input-file -verify-diagnostics

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @no_slices(%x: tensor<8x64xbf16>, %w: !e) {
  // expected-error @+1 {{an [E, K, N] weight needs experts(offsets, counts)}}
  %y = microscale.scaled_matmul %x, %w : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, mxfp4, axis = 0>
func.func @slices_of_one_weight(%x: tensor<8x64xbf16>, %w: !w, %o: tensor<4xi32>, %c: tensor<4xi32>) {
  // expected-error @+1 {{experts(offsets, counts) need an [E, K, N] weight, got rank 2}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) : tensor<8x64xbf16>, !w -> tensor<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @counts_per_expert(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{expert counts must have one entry per expert (4), got 3}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<3xi32>) : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @gather_scatter_rows(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>, %g: tensor<12xi32>, %s: tensor<10xi32>) {
  // expected-error @+1 {{gather and scatter must index the same ragged rows, got 12 and 10}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) gather(%g : tensor<12xi32>) scatter(%s : tensor<10xi32>) : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @rows_without_gather(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>, %s: tensor<12xi32>) {
  // expected-error @+1 {{without a gather, lhs must have one row per ragged row (12), got 8}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) scatter(%s : tensor<12xi32>) : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @rows_without_scatter(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>, %g: tensor<12xi32>) {
  // expected-error @+1 {{without a scatter, the result must have one row per ragged row (12), got 8}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) gather(%g : tensor<12xi32>) : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @columns(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>) {
  // expected-error @+1 {{result must be [rows, N] with N = 16, got 'tensor<8x32xbf16>'}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) : tensor<8x64xbf16>, !e -> tensor<8x32xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x32, mxfp4, axis = 2>
func.func @blocked_along_n(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>) {
  // expected-error @+1 {{expects rhs blocked along K (axis 1), got axis 2}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) : tensor<8x64xbf16>, !e -> tensor<8x32xbf16>
  return
}

// -----

!a = !microscale.qtensor<8x64, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<64x16, mxfp4, axis = 0>
func.func @quantized_lhs(%x: !a, %w: !w, %g: tensor<8xi32>) {
  // expected-error @+1 {{experts, gather and scatter need float activations (lhs), got '!microscale.qtensor<8x64, mxfp6_e2m3, axis = 1>'}}
  %y = microscale.scaled_matmul %x, %w gather(%g : tensor<8xi32>) : !a, !w -> tensor<8x16xf32>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @storage_dynamic(%x: memref<8x64xbf16>, %v: memref<2048xi8>, %s: memref<128xi8>, %g: f32, %out: memref<8x16xbf16>, %o: memref<?xi32>, %c: memref<4xi32>) {
  // expected-error @+1 {{expects static shapes of the expert operands (one entry per expert), got 'memref<?xi32>'}}
  microscale.mixed_matmul_storage %x times (%v, %s, %g) into %out experts(%o, %c : memref<?xi32>, memref<4xi32>) : memref<8x64xbf16>, !e, memref<2048xi8>, memref<128xi8>, memref<8x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @storage_offsets(%x: memref<8x64xbf16>, %v: memref<2048xi8>, %s: memref<128xi8>, %g: f32, %out: memref<8x16xbf16>, %o: memref<5xi32>, %c: memref<4xi32>) {
  // expected-error @+1 {{expert offsets must have one entry per expert (4), got 5}}
  microscale.mixed_matmul_storage %x times (%v, %s, %g) into %out experts(%o, %c : memref<5xi32>, memref<4xi32>) : memref<8x64xbf16>, !e, memref<2048xi8>, memref<128xi8>, memref<8x16xbf16>
  return
}

// -----

// Dynamic rows (the buffer form only): what relates static row counts is
// still checked; N stays static.
!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @storage_dynamic_rows_differ(%x: memref<?x64xbf16>, %v: memref<2048xi8>, %s: memref<128xi8>, %g: f32, %out: memref<?x16xbf16>, %o: memref<4xi32>, %c: memref<4xi32>, %gi: memref<6xi32>, %si: memref<7xi32>) {
  // expected-error @+1 {{gather and scatter must index the same ragged rows, got 6 and 7}}
  microscale.mixed_matmul_storage %x times (%v, %s, %g) into %out experts(%o, %c : memref<4xi32>, memref<4xi32>) gather(%gi : memref<6xi32>) scatter(%si : memref<7xi32>) : memref<?x64xbf16>, !e, memref<2048xi8>, memref<128xi8>, memref<?x16xbf16>
  return
}

// -----

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @storage_dynamic_out_rows(%x: memref<?x64xbf16>, %v: memref<2048xi8>, %s: memref<128xi8>, %g: f32, %out: memref<5x16xbf16>, %o: memref<4xi32>, %c: memref<4xi32>, %gi: memref<6xi32>) {
  // expected-error @+1 {{without a scatter, the result must have one row per ragged row (6), got 5}}
  microscale.mixed_matmul_storage %x times (%v, %s, %g) into %out experts(%o, %c : memref<4xi32>, memref<4xi32>) gather(%gi : memref<6xi32>) : memref<?x64xbf16>, !e, memref<2048xi8>, memref<128xi8>, memref<5x16xbf16>
  return
}

// -----

!w = !microscale.qtensor<64x16, mxfp4, axis = 0>
func.func @storage_dynamic_n(%x: memref<?x64xbf16>, %v: memref<512xi8>, %s: memref<32xi8>, %g: f32, %out: memref<?x?xbf16>) {
  // expected-error @+1 {{expects static K and N extents (only the rows may be dynamic), got 'memref<?x64xbf16>' and 'memref<?x?xbf16>'}}
  microscale.mixed_matmul_storage %x times (%v, %s, %g) into %out : memref<?x64xbf16>, !w, memref<512xi8>, memref<32xi8>, memref<?x?xbf16>
  return
}

// -----

// The tensor form keeps static row index operands.
!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1>
func.func @tensor_dynamic_gather(%x: tensor<8x64xbf16>, %w: !e, %o: tensor<4xi32>, %c: tensor<4xi32>, %gi: tensor<?xi32>) {
  // expected-error @+1 {{expects static shapes of the expert and row index operands, got 'tensor<?xi32>'}}
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) gather(%gi : tensor<?xi32>) : tensor<8x64xbf16>, !e -> tensor<8x16xbf16>
  return
}

