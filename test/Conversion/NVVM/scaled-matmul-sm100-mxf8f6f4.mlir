// scaled_matmul_storage of MXFP8 activations (E4M3, E5M2) times an MXFP4
// weight -> one sm_100a kernel of
// tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X, and
// ptxas assembles it for sm_100a: the gpt-oss decode shape (Blackwell
// layouts, the weight's atoms copied word for word), 50 x 160 x 130 with
// E5M2 activations and a strided weight (two 48-token tiles, a partial
// weight tile, K one whole atom and a peeled one of a single K block), and
// a 4096-token prefill with the weight in Triton's shuffled boxes.
//
// The weight's E2M1 codes go into shared memory in the padded form that
// kind::mxf8f6f4 reads (PTX ISA 9.7.16.10.4.4, "Packing format used for
// matrix A and B by .kind::mxf8f6f4 in Shared Memory", the 4-bit packing
// format: 16 codes packed in the first 8 bytes of each 16-byte unit, the
// other 8 padding): each 16-byte global load is stored as two 8-byte
// halves, one core matrix (LBO = 128 bytes) apart. The instruction
// descriptors follow the block-scaled table of 9.7.16.4.2 (atype E2M1 =
// 5 under mxf8f6f4, btype E4M3 = 0 / E5M2 = 1, 1X scale IDs 0-3).
//
// The operand tiles by cp.async.bulk (the tiling's bulk_copies), as checked
// below; by default 16-byte loads and shared stores (DEFAULT).
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true},microscale-nvvm-outline-scaled-matmul{chip=sm_100a})' | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-nvvm-outline-scaled-matmul=chip=sm_100a | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-NOT: cp.async.bulk
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true},microscale-gpu-to-ptx{chip=sm_100a})' > %t/sm100.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/sm100.mlir %t/sm100
// RUN: FileCheck %s --input-file %t/sm100/microscale_kernels.ptx --check-prefix=PTX
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t/sm100/microscale_kernels.ptx -o %t/sm100.cubin %}
// RUN: %if ptxas %{ mx-opt %s --microscale-gpu-to-ptx='chip=sm_100a format=bin toolkit=%cuda_toolkit' | FileCheck %s --check-prefix=BIN %}
// RUN: %if ptxas %{ mx-opt %s --pass-pipeline='builtin.module(microscale-nvvm-set-tiling{tcgen05-bulk-copies=true},microscale-gpu-to-ptx{chip=sm_100a format=bin toolkit=%cuda_toolkit})' | FileCheck %s --check-prefix=BIN %}
// BIN: chip = "sm_100a", features = "+ptx87"
// BIN-SAME: bin = "\7FELF

!a1 = !microscale.qtensor<1x2880, mxfp8_e4m3, axis = 1>
!wb = !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>

// Swap-AB as for kind::mxf4: 45 CTAs of 128 weight columns, one of 16
// tokens; the activations are 2880 bytes a row (720 words).
// IR-LABEL: func.func @decode
// IR-DAG: %[[C45:.*]] = arith.constant 45 : index
// IR-DAG: %[[C128:.*]] = arith.constant 128 : index
// IR: memref.view %{{.*}} : memref<2880xi8> to memref<720xi32>
// IR: %[[G:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf8f6f4_0 blocks in (%[[C45]], %{{.*}}, %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}}) args({{.*}}, %[[G]] : f32)
func.func @decode(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a1, !wb, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

!e5 = !microscale.qtensor<50x160, mxfp8_e5m2, axis = 1>
!ws = !microscale.qtensor<160x130, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

// 48-token tiles (two stages of 16 KiB of padded weight, 6 KiB of tokens
// and two atoms fit 48 KiB of static shared memory; 64 would not).
// IR-LABEL: func.func @e5m2
// IR-DAG: %[[C2:.*]] = arith.constant 2 : index
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf8f6f4_1 blocks in (%[[C2]], %{{.*}},
func.func @e5m2(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xf32>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !e5, !ws, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

!a4k = !microscale.qtensor<4096x2880, mxfp8_e4m3, axis = 1>
!w2k = !microscale.qtensor<2880x2880, mxfp4, axis = 0, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>, scales = #microscale.blackwell_scale>

// IR-LABEL: func.func @prefill
// IR-DAG: %[[C23:.*]] = arith.constant 23 : index
// IR-DAG: %[[C86:.*]] = arith.constant 86 : index
// IR: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf8f6f4_2 blocks in (%[[C23]], %[[C86]],
func.func @prefill(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a4k, !w2k, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// The decode kernel: two stages of 19 KiB (128 x 128 bytes of padded
// weight, 16 x 128 of tokens, two atoms), 32 TMEM columns.
// IR: gpu.func @tcgen05_scaled_matmul_mxf8f6f4_0(%{{.*}}: memref<720xi32> {{.*}}, %{{.*}}: memref<90xi8> {{.*}}, %{{.*}}: memref<2211840xi32> {{.*}}, %{{.*}}: memref<138240xi32> {{.*}}, %{{.*}}: memref<5760xbf16> {{.*}}, %{{.*}}: f32) workgroup(%{{.*}} : memref<9728xi32, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
// IR: nvvm.tcgen05.alloc %{{.*}}, %c32_i32 : !llvm.ptr<3>, i32
// IR: nvvm.tcgen05.relinquish_alloc_permit
// IR-COUNT-4: nvvm.mbarrier.init
// 22 chunks of one atom (128 K values: 64 weight bytes, 128 token bytes a
// row), then the last half atom, peeled. Per chunk and thread: 4 16-byte
// weight loads, each stored as two 8-byte halves into the padded form
// (a 1-D bulk copy cannot pad), then one 16-byte unit of tokens, a bulk
// copy (or zeros past the tokens); thread 0 waits for the stage's full
// mbarrier before the MMAs.
// IR: scf.for %{{.*}} = %{{.*}} to %c22 step
// IR: mbarrier.try_wait.parity
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<2211840xi32>, vector<4xi32>
// IR: vector.shuffle %{{.*}}, %{{.*}} [0, 1] : vector<4xi32>, vector<4xi32>
// IR: vector.store {{.*}} {alignment = 8 : i64} : memref<9728xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// IR: vector.shuffle %{{.*}}, %{{.*}} [2, 3] : vector<4xi32>, vector<4xi32>
// IR: vector.store {{.*}} {alignment = 8 : i64} : memref<9728xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// IR-NOT: memref<720xi32>, vector<4xi32>
// IR: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [g], 16, [$2];
// IR: } else {
// IR: vector.store {{.*}} {alignment = 16 : i64} : memref<9728xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// IR: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// IR: gpu.barrier
// IR: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// IR: mbarrier.try_wait.parity
// IR: nvvm.tcgen05.cp
// IR: nvvm.tcgen05.cp
// Four MMAs of K = 32 per atom.
// IR-COUNT-4: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [$0], $1, $2, $3, [$5], [$6], p;
// IR-NOT: tcgen05.mma
// IR: nvvm.tcgen05.commit
// IR: mbarrier.try_wait.parity
// IR: nvvm.tcgen05.cp
// IR: nvvm.tcgen05.cp
// IR-COUNT-4: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X
// IR: nvvm.tcgen05.commit
// IR: mbarrier.try_wait.parity
// IR: nvvm.tcgen05.ld {{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// IR: nvvm.tcgen05.dealloc
// IR: gpu.func @tcgen05_scaled_matmul_mxf8f6f4_1
// IR: gpu.func @tcgen05_scaled_matmul_mxf8f6f4_2

// The PTX of the decode kernel: 38912 bytes of static shared memory, the
// two halves of a weight load 128 bytes (one core matrix) apart, and the
// four instruction descriptors, 0x08840280, 0x28840290, 0x488402A0 and
// 0x688402B0 (atype E2M1 = 5, btype E4M3 = 0, N = 16, UE8M0, M = 128,
// SFA_ID = SFB_ID = 0, 1, 2, 3).
// PTX: .version 8.7
// PTX: .target sm_100a
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf8f6f4_0(
// PTX: .shared .align 1024 .b8 __wg_tcgen05_scaled_matmul_mxf8f6f4_0_0[38912];
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX: ld.global.nc.v2.b64
// PTX: st.shared.b64 [[[HALF:%rd[0-9]+]]], {{%rd[0-9]+}};
// PTX-NEXT: st.shared.b64 [[[HALF]]+128], {{%rd[0-9]+}};
// PTX: fence.proxy.async.shared::cta;
// PTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// PTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// PTX: mov.b32 [[I0:%r[0-9]+]], 142869120;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I0]], [{{%r[0-9]+}}], [{{%r[0-9]+}}], p;
// PTX: mov.b32 [[I1:%r[0-9]+]], 679740048;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I1]],
// PTX: mov.b32 [[I2:%r[0-9]+]], 1216610976;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I2]],
// PTX: mov.b32 [[I3:%r[0-9]+]], 1753481904;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[I3]],
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX: tcgen05.ld.sync.aligned.32x32b.x8.b32
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// E5M2 activations, 48 tokens: 0x088C0680 (btype 1 << 10, N = 48: 6 << 17)
// in 47104 bytes of shared memory.
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf8f6f4_1(
// PTX: .shared .align 1024 .b8 __wg_tcgen05_scaled_matmul_mxf8f6f4_1_0[47104];
// PTX: mov.b32 {{%r[0-9]+}}, 143394432;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X
// PTX-LABEL: .entry tcgen05_scaled_matmul_mxf8f6f4_2(
// PTX: mov.b32 {{%r[0-9]+}}, 143393408;
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X
