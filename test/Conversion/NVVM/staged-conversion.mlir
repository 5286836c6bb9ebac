// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{stage-conversions=false},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=GENERIC
// The lowered conversions allocate nothing: the caller's output is the only
// buffer written, shared memory the only scratch.
// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=NOALLOC
// NOALLOC-NOT: alloc

// Canonical -> Hopper value (mx_axis = -2), unpadded: the staged kernel.
// The block route's block is 64 x 128 values (4 KiB, 2^13 nibbles): one
// tile per block of 2^(13 - 6) = 128 threads, 2 x 4 x 4 = 32 blocks. Phase
// 1: two 16-byte loads per thread into the source-order tile A (swizzled
// chunk addresses); phase 2: 8 words of A per thread, their nibbles
// exchanged between register pairs (one lop3 select each), routed by byte
// permutes (prmt.b32), Step B applied (planWordBitMap's terms: a high
// multiply by 2^30 + 2^24 for the moves by -2 and -8, low multiplies by
// 2 + 32 and 64 + 4096, two shifts, merged by lop3 selects on their
// destination masks), 8 words into the destination-order
// tile B; phase 3: 16-byte loads of B and 16-byte stores.
!s = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
// CHECK-LABEL: func.func @to_hopper
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c32, %c1, %c1) threads in (%c128, %c1, %c1) args(%{{.*}} : memref<131072xi8>, %{{.*}} : memref<131072xi8>)
// CHECK: gpu.func @convert_storage_0(
// CHECK-SAME: workgroup(%[[A:.*]] : memref<1024xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[B:.*]] : memref<1024xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-2: vector.load %arg0[%{{.*}}] {alignment = 16 : i64} : memref<131072xi8>, vector<16xi8>
// CHECK-COUNT-2: vector.store %{{.*}}, %[[A]][%{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[A]]
// CHECK-COUNT-8: llvm.inline_asm {{.*}}"lop3.b32 $0, $1, 0xF0F0F0F, $2, 0xE2;", "=r,r,r"
// CHECK: llvm.inline_asm {{.*}}"prmt.b32 $0, $1, $2, 0x{{[0-9a-f]+}};", "=r,r,r"
// CHECK: %{{.*}}, %[[HIGH:.*]] = arith.mului_extended %{{.*}}, %c1090519040_i32 : i32
// CHECK: %[[BY3:.*]] = arith.shrui %{{.*}}, %c3_i32 : i32
// CHECK: llvm.inline_asm {{.*}}"lop3.b32 $0, $1, 0xC000C00, $2, 0xE2;", "=r,r,r" %[[BY3]], %[[HIGH]]
// CHECK: arith.muli %{{.*}}, %c34_i32 : i32
// CHECK: arith.muli %{{.*}}, %c4160_i32 : i32
// CHECK-COUNT-8: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[B]]{{.*}} vector<4xi32>
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}] {alignment = 16 : i64} : memref<131072xi8>, vector<16xi8>
// CHECK: vector.load %[[B]]
// CHECK: vector.store
// CHECK-NEXT: gpu.return
// GENERIC-LABEL: func.func @to_hopper
// GENERIC: gpu.launch_func {{.*}} args({{.*}}, %{{.*}} : index, %{{.*}} : index)
// GENERIC-NOT: workgroup
// GENERIC: gpu.return
func.func @to_hopper(%src: memref<131072xi8>, %dst: memref<131072xi8>) {
  microscale.convert_storage values %src, %dst : !s -> !h, memref<131072xi8>, memref<131072xi8>
  return
}

// -----

// Hopper mma_version 3 -> 2 (mx_axis = -1): the block route's block is
// 16 x 64 values (2^10 nibbles), too small for a warp; two neighbouring
// blocks of a band make one tile (2^11 nibbles, 32 threads), and four
// tiles share a block of 128 threads: 2 x 256 x 512 / 2^11 / 4 = 32 blocks,
// with 4 tiles of 256 words in each shared buffer.
!h3 = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>>
!h2 = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 2>>
// CHECK-LABEL: func.func @mma3_to_mma2
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_{{[0-9]+}} blocks in (%c32, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK: workgroup(%{{.*}} : memref<1024xi32
func.func @mma3_to_mma2(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage values %src, %dst : !h3 -> !h2, memref<?xi8>, memref<?xi8>
  return
}

// -----

// gpt-oss's transpose, [32, 2880, 5760] strided<-2> -> strided<-1>: K =
// 2880 = 45 x 64 allows blocks of 64 K rows only, 32-byte row segments on
// the K-major side. Two neighbouring blocks along each axis make one tile
// (2^14 nibbles, 256 threads, 64-byte segments on both sides); the 45th
// block of each band is a half tile whose other half is masked: loads
// yield zeros, stores are skipped. 32 x 23 x 45 = 33120 blocks.
!gs = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
!gt = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -1>>
// CHECK-LABEL: func.func @paired_half_tiles
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_{{[0-9]+}} blocks in (%c33120, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK: gpu.func @convert_storage_{{[0-9]+}}
// CHECK: scf.if
// CHECK: vector.load
// CHECK: scf.if
// CHECK: vector.store
func.func @paired_half_tiles(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage values %src, %dst : !gs -> !gt, memref<?xi8>, memref<?xi8>
  return
}

// -----

// gpt-oss's strided<-2> -> blackwell_shuffled_value<128, 256>: the
// shuffled layout's blocks are 128 K rows, and K = 2880 = 22.5 x 128. A
// 23rd band per batch takes the last 64 rows: its loads past K give zeros,
// which its stores write into the destination's K padding. The gap blocks
// are left padding only (16-byte zeros), not the edge rows one byte per
// thread: 32 x 23 x 360 tiles of 32 threads, four to a block (66240
// blocks), then 8832 gap blocks.
!ks = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
!kb = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>
// CHECK-LABEL: func.func @edge_band
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_{{[0-9]+}} blocks in (%c75072, %c1, %c1) threads in (%c128, %c1, %c1)
func.func @edge_band(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage values %src, %dst : !ks -> !kb, memref<?xi8>, memref<?xi8>
  return
}

// -----

// The other way, blackwell_shuffled_value<128, 256> -> strided<-2>: the
// bands run along N, so the K edge lies in every band's span; one more block
// per band takes it, its stores past K skipped (strided<-2> has no room
// there): 66240 blocks where whole blocks and the per-unit edge took
// 109440.
!kb2 = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>
!ks2 = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
// CHECK-LABEL: func.func @edge_block
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_{{[0-9]+}} blocks in (%c66240, %c1, %c1) threads in (%c128, %c1, %c1)
func.func @edge_block(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage values %src, %dst : !kb2 -> !ks2, memref<?xi8>, memref<?xi8>
  return
}

// -----

// blackwell_shuffled_value<128, 256> -> hopper_value: the Hopper image
// holds a K bit inside a 16-byte run above K bits outside it, so its runs
// cannot be masked per run at K = 2880's edge; the edge band's stores go
// unmasked instead, every missing element landing on the image's K
// padding (KB = 1440 padded to 1472) as a zero. 69184 blocks where the
// per-unit body of the gap blocks took the last 64 K rows (89344).
!kb3 = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>
!kh3 = !microscale.qtensor<32x2880x5760, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
// CHECK-LABEL: func.func @edge_band_unmasked_stores
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_{{[0-9]+}} blocks in (%c69184, %c1, %c1) threads in (%c128, %c1, %c1)
func.func @edge_band_unmasked_stores(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage values %src, %dst : !kb3 -> !kh3, memref<?xi8>, memref<?xi8>
  return
}

// -----

// Not staged: padded storage (K = 130 pads the Hopper image), a unit
// range, and scales take the per-unit kernel with its unit range.
!sp = !microscale.qtensor<130x64, f4E2M1FN, f8E8M0FNU, block = 2, axis = 0, values = #microscale.strided<major_dim = -1>>
!hp = !microscale.qtensor<130x64, f4E2M1FN, f8E8M0FNU, block = 2, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
!s = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
// CHECK-LABEL: func.func @per_unit
// CHECK-COUNT-2: gpu.launch_func {{.*}} args({{.*}}, %{{.*}} : index, %{{.*}} : index)
// CHECK-NOT: workgroup
// CHECK: gpu.return
func.func @per_unit(%src: memref<?xi8>, %dst: memref<?xi8>, %b: index, %e: index) {
  microscale.convert_storage values %src, %dst : !sp -> !hp, memref<?xi8>, memref<?xi8>
  microscale.convert_storage values %src, %dst units [%b, %e] : !s -> !h, memref<?xi8>, memref<?xi8>
  return
}
