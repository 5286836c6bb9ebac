// The byte tile kernel's word gathers in PTX, assembled by ptxas for
// sm_90a and sm_100a: gpt-oss's scales ([E, 90, N], N = 320: edge tiles too) from the
// N-contiguous form into Hopper's (each 16-byte destination chunk from 4
// shared words: 12 permutes) and from Hopper's into the K-contiguous form
// (each destination word from 2 shared words: 8 word reads and 4 permutes
// per chunk). Shared memory is read a word at a time, never a byte.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t/out.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/out.mlir %t/ptx
// RUN: FileCheck %s --input-file %t/ptx/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/ptx/microscale_kernels.ptx -o %t/k.cubin
// RUN: mx-opt %s --microscale-gpu-to-ptx="chip=sm_100a" > %t/blackwell.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/blackwell.mlir %t/blackwell
// RUN: %ptxas -arch=sm_100a %t/blackwell/microscale_kernels.ptx -o %t/blackwell.cubin
// CHECK-NOT: ld.shared.{{[bus]}}8
// CHECK: .entry convert_storage_0(
// CHECK: bar.sync
// CHECK-COUNT-4: ld.shared.b32
// CHECK-COUNT-12: prmt.b32
// CHECK: st.global.v4.b32
// CHECK: .entry convert_storage_1(
// CHECK: bar.sync
// CHECK-COUNT-8: ld.shared.b32
// CHECK-COUNT-4: prmt.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: ld.shared.{{[bus]}}8

!s = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!k = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
func.func @quads(%src: memref<57600xi8>, %dst: memref<92160xi8>) {
  microscale.convert_storage scales %src, %dst : !s -> !h, memref<57600xi8>, memref<92160xi8>
  return
}
func.func @pairs(%src: memref<92160xi8>, %dst: memref<57600xi8>) {
  microscale.convert_storage scales %src, %dst : !h -> !k, memref<92160xi8>, memref<57600xi8>
  return
}
