// format=bin assembles the kernel with ptxas at compile time (a cubin in the
// gpu.binary: an ELF image), so that loading it involves no driver JIT.
// REQUIRES: ptxas
// RUN: mx-opt %s --microscale-gpu-to-ptx='format=bin toolkit=%cuda_toolkit' | FileCheck %s
// CHECK: gpu.binary @microscale_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// CHECK-SAME: bin = "\7FELF

!canon = !microscale.qtensor<64x128, mxfp4, axis = 0>
!hopper = !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>
func.func @convert(%v: memref<4096xi8>, %hv: memref<16384xi8>) {
  microscale.convert_storage values %v, %hv : !canon -> !hopper, memref<4096xi8>, memref<16384xi8>
  return
}
