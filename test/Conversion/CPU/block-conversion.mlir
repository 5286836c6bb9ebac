// RUN: mx-opt %s --microscale-cpu-lower-storage=min-gap-bytes=0 --canonicalize --cse | FileCheck %s
// RUN: mx-opt %s --microscale-cpu-lower-storage=vector-bytes=0 | FileCheck %s --check-prefix=UNITS
// RUN: mx-opt %s --microscale-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: mx-opt %s --microscale-cpu-lower-storage=gfni=true | FileCheck %s --check-prefix=GFNI
// The target-neutral pass takes the same route with only arith, vector,
// memref and scf: no streaming stores, no fence, no x86 intrinsic.
// RUN: mx-opt %s --microscale-lower-storage-conversions | FileCheck %s --check-prefix=NEUTRAL
// NEUTRAL-NOT: llvm.
// NEUTRAL-NOT: nontemporal
// NEUTRAL: vector.shuffle
// NEUTRAL-NOT: llvm.
// NEUTRAL-NOT: nontemporal

// Aligned and unpadded: the block route. Loops over bands and over the
// blocks of a band; each block is 16 whole 64-byte vectors loaded from the
// source, routed with byte shuffles, its words interleaved for Hopper, and
// 16 vectors stored to the destination. The source lines of a later block
// are prefetched. Nothing is allocated.
// CHECK-LABEL: func @canonical_to_hopper_last_axis
// CHECK-SAME: (%[[SRC:.*]]: memref<65536xi8>, %[[DST:.*]]: memref<65536xi8>)
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.prefetch %[[SRC]]
// CHECK-COUNT-16: vector.load %[[SRC]]{{.*}} : memref<65536xi8>, vector<64xi8>
// CHECK: vector.shuffle
// CHECK-COUNT-16: vector.store %{{.*}}, %[[DST]]{{.*}} : memref<65536xi8>, vector<64xi8>
// CHECK-NOT: memref.alloc
// UNITS-LABEL: func @canonical_to_hopper_last_axis
// UNITS-NOT: vector.
// UNITS: scf.parallel
// UNITS-NOT: vector.
// LLVM-LABEL: llvm.func @canonical_to_hopper_last_axis
// LLVM: llvm.shufflevector
// LLVM-NOT: microscale.
// LLVM-NOT: vector.
// With GFNI, Hopper's Step B is two rounds (the bytes in place, then
// swapped within 16-bit halves) of two affine byte transforms each,
// instead of eight shift-and-mask groups.
// GFNI-LABEL: func @canonical_to_hopper_last_axis
// GFNI: vector.shuffle
// GFNI-COUNT-4: llvm.call_intrinsic "llvm.x86.vgf2p8affineqb.512"
// GFNI: vector.store
func.func @canonical_to_hopper_last_axis(%src: memref<65536xi8>, %dst: memref<65536xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<256x512, mxfp4, axis = 1>
     -> !microscale.qtensor<256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>>,
        memref<65536xi8>, memref<65536xi8>
  return
}

// With a unit range: the whole bands inside it by blocks, the partial bands
// at either end unit by unit.
// CHECK-LABEL: func @unit_range
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[E:[a-z0-9]+]]: index
// CHECK: %[[LOW:.*]] = arith.minui
// CHECK: %[[HIGH:.*]] = arith.maxui
// CHECK: scf.parallel (%{{.*}}) = (%[[B]]) to (%[[LOW]])
// CHECK: scf.for
// CHECK: vector.shuffle
// CHECK: scf.parallel (%{{.*}}) = (%[[HIGH]]) to (%[[E]])
func.func @unit_range(%src: memref<65536xi8>, %dst: memref<65536xi8>, %b: index, %e: index) {
  microscale.convert_storage values %src, %dst units [%b, %e]
      : !microscale.qtensor<256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>>
     -> !microscale.qtensor<256x512, mxfp4, axis = 1>,
        memref<65536xi8>, memref<65536xi8>
  return
}

// Padded storage (M = 64 is padded to 256 by Hopper's layout): the blocks
// by the block route, then the padding (here a tail after the batch's last
// band) with zero vectors, by the band that owns it. (By default only
// destinations of 1 MiB or more take it: `min-gap-bytes`.)
// CHECK-LABEL: func @padded_block_route
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0> : vector<64xi8>
// CHECK: scf.for
// CHECK: vector.shuffle
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0 to %c768
// CHECK: vector.store %[[ZERO]]
func.func @padded_block_route(%src: memref<16384xi8>, %dst: memref<65536xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<64x512, mxfp4, axis = 1>
     -> !microscale.qtensor<64x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>>,
        memref<16384xi8>, memref<65536xi8>
  return
}

// The Blackwell swizzle writes whole aligned cache lines: streaming
// (non-temporal) stores when the destination is 64-byte aligned, checked
// once, the regular stores otherwise, and one fence after the loops.
// CHECK-LABEL: func @streaming_stores
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[DST:.*]] :
// CHECK: %[[R:.*]] = arith.remui %[[P]], %c64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[R]]
// CHECK: scf.for
// CHECK: scf.if %[[ALIGNED]] {
// CHECK: vector.store %{{.*}}, %[[DST]][%{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK: } else {
// CHECK-NOT: nontemporal
// CHECK: vector.store %{{.*}}, %[[DST]][%{{.*}}] :
// CHECK: llvm.fence seq_cst
// Scales take the block route too (bytes as pairs of nibbles).
// CHECK-LABEL: func @scales
// CHECK: vector.shuffle
// LLVM-LABEL: llvm.func @streaming_stores
// LLVM: llvm.store {{.*}} {alignment = 64 : i64, nontemporal}
// LLVM: llvm.fence seq_cst
func.func @streaming_stores(%src: memref<131072xi8>, %dst: memref<131072xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<2x256x512, mxfp4, axis = 1>
     -> !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>,
        memref<131072xi8>, memref<131072xi8>
  return
}

func.func @scales(%src: memref<262144xi8>, %dst: memref<262144xi8>) {
  microscale.convert_storage scales %src, %dst
      : !microscale.qtensor<2x8192x512, mxfp4, axis = 1>
     -> !microscale.qtensor<2x8192x512, mxfp4, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>,
        memref<262144xi8>, memref<262144xi8>
  return
}

// K = 2.5 x 128 (gpt-oss's 2880 = 22.5 x 128, scaled down): the shuffled
// layout's 128-row blocks leave a half block per band, converted as an edge
// block after the band's full blocks: a masked load (the missing rows read
// as zeros) and a masked store (only the bytes of its elements), not the
// per-unit loop.
// CHECK-LABEL: func @edge_blocks
// CHECK-SAME: (%[[SRC:.*]]: memref<131072xi8>, %[[DST:.*]]: memref<81920xi8>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.load %[[SRC]]
// CHECK: vector.store
// CHECK: vector.maskedload %[[SRC]]
// CHECK: vector.maskedstore %[[DST]]
// CHECK-NOT: scf.parallel
// CHECK: llvm.fence
func.func @edge_blocks(%src: memref<131072xi8>, %dst: memref<81920xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<2x320x256, mxfp4, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>
     -> !microscale.qtensor<2x320x256, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>,
        memref<131072xi8>, memref<81920xi8>
  return
}

// A transpose onto rows 96 bytes apart (gpt-oss's 1440, scaled down): the
// stores are 32-byte runs in 64 rows, half lines that cannot stream, but
// a band's blocks fill one contiguous range (64 rows): they write a buffer
// (no destination prefetch), which then goes to the destination as whole
// vectors, non-temporal where the destination is 64-byte aligned (checked
// once), then one fence and the buffer freed. Bands go in pairs, block i
// of both after each other (they read the same source lines): one buffer
// of two spans; of the 3 bands here, the second pair has one.
// CHECK-LABEL: func @band_buffer
// CHECK-SAME: (%[[SRC:.*]]: memref<18432xi8>, %[[DST:.*]]: memref<18432xi8>)
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12288xi8>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[DST]]
// CHECK: %[[R:.*]] = arith.remui %[[P]], %c64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[R]]
// CHECK: scf.for %[[FIRST:.*]] = %c0 to %c3 step %c2
// CHECK: scf.for %[[INNER:.*]] = %c0 to %c3 step %c1
// CHECK: %[[LEFT:.*]] = arith.subi %c3, %[[FIRST]]
// CHECK: %[[BANDS:.*]] = arith.minui %[[LEFT]], %c2
// CHECK: scf.for %{{.*}} = %c0 to %[[BANDS]] step %c1
// CHECK-NOT: memref.prefetch %[[DST]]
// CHECK: vector.store %{{.*}}, %[[BUF]]{{.*}} : memref<12288xi8>, vector<32xi8>
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: scf.if %[[ALIGNED]] {
// CHECK: vector.load %[[BUF]]
// CHECK: vector.store %{{.*}}, %[[DST]][%{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK: } else {
// CHECK: vector.load %[[BUF]]
// CHECK-NOT: nontemporal
// CHECK: vector.store %{{.*}}, %[[DST]][%{{.*}}] : memref<18432xi8>, vector<64xi8>
// CHECK: llvm.fence seq_cst
// CHECK: memref.dealloc %[[BUF]]
func.func @band_buffer(%src: memref<18432xi8>, %dst: memref<18432xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<192x192, mxfp4, axis = 1>
     -> !microscale.qtensor<192x192, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>,
        memref<18432xi8>, memref<18432xi8>
  return
}

// blackwell_value's K rows (96 bytes here, padded to 128) back into the
// K-major rows of 96 bytes: the blocks would only move bytes, so each band
// (two rows: 192 bytes, three lines) is written as copies of its two
// source rows, line by line, the middle line from the end of one row and
// the start of the next; streaming where the destination is aligned, no
// buffer, no prefetch.
// CHECK-LABEL: func @band_copy
// CHECK-SAME: (%[[SRC:.*]]: memref<32768xi8>, %[[DST:.*]]: memref<24576xi8>)
// CHECK-NOT: memref.alloc
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[DST]]
// CHECK: %[[R:.*]] = arith.remui %[[P]], %c64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[R]]
// CHECK: scf.for %[[BAND:.*]] = %c0 to %c128 step %c1
// CHECK: %[[S:.*]] = arith.muli %{{.*}}, %c256
// CHECK: %[[D:.*]] = arith.muli %{{.*}}, %c192
// CHECK: scf.if %[[ALIGNED]] {
// CHECK-NOT: memref.prefetch
// CHECK: %[[L0:.*]] = vector.load %[[SRC]][%[[S]]] : memref<32768xi8>, vector<64xi8>
// CHECK: vector.store %[[L0]], %[[DST]][%[[D]]] {alignment = 64 : i64, nontemporal = true}
// CHECK: %[[A:.*]] = arith.addi %[[S]], %c64
// CHECK: %[[END:.*]] = vector.load %[[SRC]][%[[A]]] : memref<32768xi8>, vector<32xi8>
// CHECK: %[[HALF:.*]] = vector.insert_strided_slice %[[END]], %{{.*}} {offsets = [0], strides = [1]}
// CHECK: %[[B:.*]] = arith.addi %[[S]], %c128
// CHECK: %[[START:.*]] = vector.load %[[SRC]][%[[B]]] : memref<32768xi8>, vector<32xi8>
// CHECK: %[[L1:.*]] = vector.insert_strided_slice %[[START]], %[[HALF]] {offsets = [32], strides = [1]}
// CHECK: vector.store %[[L1]], %[[DST]][%{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK: %[[C:.*]] = arith.addi %[[S]], %c160
// CHECK: vector.load %[[SRC]][%[[C]]] : memref<32768xi8>, vector<64xi8>
// CHECK: } else {
// CHECK-NOT: nontemporal
// CHECK: }
// CHECK: llvm.fence seq_cst
// CHECK-NOT: memref.dealloc
func.func @band_copy(%src: memref<32768xi8>, %dst: memref<24576xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<192x256, mxfp4, axis = 0, values = #microscale.blackwell_value>
     -> !microscale.qtensor<192x256, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>,
        memref<32768xi8>, memref<24576xi8>
  return
}

// The same transpose onto rows of 4128 bytes: a band (64 rows) is more
// than the buffer may hold, so the blocks store to the destination, and
// each block also prefetches, for writing, the destination lines of a
// later block (one per run: the runs stay inside aligned 32-byte chunks).
// CHECK-LABEL: func @dest_prefetch
// CHECK-SAME: (%[[SRC:.*]]: memref<528384xi8>, %[[DST:.*]]: memref<528384xi8>)
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.prefetch %[[SRC]]{{.*}}, read
// CHECK-COUNT-64: memref.prefetch %[[DST]]{{.*}}, write
// CHECK-NOT: memref.prefetch
// CHECK: vector.store %{{.*}}, %[[DST]]{{.*}} : memref<528384xi8>, vector<32xi8>
// CHECK-NOT: nontemporal
func.func @dest_prefetch(%src: memref<528384xi8>, %dst: memref<528384xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<8256x128, mxfp4, axis = 1>
     -> !microscale.qtensor<8256x128, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>,
        memref<528384xi8>, memref<528384xi8>
  return
}
