// The per-unit loop (the block route, which takes most of these, is off;
// see block-conversion.mlir).
// RUN: mx-opt %s --microscale-lower-storage-conversions=vector-bytes=0 --canonicalize --cse | FileCheck %s
// RUN: mx-opt %s --microscale-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>

// One parallel loop over the destination's 4-byte Hopper words: every
// iteration gathers its 8 nibbles from the canonical bytes (loads from %src
// only), interleaves their bits, and stores the 4 bytes of its word (stores
// to %dst only). Nothing is allocated.
// CHECK-LABEL: func @values_to_hopper
// CHECK-SAME: (%[[SRC:.*]]: memref<4096xi8>, %[[DST:.*]]: memref<16384xi8>)
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[U:.*]]) = (%{{.*}}) to (%c4096) step
// CHECK-COUNT-8: memref.load %[[SRC]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[DST]]
// CHECK-NOT: memref.alloc
// LLVM-LABEL: llvm.func @values_to_hopper
// LLVM-NOT: microscale.
// LLVM-NOT: scf.
func.func @values_to_hopper(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  microscale.convert_storage values %src, %dst : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}

// Scales: one byte per unit, with the caller's unit range.
// CHECK-LABEL: func @scales_range
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[E:[a-z0-9]+]]: index
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%{{.*}}) = (%[[B]]) to (%[[E]]) step
// CHECK-COUNT-1: memref.load
// CHECK-COUNT-1: memref.store
func.func @scales_range(%src: memref<?xi8>, %dst: memref<?xi8>, %b: index, %e: index) {
  microscale.convert_storage scales %src, %dst units [%b, %e] : !hopper -> !canon, memref<?xi8>, memref<?xi8>
  return
}
