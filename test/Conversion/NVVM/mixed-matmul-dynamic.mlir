// mixed_matmul_storage with rows known at run time only (a serving
// engine's tokens): one kernel per rows-per-warp variant (8, 16, 32 and 64
// rows per warp, each planned for rows typical of its range), compiled
// once, and host code that picks the variant from the rows at run time
// (scf.index_switch on how many of the limits 8, 32 and 255 the typical
// rows per expert pass) and sizes the grid's rows from them. The kernels
// take the ragged rows, lhs rows and out rows as arguments; no rows at run
// time launch nothing. (The kernels take static-shaped buffers: those of
// dynamic rows are passed as 2^40 elements, a bound nothing reads.)
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s
// RUN: mx-opt %s --microscale-nvvm-outline-kernels | FileCheck %s --check-prefix=KERNEL
// RUN: mx-opt %s --microscale-gpu-to-ptx > %t.mlir
// RUN: %python %microscale_src_root/tools/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/microscale_kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/microscale_kernels.ptx -o %t/kernels.cubin %}
// An explicit warp_rows leaves one kernel, still for any rows.
// RUN: mx-opt %s --pass-pipeline="builtin.module(microscale-nvvm-set-tiling{matmul-warp-rows=16},microscale-nvvm-outline-kernels)" | FileCheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @dense
// CHECK: %[[M:.*]] = memref.dim %arg0, %c0
// CHECK: %[[LHS:.*]] = memref.dim %arg0, %c0
// CHECK: %[[OUT:.*]] = memref.dim %arg4, %c0
// CHECK: scf.if
// CHECK: arith.cmpi ugt, %[[M]], %c8
// CHECK: arith.cmpi ugt, %[[M]], %c32
// CHECK: arith.cmpi ugt, %[[M]], %c255
// CHECK: scf.index_switch
// CHECK: case 1 {
// CHECK: gpu.launch_func @microscale_kernels::@mixed_matmul_0_rows16 blocks in (%c180{{.*}}) {{.*}} args({{.*}} : memref<1099511627776xbf16>, {{.*}} : memref<1099511627776xbf16>, %{{.*}} : f32, %[[M]] : index, %[[LHS]] : index, %[[OUT]] : index)
// CHECK: case 2 {
// CHECK: gpu.launch_func @microscale_kernels::@mixed_matmul_0_rows32
// CHECK: case 3 {
// CHECK: gpu.launch_func @microscale_kernels::@mixed_matmul_0_rows64
// CHECK: default {
// CHECK: gpu.launch_func @microscale_kernels::@mixed_matmul_0_rows8 blocks in (%c360
// ONE-LABEL: func.func @dense
// ONE-NOT: scf.index_switch
// ONE: gpu.launch_func @microscale_kernels::@mixed_matmul_0 blocks
// ONE-NOT: gpu.launch_func
// ONE-LABEL: func.func @ragged
func.func @dense(%a: memref<?x2880xbf16>, %v: memref<8294400xi8>, %s: memref<518400xi8>, %g: f32, %o: memref<?x5760xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      : memref<?x2880xbf16>, !microscale.qtensor<2880x5760, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>, memref<8294400xi8>, memref<518400xi8>, memref<?x5760xbf16>
  return
}

// The MoE form: a dynamic total of ragged rows (gather, scatter), of
// tokens (lhs) and of output rows; the variant from the rows per expert.
// CHECK-LABEL: func.func @ragged
// CHECK: %[[R:.*]] = memref.dim %arg7, %c0
// CHECK: scf.if
// CHECK: %[[T:.*]] = arith.divui %[[R]], %c32
// CHECK: arith.cmpi ugt, %[[T]], %c8
// CHECK: scf.index_switch
// CHECK: gpu.launch_func @microscale_kernels::@mixed_matmul_4_rows16 blocks in (%c90, %{{.*}}, %c32{{.*}}) {{.*}} memref<1099511627776xi32>, %{{.*}} : memref<1099511627776xi32>, %[[R]] : index
func.func @ragged(%a: memref<?x2880xbf16>, %v: memref<265420800xi8>, %s: memref<16588800xi8>, %g: f32, %o: memref<?x5760xbf16>,
                  %off: memref<32xi32>, %cnt: memref<32xi32>, %gather: memref<?xi32>, %scatter: memref<?xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o
      experts(%off, %cnt : memref<32xi32>, memref<32xi32>) gather(%gather : memref<?xi32>) scatter(%scatter : memref<?xi32>)
      : memref<?x2880xbf16>, !microscale.qtensor<32x2880x5760, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>,
        memref<265420800xi8>, memref<16588800xi8>, memref<?x5760xbf16>
  return
}

// Each kernel bounds its rows by the arguments (the clamp of a row to the
// last one: rows - 1).
// KERNEL: gpu.func @mixed_matmul_0_rows8(%{{.*}}: memref<1099511627776xbf16> {{.*}}, %[[KM:[a-z0-9]+]]: index, %[[KL:[a-z0-9]+]]: index, %[[KO:[a-z0-9]+]]: index)
// KERNEL: arith.subi %[[KM]], %c1

// PTX: .entry mixed_matmul_0_rows8(
// PTX: .entry mixed_matmul_0_rows16(
// PTX: .entry mixed_matmul_0_rows32(
// PTX: .entry mixed_matmul_0_rows64(
// PTX: .entry mixed_matmul_4_rows8(
