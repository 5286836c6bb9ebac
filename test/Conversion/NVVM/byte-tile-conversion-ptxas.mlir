// The byte tile kernel's PTX assembles with ptxas for sm_90a and sm_100a:
// a full and an edge kind, padded shared rows with 4-byte stores, the
// gather on byte reads (byte-tile-word-gather=false; the word gathers:
// byte-tile-word-gather-ptxas.mlir).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-word-gather=false},microscale-gpu-to-ptx)' > %t/hopper.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/hopper.mlir %t/hopper
// RUN: FileCheck %s --input-file %t/hopper/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/hopper/microscale_kernels.ptx -o %t/hopper.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-word-gather=false},microscale-gpu-to-ptx{chip=sm_100a})' > %t/blackwell.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/blackwell.mlir %t/blackwell
// RUN: %ptxas -arch=sm_100a %t/blackwell/microscale_kernels.ptx -o %t/blackwell.cubin
// CHECK: .entry convert_storage_0
// CHECK: ld.global.nc.s32
// CHECK: ld.global.nc.v4.b32
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.global.nc.v2.b32
// CHECK: ld.shared.b8
// CHECK: st.global.v4.b32
!s = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!h = !microscale.qtensor<2x2880x320, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @to_hopper_scale(%src: memref<57600xi8>, %dst: memref<92160xi8>) {
  microscale.convert_storage scales %src, %dst : !s -> !h, memref<57600xi8>, memref<92160xi8>
  return
}
