// scaled_matmul_storage -> one gfx950 kernel of scaled MFMAs, with the
// NVFP4 B32 weight transcoded in registers: the LUT variant in VALU bit
// operations and v_perm_b32, the HWCVT variant in the hardware conversions.
// RUN: mx-opt %s --microscale-rocdl-outline-scaled-matmul | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-gfx950 > %t/lowered.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/lowered.mlir %t
// RUN: FileCheck %s --check-prefix=ISA --input-file %t/microscale_gfx950_kernels.s
// RUN: llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx950 -filetype=obj %t/microscale_gfx950_kernels.s -o %t/kernels.o

!a6 = !microscale.qtensor<64x128, mxfp6_e2m3, axis = 1>
!a4 = !microscale.qtensor<64x128, nvfp4_b32, axis = 1>
!w4 = !microscale.qtensor<128x96, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.cdna4_scale>

// IR-LABEL: func.func @w4a6_lut
// IR: %[[C3:.*]] = arith.constant 3 : index
// IR: %[[C2:.*]] = arith.constant 2 : index
// IR: %[[C64:.*]] = arith.constant 64 : index
// IR: gpu.launch_func @microscale_gfx950_kernels::@scaled_matmul_0 blocks in (%[[C3]], %[[C2]], %{{.*}}) threads in (%[[C64]], %{{.*}}, %{{.*}})
func.func @w4a6_lut(%av: memref<6144xi8>, %as: memref<256xi8>, %ag: f32,
                    %wv: memref<6144xi8>, %ws: memref<768xi8>, %wg: f32,
                    %out: memref<6144xf32>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      {variant = #microscale.transcode_variant<lut>}
      : !a6, !w4, memref<6144xi8>, memref<256xi8>, memref<6144xi8>, memref<768xi8>, memref<6144xf32>
  return
}

// IR-LABEL: func.func @w4a4_hwcvt
// IR: gpu.launch_func @microscale_gfx950_kernels::@scaled_matmul_1
func.func @w4a4_hwcvt(%av: memref<4096xi8>, %as: memref<256xi8>, %ag: f32,
                      %wv: memref<6144xi8>, %ws: memref<768xi8>, %wg: f32,
                      %out: memref<6144xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      {variant = #microscale.transcode_variant<hwcvt>, exponent_bump = #microscale.exponent_bump<mantissa_at_least_3>}
      : !a4, !w4, memref<4096xi8>, memref<256xi8>, memref<6144xi8>, memref<768xi8>, memref<6144xbf16>
  return
}

// The LUT kernel: MXFP6 activations loaded as they are (24 bytes a lane),
// the weight's 16 bytes transcoded with byte permutes.
// IR: gpu.module @microscale_gfx950_kernels
// IR: gpu.func @scaled_matmul_0(%{{.*}}: memref<6144xi8> {llvm.align = 16 : i64, llvm.noalias}
// IR-SAME: kernel
// IR: scf.for
// IR: vector.load %{{.*}} {alignment = 8 : i64} : memref<6144xi8>, vector<24xi8>
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<6144xi8>, vector<16xi8>
// IR: math.ctlz
// IR: llvm.call_intrinsic "llvm.amdgcn.perm"
// IR: amdgpu.scaled_mfma 32x32x64 (%{{.*}}[0] * %{{.*}}) * (%{{.*}}[0] * %{{.*}}) + %{{.*}} : f8E8M0FNU, vector<32xf6E2M3FN>, f8E8M0FNU, vector<32xf6E2M3FN>, vector<16xf32>
// IR: scf.yield
// The HWCVT kernel: both operands through the hardware conversions.
// IR: gpu.func @scaled_matmul_1
// IR: rocdl.cvt.scalef32.pk.f16.fp4 %{{.*}}[0]
// IR: arith.mulf %{{.*}} : vector<2xf16>
// IR: rocdl.cvt.scalef32.pk32.fp6.f16 %{{.*}} : vector<6xi32>
// IR: amdgpu.scaled_mfma 32x32x64
// IR-NOT: llvm.amdgcn.perm
// IR: arith.truncf %{{.*}} : f32 to bf16

// ISA: .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
// ISA-LABEL: scaled_matmul_0:
// ISA: v_perm_b32
// FP6 E2M3 is format code 2 for both operands (cbsz for A, blgp for B).
// ISA: v_mfma_scale_f32_32x32x64_f8f6f4 {{.*}} cbsz:2 blgp:2
// ISA-LABEL: scaled_matmul_1:
// ISA: v_cvt_scalef32_pk_f16_fp4
// ISA: v_pk_mul_f16
// ISA: v_cvt_scalef32_pk32_fp6_f16
// ISA: v_mfma_scale_f32_32x32x64_f8f6f4 {{.*}} cbsz:2 blgp:2
