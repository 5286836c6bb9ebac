// Quantize lowered to the CPU and executed, next to the same IR folded by
// the C++ reference: both give the same bytes.
// RUN: mx-opt %s --microscale-lower-to-storage --one-shot-bufferize=bufferize-function-boundaries --microscale-cpu-to-llvm \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_utils,%c_runner_utils | FileCheck %s
// RUN: mx-opt %s --canonicalize | FileCheck %s --check-prefix=FOLDED

// 32 values 0.25 * [0..31] in one MXFP4 block, packed along K: amax 7.75
// gives the scale 2^0 (127); ties round to even (0.25 -> 0, 0.75 -> 1,
// 1.25 -> 1, 2.5 -> 2, 5 -> 4) and values past 6 saturate.
// CHECK: data =
// CHECK-NEXT: [0,  33,  34,  67,  68,  84,  85,  102,  102,  102,  118,  119,  119,  119,  119,  119]
// CHECK: data =
// CHECK-NEXT: [127]
// FOLDED: arith.constant dense<[0, 33, 34, 67, 68, 84, 85, 102, 102, 102, 118, 119, 119, 119, 119, 119]> : tensor<16xi8>
// FOLDED: arith.constant dense<127> : tensor<1xi8>

!q = !microscale.qtensor<32, mxfp4, axis = 0>

func.func private @printMemrefI32(memref<*xi32>)

func.func @quantize() -> (tensor<16xi8>, tensor<1xi8>) {
  %x = arith.constant dense<[0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75,
                             3.0, 3.25, 3.5, 3.75, 4.0, 4.25, 4.5, 4.75, 5.0, 5.25, 5.5, 5.75,
                             6.0, 6.25, 6.5, 6.75, 7.0, 7.25, 7.5, 7.75]> : tensor<32xf32>
  %q = microscale.quantize %x : tensor<32xf32> -> !q
  %v, %s = microscale.to_bytes %q : !q -> tensor<16xi8>, tensor<1xi8>
  return %v, %s : tensor<16xi8>, tensor<1xi8>
}

// Prints bytes as unsigned numbers.
func.func @print_bytes(%bytes: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %bytes, %c0 : memref<?xi8>
  %wide = memref.alloc(%n) : memref<?xi32>
  scf.for %i = %c0 to %n step %c1 {
    %b = memref.load %bytes[%i] : memref<?xi8>
    %w = arith.extui %b : i8 to i32
    memref.store %w, %wide[%i] : memref<?xi32>
  }
  %u = memref.cast %wide : memref<?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  memref.dealloc %wide : memref<?xi32>
  return
}

func.func @main() {
  %v, %s = call @quantize() : () -> (tensor<16xi8>, tensor<1xi8>)
  %mv = bufferization.to_buffer %v : tensor<16xi8> to memref<16xi8>
  %dv = memref.cast %mv : memref<16xi8> to memref<?xi8>
  call @print_bytes(%dv) : (memref<?xi8>) -> ()
  %ms = bufferization.to_buffer %s : tensor<1xi8> to memref<1xi8>
  %ds = memref.cast %ms : memref<1xi8> to memref<?xi8>
  call @print_bytes(%ds) : (memref<?xi8>) -> ()
  return
}
