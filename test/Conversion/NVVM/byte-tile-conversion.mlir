// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-conversions=false},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=OFF
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{block-size=128},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=T128
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-word-gather=false},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=BYTES
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-transposed-copies=true},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=QUADS
// The persistent grid: 2 blocks per SM on a GPU of one SM.
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-blocks-per-sm=2},microscale-nvvm-outline-kernels{sm-count=1})" | FileCheck %s --check-prefix=PERSIST
// The lowered conversions allocate nothing: shared memory is the only
// scratch.
// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=NOALLOC
// NOALLOC-NOT: alloc

// gpt-oss's scales ([E, 90, N], here N = 320) from the N-contiguous form into
// Hopper's (num_warps = 8): tiles of 128 columns x all 90 rows, whose
// bytes interleave with the next tile's in 32-byte runs of the image. 320 =
// 2 x 128 + 64: per batch two full tiles and one edge tile with tables of
// its own, which also writes the Hopper image's padding (columns 320-511). Phase 1:
// the source chunks into shared memory, 16-byte loads, the shared rows
// padded against bank conflicts (4-byte stores, each lane starting at a
// different piece of its chunk); phase 2: per destination
// chunk one table entry (offset, gather base | pattern) and the pattern
// (slot offsets and permute selectors), read before the barrier; then its
// 16 bytes, which lie in 4 shared
// words (a 4 x 4 byte transpose): 4 word reads and 3 permutes per
// destination word (16 byte reads with byte-tile-word-gather=false), one
// 16-byte store. One block per tile (6 = 2 batches x 3 tiles): each block
// converts one tile. The persistent grid (byte-tile-blocks-per-sm) loops
// its 2 blocks over the 4 full tiles with two shared buffers (the next
// tile loaded while this one is gathered), the edge tiles in 2 blocks of
// their own, its registers capped so that the 2 blocks fit on an SM.
!s = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @to_hopper_scale
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c6, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<57600xi8>, %{{.*}} : memref<92160xi8>)
// CHECK: memref.global "private" constant @convert_storage_0_gather_patterns : memref<{{[0-9]+}}xi16> = {{.*}} {alignment = 32 : i64}
// CHECK: memref.global "private" constant @convert_storage_0_dest_chunks : memref<{{[0-9]+}}xi32> = {{.*}} {alignment = 8 : i64}
// CHECK: memref.global "private" constant @convert_storage_0_source_chunks
// CHECK: gpu.func @convert_storage_0(%arg0: memref<57600xi8> {{.*}}, %arg1: memref<92160xi8> {{.*}}) workgroup(%[[S:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// The full tile, then the edge one.
// CHECK: scf.if
// CHECK: vector.load %arg0[%{{.*}}] {alignment = 16 : i64} : memref<57600xi8>, vector<16xi8>
// CHECK: vector.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 4 : i64}
// CHECK-NOT: cp.async
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<{{[0-9]+}}xi32>, vector<2xi32>
// CHECK: vector.load %{{.*}} {alignment = 32 : i64} : memref<{{[0-9]+}}xi16>, vector<16xi16>
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[S]][%{{.*}}] {alignment = 4 : i64} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK-NOT: memref.load %[[S]]
// CHECK-COUNT-12: llvm.inline_asm asm_dialect = att "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// CHECK-NOT: memref.load %[[S]]
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}] {alignment = 16 : i64} : memref<92160xi8>, vector<16xi8>
// CHECK: } else {
// CHECK: gpu.barrier
// CHECK: gpu.return
// OFF-LABEL: func.func @to_hopper_scale
// OFF-NOT: gather_patterns
// OFF: gpu.return
// BYTES-LABEL: func.func @to_hopper_scale
// BYTES: gpu.barrier
// BYTES: vector.load %{{.*}} {alignment = 32 : i64} : memref<{{[0-9]+}}xi16>, vector<16xi16>
// BYTES-COUNT-16: memref.load %{{.*}} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>
// BYTES-NOT: prmt
// BYTES: gpu.return
// T128-LABEL: func.func @to_hopper_scale
// T128: threads in (%c128, %c1, %c1)
// PERSIST-LABEL: func.func @to_hopper_scale
// PERSIST: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c4, %c1, %c1)
// PERSIST: gpu.func @convert_storage_0({{.*}}) workgroup(%[[S:.*]] : memref<23808xi8, #gpu.address_space<workgroup>> {{.*}}) kernel attributes {{{.*}}nvvm.maxnreg = 128 : i32
// PERSIST: scf.if
// PERSIST: scf.for
// PERSIST: scf.if
// PERSIST: vector.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 4 : i64}
// PERSIST: gpu.barrier
// PERSIST: prmt.b32
// PERSIST: gpu.barrier
// PERSIST: } else {
// PERSIST: gpu.return
func.func @to_hopper_scale(%src: memref<57600xi8>, %dst: memref<92160xi8>) {
  microscale.convert_storage scales %src, %dst : !s -> !h, memref<57600xi8>, memref<92160xi8>
  return
}

// -----

// A transpose of Qwen3's scales ([E, 24, 2048]): K-contiguous to
// N-contiguous: tiles of 256 columns x 24 rows (6 KiB: under 8 KiB, a tile
// is taken where its load runs are whole lines, here the 6 KiB of the
// K-contiguous source, and its store runs two sectors or more, here 256
// bytes per row), 8 per batch, every tile full.
!k = !microscale.qtensor<3x768x2048, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
!n = !microscale.qtensor<3x768x2048, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
// With byte-tile-transposed-copies, the copy-in loads each group of four
// rows' 16-byte chunks (four loads), transposes every 4-byte column of the
// four (eight permutes each, 32 in all) and stores the group as 64
// bytes: the gather then takes 4 word reads per chunk, not 16 byte reads.
// QUADS-LABEL: func.func @transpose
// QUADS: gpu.func @convert_storage_0(
// QUADS-COUNT-4: vector.load %arg0[%{{.*}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xi8>, vector<16xi8>
// QUADS-NOT: cp.async
// QUADS-COUNT-32: llvm.inline_asm asm_dialect = att "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// QUADS: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = {{4|8|16}} : i64}
// QUADS: gpu.barrier
// QUADS-COUNT-4: vector.load %{{.*}} {alignment = 4 : i64} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// QUADS-COUNT-12: llvm.inline_asm asm_dialect = att "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// QUADS: gpu.return
// CHECK-LABEL: func.func @transpose
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c24, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK: gpu.func @convert_storage_0(
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @transpose(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !k -> !n, memref<?xi8>, memref<?xi8>
  return
}

// -----

// Unit ranges (a caller splitting the work) keep the per-unit kernel.
!s2 = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!b2 = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.blackwell_scale>
// CHECK-LABEL: func.func @unit_range
// CHECK: gpu.launch_func {{.*}} args({{.*}}, %{{.*}} : index, %{{.*}} : index)
// CHECK-NOT: gather_patterns
func.func @unit_range(%src: memref<?xi8>, %dst: memref<?xi8>, %b: index, %e: index) {
  microscale.convert_storage scales %src, %dst units [%b, %e] : !s2 -> !b2, memref<?xi8>, memref<?xi8>
  return
}

// -----

// gpt-oss's scales into the Blackwell atom: the shared rows need no padding,
// so the source chunks go straight into shared memory by 16-byte cp.async
// copies, the gather tables read while they land, each thread waiting for
// its own group before the barrier. The
// persistent grid (2 blocks over 2 x 45 tiles) commits one group per tile
// and waits for all but the newest: the next tile's copies stay in flight
// during this tile's gather.
!s3 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!b3 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.blackwell_scale>
// CHECK-LABEL: func.func @to_blackwell_scale
// CHECK: blocks in (%c90, %c1, %c1)
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: vector.load %{{.*}} : memref<{{[0-9]+}}xi16>, vector<16xi16>
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// PERSIST-LABEL: func.func @to_blackwell_scale
// PERSIST: blocks in (%c2, %c1, %c1)
// PERSIST: nvvm.cp.async.shared.global
// PERSIST: nvvm.cp.async.commit.group
// PERSIST: scf.for
// PERSIST: scf.if
// PERSIST: nvvm.cp.async.shared.global
// PERSIST: nvvm.cp.async.commit.group
// PERSIST-NEXT: nvvm.cp.async.wait.group 1
// PERSIST-NEXT: gpu.barrier
// PERSIST: gpu.barrier
// PERSIST: gpu.return
func.func @to_blackwell_scale(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !s3 -> !b3, memref<?xi8>, memref<?xi8>
  return
}

// -----

// gpt-oss's scales from the N-contiguous form to the K-contiguous one: a
// transpose whose gather reads every byte from its own shared word. Pads of
// 16 bytes keep the copy-in on cp.async, and each chunk's reads go in a
// rotated order (the rotation in the low 4 bits of its destination offset)
// that the kernel undoes with selects and a byte permute per word before
// its 16-byte store.
!s6 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!k6 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
// CHECK-LABEL: func.func @rotated_gather
// CHECK: blocks in (%c90, %c1, %c1)
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: arith.andi %{{.*}}, %c15_i32
// CHECK: arith.select
// CHECK: prmt.b32
// CHECK: arith.andi %{{.*}}, %c-16_i32
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}] {alignment = 16 : i64} : memref<1036800xi8>, vector<16xi8>
// CHECK: gpu.return
func.func @rotated_gather(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !s6 -> !k6, memref<?xi8>, memref<?xi8>
  return
}

// -----

// 224 scale rows (K = 7168, a DeepSeek-V3-sized expert) by Hopper's
// 256-column period would be 56 KiB: the tiles cut K into 7 spans of 32
// rows (whole 32-byte sectors of the K-contiguous side). 2 batches x 7
// spans x 2 full tiles, then an edge tile (N = 600) per batch and span: 42
// blocks. The tile's outer index (block / 2 full tiles) is batch x 7 +
// span; the span moves the source by 32 bytes.
!k4 = !microscale.qtensor<2x7168x600, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
!h4 = !microscale.qtensor<2x7168x600, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @cut_k
// CHECK: blocks in (%c42, %c1, %c1)
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: %[[OUTER:.*]] = arith.divui %[[B]], %c2
// CHECK: arith.divui %[[OUTER]], %c7
// CHECK: %[[SPAN:.*]] = arith.remui %[[OUTER]], %c7
// CHECK: arith.muli %[[SPAN]], %c32
// CHECK: gpu.return
func.func @cut_k(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !k4 -> !h4, memref<?xi8>, memref<?xi8>
  return
}

// -----

// Llama-3.1-405B's scales ([1664, 16384], 27 MB) are above the plan's 16
// MiB per batch: the plan takes 8 blocks of 2048 columns, which both
// layouts store as translations (3407872 bytes apart), as its batches.
// 8 blocks x 416 tiles of 4 scale rows.
!h5 = !microscale.qtensor<53248x16384, f4E2M1FN, f8E8M0FNU, block = 32, axis = 0, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!b5 = !microscale.qtensor<53248x16384, f4E2M1FN, f8E8M0FNU, block = 32, axis = 0, scales = #microscale.blackwell_scale>
// CHECK-LABEL: func.func @column_blocks
// CHECK: blocks in (%c3328, %c1, %c1)
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: %[[BATCH:.*]] = arith.divui %[[B]], %c416
// CHECK: arith.muli %[[BATCH]], %c3407872
// CHECK: gpu.return
func.func @column_blocks(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !h5 -> !b5, memref<?xi8>, memref<?xi8>
  return
}
