func.func @nvfp4() -> (tensor<1x8xi8>, tensor<1x1xi8>, f32) {
  %x = arith.constant dense<[[0.1, -0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                              0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]]> : tensor<1x16xf32>
  %q = microscale.quantize %x : tensor<1x16xf32> -> !microscale.qtensor<1x16, nvfp4, axis = 1>
  %v, %s, %g = microscale.to_bytes %q : !microscale.qtensor<1x16, nvfp4, axis = 1> -> tensor<1x8xi8>, tensor<1x1xi8>, f32
  return %v, %s, %g : tensor<1x8xi8>, tensor<1x1xi8>, f32
}
