// The ragged (mixture-of-experts) scaled_matmul: it prints as it parses,
// and lower-to-storage zero-fills the result (rows that no ragged row
// writes) before the mixed_matmul_storage that takes the expert slices,
// gather and scatter as buffers.
// RUN: mx-opt %s | mx-opt | FileCheck %s --check-prefix=ROUND
// RUN: mx-opt %s --microscale-lower-to-storage | FileCheck %s

!e = !microscale.qtensor<4x64x16, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>
func.func @moe(%x: tensor<6x64xbf16>, %v: tensor<4x16x32xi8>, %s: tensor<4x2x16xi8>, %o: tensor<4xi32>, %c: tensor<4xi32>, %g: tensor<10xi32>, %sc: tensor<10xi32>) -> tensor<12x16xbf16> {
  %w = microscale.from_bytes %v, %s : tensor<4x16x32xi8>, tensor<4x2x16xi8> -> !e
  %y = microscale.scaled_matmul %x, %w experts(%o, %c : tensor<4xi32>, tensor<4xi32>) gather(%g : tensor<10xi32>) scatter(%sc : tensor<10xi32>) : tensor<6x64xbf16>, !e -> tensor<12x16xbf16>
  return %y : tensor<12x16xbf16>
}

// ROUND: microscale.scaled_matmul %{{.*}}, %{{.*}} experts(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>) gather(%{{.*}} : tensor<10xi32>) scatter(%{{.*}} : tensor<10xi32>) : tensor<6x64xbf16>

// CHECK-LABEL: func.func @moe
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() : memref<12x16xbf16>
// CHECK: scf.parallel
// CHECK-NEXT: memref.store %[[ZERO]], %[[OUT]]
// CHECK: microscale.mixed_matmul_storage %{{.*}} into %[[OUT]] experts(%{{.*}}, %{{.*}} : memref<4xi32>, memref<4xi32>) gather(%{{.*}} : memref<10xi32>) scatter(%{{.*}} : memref<10xi32>)
// CHECK: bufferization.to_tensor %[[OUT]]
