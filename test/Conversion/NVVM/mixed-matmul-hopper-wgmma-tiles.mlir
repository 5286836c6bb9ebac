// The wgmma kernel's tiles above a few hundred rows, chosen by the work of
// the busiest SM (ceil(blocks / SMs) blocks of T x 64 W outputs; 132 SMs,
// the H200's, by default): 256-token tiles of one warpgroup where every SM
// gets at least 4 blocks (gpt-oss mlp1 at M = 4096: 90 x 16 blocks, 11
// each); one warpgroup of 128 tokens where two would give the busiest SM
// more work (2880^2 at M = 1000: 360 blocks, 3 on the busiest SM, against
// 184 blocks of twice the work, 2 on some); two warpgroups where the work
// is the same (2880 x 5760 at M = 1000) and where the blocks are too few
// for wide tiles (1504 x 1000 at M = 4096: 256 blocks). Every kernel
// assembles for sm_90a without spills. (Host emulation of the wide and
// one-warpgroup plans against float64: HopperLayoutMatmulJITTest.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// CHECK-LABEL: func.func @wide
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c256, %c64{{.*}}]
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c90, %c16, %c1) threads in (%c128,
// CHECK-LABEL: func.func @one_warpgroup
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%c128, %c64{{.*}}]
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_1 blocks in (%c45, %c8, %c1) threads in (%c128
// CHECK-LABEL: func.func @two_warpgroups
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_2 blocks in (%c45, %c8, %c1) threads in (%c256,
// CHECK-LABEL: func.func @few_blocks
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_3 blocks in (%c8, %c32, %c1) threads in (%c256,

// PTX: .entry mixed_matmul_wgmma_0(
// PTX: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PTX: .entry mixed_matmul_wgmma_1(
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: .entry mixed_matmul_wgmma_2(
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: .entry mixed_matmul_wgmma_3(
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16

// PTXAS-NOT: C7513
// PTXAS-COUNT-4: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: C7513

func.func @wide(%a: memref<4096x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<4096x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4096x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<4096x5760xbf16>
  return
}

func.func @one_warpgroup(%a: memref<1000x2880xbf16>, %v: memref<4521984xi8>, %s: memref<264960xi8>, %g: f32, %o: memref<1000x2880xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1000x2880xbf16>, !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<4521984xi8>, memref<264960xi8>, memref<1000x2880xbf16>
  return
}

func.func @two_warpgroups(%a: memref<1000x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1000x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1000x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<1000x5760xbf16>
  return
}

func.func @few_blocks(%a: memref<4096x1504xbf16>, %v: memref<786432xi8>, %s: memref<49152xi8>, %g: f32, %o: memref<4096x1000xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4096x1504xbf16>, !microscale.qtensor<1504x1000, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<786432xi8>, memref<49152xi8>, memref<4096x1000xbf16>
  return
}
