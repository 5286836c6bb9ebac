// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels --verify-diagnostics | FileCheck %s
// RUN: mx-opt %s --split-input-file --microscale-gpu-to-ptx --verify-diagnostics | FileCheck %s --check-prefix=PTX

// mxfp4 in the Hopper layouts -> bf16, the staged kernel (the default): the
// image [N/4 = 256 rows, 256 words] is 16 x 8 tiles of 16 rows x 32 words,
// 4 tiles per block of 256 threads: 32 blocks. Each tile: the loads of
// all four tiles first (two words per thread and tile), seed 000's decode
// with the 2^126 bias folded into the scale for codes <= 128 (the exact
// two-multiply path for the others), 4-byte stores into the 8 KiB shared
// tile (16-byte aligned), a barrier, then 16-byte loads of it and 16-byte
// stores of whole output rows.
!w = !microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @dequantize
// CHECK: %[[WORDS:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<262144xi8> to memref<65536xi32>
// CHECK: gpu.launch_func @microscale_kernels::@dequantize_hopper_0 blocks in (%c32, %c1, %c1) threads in (%c256{{.*}}, %c1, %c1) args(%[[WORDS]] : memref<65536xi32>
// CHECK: gpu.func @dequantize_hopper_0
// CHECK-SAME: workgroup(%[[TILE:.*]] : memref<2048xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-8: memref.load %{{.*}} : memref<65536xi32>
// CHECK: arith.cmpi ule, %{{.*}}, %c128_i32
// CHECK: scf.if %{{.*}} -> (i32, i32, i32, i32)
// CHECK: llvm.inline_asm
// CHECK-NOT: bias
// CHECK-SAME: mul.rn.bf16x2 $0, $0, $5;
// CHECK: } else {
// CHECK: llvm.inline_asm {{.*}}mul.rn.bf16x2 $0, $0, bias;
// CHECK-COUNT-8: memref.store %{{.*}}, %[[TILE]][%{{.*}}] : memref<2048xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.load %[[TILE]][%{{.*}}] {alignment = 16 : i64} : memref<2048xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<524288xbf16>, vector<8xbf16>
// CHECK: vector.load %[[TILE]]
// CHECK: vector.store
// The next tile waits until the tile's reads are done.
// CHECK: gpu.barrier
// PTX: .visible .entry dequantize_hopper_0(
// PTX: .shared .align 16 .b8
// PTX: and.b32
// PTX: mul.rn.bf16x2
// PTX: st.shared.b32
// PTX: bar.sync
// PTX: ld.shared.v4.b32
// PTX: st.global.v4.b32
func.func @dequantize(%v: memref<262144xi8>, %s: memref<16384xi8>, %o: memref<524288xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<262144xi8>, memref<16384xi8>, memref<524288xbf16>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @other_layouts(%v: memref<64xi8>, %s: memref<4xi8>, %o: memref<128xbf16>) {
  // expected-error @+1 {{on the GPU, dequantize_storage is lowered for mxfp4 in #microscale.hopper_value<mma_version = 3> with #microscale.hopper_scale of the same mx_axis, bf16 results and OCP E8M0 edges}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<4xi8>, memref<128xbf16>
  return
}

// -----

// Rows of 66 bf16 (not a multiple of 16 bytes): element stores behind
// bounds checks instead of the 16-byte stores.
!odd = !microscale.qtensor<64x66, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @odd_rows
// CHECK: gpu.func @dequantize_hopper
// CHECK-NOT: vector.store
// CHECK: vector.extract %{{.*}}[3] : i32 from vector<4xi32>
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: memref.store %{{.*}} : memref<4224xbf16>
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @odd_rows(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !odd, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// -----

// mx_axis = -1: the [2 x 200, 96] weight's image is 2 x 64 rows of 64
// words: 2 x 4 x 2 tiles, 4 blocks.
!mx1 = !microscale.qtensor<2x200x96, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 8>>
// CHECK-LABEL: func.func @mx_axis_last
// CHECK: gpu.launch_func @microscale_kernels::@dequantize_hopper_{{[0-9]+}} blocks in (%c4, %c1, %c1) threads in (%c256
// CHECK: vector.store %{{.*}} : memref<38400xbf16>, vector<8xbf16>
func.func @mx_axis_last(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !mx1, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// -----

// The per-word kernel (stage-dequantize=false), unfolded: one thread per
// 32-bit word (256 blocks of 256), seed 000's decode with the separate
// 2^126 multiply, eight 2-byte stores.
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{stage-dequantize=false fold-scale-bias=false},microscale-nvvm-outline-kernels)" --verify-diagnostics | FileCheck %s --check-prefix=WORD
!w = !microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// WORD-LABEL: func.func @per_word
// WORD: gpu.launch_func @microscale_kernels::@dequantize_hopper_{{[0-9]+}} blocks in (%c256, %c1, %c1) threads in (%c256
// WORD: gpu.func @dequantize_hopper
// WORD-NOT: workgroup
// WORD: memref.load %{{.*}} : memref<65536xi32>
// WORD-NOT: scf.if %{{.*}} -> (i32, i32, i32, i32)
// WORD: llvm.inline_asm {{.*}}"{\0A.reg .b32 t0, t1, bias;\0Amov.b32 bias, 0x7E807E80;\0Aand.b32 $0, $4, 0x81C081C0;
// WORD-SAME: mul.rn.bf16x2 $0, $0, bias;
// WORD-SAME: mul.rn.bf16x2 $0, $0, $5;
// WORD-SAME: "=r,=r,=r,=r,r,r,r"
// WORD-COUNT-8: memref.store %{{.*}} : memref<524288xbf16>
func.func @per_word(%v: memref<262144xi8>, %s: memref<16384xi8>, %o: memref<524288xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<262144xi8>, memref<16384xi8>, memref<524288xbf16>
  return
}
