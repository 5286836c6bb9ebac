// NVFP4 B32 -> MXFP6 E2M3 lowered to the CPU and executed, then dequantized;
// the same IR folded by the C++ reference must print the same numbers.
// RUN: mx-opt %s --microscale-lower-to-storage --one-shot-bufferize=bufferize-function-boundaries --microscale-cpu-to-llvm \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_utils,%c_runner_utils | FileCheck %s
// RUN: mx-opt %s --microscale-fold-constants | FileCheck %s --check-prefix=FOLDED

// Row 0: elements 3.0 (0x55), scale 1.125 (E4M3 0x39): 3.375 is a midpoint
// after the bump, LUT takes 2^1 x 1.625 = 3.25. Row 1: elements 6 and -6
// (0xF7), scale 12 (0x54): seed 002's example, exact: 2^4 x 4.5 = 72.
// Row 2: a zero scale gives zeros. Row 3: a NaN scale (0x7F) gives NaN.
// CHECK: [3.25,   3.25,   3.25
// CHECK: [72,   -72,   72,   -72
// CHECK: [0,   0,   0
// CHECK: [nan,   nan
// f32 words, little-endian: 3.25 is 00005040, 72 is 00009042, -72 is
// 000090C2, NaN is 0000C07F.
// FOLDED: arith.constant dense<"0x00005040{{(00005040)*}}00009042000090C2{{([0-9A-F]{16})*}}00000000{{(00000000)*}}0000C07F

!nv = !microscale.qtensor<4x32, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<4x32, mxfp6_e2m3, axis = 1>

func.func private @printMemrefF32(memref<*xf32>)

func.func @transcode() -> tensor<4x32xf32> {
  %v = arith.constant dense<[[85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85],
                             [-9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9],
                             [85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85],
                             [85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85]]> : tensor<4x16xi8>
  %s = arith.constant dense<[[57], [84], [0], [127]]> : tensor<4x1xi8>
  %g = arith.constant 1.0 : f32
  %q = microscale.from_bytes %v, %s, %g : tensor<4x16xi8>, tensor<4x1xi8> -> !nv
  %m, %mg = microscale.transcode %q : !nv -> !mx
  %x = microscale.dequantize %m : !mx -> tensor<4x32xf32>
  return %x : tensor<4x32xf32>
}

func.func @main() {
  %x = call @transcode() : () -> tensor<4x32xf32>
  %m = bufferization.to_buffer %x : tensor<4x32xf32> to memref<4x32xf32>
  %u = memref.cast %m : memref<4x32xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
