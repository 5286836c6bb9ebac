// bf16 x MXFP4 (mixed_matmul_storage) on NVIDIA: one kernel of mma.sync
// m16n8k16 with the weight dequantized in registers and K split across the
// warps of a block; its PTX assembles with ptxas for sm_90a.
// RUN: mx-opt %s --microscale-convert-storage-to-gpu | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

!w = !microscale.qtensor<1024x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.cdna4_scale>

// Five rows: one 16-row tile, rows 5..15 read row 4 and are not stored.
// 64 columns: 4 blocks of 16; K = 1024 is 16 chunks of 64, split over 8
// warps (256 threads) of 2 chunks in flight.
// IR-LABEL: func.func @decode
// IR-DAG: %[[C4:.*]] = arith.constant 4 : index
// IR-DAG: %[[C256:.*]] = arith.constant 256 : index
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_0 blocks in (%[[C4]], %{{.*}}, %{{.*}}) threads in (%[[C256]], %{{.*}}, %{{.*}})
// IR-NOT: memref.alloc
func.func @decode(%a: memref<5x1024xbf16>, %v: memref<32768xi8>, %s: memref<2048xi8>, %g: f32, %o: memref<5x64xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      : memref<5x1024xbf16>, !w, memref<32768xi8>, memref<2048xi8>, memref<5x64xbf16>
  return
}
// The partial sums of the split warps meet in workgroup memory.
// IR: gpu.func @mixed_matmul_0({{.*}}) workgroup(%{{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>) kernel
// IR: scf.for
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<5120xbf16>, vector<8xbf16>
// IR: vector.load %{{.*}} {alignment = 8 : i64} : memref<32768xi8>, vector<8xi8>
// IR: arith.mulf %{{.*}} : vector<2xbf16>
// IR: nvvm.mma.sync
// IR-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// IR-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// IR: gpu.barrier

// PTX: .target sm_90a
// PTX: .shared .align {{[0-9]+}} .b8
// PTX: ld.global.nc.v4.b32
// PTX: ld.global.nc.v2.b32
// PTX: mul.rn.bf16x2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: bar.sync
