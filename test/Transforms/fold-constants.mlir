// RUN: mx-opt %s --microscale-fold-constants | FileCheck %s
// RUN: mx-opt %s --microscale-fold-constants='max-elements=1000' | FileCheck %s --check-prefix=LIMIT
// RUN: mx-opt %s --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: not mx-opt %s --microscale-fold-constants='max-elements=-1' 2>&1 | FileCheck %s --check-prefix=BAD

// 131072 elements: above the canonicalizer's limit (65536), folded by the
// pass unless its own limit says otherwise. The weight is packed straight
// into the Hopper layouts at compile time; the result is the bytes.
!hopper = !microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>

// CHECK-LABEL: func @pack_weight
// CHECK-DAG: %[[V:.*]] = arith.constant dense<"0x{{[0-9A-F]+}}"> : tensor<128x512xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<125> : tensor<16x256xi8>
// CHECK-NOT: microscale.quantize
// CHECK: return %[[V]], %[[S]]
// LIMIT-LABEL: func @pack_weight
// LIMIT: microscale.quantize
// CANON-LABEL: func @pack_weight
// CANON: microscale.quantize
// BAD: microscale-fold-constants: max-elements must be >= 0, got -1
func.func @pack_weight() -> (tensor<128x512xi8>, tensor<16x256xi8>) {
  %w = arith.constant dense<1.5> : tensor<256x512xf32>
  %q = microscale.quantize %w : tensor<256x512xf32> -> !hopper
  %v, %s = microscale.to_bytes %q : !hopper -> tensor<128x512xi8>, tensor<16x256xi8>
  return %v, %s : tensor<128x512xi8>, tensor<16x256xi8>
}
