// bf16 x MXFP4 (mixed_matmul_storage) on NVIDIA: one kernel of mma.sync
// m16n8k16 with the weight as the A operand, dequantized in registers, K
// split across the warps of a block; its PTX assembles with ptxas for
// sm_90a. Decode rows load the weight one K chunk ahead into registers
// (or, asked for, through a per-thread cp.async ring); more rows (and
// experts) can stage the activations once per block.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}
// The weight ring, asked for:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-stages=5 matmul-warp-columns=32},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=RING
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-stages=5 matmul-warp-columns=32},microscale-gpu-to-ptx)" > %t.ring.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.ring.mlir %t/ring
// RUN: FileCheck %s --check-prefix=RINGPTX --input-file %t/ring/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/ring/microscale_kernels.ptx -o %t/ring.cubin %}
// 64 rows per warp (staged, 8 mmas per decoded fragment) assembles too:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64},microscale-gpu-to-ptx)" > %t.rows.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.rows.mlir %t/rows
// RUN: FileCheck %s --check-prefix=ROWS --input-file %t/rows/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/rows/microscale_kernels.ptx -o %t/rows.cubin %}
// Staged activations, forced on a small shape:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-stages=2 matmul-column-warps=2},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=STAGED
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-stages=2 matmul-column-warps=2},microscale-gpu-to-ptx)" > %t.staged.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.staged.mlir %t/staged
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/staged/microscale_kernels.ptx -o %t/staged.cubin %}

!w = !microscale.qtensor<1024x64, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.cdna4_scale>

// Five rows: one 8-row tile, rows 5..7 read row 4 and are not stored.
// 64 columns: 4 blocks of 16; K = 1024 is 8 chunks of 128, split over 8
// warps (256 threads): 4 blocks leave the SMs idle, so one chunk per warp
// is the chip model's cheapest.
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

// 32 experts [32, 1024, 64], 40 ragged rows of 12 tokens: grid z walks the
// experts, the tile loop the rows of each one's slice; rows come through
// the gather and go out through the scatter.
// IR-LABEL: func.func @experts
// IR-DAG: %[[C32:.*]] = arith.constant 32 : index
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_1 blocks in (%{{.*}}, %{{.*}}, %[[C32]])
// IR-SAME: memref<32xi32>, %{{.*}} : memref<32xi32>, %{{.*}} : memref<40xi32>, %{{.*}} : memref<40xi32>
func.func @experts(%a: memref<12x1024xbf16>, %v: memref<1048576xi8>, %s: memref<65536xi8>, %g: f32, %o: memref<40x64xbf16>,
                   %off: memref<32xi32>, %cnt: memref<32xi32>, %gather: memref<40xi32>, %scatter: memref<40xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%gather : memref<40xi32>) scatter(%scatter : memref<40xi32>)
      : memref<12x1024xbf16>, !microscale.qtensor<32x1024x64, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>,
        memref<1048576xi8>, memref<65536xi8>, memref<40x64xbf16>
  return
}

// The split sums meet in workgroup memory; the weight's 16-byte pieces
// are loaded one chunk ahead of their products.
// IR: gpu.func @mixed_matmul_0({{.*}}) workgroup(%{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>) kernel
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<32768xi8>, vector<16xi8>
// IR: scf.for
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<32768xi8>, vector<16xi8>
// IR: nvvm.vote.sync all
// IR: arith.muli %{{.*}} : i32
// IR: arith.mulf %{{.*}} : vector<2xbf16>
// IR: nvvm.mma.sync
// IR-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// IR-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// IR: gpu.barrier
// The ragged kernel reads each expert's count and offset, walks its tiles
// with the grid's y stride, and maps rows through the gather and scatter.
// IR: gpu.func @mixed_matmul_1(
// IR: %[[E:.*]] = gpu.block_id z
// IR: %[[STRIDE:.*]] = gpu.grid_dim y
// IR: memref.load %{{.*}}[%[[E]]] : memref<32xi32>
// IR: memref.load %{{.*}}[%[[E]]] : memref<32xi32>
// IR: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STRIDE]]
// IR: memref.load %{{.*}} : memref<40xi32>

// PTX: .target sm_90a
// PTX: ld.global.nc.v4
// PTX: mul.lo.s32
// PTX: mul.rn.bf16x2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: bar.sync

// Each thread's 4 weight pieces of 16 bytes go through a ring of 5 chunks
// (40 KiB), the scale codes 4 chunks ahead in registers.
// RING: gpu.func @mixed_matmul_0({{.*}}) workgroup(%{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<40960xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// RING: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// RING: nvvm.cp.async.commit.group
// RING: scf.for
// RING: nvvm.cp.async.wait.group 3
// RING: vector.load %{{.*}} {alignment = 16 : i64} : memref<40960xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// RINGPTX: .shared .align 16 .b8
// RINGPTX: cp.async.cg.shared.global
// RINGPTX: cp.async.wait_group
// RINGPTX: ld.shared.v4

// ROWS: cp.async.cg.shared.global
// ROWS-COUNT-128: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// STAGED-LABEL: gpu.func @mixed_matmul_0(
// STAGED-SAME: memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>
// STAGED: nvvm.cp.async.shared.global
// STAGED: scf.for
// STAGED: nvvm.cp.async.wait.group 0
// STAGED-NEXT: gpu.barrier
