// The staged conversion kernel's PTX into and out of the Hopper image
// assembles with ptxas for sm_90a and sm_100a: the nibble exchange as one
// lop3 select per word, Step B's multiply terms (mul.lo and mul.hi by sums
// of powers of two) in both directions.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t/hopper.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/hopper.mlir %t/hopper
// RUN: FileCheck %s --input-file %t/hopper/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/hopper/microscale_kernels.ptx -o %t/hopper.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-gpu-to-ptx{chip=sm_100a})' > %t/blackwell.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/blackwell.mlir %t/blackwell
// RUN: %ptxas -arch=sm_100a %t/blackwell/microscale_kernels.ptx -o %t/blackwell.cubin
// CHECK: .entry convert_storage_0
// CHECK-COUNT-8: lop3.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0xF0F0F0F, %r{{[0-9]+}}, 0xE2;
// CHECK: prmt.b32
// CHECK: mul.hi.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, 1090519040;
// CHECK: mul.lo.s32 %r{{[0-9]+}}, %r{{[0-9]+}}, 4160;
// CHECK: .entry convert_storage_1
// CHECK: mul.hi.u32
// CHECK: mul.lo.s32
!s = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.strided<major_dim = -2>>
!h = !microscale.qtensor<2x256x512, f4E2M1FN, f8E8M0FNU, block = 2, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
func.func @round_trip(%src: memref<131072xi8>, %mid: memref<131072xi8>, %dst: memref<131072xi8>) {
  microscale.convert_storage values %src, %mid : !s -> !h, memref<131072xi8>, memref<131072xi8>
  microscale.convert_storage values %mid, %dst : !h -> !s, memref<131072xi8>, memref<131072xi8>
  return
}
