// The mixed_matmul kernel takes any K that is a multiple of 32 (the MXFP4
// block): K is cut in chunks of 128, the last one partial, and the warps
// of a block that split K take ranges of chunks that may differ by one.
// Every warp set computes its last chunk first (loaded before the loop),
// so the mask of the partial chunk (each thread's 32 K values are all in K
// or all past it) is only in the prologue; a masked thread reads from K = 0
// and feeds zeros (scale code 127).
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=IR
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

// gpt-oss mlp1 at decode: K = 2880 = 22 chunks of 128 and one of 64; 360
// strips of 16 columns, split 5 by the chip model (bytes in flight to
// cover the latency, every block resident at once: three of 5 warps per
// SM by the schedulers' register files): ranges of 4 and 5.
// IR-LABEL: func.func @gpt_oss
// IR-DAG: %[[C360:.*]] = arith.constant 360 : index
// IR-DAG: %[[C160:.*]] = arith.constant 160 : index
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_0 blocks in (%[[C360]], %{{.*}}, %{{.*}}) threads in (%[[C160]],
func.func @gpt_oss(%a: memref<1x2880xbf16>, %v: memref<8294400xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      : memref<1x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<8294400xi8>, memref<518400xi8>, memref<1x5760xbf16>
  return
}

// An explicit split that does not divide the 23 chunks is taken (ranges
// of 3 and 4 chunks).
// IR-LABEL: func.func @seven
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_1 blocks in ({{.*}}) threads in (%c224,
func.func @seven(%a: memref<1x2880xbf16>, %v: memref<8294400xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o {microscale.tiling = {split_k = 7}}
      : memref<1x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<8294400xi8>, memref<518400xi8>, memref<1x5760xbf16>
  return
}

// K = 96: one chunk, three quarters of it in K.
// IR-LABEL: func.func @short_k
// IR: gpu.launch_func @microscale_kernels::@mixed_matmul_2 blocks in ({{.*}}) threads in (%c32,
func.func @short_k(%a: memref<3x96xbf16>, %v: memref<768xi8>, %s: memref<48xi8>, %g: f32, %o: memref<3x16xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      : memref<3x96xbf16>, !microscale.qtensor<96x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<768xi8>, memref<48xi8>, memref<3x16xbf16>
  return
}

// The uneven ranges: [s C / S, (s + 1) C / S) of C = 23 chunks; the first
// step's chunk is the set's last ((step + count - 1) mod count), masked:
// K past 2880 reads K = 0 and selects zero words and scale code 127.
// IR: gpu.func @mixed_matmul_0(
// IR: %[[C23:.*]] = arith.constant 23 : index
// IR: arith.muli %{{.*}}, %[[C23]] : index
// IR: arith.divui
// IR: arith.remui
// IR: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c2880
// IR: arith.select %[[IN]], %{{.*}}, %c0
// IR: vector.load
// IR: arith.select %[[IN]], %{{.*}}, %c0_i32
// IR: arith.select %[[IN]], %{{.*}}, %c127_i32
// IR: scf.for
// IR-NOT: arith.select %[[IN]]
// IR: nvvm.mma.sync
// IR: gpu.func @mixed_matmul_1(
