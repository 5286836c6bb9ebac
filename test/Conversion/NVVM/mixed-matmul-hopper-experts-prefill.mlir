// The ragged (experts) form at prefill: 8 experts of 128 rows each (256
// tokens routed top-4), N = 5760. The wgmma kernel takes tiles of 128
// tokens (90 column tiles per expert cover every SM), two warpgroups, and
// decodes the next chunk's weight under this chunk's wgmmas (its rows come
// through the gather by cp.async: no TMA in this form); with
// matmul-decode-overlap=off, the wait follows the wgmmas. Either assembles
// without spills, and ptxas keeps the wgmmas asynchronous (no advisory
// C7513). (Host emulation against float64: HopperLayoutMatmulJITTest,
// Ragged.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=UNDER --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-decode-overlap=off},microscale-gpu-to-ptx)" > %t.off.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.off.mlir %t/off
// RUN: FileCheck %s --check-prefix=AFTER-WAIT --input-file %t/off/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/off/microscale_kernels.ptx -o %t/off.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

!w = !microscale.qtensor<8x256x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @prefill
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c45, %c8, %c1) threads in (%c256,
func.func @prefill(%a: memref<256x256xbf16>, %v: memref<6029312xi8>, %s: memref<368640xi8>, %g: f32, %o: memref<1024x5760xbf16>, %off: memref<8xi32>, %cnt: memref<8xi32>, %ga: memref<1024xi32>, %sc: memref<1024xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<8xi32>, memref<8xi32>) gather(%ga : memref<1024xi32>) scatter(%sc : memref<1024xi32>) : memref<256x256xbf16>, !w, memref<6029312xi8>, memref<368640xi8>, memref<1024x5760xbf16>
  return
}

// UNDER: .entry mixed_matmul_wgmma_0(
// UNDER-NOT: cp.async.bulk.tensor
// UNDER: cp.async.cg.shared.global
// UNDER: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// UNDER: wgmma.commit_group.sync.aligned;
// UNDER-NOT: wgmma.wait_group
// UNDER: and.b32 {{.*}}, 0x81C081C0;
// UNDER-NOT: wgmma.wait_group
// UNDER: mul.rn.bf16x2
// UNDER: wgmma.wait_group.sync.aligned 0;

// AFTER-WAIT: wgmma.commit_group.sync.aligned;
// AFTER-WAIT-NEXT: wgmma.wait_group.sync.aligned 0;

// PTXAS-NOT: C7513
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: C7513
