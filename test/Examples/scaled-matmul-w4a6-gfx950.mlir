// The gfx950 example compiles as its header says, to gfx950 assembly that
// llvm-mc accepts, and for the host.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %microscale_src_root/examples/scaled-matmul-w4a6-gfx950.mlir --microscale-lower-to-storage \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --microscale-gpu-to-gfx950 > %t/gfx950.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file %t/gfx950.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/gfx950.mlir %t
// RUN: FileCheck %s --input-file %t/microscale_gfx950_kernels.s
// RUN: llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx950 -filetype=obj %t/microscale_gfx950_kernels.s -o %t/kernels.o
// RUN: mx-opt %microscale_src_root/examples/scaled-matmul-w4a6-gfx950.mlir --microscale-lower-to-storage \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --microscale-cpu-to-llvm | FileCheck %s --check-prefix=CPU

// A (128 / 32) x (64 / 32) grid of 64-lane waves, writing the bf16 result
// into the only allocation: no copies of the operands.
// HOST-NOT: memref.copy
// HOST: %[[OUT:.*]] = memref.alloc() : memref<8192xbf16>
// HOST-NOT: memref.alloc
// HOST: gpu.launch_func @microscale_gfx950_kernels::@scaled_matmul_0 blocks in (%c4, %c2, %c1) threads in (%c64, %c1, %c1)
// HOST-SAME: %[[OUT]] : memref<8192xbf16>
// CHECK: v_cvt_scalef32_pk_f16_fp4
// CHECK: v_cvt_scalef32_pk32_fp6_f16
// CHECK: v_mfma_scale_f32_32x32x64_f8f6f4 {{.*}} cbsz:2 blgp:2
// CPU: llvm.func @w4a6
