// A tiling written by hand is checked at the op.
// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels --verify-diagnostics

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @unknown(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  // expected-error @+1 {{unknown tiling "warp_rows" for this op (known: staged, byte_tiles, word_gather, transposed_copies, resident_blocks, buffers, min_tile_bytes, min_run, hoist_tables, tiles_per_block, block_size, units_per_thread, traversal)}}
  microscale.convert_storage values %src, %dst {microscale.tiling = {warp_rows = 16}} : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @type(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  // expected-error @+1 {{tiling staged must be true or false}}
  microscale.convert_storage values %src, %dst {microscale.tiling = {staged = 1}} : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @range(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  // expected-error @+1 {{tiling tiles_per_block = 3 must be a power of two in [1, 8]}}
  microscale.convert_storage values %src, %dst {microscale.tiling = {tiles_per_block = 3}} : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @buffers(%src: memref<256xi8>, %dst: memref<512xi8>) {
  // expected-error @+1 {{tiling buffers = 3 must be in [0, 2]}}
  microscale.convert_storage scales %src, %dst {microscale.tiling = {buffers = 3}} : !canon -> !hopper, memref<256xi8>, memref<512xi8>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @min_tile_bytes(%src: memref<256xi8>, %dst: memref<512xi8>) {
  // expected-error @+1 {{tiling min_tile_bytes = 100 must be in [256, 40960]}}
  microscale.convert_storage scales %src, %dst {microscale.tiling = {min_tile_bytes = 100}} : !canon -> !hopper, memref<256xi8>, memref<512xi8>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @min_run(%src: memref<256xi8>, %dst: memref<512xi8>) {
  // expected-error @+1 {{tiling min_run = 5000 must be in [0, 4096]}}
  microscale.convert_storage scales %src, %dst {microscale.tiling = {min_run = 5000}} : !canon -> !hopper, memref<256xi8>, memref<512xi8>
  return
}

// -----

!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @order(%v: memref<16384xi8>, %s: memref<512xi8>, %o: memref<8192xbf16>) {
  // expected-error @+1 {{tiling tile_order must be "output" or "image"}}
  microscale.dequantize_storage %v, %s into %o {microscale.tiling = {tile_order = "rows"}} : !hopper, memref<16384xi8>, memref<512xi8>, memref<8192xbf16>
  return
}

// -----

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @dictionary(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  // expected-error @+1 {{'microscale.tiling' must be a dictionary attribute}}
  microscale.convert_storage values %src, %dst {microscale.tiling = 4} : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}

// -----

// The wgmma matmul's copies: a choice of three.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @copies(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling activation_copies must be "chosen" or "tma" or "cp.async"}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {activation_copies = "dma"}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// The wgmma matmul's decode overlap: on, off or chosen.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @overlap(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling decode_overlap must be "chosen" or "on" or "off"}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {decode_overlap = "yes"}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// The wgmma matmul's weight copies: registers, shared or chosen.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @weight_copies(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling weight_copies must be "chosen" or "registers" or "shared"}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {weight_copies = "smem"}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}

// -----

// The wgmma matmul's chunk groups: a boolean.
!w = !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @chunk_groups(%a: memref<65x64xbf16>, %v: memref<16384xi8>, %s: memref<256xi8>, %g: f32, %o: memref<65x16xbf16>) {
  // expected-error @+1 {{tiling chunk_groups must be true or false}}
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {chunk_groups = 1 : i64}} : memref<65x64xbf16>, !w, memref<16384xi8>, memref<256xi8>, memref<65x16xbf16>
  return
}
