// RUN: mx-opt %s --split-input-file --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-conversions=false},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=OFF
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{block-size=128},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=T128
// RUN: mx-opt %s --split-input-file --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{byte-tile-word-gather=false},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=BYTES
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
// padded against bank conflicts (4-byte stores); phase 2: per destination
// chunk one table entry (offset, gather base | pattern), the pattern (slot
// offsets and permute selectors), then its 16 bytes, which lie in 4 shared
// words (a 4 x 4 byte transpose): 4 word reads and 3 permutes per
// destination word (16 byte reads with byte-tile-word-gather=false), one
// 16-byte store.
!s = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @to_hopper_scale
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c6, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<57600xi8>, %{{.*}} : memref<92160xi8>)
// CHECK: memref.global "private" constant @convert_storage_0_gather_patterns : memref<{{[0-9]+}}xi16> = {{.*}} {alignment = 32 : i64}
// CHECK: memref.global "private" constant @convert_storage_0_dest_chunks : memref<{{[0-9]+}}xi32> = {{.*}} {alignment = 8 : i64}
// CHECK: memref.global "private" constant @convert_storage_0_source_chunks
// CHECK: gpu.func @convert_storage_0(%arg0: memref<57600xi8> {{.*}}, %arg1: memref<92160xi8> {{.*}}) workgroup(%[[S:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// The edge tile, then the full one.
// CHECK: scf.if
// CHECK: vector.load %arg0[%{{.*}}] {alignment = 16 : i64} : memref<57600xi8>, vector<16xi8>
// CHECK: vector.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 4 : i64}
// CHECK: gpu.barrier
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<{{[0-9]+}}xi32>, vector<2xi32>
// CHECK: vector.load %{{.*}} {alignment = 32 : i64} : memref<{{[0-9]+}}xi16>, vector<16xi16>
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
func.func @to_hopper_scale(%src: memref<57600xi8>, %dst: memref<92160xi8>) {
  microscale.convert_storage scales %src, %dst : !s -> !h, memref<57600xi8>, memref<92160xi8>
  return
}

// -----

// A transpose of Qwen3's scales ([E, 24, 2048]): K-contiguous to
// N-contiguous: tiles of 512 columns x 24 rows (12 KiB), 4 per batch, every
// tile full.
!k = !microscale.qtensor<3x768x2048, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
!n = !microscale.qtensor<3x768x2048, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
// CHECK-LABEL: func.func @transpose
// CHECK: gpu.launch_func @microscale_kernels::@convert_storage_0 blocks in (%c12, %c1, %c1) threads in (%c256, %c1, %c1)
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
