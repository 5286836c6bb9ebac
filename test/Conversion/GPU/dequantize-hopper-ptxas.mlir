// The Hopper dequantization's PTX, inline sequences included (both
// variants), assembles with ptxas for sm_90a.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t/plain.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/plain.mlir %t/plain
// RUN: FileCheck %s --input-file %t/plain/microscale_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/plain/microscale_kernels.ptx -o %t/plain.cubin
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-convert-storage-to-gpu{fold-scale-bias=true traversal=column-major},microscale-gpu-to-ptx)' > %t/folded.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/folded.mlir %t/folded
// RUN: %ptxas -arch=sm_90a %t/folded/microscale_kernels.ptx -o %t/folded.cubin
// CHECK: .target sm_90a
// CHECK: mov.b32 bias, 0x7E807E80
// CHECK-NEXT: and.b32 {{.*}}, 0x81C081C0
// CHECK: mul.rn.bf16x2
!w = !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
func.func @dequantize(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}
