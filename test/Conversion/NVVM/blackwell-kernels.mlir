// Every NVIDIA kernel family lowers for sm_100a and sm_120a, and ptxas
// assembles the result for that chip: layout conversions (staged and
// per-unit), the Hopper-layout dequantization (seed 000's bit trick), the
// Blackwell-layout dequantization with native FP4 conversions (folded with
// its exact fallback, and unfolded), and the bf16 x MXFP4 mma.sync matmul.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a' > %t/sm100.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/sm100.mlir %t/sm100
// RUN: FileCheck %s --input-file %t/sm100/microscale_kernels.ptx --check-prefixes=CHECK,SM100
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t/sm100/microscale_kernels.ptx -o %t/sm100.cubin %}
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_120a' > %t/sm120.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/sm120.mlir %t/sm120
// RUN: FileCheck %s --input-file %t/sm120/microscale_kernels.ptx --check-prefixes=CHECK,SM120
// RUN: %if ptxas %{ %ptxas -arch=sm_120a %t/sm120/microscale_kernels.ptx -o %t/sm120.cubin %}
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{fold-scale-bias=false},microscale-gpu-to-ptx{chip=sm_100a})' > %t/exact.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/exact.mlir %t/exact
// RUN: FileCheck %s --input-file %t/exact/microscale_kernels.ptx --check-prefix=EXACT
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t/exact/microscale_kernels.ptx -o %t/exact.cubin %}
//
// The pipeline's own ptxas run (format=bin) for both chips.
// RUN: %if ptxas %{ mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a format=bin toolkit=%cuda_toolkit' | FileCheck %s --check-prefix=BIN100 %}
// RUN: %if ptxas %{ mx-opt %s --microscale-gpu-to-ptx='chip=sm_120a format=bin toolkit=%cuda_toolkit' | FileCheck %s --check-prefix=BIN120 %}
// BIN100: chip = "sm_100a", features = "+ptx87"
// BIN100-SAME: bin = "\7FELF
// BIN120: chip = "sm_120a", features = "+ptx87"
// BIN120-SAME: bin = "\7FELF
//
// SM100: .version 8.7
// SM100: .target sm_100a
// SM120: .version 8.7
// SM120: .target sm_120a
// CHECK: .entry convert_storage_0(
// CHECK: .entry convert_storage_1(
// The native decode: folded scale pair (2^112 in), then the decode.
// CHECK: .entry dequantize_blackwell_2(
// CHECK: .shared .align 16
// CHECK: setp.gt.u16 {{.*}}, 142
// CHECK: cvt.rn.bf16x2.ue8m0x2
// CHECK-NEXT: mov.b32 bias, 0x77807780
// CHECK-NEXT: mul.rn.bf16x2 p, p, bias
// CHECK: cvt.rn.f16x2.e2m1x2 h, b0
// CHECK-NEXT: and.b32 t, h, 0x7FFF7FFF
// CHECK-NEXT: shr.b32 t, t, 3
// CHECK: st.shared.b32
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK: .entry dequantize_hopper_3(
// CHECK: and.b32 {{.*}}, 0x81C081C0
// CHECK: .entry mixed_matmul_4(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//
// Unfolded: no branch on the codes, the 2^112 multiply in the decode, NaN
// for code 255.
// EXACT: .entry dequantize_blackwell_2(
// EXACT-NOT: setp.gt.u16 {{.*}}, 142
// EXACT: cvt.rn.bf16x2.ue8m0x2
// EXACT: cvt.rn.f16x2.e2m1x2
// EXACT: mov.b32 bias, 0x77807780
// EXACT: setp.eq.b16 {{.*}}, 255
// EXACT: .entry dequantize_hopper_3(

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!bwv = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.blackwell_value>
!bw = !microscale.qtensor<2x256x192, mxfp4, axis = 1, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
!w = !microscale.qtensor<4096x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

func.func @kernels(%src: memref<4096xi8>, %dst: memref<16384xi8>, %bv: memref<16384xi8>,
                   %v: memref<16384xi8>, %s: memref<512xi8>, %o: memref<8192xbf16>,
                   %wv2: memref<?xi8>, %ws2: memref<?xi8>, %o2: memref<?xbf16>,
                   %a: memref<2x4096xbf16>, %wv: memref<131072xi8>, %ws: memref<8192xi8>,
                   %g: f32, %out: memref<2x64xbf16>) {
  microscale.convert_storage values %src, %dst : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  microscale.convert_storage values %src, %bv : !canon -> !bwv, memref<4096xi8>, memref<16384xi8>
  microscale.dequantize_storage %v, %s into %o : !hopper, memref<16384xi8>, memref<512xi8>, memref<8192xbf16>
  microscale.dequantize_storage %wv2, %ws2 into %o2 : !bw, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  microscale.mixed_matmul_storage %a times (%wv, %ws, %g) into %out : memref<2x4096xbf16>, !w, memref<131072xi8>, memref<8192xi8>, memref<2x64xbf16>
  return
}
