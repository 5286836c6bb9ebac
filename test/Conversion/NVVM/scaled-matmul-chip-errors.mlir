// Chips without a block-scaled MMA are refused at the op, with a
// diagnostic, never a backend abort: sm_90a (Hopper) through the whole
// outline pipeline. sm_100a takes the tcgen05 kernel, sm_120a the
// mma.sync one, each through the same pass.
// RUN: not mx-opt %s --microscale-nvvm-outline-kernels=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: mx-opt %s --microscale-gpu-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=SM100
// RUN: mx-opt %s --microscale-nvvm-outline-kernels=chip=sm_120a | FileCheck %s --check-prefix=SM120

// SM90: error: 'microscale.scaled_matmul_storage' op has no NVIDIA lowering for sm_90a: the scaled_matmul kernels need the block-scaled mma.sync (sm_120a) or tcgen05.mma ... block_scale (sm_100a)
// SM100: gpu.launch_func @microscale_kernels::@tcgen05_scaled_matmul_mxf4_0
// SM100: gpu.binary @microscale_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx87">
// SM120: gpu.launch_func @microscale_kernels::@scaled_matmul_mxf4_0
func.func @f(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {
  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) into %o
      : !microscale.qtensor<8x64, mxfp4, axis = 1>, !microscale.qtensor<64x16, mxfp4, axis = 0, values = #microscale.blackwell_value, scales = #microscale.blackwell_scale>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
