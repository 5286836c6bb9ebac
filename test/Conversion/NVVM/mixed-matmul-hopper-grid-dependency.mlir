// Programmatic dependent launch: launched with the programmatic attribute
// (cuLaunchKernelEx, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION),
// a Hopper matmul kernel may start before the previous kernel in the stream
// has finished, so it reads what a previous kernel may write (activations,
// routing) and writes its output only after griddepcontrol.wait. The dense
// forms load their first chunks' weight and scales, which no kernel writes,
// before the wait; the ragged (experts) forms wait first, since their
// routing comes from earlier kernels. No kernel triggers its dependents
// early (griddepcontrol.launch_dependents): that measured slower. The wait
// is a no-op in a plain launch. Every kernel assembles with ptxas for
// sm_90a.
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}

// One row (the decode kernel, activations loaded by each lane).
// CHECK-LABEL: gpu.func @mixed_matmul_hopper_0(
// CHECK-SAME: kernel attributes
// CHECK-NOT: vector.load %arg0
// CHECK: vector.load %arg1
// CHECK-NOT: vector.load %arg0
// CHECK: vector.load %arg2
// CHECK-NOT: vector.load %arg0
// CHECK: nvvm.griddepcontrol wait
// CHECK: vector.load %arg0
// CHECK: memref.store {{.*}}, %arg3
func.func @rows1(%a: memref<1x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<1x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<1x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<1x5760xbf16>
  return
}

// Four rows (the decode kernel, activations staged by cp.async).
// CHECK-LABEL: gpu.func @mixed_matmul_hopper_1(
// CHECK-SAME: kernel attributes
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: vector.load %arg1
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.cp.async.shared.global
func.func @rows4(%a: memref<4x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<4x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<4x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<4x5760xbf16>
  return
}

// 16 rows (the wgmma kernel, weight and activations by cp.async into the
// stages): the wait comes before every copy, since each chunk's weight
// copies share its activations' cp.async group (issued earlier, they would
// all join the first chunk's group and its wait would take them all). 64
// rows (activations by TMA, the weight in registers): the weight queue's
// loads, the wait, then the tensor copies.
// CHECK-LABEL: gpu.func @mixed_matmul_wgmma_2(
// CHECK-SAME: kernel attributes
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK-NOT: vector.load
// CHECK: nvvm.griddepcontrol wait
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: nvvm.cp.async.shared.global
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: nvvm.cp.async.shared.global
func.func @rows16(%a: memref<16x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<16x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<16x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<16x5760xbf16>
  return
}
// CHECK-LABEL: gpu.func @mixed_matmul_wgmma_3(
// CHECK-SAME: kernel attributes
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: vector.load %arg1
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: nvvm.griddepcontrol wait
// CHECK: cp.async.bulk.tensor
func.func @rows64(%a: memref<64x2880xbf16>, %v: memref<8667136xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<64x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<64x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>, memref<8667136xi8>, memref<518400xi8>, memref<64x5760xbf16>
  return
}

// gpt-oss mlp1 at decode, 32 experts: the ragged forms wait first, before
// the routing is read (the wgmma kernel here; the decode kernel's ragged
// form: mixed-matmul-hopper-experts.mlir).
!experts = !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
// CHECK-LABEL: gpu.func @mixed_matmul_wgmma_4(
// CHECK-NEXT: nvvm.griddepcontrol wait
func.func @moe(%a: memref<128x2880xbf16>, %v: memref<277348352xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<512x5760xbf16>, %off: memref<32xi32>, %cnt: memref<32xi32>, %ga: memref<512xi32>, %sc: memref<512xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%ga : memref<512xi32>) scatter(%sc : memref<512xi32>) : memref<128x2880xbf16>, !experts, memref<277348352xi8>, memref<16588800xi8>, memref<512x5760xbf16>
  return
}

// Five kernels, one wait apiece, no early trigger.
// PTX-NOT: griddepcontrol.launch_dependents
// PTX-COUNT-5: griddepcontrol.wait;
// PTX-NOT: griddepcontrol
