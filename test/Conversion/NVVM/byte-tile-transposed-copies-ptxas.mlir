// The byte tile kernel's transposed copy-in (byte-tile-transposed-copies)
// in PTX, assembled by ptxas for sm_90a and sm_100a: gpt-oss's scales
// ([E, 90, N], N = 320: an edge tile per batch) from the N-contiguous form
// into the K-contiguous one. Each group of four source rows is loaded as
// four 16-byte chunks, transposed 4 x 4 bytes at a time (32 permutes) and
// stored to shared memory; the gather then reads words, two per
// destination word, never a byte.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-transposed-copies=true},microscale-gpu-to-ptx)' > %t/out.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/out.mlir %t/ptx
// RUN: FileCheck %s --input-file %t/ptx/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/ptx/microscale_kernels.ptx -o %t/k.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-transposed-copies=true},microscale-gpu-to-ptx{chip=sm_100a})' > %t/blackwell.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/blackwell.mlir %t/blackwell
// RUN: %ptxas -arch=sm_100a %t/blackwell/microscale_kernels.ptx -o %t/blackwell.cubin
// CHECK-NOT: ld.shared.{{[bus]}}8
// CHECK-NOT: cp.async
// CHECK: .entry convert_storage_0(
// CHECK-COUNT-4: ld.global.nc.v4.b32
// CHECK-COUNT-32: prmt.b32
// CHECK: st.shared
// CHECK: bar.sync
// CHECK-COUNT-8: ld.shared.b32
// CHECK-COUNT-4: prmt.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: ld.shared.{{[bus]}}8
// CHECK-NOT: cp.async

!n = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!k = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
func.func @transpose(%src: memref<57600xi8>, %dst: memref<57600xi8>) {
  microscale.convert_storage scales %src, %dst : !n -> !k, memref<57600xi8>, memref<57600xi8>
  return
}
