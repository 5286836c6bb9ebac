// A weight constant quantized to MXFP4 and packed for Hopper at compile time.
!hopper = !microscale.qtensor<2x256x64, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>>
func.func @weights() -> (tensor<2x64x512xi8>, tensor<2x4x256xi8>) {
  %w = arith.constant dense<0.75> : tensor<2x256x64xf32>
  %q = microscale.quantize %w : tensor<2x256x64xf32> -> !hopper
  %v, %s = microscale.to_bytes %q : !hopper -> tensor<2x64x512xi8>, tensor<2x4x256xi8>
  return %v, %s : tensor<2x64x512xi8>, tensor<2x4x256xi8>
}
