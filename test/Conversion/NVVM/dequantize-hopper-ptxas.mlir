// The Hopper dequantization's PTX, inline sequences included, assembles
// with ptxas for sm_90a: the staged kernel (folded, with its exact
// fallback), the staged kernel unfolded, and the per-word kernel; both
// mx_axis values.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t/plain.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/plain.mlir %t/plain
// RUN: FileCheck %s --input-file %t/plain/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/plain/microscale_kernels.ptx -o %t/plain.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{fold-scale-bias=false},microscale-gpu-to-ptx)' > %t/unfolded.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/unfolded.mlir %t/unfolded
// RUN: %ptxas -arch=sm_90a %t/unfolded/microscale_kernels.ptx -o %t/unfolded.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{stage-dequantize=false traversal=column-major},microscale-gpu-to-ptx)' > %t/per-word.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/per-word.mlir %t/per-word
// RUN: %ptxas -arch=sm_90a %t/per-word/microscale_kernels.ptx -o %t/per-word.cubin
// CHECK: .target sm_90a
// CHECK: .entry dequantize_hopper_0(
// CHECK: .shared .align 16
// The folded sequence (no bias), then the exact one.
// CHECK: and.b32 {{.*}}, 0x81C081C0
// CHECK: mov.b32 bias, 0x7E807E80
// CHECK-NEXT: and.b32 {{.*}}, 0x81C081C0
// CHECK: mul.rn.bf16x2
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK: .entry dequantize_hopper_1(
!w = !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!w1 = !microscale.qtensor<2x256x512, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 8>>
func.func @dequantize(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  microscale.dequantize_storage %v, %s into %o : !w1, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}
