// RUN: mx-opt %s --microscale-fold-constants -verify-diagnostics | FileCheck %s

// A 65536 x 65536 splat is six lines of IR and 16 GiB of f32 once folded:
// by default (max-elements = 2^24) it is left alone, with a remark, instead
// of running the machine out of memory.
!big = !microscale.qtensor<65536x65536, mxfp4, axis = 0>

// CHECK-LABEL: func @huge_splat
// CHECK: microscale.quantize
func.func @huge_splat() -> (tensor<65536x32768xi8>, tensor<2048x65536xi8>) {
  %w = arith.constant dense<1.5> : tensor<65536x65536xf32>
  // expected-remark @below {{not folded: 4294967296 elements, more than max-elements = 16777216 (0 folds any size)}}
  %q = microscale.quantize %w : tensor<65536x65536xf32> -> !big
  %v, %s = microscale.to_bytes %q : !big -> tensor<65536x32768xi8>, tensor<2048x65536xi8>
  return %v, %s : tensor<65536x32768xi8>, tensor<2048x65536xi8>
}
