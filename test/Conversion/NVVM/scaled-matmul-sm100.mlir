// scaled_matmul_storage -> one sm_100a kernel of the tensor-memory MMA,
// tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X (NVFP4:
// kind::mxf4nvf4 ... scale_vec::4X), and ptxas assembles it for sm_100a:
// the gpt-oss decode shape with the weight in Triton's Blackwell layouts
// (the weight's scale atoms copied word for word), 33 x 80 x 130 NVFP4
// with the weight strided K-major (partial weight tile, K a partial atom,
// a 48-token tile), and a 4096-token prefill (128-token tiles).
//
// By default the operand tiles of K-major rows go by TMA (TMA-*, below the
// functions): a 3-D box per tile on a tensor map the host code builds. The
// threads' copies (tcgen05-tensor-maps=false): by cp.async.bulk (the
// tiling's bulk_copies), as checked by IR and PTX, else 16-byte loads and
// shared stores (THREADS).
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true tcgen05-tensor-maps=false},microscale-nvvm-outline-scaled-matmul{chip=sm_100a})' | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-tensor-maps=false},microscale-nvvm-outline-scaled-matmul{chip=sm_100a})' | FileCheck %s --check-prefix=THREADS
// THREADS-NOT: cp.async.bulk
// THREADS-NOT: nvgpu
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-nvvm-outline-scaled-matmul=chip=sm_100a | FileCheck %s --check-prefix=TMA-IR
// RUN: mx-opt %s --microscale-gpu-to-ptx=chip=sm_100a > %t/tma.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/tma.mlir %t/tma
// RUN: FileCheck %s --input-file %t/tma/microscale_kernels.ptx --check-prefix=TMA-PTX
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t/tma/microscale_kernels.ptx -o %t/tma.cubin %}
// The host code lowers with MLIR's own passes: four tensor maps (two
// kernels), each a call of MLIR's CUDA runtime on the rank-3 strided view.
// RUN: mx-opt %t/tma.mlir --convert-nvgpu-to-nvvm --gpu-to-llvm --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=TMA-HOST
// TMA-HOST-COUNT-4: llvm.call @mgpuTensorMapEncodeTiledMemref(
// TMA-HOST-NOT: unrealized_conversion_cast
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true tcgen05-tensor-maps=false},microscale-gpu-to-ptx{chip=sm_100a})' > %t/sm100.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/sm100.mlir %t/sm100
// RUN: FileCheck %s --input-file %t/sm100/microscale_kernels.ptx --check-prefix=PTX
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t/sm100/microscale_kernels.ptx -o %t/sm100.cubin %}
// RUN: %if ptxas %{ mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a format=bin toolkit=%cuda_toolkit' | FileCheck %s --check-prefix=BIN %}
// RUN: %if ptxas %{ mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true tcgen05-tensor-maps=false},microscale-gpu-to-ptx{chip=sm_100a format=bin toolkit=%cuda_toolkit})' | FileCheck %s --check-prefix=BIN %}
// BIN: chip = "sm_100a", features = "+ptx87"
// BIN-SAME: bin = "\7FELF

!a1 = !microscale.qtensor<1x2880, mxfp4, axis = 1>
!wb = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>

// Swap-AB: 45 CTAs of 128 weight columns, one of 16 tokens (the MMA's N).
// IR-LABEL: func.func @decode
// IR-DAG: %[[C45:.*]] = arith.constant 45 : index
// IR-DAG: %[[C128:.*]] = arith.constant 128 : index
// IR: memref.view %{{.*}} : memref<552960xi8> to memref<138240xi32>
// IR: %[[G:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4_0 blocks in (%[[C45]], %{{.*}}, %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}}) args({{.*}}, %[[G]] : f32)
func.func @decode(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a1, !wb, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// TMA: the host code views the weight's rows (1536 bytes apart: K / 2 =
// 1440 padded) and the token rows as [16-byte units][rows][16 bytes] and
// builds one tensor map each, boxes of 4 units (a chunk) x 128 weight
// columns / 16 tokens x 16 bytes, passed last.
// TMA-IR-LABEL: func.func @decode
// TMA-IR: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [90, 5760, 16], strides: [16, 1536, 1]
// TMA-IR: %[[WEIGHT:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c4, %c128{{.*}}, %c16] : memref<*xi8> -> <tensor = memref<4x128x16xi8, #gpu.address_space<workgroup>>, swizzle = none, l2promo = l2promo_256b, oob = zero, interleave = none>
// TMA-IR: %[[WMAP:.*]] = builtin.unrealized_conversion_cast %[[WEIGHT]]
// TMA-IR: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [90, 1, 16], strides: [16, 1440, 1]
// TMA-IR: %[[TOKENS:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c4{{.*}}, %c16{{.*}}, %c16{{.*}}] : memref<*xi8> -> <tensor = memref<4x16x16xi8
// TMA-IR: %[[TMAP:.*]] = builtin.unrealized_conversion_cast %[[TOKENS]]
// TMA-IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4_0 {{.*}}, %[[WMAP]] : !llvm.ptr, %[[TMAP]] : !llvm.ptr)
// NVFP4 with K = 80 (40-byte rows, not whole 16-byte units): the threads'
// copies.
// TMA-IR-LABEL: func.func @nvfp4
// TMA-IR-NOT: nvgpu.tma
// TMA-IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4nvf4_1 {{.*}}: f32)
// TMA-IR-LABEL: func.func @prefill
// TMA-IR: nvgpu.tma.create.descriptor {{.*}}box[%c4, %c128{{.*}}, %c16]
// TMA-IR: nvgpu.tma.create.descriptor {{.*}}box[%c4{{.*}}, %c128{{.*}}, %c16{{.*}}]
// In the kernel, per chunk, thread 0 announces both boxes' bytes (128 x 64
// + 16 x 64) on the stage's full mbarrier and copies the two boxes at
// (0, first row, 4 x chunk); the threads' tile copies are gone.
// TMA-PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4_0(
// TMA-PTX: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{{.*}}], 9216;
// TMA-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{.*}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [{{.*}}];
// TMA-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// TMA-PTX-NOT: ld.global.nc.v4
// TMA-PTX: tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X
// TMA-PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4nvf4_1(
// TMA-PTX-NOT: cp.async.bulk.tensor
// TMA-PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4_2(
// TMA-PTX: cp.async.bulk.tensor.3d

!n33 = !microscale.qtensor<33x80, nvfp4, axis = 1>
!nw = !microscale.qtensor<80x130, nvfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

// IR-LABEL: func.func @nvfp4
// IR-DAG: %[[C2:.*]] = arith.constant 2 : index
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4nvf4_1 blocks in (%[[C2]],
func.func @nvfp4(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xf32>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !n33, !nw, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

!a4k = !microscale.qtensor<4096x2880, mxfp4, axis = 1>
!w2k = !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>

// IR-LABEL: func.func @prefill
// IR-DAG: %[[C23:.*]] = arith.constant 23 : index
// IR-DAG: %[[C32:.*]] = arith.constant 32 : index
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4_2 blocks in (%[[C23]], %[[C32]],
func.func @prefill(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a4k, !w2k, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// The decode kernel: two stages of tiles (2 x 10 KiB: 128 x 64 + 16 x 64
// bytes and two atoms each), two mbarriers per stage (the commit's, the
// bulk copies'), the TMEM slot; warp 0 allocates 32 columns (16
// accumulators + 8 scale columns, a power of two >= 32).
// IR: gpu.func @tcgen05_scaled_matmul_mxf4_0(%{{.*}}: memref<360xi32> {{.*}}, %{{.*}}: memref<90xi8> {{.*}}, %{{.*}}: memref<2211840xi32> {{.*}}, %{{.*}}: memref<138240xi32> {{.*}}, %{{.*}}: memref<5760xbf16> {{.*}}, %{{.*}}: f32) workgroup(%{{.*}} : memref<5120xi32, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4xi64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64}, %{{.*}} : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 4 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// IR: nvvm.tcgen05.alloc %{{.*}}, %c32_i32 : !llvm.ptr<3>, i32
// IR: nvvm.tcgen05.relinquish_alloc_permit
// IR-COUNT-4: nvvm.mbarrier.init
// IR: nvvm.fence.mbarrier.init
// IR: nvvm.tcgen05.fence <before>
// IR: gpu.barrier
// IR: nvvm.tcgen05.fence <after>
// 22 chunks of one scale atom (128 K values) without K bounds checks, two
// MMAs each, then the last half atom, peeled. Each chunk first waits for
// the commit of the chunk that used its stage before. The 16-byte units of
// the tiles are 1-D bulk copies (cp.async.bulk, their bytes announced on
// the stage's full mbarrier first), zeros stored where a unit is past the
// tensor (the 15 padding token rows); thread 0 arrives on the full
// mbarrier after the barrier and waits for its phase before the MMAs.
// IR: scf.for %{{.*}} = %{{.*}} to %c22 step
// IR: scf.if
// IR: mbarrier.try_wait.parity
// IR: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .b64 g;\0Acvta.to.global.u64 g, $1;\0Ambarrier.expect_tx.relaxed.cta.shared::cta.b64 [$2], 16;\0Acp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [g], 16, [$2];\0A}", "r,l,r"
// IR: } else {
// IR: vector.store {{.*}} {alignment = 16 : i64} : memref<5120xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// IR: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// IR: gpu.barrier
// IR: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// IR: mbarrier.try_wait.parity
// IR: nvvm.tcgen05.fence <after>
// IR: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// IR: nvvm.tcgen05.cp
// IR: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .pred p;\0Asetp.ne.b32 p, $4, 0;\0Atcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [$0], $1, $2, $3, [$5], [$6], p;\0A}", "r,l,l,r,r,r,r"
// IR: llvm.inline_asm has_side_effects {{.*}}tcgen05.mma
// IR-NOT: tcgen05.mma
// IR: nvvm.tcgen05.commit
// IR: mbarrier.try_wait.parity
// IR: nvvm.fence.proxy
// IR: nvvm.tcgen05.cp
// IR: nvvm.tcgen05.cp
// IR-COUNT-2: tcgen05.mma.cta_group::1.kind::mxf4.block_scale
// IR: nvvm.tcgen05.commit
// The last commit, then the epilogue.
// IR: mbarrier.try_wait.parity
// IR: nvvm.tcgen05.fence <after>
// IR: nvvm.tcgen05.ld {{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// IR: nvvm.tcgen05.wait <load>
// IR: nvvm.tcgen05.dealloc
// NVFP4: one 4X MMA per atom (64 K values); K = 80 is one whole atom in
// the loop and a peeled partial one (one K block of 16).
// IR: gpu.func @tcgen05_scaled_matmul_mxf4nvf4_1
// IR: scf.for
// IR: tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X
// IR-NOT: tcgen05.mma
// IR: nvvm.tcgen05.commit
// IR: mbarrier.try_wait.parity
// IR: tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X
// IR-NOT: tcgen05.mma
// IR: nvvm.tcgen05.commit
// IR: gpu.func @tcgen05_scaled_matmul_mxf4_2

// The PTX, in order, for the decode kernel.
// PTX: .version 8.7
// PTX: .target sm_100a
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4_0(
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [{{.*}}], {{%r[0-9]+}};
// PTX: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// PTX-COUNT-4: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: fence.proxy.async.shared::cta;
// PTX: bar.sync 0;
// PTX: cvta.to.global.u64 g, {{%rd[0-9]+}};
// PTX-NEXT: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [[[FULL:%r[0-9]+]]], 16;
// PTX-NEXT: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{{%r[0-9]+}}], [g], 16, [[[FULL]]];
// PTX: mbarrier.arrive.shared::cta.b64 _, [{{%r[0-9]+}}];
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX: tcgen05.cp.cta_group::1.32x128b.warpx4 [{{%r[0-9]+}}], {{%rd[0-9]+}};
// PTX: tcgen05.cp.cta_group::1.32x128b.warpx4 [{{%r[0-9]+}}], {{%rd[0-9]+}};
// The instruction descriptors (scale IDs 0 and 2; E2M1 A and B; N = 16;
// UE8M0; M = 128): 0x08840480 and 0x488404A0.
// PTX: mov.b32 [[I0:%r[0-9]+]], 142869632;
// PTX: tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I0]], [{{%r[0-9]+}}], [{{%r[0-9]+}}], p;
// PTX: mov.b32 [[I1:%r[0-9]+]], 1216611488;
// PTX: tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I1]], [{{%r[0-9]+}}], [{{%r[0-9]+}}], p;
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX: tcgen05.fence::after_thread_sync;
// PTX: tcgen05.ld.sync.aligned.32x32b.x8.b32
// PTX: tcgen05.wait::ld.sync.aligned;
// PTX: tcgen05.fence::before_thread_sync;
// PTX: bar.sync 0;
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32 {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4nvf4_1(
// PTX: tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf4_2(
// PTX: tcgen05.alloc
// PTX: tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X
// PTX: tcgen05.dealloc
