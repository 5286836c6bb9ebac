// Staged activations (the cp.async ring) with a partial last K chunk: the
// copies of the masked part zero-fill (source size 0) instead of reading
// past K, as do the copies of rows past M (which would otherwise all read
// the last row). (mixed-matmul-any-k.mlir: the unstaged kernel.)
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-stages=2 matmul-column-warps=2},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=STAGED
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-activation-stages=2 matmul-column-warps=2},microscale-gpu-to-ptx)" > %t.staged.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.staged.mlir %t/staged
// RUN: FileCheck %s --check-prefix=STAGEDPTX --input-file %t/staged/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/staged/microscale_kernels.ptx -o %t/staged.cubin %}

func.func @gpt_oss(%a: memref<1x2880xbf16>, %v: memref<8294400xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      : memref<1x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<8294400xi8>, memref<518400xi8>, memref<1x5760xbf16>
  return
}

// STAGED: gpu.func @mixed_matmul_0(
// STAGED: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c2880
// STAGED: %[[BOTH:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// STAGED: %[[SIZE:.*]] = arith.select %[[BOTH]], %c16_i32, %c0_i32
// STAGED: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE]]
// STAGEDPTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
