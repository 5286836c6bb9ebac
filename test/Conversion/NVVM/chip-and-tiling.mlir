// The NVIDIA passes take their limits and instructions from the chip model,
// and an explicit tiling from the op's `microscale.tiling` dictionary.
//
// An unknown chip is named, with the chips that are known, never passed on
// to the backend (which aborts on some).
// RUN: not mx-opt %s --microscale-gpu-to-ptx='chip=sm_75' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: microscale-nvvm-outline-conversions: unknown NVIDIA chip 'sm_75' (known: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120a)
// RUN: not mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-outline-matmul{chip=sm_103f})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN2
// UNKNOWN2: unknown NVIDIA chip 'sm_103f'
//
// Every chip of the model lowers the three kernel families' pipeline.
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_120a' | FileCheck %s --check-prefix=SM120
// SM120: .target sm_120a
// sm_100a's PTX is 8.7 in this pipeline, not the chip's 8.6: the tcgen05
// scaled_matmul's kind::mxf4nvf4 needs it.
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a' | FileCheck %s --check-prefix=SM100
// SM100: .version 8.7
// SM100: .target sm_100a
//
// The Hopper dequantization needs bf16x2 arithmetic, which sm_80 lacks.
// RUN: not mx-opt %s --microscale-nvvm-outline-kernels='chip=sm_80' 2>&1 | FileCheck %s --check-prefix=BF16X2
// BF16X2: error: 'microscale.dequantize_storage' op the Hopper dequantization kernel needs bf16x2 arithmetic (mul.rn.bf16x2, sm_90 and newer); sm_80 has none
//
// The grid of the matmul follows the SM count it is planned for: with
// fewer SMs, fewer warps split K (4 per block on one SM, against 16: two
// K chunks each of the 32).
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=SMS
// RUN: mx-opt %s --microscale-nvvm-outline-kernels='sm-count=1' | FileCheck %s --check-prefix=FEW
// SMS: gpu.launch_func @microscale_kernels::@mixed_matmul_2 blocks in (%c4, {{.*}} threads in (%c512
// FEW: gpu.launch_func @microscale_kernels::@mixed_matmul_2 blocks in (%c4, {{.*}} threads in (%c128
//
// microscale-nvvm-set-tiling writes only the options it is given, each to
// the ops it applies to.
// RUN: mx-opt %s --microscale-nvvm-set-tiling='matmul-warp-rows=16 traversal=column-major' | FileCheck %s --check-prefix=SET
// SET: microscale.convert_storage {{.*}} {microscale.tiling = {traversal = "column-major"}}
// SET: microscale.dequantize_storage {{.*}} {microscale.tiling = {traversal = "column-major"}}
// SET: microscale.mixed_matmul_storage {{.*}} {microscale.tiling = {warp_rows = 16 : i64}}
// An enum option outside its values is a parse error.
// RUN: not mx-opt %s --microscale-nvvm-set-tiling='traversal=diagonal' 2>&1 | FileCheck %s --check-prefix=ENUM
// ENUM: for the --traversal option: Cannot find option named 'diagonal'!

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
!w = !microscale.qtensor<4096x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

func.func @kernels(%src: memref<4096xi8>, %dst: memref<16384xi8>,
                   %v: memref<16384xi8>, %s: memref<512xi8>, %o: memref<8192xbf16>,
                   %a: memref<2x4096xbf16>, %wv: memref<131072xi8>, %ws: memref<8192xi8>,
                   %g: f32, %out: memref<2x64xbf16>) {
  microscale.convert_storage values %src, %dst : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  microscale.dequantize_storage %v, %s into %o : !hopper, memref<16384xi8>, memref<512xi8>, memref<8192xbf16>
  microscale.mixed_matmul_storage %a times (%wv, %ws, %g) into %out : memref<2x4096xbf16>, !w, memref<131072xi8>, memref<8192xi8>, memref<2x64xbf16>
  return
}
