// scaled_matmul_storage (MXFP4 x MXFP4) -> one sm_120a kernel of the
// warp-level block-scaled MMA, mma.sync.aligned.m16n8k64 kind::mxf4
// .block_scale.scale_vec::2X (NVVM mma.block_scale), and ptxas assembles it
// for sm_120a: a decode shape with the weight in Triton's Blackwell layouts,
// 33 x 96 x 130 with the weight strided K-major (K an odd multiple of 32,
// partial warp tiles, four 8-row activation tiles per warp), and NVFP4
// through kind::mxf4nvf4 with E4M3 scales per 16 (scale_vec::4X).
//
// RUN: mx-opt %s --microscale-nvvm-outline-scaled-matmul=chip=sm_120a | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && mkdir -p %t
// RUN: mx-opt %s --microscale-gpu-to-ptx='chip=sm_120a' > %t/sm120.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t/sm120.mlir %t/sm120
// RUN: FileCheck %s --input-file %t/sm120/microscale_kernels.ptx --check-prefix=PTX
// RUN: %if ptxas %{ %ptxas -arch=sm_120a %t/sm120/microscale_kernels.ptx -o %t/sm120.cubin %}
// RUN: %if ptxas %{ mx-opt %s --microscale-gpu-to-ptx='chip=sm_120a format=bin toolkit=%cuda_toolkit' | FileCheck %s --check-prefix=BIN %}
// BIN: chip = "sm_120a", features = "+ptx87"
// BIN-SAME: bin = "\7FELF

!a1 = !microscale.qtensor<1x128, mxfp4, axis = 1>
!wb = !microscale.qtensor<128x64, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>
!a33 = !microscale.qtensor<33x96, mxfp4, axis = 1>
!ws = !microscale.qtensor<96x130, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

// One block of 4 warps covers 64 weight columns; M = 1 takes one 8-row tile.
// IR-LABEL: func.func @decode
// IR-DAG: %[[C1:.*]] = arith.constant 1 : index
// IR-DAG: %[[C128:.*]] = arith.constant 128 : index
// IR: memref.view %{{.*}} : memref<64xi8> to memref<16xi32>
// IR: memref.view %{{.*}} : memref<8192xi8> to memref<2048xi32>
// IR: %[[G:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// IR: gpu.launch_func @microscale_kernels::@scaled_matmul_mxf4_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}}) args({{.*}}, %[[G]] : f32)
func.func @decode(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xbf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a1, !wb, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}

// IR-LABEL: func.func @prefill
// IR-DAG: %[[C3:.*]] = arith.constant 3 : index
// IR-DAG: %[[C2:.*]] = arith.constant 2 : index
// IR: gpu.launch_func @microscale_kernels::@scaled_matmul_mxf4_1 blocks in (%[[C3]], %[[C2]], %{{.*}})
func.func @prefill(%av: memref<1584xi8>, %as: memref<99xi8>, %ag: f32, %wv: memref<6240xi8>, %ws: memref<390xi8>, %wg: f32, %out: memref<4290xf32>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !a33, !ws, memref<1584xi8>, memref<99xi8>, memref<6240xi8>, memref<390xi8>, memref<4290xf32>
  return
}

!n4 = !microscale.qtensor<16x80, nvfp4, axis = 1>
!nw = !microscale.qtensor<80x32, nvfp4, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.blackwell_scale>

// IR-LABEL: func.func @nvfp4
// IR: %[[G:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// IR: gpu.launch_func @microscale_kernels::@scaled_matmul_mxf4nvf4_2 {{.*}} %[[G]] : f32)
func.func @nvfp4(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %out: memref<?xf16>) {
  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, %wg) into %out
      : !n4, !nw, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf16>
  return
}

// The decode kernel: 4-byte loads of the weight (A) and activation (B)
// words, the E8M0 code pairs, one block-scaled MMA per K step of 64.
// IR: gpu.func @scaled_matmul_mxf4_0(%{{.*}}: memref<16xi32> {llvm.align = 16 : i64, llvm.noalias}, %{{.*}}: memref<4xi8> {{.*}}, %{{.*}}: memref<2048xi32> {{.*}}, %{{.*}}: memref<1024xi8> {{.*}}, %{{.*}}: memref<64xbf16> {{.*}}, %{{.*}}: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// IR: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// IR-COUNT-4: memref.load %{{.*}} : memref<2048xi32>
// IR: memref.load %{{.*}} : memref<1024xi8>
// IR-COUNT-2: memref.load %{{.*}} : memref<16xi32>
// IR: nvvm.mma.block_scale A[{{.*}}] B[{{.*}}] C[{{.*}}] scaleA[{{.*}}] scaleB[{{.*}}] {blockScaleFormat = #nvvm.block_scale_format<ue8m0>, kind = #nvvm.block_scale_kind<mxf4>, multiplicandAPtxType = #nvvm.mma_type<e2m1>, multiplicandBPtxType = #nvvm.mma_type<e2m1>, scaleVecSize = #nvvm.scale_vec_size<x2>, shape = #nvvm.shape<m = 16, n = 8, k = 64>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// IR-NOT: nvvm.mma.block_scale
// IR: scf.yield
// IR-COUNT-4: arith.truncf %{{.*}} : f32 to bf16
// The prefill kernel: four 8-row tiles, four MMAs per step.
// IR: gpu.func @scaled_matmul_mxf4_1
// IR: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// IR-COUNT-4: nvvm.mma.block_scale
// IR-NOT: nvvm.mma.block_scale
// IR: scf.yield
// NVFP4: two 8-row tiles, four E4M3 codes per scale register.
// IR: gpu.func @scaled_matmul_mxf4nvf4_2
// IR-COUNT-2: nvvm.mma.block_scale {{.*}} {blockScaleFormat = #nvvm.block_scale_format<ue4m3>, kind = #nvvm.block_scale_kind<mxf4nvf4>, multiplicandAPtxType = #nvvm.mma_type<e2m1>, multiplicandBPtxType = #nvvm.mma_type<e2m1>, scaleVecSize = #nvvm.scale_vec_size<x4>, shape = #nvvm.shape<m = 16, n = 8, k = 64>}
// IR-NOT: nvvm.mma.block_scale
// IR: arith.truncf %{{.*}} : f32 to f16

// PTX: .version 8.7
// PTX: .target sm_120a
// PTX-LABEL: .entry scaled_matmul_mxf4_0(
// PTX: .maxntid 128, 1, 1
// PTX: ld.global.nc.b32
// PTX: mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0
// PTX-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// PTX-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// PTX-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}},
// PTX-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// PTX-NEXT: %r{{[0-9]+}}, {%rs[[ID:[0-9]+]], %rs[[ID]]},
// PTX-NEXT: %r{{[0-9]+}}, {%rs[[ID]], %rs[[ID]]};
// PTX: cvt.rn.bf16.f32
// PTX-LABEL: .entry scaled_matmul_mxf4_1(
// PTX-COUNT-4: mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0
// PTX: st.global.b32
// PTX-LABEL: .entry scaled_matmul_mxf4nvf4_2(
// PTX: mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
// PTX: cvt.rn.f16.f32
