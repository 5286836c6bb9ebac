// The tensor-level ops, lowered to the CPU and executed: a quantized tensor
// made from constant bytes is converted to another layout and dequantized.
// The same IR folded by the C++ reference (--canonicalize) must print the
// same numbers.
// RUN: mx-opt %s --microscale-lower-to-storage --one-shot-bufferize=bufferize-function-boundaries --microscale-cpu-to-llvm \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_utils,%c_runner_utils | FileCheck %s
// RUN: mx-opt %s --canonicalize | FileCheck %s --check-prefix=FOLDED

// Row 0: bytes 0x21 (0.5, 1) with scale code 127 (2^0); row 1: bytes 0xB3
// (1.5, -1.5) with scale code 128 (2^1): 3, -3. Then the E8M0 edge codes:
// row 2 scale 0 is 2^-127 (tiny, not zero: 0.5 and 1 times 2^-127), row 3
// scale 255 is NaN.
// CHECK: [0.5,   1,   0.5,   1
// CHECK: [3,   -3,   3,   -3
// CHECK: [2.93874e-39,   5.87747e-39,   2.93874e-39
// CHECK: [nan,   nan
// The folded constant is printed as hex f32 words, little-endian: 0.5 is
// 0000003F, 1 is 0000803F, 3 is 00004040, -3 is 000040C0, 0.5 * 2^-127 is
// 00002000, 2^-127 is 00004000 and the NaN is 0000C07F.
// FOLDED: arith.constant dense<"0x0000003F0000803F{{([0-9A-F]{16})*}}00004040000040C0{{([0-9A-F]{16})*}}0000200000004000{{([0-9A-F]{16})*}}0000C07F0000C07F

!canonical = !microscale.qtensor<4x32, mxfp4, axis = 1>
!packed_rows = !microscale.qtensor<4x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>, scales = #microscale.strided<major_dim = 0>>

func.func private @printMemrefF32(memref<*xf32>)

func.func @dequantize() -> tensor<4x32xf32> {
  %v = arith.constant dense<[[33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33],
                             [-77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77, -77],
                             [33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33],
                             [33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33]]> : tensor<4x16xi8>
  %s = arith.constant dense<[[127], [-128], [0], [-1]]> : tensor<4x1xi8>
  %q = microscale.from_bytes %v, %s : tensor<4x16xi8>, tensor<4x1xi8> -> !canonical
  %p = microscale.convert_layout %q : !canonical -> !packed_rows
  %x = microscale.dequantize %p : !packed_rows -> tensor<4x32xf32>
  return %x : tensor<4x32xf32>
}

func.func @main() {
  %x = call @dequantize() : () -> tensor<4x32xf32>
  %m = bufferization.to_buffer %x : tensor<4x32xf32> to memref<4x32xf32>
  %u = memref.cast %m : memref<4x32xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
