// RUN: mx-opt %s --split-input-file --microscale-convert-storage-to-gpu --verify-diagnostics | FileCheck %s
// RUN: mx-opt %s --split-input-file --microscale-gpu-to-ptx --verify-diagnostics | FileCheck %s --check-prefix=PTX

// mxfp4 in the Hopper layouts -> bf16: one thread per 32-bit word (65536
// words: 256 blocks of 256), the values read as 32-bit words, seed 000's
// decode as inline PTX (masks 0x81C081C0 etc., then mul.rn.bf16x2 by 2^126
// and by the scales), the scale code put into both bf16 exponents.
!w = !microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// CHECK-LABEL: func.func @dequantize
// CHECK: %[[WORDS:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<262144xi8> to memref<65536xi32>
// CHECK: gpu.launch_func @microscale_kernels::@dequantize_hopper_0 blocks in (%c256, %c1, %c1) threads in (%c256{{.*}}, %c1, %c1) args(%[[WORDS]] : memref<65536xi32>
// CHECK: gpu.func @dequantize_hopper_0
// CHECK: memref.load %{{.*}} : memref<65536xi32>
// CHECK: llvm.inline_asm {{.*}}"{\0A.reg .b32 t0, t1, bias;\0Amov.b32 bias, 0x7E807E80;\0Aand.b32 $0, $4, 0x81C081C0;
// CHECK-SAME: mul.rn.bf16x2 $0, $0, bias;
// CHECK-SAME: mul.rn.bf16x2 $0, $0, $5;
// CHECK-SAME: "=r,=r,=r,=r,r,r,r"
// CHECK-COUNT-8: memref.store %{{.*}} : memref<524288xbf16>
// PTX: .visible .entry dequantize_hopper_0(
// PTX-SAME: and.b32
// PTX-SAME: mul.rn.bf16x2
func.func @dequantize(%v: memref<262144xi8>, %s: memref<16384xi8>, %o: memref<524288xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<262144xi8>, memref<16384xi8>, memref<524288xbf16>
  return
}

// -----

!w = !microscale.qtensor<2x64, mxfp4, axis = 1>
func.func @other_layouts(%v: memref<64xi8>, %s: memref<4xi8>, %o: memref<128xbf16>) {
  // expected-error @+1 {{on the GPU, dequantize_storage is lowered for mxfp4 in #microscale.hopper_value<mma_version = 3> with #microscale.hopper_scale of the same mx_axis, bf16 results and OCP E8M0 edges}}
  microscale.dequantize_storage %v, %s into %o : !w, memref<64xi8>, memref<4xi8>, memref<128xbf16>
  return
}

// -----

// fold-scale-bias: the 2^126 bias folded into 2^(s-1) for words whose two
// scale codes are <= 128 (15 instructions: no bias multiply), the exact
// unfolded sequence for the others.
// RUN: mx-opt %s --split-input-file --microscale-convert-storage-to-gpu='fold-scale-bias=true' --verify-diagnostics | FileCheck %s --check-prefix=FOLD
!w = !microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
// FOLD-LABEL: func.func @folded
// FOLD: gpu.func @dequantize_hopper
// FOLD: arith.cmpi ule, %{{.*}}, %c128_i32
// FOLD: scf.if %{{.*}} -> (i32, i32, i32, i32)
// FOLD: llvm.inline_asm
// FOLD-NOT: bias
// FOLD-SAME: mul.rn.bf16x2 $0, $0, $5;
// FOLD: } else {
// FOLD: llvm.inline_asm {{.*}}mul.rn.bf16x2 $0, $0, bias;
func.func @folded(%v: memref<262144xi8>, %s: memref<16384xi8>, %o: memref<524288xbf16>) {
  microscale.dequantize_storage %v, %s into %o : !w, memref<262144xi8>, memref<16384xi8>, memref<524288xbf16>
  return
}
