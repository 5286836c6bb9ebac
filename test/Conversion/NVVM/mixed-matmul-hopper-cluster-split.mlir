// The Hopper-layout wgmma kernel with K split over the blocks of a thread
// block cluster: gpt-oss's mlp1 weight (2880 x 5760, 45 chunks of 64 K) at
// 64 tokens has 90 column tiles, fewer than two blocks per SM of 132, so
// the planner splits K three ways: grid z 3, a cluster of (1, 1, 3), each
// block 15 chunks. The sums meet as a reduce-scatter: every rank leaves
// its 32 sums per thread in its stages (shared stores); after a cluster
// barrier rank r maps the other two ranks' shared memory (mapa), adds its
// share of the sums (10, 11 and 11 of the 32) in rank order and stores
// that share of the tile; a second cluster barrier ends it. A split
// of 1 asked for keeps the kernel without a cluster. (Host emulation of
// the split against float64: HopperLayoutMatmulJITTest; on the H200:
// bench/gpu/make_matmul_kernels.sh ... cluster.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-cluster-split-k=1},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=NOSPLIT

!w = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// CHECK-LABEL: func.func @mlp1
// CHECK: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c90, %c1, %c3) threads in (%c128,
// CHECK: gpu.func @mixed_matmul_wgmma_0
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 3>
// CHECK: gpu.block_id {{ *}}z
// NOSPLIT-NOT: nvvm.cluster_dim
// NOSPLIT: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c90, %c1, %c1{{(_[0-9]+)?}})
func.func @mlp1(%a: memref<64x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<64x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<64x2880xbf16>, !w, memref<8667136xi8>, memref<518400xi8>, memref<64x5760xbf16>
  return
}

// PTX: .entry mixed_matmul_wgmma_0(
// PTX: .explicitcluster
// PTX: .reqnctapercluster 1, 1, 3
// PTX: wgmma.mma_async.sync.aligned.m64n64k16
// PTX-COUNT-32: st.shared.f32
// PTX-NOT: ld.shared::cluster
// PTX: barrier.cluster.arrive.release.aligned;
// PTX: barrier.cluster.wait.acquire.aligned;
// PTX-COUNT-2: mapa.shared::cluster.u32
// PTX-COUNT-20: ld.shared::cluster.f32
// PTX-NOT: ld.shared::cluster.f32
// PTX-COUNT-10: st.global.b16
// PTX-NOT: st.global.b16
// PTX-COUNT-2: mapa.shared::cluster.u32
// PTX-COUNT-22: ld.shared::cluster.f32
// PTX-NOT: ld.shared::cluster.f32
// PTX-COUNT-11: st.global.b16
// PTX-NOT: st.global.b16
// PTX-COUNT-2: mapa.shared::cluster.u32
// PTX-COUNT-22: ld.shared::cluster.f32
// PTX-NOT: ld.shared::cluster.f32
// PTX-COUNT-11: st.global.b16
// PTX-NOT: st.global.b16
// PTX: barrier.cluster.arrive.release.aligned;
