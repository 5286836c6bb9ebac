// The Hopper-layout decode kernel at one row: where each warp's K range is
// a few chunks (gpt-oss: K = 2880, 45 chunks), the planner takes light
// warps (one 16-column tile, one chunk ahead: 64 registers) and splits K
// as far as every block still fits in one wave; with long ranges (8192^2:
// 128 chunks) it keeps two tiles per warp. At staged rows (2 to 8, one row
// tile) light warps hold two 16-column tiles and load one chunk ahead (two
// where their ranges would exceed 8 chunks), split as far as one wave
// allows, on weights whose 32-column blocks reach a third of the SMs. At
// 8 rows the decode kernel is taken only where its plan is light warps
// whose blocks fill their waves of SMs (else the wgmma kernel, as from 9
// rows). Every kernel assembles with ptxas for sm_90a. (Host emulation of light
// plans: HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

// 2880 x 5760: 360 blocks of 10 warps (3 per SM by registers), ranges of
// 4 and 5 chunks.
// CHECK-LABEL: func.func @mlp1
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_0 blocks in (%c360, %c1, %c1{{.*}}) threads in (%c320,
func.func @mlp1(%a: memref<1x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<1x5760xbf16>
  return
}

// 2880 x 2880: 180 blocks of 15 warps, ranges of 3 chunks.
// CHECK-LABEL: func.func @mlp2
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_1 blocks in (%c180, %c1, %c1{{.*}}) threads in (%c480,
func.func @mlp2(%a: memref<1x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<1x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x2880xbf16>, !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<4521984xi8>, memref<264960xi8>, memref<1x2880xbf16>
  return
}

// 8192 x 8192: two 16-column tiles per warp (256 blocks of 8 warps).
// CHECK-LABEL: func.func @square
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_2 blocks in (%c256, %c1, %c1{{.*}}) threads in (%c256{{[_0-9]*}},
func.func @square(%a: memref<1x8192xbf16>, %v: memref<33554432xi8>, %s: memref<2097152xi8>, %g: f32, %o: memref<1x8192xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x8192xbf16>, !microscale.qtensor<8192x8192, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<33554432xi8>, memref<2097152xi8>, memref<1x8192xbf16>
  return
}

// 2880 x 2880, 4 rows: 90 blocks of 15 warps (one per SM), ranges of 3
// chunks.
// CHECK-LABEL: func.func @mlp2_rows4
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_3 blocks in (%c90, %c1, %c1{{.*}}) threads in (%c480{{[_0-9]*}},
func.func @mlp2_rows4(%a: memref<4x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<4x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x2880xbf16>, !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<4521984xi8>, memref<264960xi8>, memref<4x2880xbf16>
  return
}

// 2880 x 5760, 7 rows: 180 blocks of 10 warps (two per SM at 96
// registers), ranges of 4 and 5 chunks.
// CHECK-LABEL: func.func @mlp1_rows7
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_4 blocks in (%c180, %c1, %c1{{.*}}) threads in (%c320{{[_0-9]*}},
func.func @mlp1_rows7(%a: memref<7x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<7x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<7x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<7x5760xbf16>
  return
}

// 8192 x 8192, 4 rows: 10 warps one chunk ahead would have ranges of 13
// chunks; 8 warps two chunks ahead (two blocks per SM at 128 registers)
// take ranges of 16.
// CHECK-LABEL: func.func @square_rows4
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_5 blocks in (%c256, %c1, %c1{{.*}}) threads in (%c256{{[_0-9]*}},
func.func @square_rows4(%a: memref<4x8192xbf16>, %v: memref<33554432xi8>, %s: memref<2097152xi8>, %g: f32, %o: memref<4x8192xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x8192xbf16>, !microscale.qtensor<8192x8192, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<33554432xi8>, memref<2097152xi8>, memref<4x8192xbf16>
  return
}

// 1504 x 1000, 4 rows: 32 blocks of 32 columns would leave most SMs
// idle; the planner's 63 blocks of 16 columns stay.
// CHECK-LABEL: func.func @narrow_rows4
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_6 blocks in (%c63, %c1, %c1{{.*}}) threads in (%c192{{[_0-9]*}},
func.func @narrow_rows4(%a: memref<4x1504xbf16>, %v: memref<786432xi8>, %s: memref<49152xi8>, %g: f32, %o: memref<4x1000xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x1504xbf16>, !microscale.qtensor<1504x1000, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<786432xi8>, memref<49152xi8>, memref<4x1000xbf16>
  return
}

// 14336 x 4096, one row (224 chunks: too long for light warps): the
// planner's split, by the schedulers' register files (two blocks of 10
// warps per SM, where whole groups of 4 warps would hold 19 on one).
// CHECK-LABEL: func.func @long_k
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_7 blocks in (%c256, %c1, %c1{{.*}}) threads in (%c320{{[_0-9]*}},
func.func @long_k(%a: memref<1x14336xbf16>, %v: memref<29360128xi8>, %s: memref<1835008xi8>, %g: f32, %o: memref<1x4096xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x14336xbf16>, !microscale.qtensor<14336x4096, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<29360128xi8>, memref<1835008xi8>, memref<1x4096xbf16>
  return
}

// 2880 x 2880 at 8 rows: light warps (90 blocks of 15), the decode kernel.
// CHECK-LABEL: func.func @mlp2_rows8
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_8 blocks in (%c90, %c1, %c1{{.*}}) threads in (%c480{{[_0-9]*}},
func.func @mlp2_rows8(%a: memref<8x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<8x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<8x2880xbf16>, !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<4521984xi8>, memref<264960xi8>, memref<8x2880xbf16>
  return
}

// 5120 x 13824 at 8 rows (80 chunks, 432 blocks of 32 columns: no light
// split within 16 chunks a warp): the wgmma kernel, as at 9 rows and more.
// CHECK-LABEL: func.func @wide_rows8
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_9 blocks in (%c216, %c1, %c2)
func.func @wide_rows8(%a: memref<8x5120xbf16>, %v: memref<35389440xi8>, %s: memref<2211840xi8>, %g: f32, %o: memref<8x13824xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<8x5120xbf16>, !microscale.qtensor<5120x13824, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<35389440xi8>, memref<2211840xi8>, memref<8x13824xbf16>
  return
}

// 2880 x 5760 at 8 rows: light warps, but 180 blocks on 132 SMs fill 68%
// of two waves' slots: the wgmma kernel.
// CHECK-LABEL: func.func @mlp1_rows8
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_10 blocks in (%c90, %c1, %c5)
func.func @mlp1_rows8(%a: memref<8x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<8x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<8x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<8x5760xbf16>
  return
}

// 8192 x 8192 at 8 rows: light warps in 256 blocks, 97% of two waves'
// slots: the decode kernel.
// CHECK-LABEL: func.func @square_rows8
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_hopper_11 blocks in (%c256, %c1, %c1{{.*}}) threads in (%c256{{[_0-9]*}},
func.func @square_rows8(%a: memref<8x8192xbf16>, %v: memref<33554432xi8>, %s: memref<2097152xi8>, %g: f32, %o: memref<8x8192xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<8x8192xbf16>, !microscale.qtensor<8192x8192, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<33554432xi8>, memref<2097152xi8>, memref<8x8192xbf16>
  return
}
