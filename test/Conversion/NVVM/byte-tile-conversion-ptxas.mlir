// The byte tile kernel's PTX assembles with ptxas for sm_90a and sm_100a:
// a full and an edge kind, tiles that cut K, padded shared rows with
// 4-byte stores, the gather on byte reads (byte-tile-word-gather=false; the word gathers:
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
// The persistent grid (two shared buffers, registers capped; one SM, so
// that its blocks loop) with the
// 16-byte cp.async copies of the second function, for both chips:
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-blocks-per-sm=2},microscale-gpu-to-ptx{sm-count=1})' > %t/persistent.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/persistent.mlir %t/persistent
// RUN: FileCheck %s --check-prefix=PERSIST --input-file %t/persistent/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/persistent/microscale_kernels.ptx -o %t/persistent.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{byte-tile-blocks-per-sm=2},microscale-gpu-to-ptx{chip=sm_100a sm-count=1})' > %t/persistent-blackwell.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/persistent-blackwell.mlir %t/persistent-blackwell
// RUN: %ptxas -arch=sm_100a %t/persistent-blackwell/microscale_kernels.ptx -o %t/persistent-blackwell.cubin
// PERSIST: .entry convert_storage_1
// PERSIST: .maxnreg 128
// PERSIST: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16;
// PERSIST: cp.async.commit_group;
// PERSIST: cp.async.wait_group{{[[:space:]]+}}1;
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

!s3 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -1>>
!b3 = !microscale.qtensor<2x2880x5760, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.blackwell_scale>
func.func @to_blackwell_scale(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !s3 -> !b3, memref<?xi8>, memref<?xi8>
  return
}

// Tiles that cut K (224 scale rows into 2 spans), with an edge tile per
// batch and span.
!k4 = !microscale.qtensor<2x7168x600, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.strided<major_dim = -2>>
!h4 = !microscale.qtensor<2x7168x600, f4E2M1FN, f8E8M0FNU, block = 32, axis = 1, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @cut_k(%src: memref<?xi8>, %dst: memref<?xi8>) {
  microscale.convert_storage scales %src, %dst : !k4 -> !h4, memref<?xi8>, memref<?xi8>
  return
}
