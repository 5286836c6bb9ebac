// RUN: mx-opt %s --microscale-lower-storage-conversions --canonicalize --cse | FileCheck %s
// RUN: mx-opt %s --microscale-lower-storage-conversions=vector-bytes=0 | FileCheck %s --check-prefix=UNITS
// RUN: mx-opt %s --microscale-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

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

// Padded storage (M = 64 is padded to 256 by Hopper's layout): unit by unit.
// CHECK-LABEL: func @padded_keeps_units
// CHECK-NOT: vector.
// CHECK: scf.parallel
// CHECK-NOT: vector.
func.func @padded_keeps_units(%src: memref<4096xi8>, %dst: memref<16384xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<64x128, mxfp4, axis = 1>
     -> !microscale.qtensor<64x128, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>>,
        memref<4096xi8>, memref<16384xi8>
  return
}
