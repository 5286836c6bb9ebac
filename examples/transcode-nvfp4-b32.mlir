// NVFP4 B32 -> MXFP6 E2M3 at compile time: every element 3.0, the block scale
// 1.125 (E4M3 0x39), the global scale 2.0. See docs/transcode.md.
!nv = !microscale.qtensor<1x32, nvfp4_b32, axis = 1>
!mx = !microscale.qtensor<1x32, mxfp6_e2m3, axis = 1>
func.func @transcode() -> (tensor<1x32xf32>, f32) {
  %v = arith.constant dense<85> : tensor<1x16xi8>
  %s = arith.constant dense<57> : tensor<1x1xi8>
  %g = arith.constant 2.0 : f32
  %q = microscale.from_bytes %v, %s, %g : tensor<1x16xi8>, tensor<1x1xi8> -> !nv
  %m, %mg = microscale.transcode %q : !nv -> !mx
  %d = microscale.dequantize %m : !mx -> tensor<1x32xf32>
  return %d, %mg : tensor<1x32xf32>, f32
}
