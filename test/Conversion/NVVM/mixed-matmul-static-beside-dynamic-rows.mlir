// bf16 x MXFP4 with lhs rows static and out rows known at run time only
// (or the reverse): the kernels are the variants of rows known at run time,
// and the static buffer is passed as the same unbounded flat array as the
// dynamic one (memref.reinterpret_cast: memref.cast cannot change a static
// extent), for the K-major kernel and the Hopper-layout kernels alike. The
// rows are the smaller of the two. Both PTXs assemble for sm_90a. (Host
// emulation against float64 of the Hopper-layout case:
// HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

// CHECK-LABEL: func.func @k_major
// CHECK: %[[LHS:.*]] = memref.collapse_shape %arg0 {{.*}} : memref<100x256xbf16> into memref<25600xbf16>
// CHECK: %[[CAST_LHS:.*]] = memref.reinterpret_cast %[[LHS]] to offset: [0], sizes: [1099511627776], strides: [1] : memref<25600xbf16> to memref<1099511627776xbf16>
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_0_rows{{[0-9]+}} {{.*}}args(%[[CAST_LHS]] : memref<1099511627776xbf16>
func.func @k_major(%a: memref<100x256xbf16>, %v: memref<16384xi8>, %s: memref<1024xi8>, %g: f32, %o: memref<?x128xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<100x256xbf16>, !microscale.qtensor<256x128, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<16384xi8>, memref<1024xi8>, memref<?x128xbf16>
  return
}

// CHECK-LABEL: func.func @hopper_layout
// CHECK: %[[OUT:.*]] = memref.collapse_shape %arg4 {{.*}} : memref<100x80xbf16> into memref<8000xbf16>
// CHECK: memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [1099511627776], strides: [1] : memref<8000xbf16> to memref<1099511627776xbf16>
// CHECK: arith.minui
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_{{[0-9]+}}_rows257
func.func @hopper_layout(%a: memref<?x160xbf16>, %v: memref<32768xi8>, %s: memref<768xi8>, %g: f32, %o: memref<100x80xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x160xbf16>, !microscale.qtensor<160x80, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<32768xi8>, memref<768xi8>, memref<100x80xbf16>
  return
}
