// The gfx950 cost count (bench/gfx950/count-valu.py) runs on the ISA that
// mx-opt generates: the HWCVT transcode is 16 FP4->F16 conversions, 16
// packed F16 multiplies and one packed FP6 conversion per 32-element block;
// the LUT transcode uses byte permutes and no conversions. The VALU totals
// are printed, not checked: they belong in docs/, not in a test.
// RUN: %python %microscale_src_root/bench/gfx950/count-valu.py --mx-opt mx-opt | FileCheck %s
// CHECK: kernel,transcoded_blocks,loop_valu,mfma,v_perm,cvt_pk_f16_fp4,pk_mul_f16,cvt_pk32_fp6,vmem,valu_per_transcoded_block
// CHECK-NEXT: a6w6,0,{{[0-9.]+}},{{[0-9]+}},0.0,0.0,0.0,0.0,{{[0-9.]+}},-
// CHECK-NEXT: w4a6_lut,1,{{[0-9.]+}},{{[0-9]+}},{{1[6-9]\.[0-9]}},0.0,0.0,0.0,
// CHECK-NEXT: w4a6_hwcvt,1,{{[0-9.]+}},{{[0-9]+}},0.0,16.0,16.0,1.0,
// CHECK-NEXT: w4a4_lut,2,{{[0-9.]+}},{{[0-9]+}},{{3[2-9]\.[0-9]}},0.0,0.0,0.0,
// CHECK-NEXT: w4a4_hwcvt,2,{{[0-9.]+}},{{[0-9]+}},0.0,32.0,32.0,2.0,
