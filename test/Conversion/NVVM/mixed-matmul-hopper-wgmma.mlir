// bf16 x MXFP4 (mixed_matmul_storage) above 64 rows with the weight in the
// Hopper value layout: the wgmma kernel (HopperWgmmaMatmulKernel.cpp). Warp w
// of a warpgroup loads and decodes its 16-column tile as the decode kernel
// does (the wgmma A fragment from registers); the activations go into
// 128-byte-swizzled stages read by wgmma descriptors, by TMA
// (cp.async.bulk.tensor on a tensor map the host code builds, completing on
// one mbarrier per stage, stages in dynamic shared memory) on tiles of 64
// tokens or more, by cp.async into static shared memory on smaller ones;
// `matmul-activation-copies` picks either. Its PTX assembles with ptxas for
// sm_90a, and ptxas does not serialize the wgmmas (advisory C7513). (Host
// emulation against float64: HopperLayoutMatmulJITTest.)
// TMA asked for on the planner's 32-token tiles:
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-copies=tma},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-copies=tma},microscale-gpu-to-ptx)" > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// The host code lowers with MLIR's own passes: the tensor map becomes a
// call of MLIR's CUDA runtime (cuTensorMapEncodeTiled, bf16 = 9, 128-byte
// swizzle = 3, 256-byte L2 promotion = 3), the cast folds away.
// RUN: mx-opt %t.mlir --convert-nvgpu-to-nvvm --gpu-to-llvm --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=HOST
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// The planner's choice on 128-token and 64-token tiles: TMA; on 32-token
// tiles: cp.async.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=128},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILES128
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILES64
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=32},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILES32
// Two warpgroups of two 64-column tiles, 64-token tiles, 2 stages, by
// cp.async.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64 matmul-column-warps=8 matmul-warp-columns=32 matmul-activation-stages=2 matmul-activation-copies=cp.async},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=TILED
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=64 matmul-column-warps=8 matmul-warp-columns=32 matmul-activation-stages=2 matmul-activation-copies=cp.async},microscale-gpu-to-ptx)" > %t.tiled.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.tiled.mlir %t/tiled
// RUN: FileCheck %s --check-prefix=TILED-PTX --input-file %t/tiled/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/tiled/microscale_kernels.ptx -o %t/tiled.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// The decode's overlap turned off on TMA tiles, and on for cp.async ones,
// with 3 chunks of words queued (a remainder loop of one chunk, unrolled):
// neither makes ptxas serialize the wgmmas.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-copies=tma matmul-decode-overlap=off},microscale-gpu-to-ptx)" > %t.off.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.off.mlir %t/off
// RUN: FileCheck %s --check-prefix=AFTER-WAIT --input-file %t/off/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/off/microscale_kernels.ptx -o %t/off.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-copies=cp.async matmul-decode-overlap=on matmul-weight-stages=3},microscale-gpu-to-ptx)" > %t.on.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.on.mlir %t/on
// RUN: FileCheck %s --check-prefix=UNDER --input-file %t/on/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/on/microscale_kernels.ptx -o %t/on.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// The weight's words copied into the stages with the activations
// (cp.async of 16 value bytes and 4 scale codes per thread and chunk, in
// the activations' copy groups), read back by each thread before its
// decode; TMA copies cannot take them.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-copies=shared},microscale-gpu-to-ptx)" > %t.shared.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.shared.mlir %t/shared
// RUN: FileCheck %s --check-prefix=SHARED --input-file %t/shared/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -v -arch=sm_90a %t/shared/microscale_kernels.ptx -o %t/shared.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-copies=shared matmul-activation-copies=tma},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=SHARED-TMA
// RUN: not mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-weight-copies=shared matmul-weight-stages=3},microscale-nvvm-outline-kernels)" 2>&1 | FileCheck %s --check-prefix=SHARED-QUEUE

// M = 100, K = 160 (two chunks and a half), N = 80 (the image's padding
// past N): one warpgroup per block (two would leave a single block), two
// blocks of 64 columns, and tiles of 32 tokens (halved from 104 while the
// blocks do not give every SM two): 4 token tiles, the last of 4 tokens.
!w = !microscale.qtensor<160x80, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>

// The host code builds the activations' tensor map (boxes of 32 tokens x
// 64 K, 128-byte swizzle, zeros out of bounds) and asks for 4 stages of
// 4 KiB plus 1 KiB of alignment slack in dynamic shared memory.
// IR-LABEL: func.func @prefill
// IR: %[[UNRANKED:.*]] = memref.cast %arg0 : memref<100x160xbf16> to memref<*xbf16>
// IR: %[[MAP:.*]] = nvgpu.tma.create.descriptor %[[UNRANKED]] box[%c32, %c64] : memref<*xbf16> -> <tensor = memref<32x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// IR: %[[POINTER:.*]] = builtin.unrealized_conversion_cast %[[MAP]] {{.*}} to !llvm.ptr
// IR: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c2, %c4, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}}){{.*}}dynamic_shared_memory_size %c17408_i32 args({{.*}}, %[[POINTER]] : !llvm.ptr)
// The last token tile backs up to end at M (rows 68-99, of which it
// stores 96-99) so that no box reads rows past M: each box's token
// coordinate is min(32 x the token tile, 68).
// IR: gpu.func @mixed_matmul_wgmma_0(
// IR: %[[START:.*]] = arith.minui %{{.*}}, %c68{{.*}} : index
// IR: %[[ROW:.*]] = arith.index_castui %[[START]] : index to i32
// IR: cp.async.bulk.tensor.2d{{.*}}, %[[ROW]] :
// HOST: %[[MAP:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref(
// HOST: gpu.launch_func {{.*}}@microscale_kernels::@mixed_matmul_wgmma_0 {{.*}}args({{.*}}, %[[MAP]] : !llvm.ptr)
// HOST-NOT: unrealized_conversion_cast
// TILES128: nvgpu.tma.create.descriptor %{{.*}} box[%c128, %c64]
// TILES64: nvgpu.tma.create.descriptor %{{.*}} box[%c64, %c64{{.*}}]
// TILES32-LABEL: func.func @prefill
// TILES32-NOT: nvgpu.tma.create.descriptor
// TILES32: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0
// TILES32-NOT: dynamic_shared_memory_size
// TILES128: gpu.launch_func {{.*}}dynamic_shared_memory_size
// TILED: gpu.launch_func {{ *}}@microscale_kernels::@mixed_matmul_wgmma_0 blocks in (%c1, %c2, %c1{{.*}}) threads in (%c256, %c1{{.*}}, %c1{{.*}})
// TILED-NOT: dynamic_shared_memory_size
// TILED-NOT: nvgpu
func.func @prefill(%a: memref<100x160xbf16>, %v: memref<32768xi8>, %s: memref<768xi8>, %g: f32, %o: memref<100x80xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<100x160xbf16>, !w, memref<32768xi8>, memref<768xi8>, memref<100x80xbf16>
  return
}

// Four stages of 32 x 128 bytes in the dynamic window, 1024-aligned for
// the swizzle; thread 0 initializes the stages' mbarriers, then copies
// the first S - 1 chunks, here all three (a box of 4 KiB each: 32 tokens
// at row 32 x the token tile, K at 64 x the chunk), so that the loop has
// no copy left to issue.
// PTX: .extern .shared .align 1024 .b8 microscale_dynamic_shared[];
// PTX-COUNT-4: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: bar.sync 0;
// PTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{.*}}], 4096;
// PTX-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{.*}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [{{.*}}];
// PTX-COUNT-2: cp.async.bulk.tensor.2d
// PTX-NOT: cp.async.bulk
// PTX-NOT: cp.async.cg
// In the loop: every thread waits for its stage's phase, then the barrier.
// PTX: mbarrier.try_wait.parity.shared::cta.b64 p, [{{.*}}], {{.*}};
// PTX: bar.sync 0;
// PTX: wgmma.fence.sync.aligned;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0;
// PTX: wgmma.commit_group.sync.aligned;
// With TMA the next chunk's decode (seed 000's sequence) runs under the
// wgmmas, the wait after it.
// PTX-NOT: wgmma.wait_group
// PTX: and.b32 {{.*}}, 0x81C081C0;
// PTX-NOT: wgmma.wait_group
// PTX: mul.rn.bf16x2
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX: wgmma.fence.sync.aligned;

// TILED-PTX: .shared .align 1024 .b8 {{.*}}[16384]
// TILED-PTX: cp.async.wait_group 0;
// TILED-PTX-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// With cp.async the planner waits for the wgmmas before the decode.
// TILED-PTX: wgmma.commit_group.sync.aligned;
// TILED-PTX-NEXT: wgmma.wait_group.sync.aligned 0;

// AFTER-WAIT: wgmma.commit_group.sync.aligned;
// AFTER-WAIT-NEXT: wgmma.wait_group.sync.aligned 0;

// UNDER: cp.async.cg.shared.global
// UNDER: wgmma.commit_group.sync.aligned;
// UNDER-NOT: wgmma.wait_group
// UNDER: and.b32 {{.*}}, 0x81C081C0;
// UNDER: wgmma.wait_group.sync.aligned 0;

// SHARED: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// SHARED: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4
// SHARED: cp.async.commit_group;
// SHARED: wgmma.commit_group.sync.aligned;
// SHARED-NEXT: wgmma.wait_group.sync.aligned 0;
// SHARED: cp.async.wait_group
// SHARED: bar.sync 0;
// SHARED: ld.shared.v4.b32
// SHARED: ld.shared.b32
// The folded decode's multipliers: four scale codes (each below 128, as
// the vote found) biased by 126 at once (0x7E7E7E7E), bytes 0 and 2 then 1
// and 3 shifted into the lanes' exponent fields (0x7F807F80); steps 0 and 1
// take the low lanes, 2 and 3 the high ones, broadcast to both lanes.
// SHARED: vote.sync.all.pred
// SHARED: add.s32 [[BIASED:%r[0-9]+]], %r{{[0-9]+}}, 2122219134;
// SHARED-DAG: shl.b32 [[EVEN_SHIFTED:%r[0-9]+]], [[BIASED]], 7;
// SHARED-DAG: and.b32 [[EVEN:%r[0-9]+]], [[EVEN_SHIFTED]], 2139127680;
// SHARED-DAG: shr.u32 [[ODD_SHIFTED:%r[0-9]+]], [[BIASED]], 1;
// SHARED-DAG: and.b32 [[ODD:%r[0-9]+]], [[ODD_SHIFTED]], 2139127680;
// SHARED: mov.b32 {l, h}, [[EVEN]];
// SHARED-NEXT: mov.b32 even, {l, l};
// SHARED-NEXT: mov.b32 {l, h}, [[ODD]];
// SHARED-NEXT: mov.b32 odd, {l, l};
// SHARED: mov.b32 odd, {l, l};
// SHARED: mov.b32 even, {h, h};
// SHARED: mov.b32 odd, {h, h};
// SHARED: mov.b32 odd, {h, h};
// SHARED-NOT: mov.b32 odd
// SHARED: mul.rn.bf16x2 {{%r[0-9]+}}, {{%r[0-9]+}}, odd;

// SHARED-QUEUE: error: 'microscale.mixed_matmul_storage' op tiling weight_stages = 3 sets the depth of the weight words' register queue, which weight_copies = "shared" replaces

// SHARED-TMA: error: 'microscale.mixed_matmul_storage' op tiling weight_copies = "shared" needs the activations by cp.async

// PTXAS-NOT: C7513
// PTXAS: Used {{[0-9]+}} registers
