// The bundled example (README): quantize 64 floats to MXFP4, packed along
// the block axis (Triton's StridedLayout(major_dim = -2)), and dequantize
// them back to bf16. `mx-opt --canonicalize` folds all of it through the C++
// reference library, so the output shows the packed bytes, the E8M0 scale
// bytes and the bf16 values they decode to.
//
//   mx-opt examples/quantize-mxfp4.mlir --canonicalize
!canonical = !microscale.qtensor<32x2, mxfp4, axis = 0>
!packed_k = !microscale.qtensor<32x2, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>

func.func @quantize_and_back() -> (tensor<2x16xi8>, tensor<1x2xi8>, tensor<32x2xbf16>) {
  // Column 0 is 0.25 * [0..31] (amax 7.75); column 1 is its negation / 64.
  %weights = arith.constant dense<[
    [0.0, -0.0], [0.25, -0.00390625], [0.5, -0.0078125], [0.75, -0.01171875],
    [1.0, -0.015625], [1.25, -0.01953125], [1.5, -0.0234375], [1.75, -0.02734375],
    [2.0, -0.03125], [2.25, -0.03515625], [2.5, -0.0390625], [2.75, -0.04296875],
    [3.0, -0.046875], [3.25, -0.05078125], [3.5, -0.0546875], [3.75, -0.05859375],
    [4.0, -0.0625], [4.25, -0.06640625], [4.5, -0.0703125], [4.75, -0.07421875],
    [5.0, -0.078125], [5.25, -0.08203125], [5.5, -0.0859375], [5.75, -0.08984375],
    [6.0, -0.09375], [6.25, -0.09765625], [6.5, -0.1015625], [6.75, -0.10546875],
    [7.0, -0.109375], [7.25, -0.11328125], [7.5, -0.1171875], [7.75, -0.12109375]]> : tensor<32x2xf32>
  %q = microscale.quantize %weights : tensor<32x2xf32> -> !canonical
  %k = microscale.convert_layout %q : !canonical -> !packed_k
  %values, %scales = microscale.to_bytes %k : !packed_k -> tensor<2x16xi8>, tensor<1x2xi8>
  %back = microscale.dequantize %k : !packed_k -> tensor<32x2xbf16>
  return %values, %scales, %back : tensor<2x16xi8>, tensor<1x2xi8>, tensor<32x2xbf16>
}
