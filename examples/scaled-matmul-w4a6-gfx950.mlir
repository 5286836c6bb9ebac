// w4a6_tc for gfx950 (MI355X): MXFP6 activations [64, 256] times an NVFP4 B32
// weight [256, 128] stored K-major with its E4M3 scales in the CDNA4 scale
// layout. The weight is transcoded to MXFP6 in registers (HWCVT) and fed to
// the FP6 scaled MFMA.
//
//   mx-opt examples/scaled-matmul-w4a6-gfx950.mlir --microscale-lower-to-storage \
//     --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
//     --microscale-gpu-to-gfx950
//
// With --microscale-cpu-to-llvm in place of the last pass, the same function
// compiles for the host (same numerics; the tests run it there).

!a = !microscale.qtensor<64x256, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<256x128, nvfp4_b32, axis = 0,
                         values = #microscale.strided<major_dim = 0>,
                         scales = #microscale.cdna4_scale>

func.func @w4a6(%av: tensor<64x192xi8>, %as: tensor<64x8xi8>,
                %wv: tensor<128x128xi8>, %ws: tensor<1x4x256xi8>,
                %wg: f32) -> tensor<64x128xbf16> {
  %a = microscale.from_bytes %av, %as : tensor<64x192xi8>, tensor<64x8xi8> -> !a
  %w = microscale.from_bytes %wv, %ws, %wg : tensor<128x128xi8>, tensor<1x4x256xi8> -> !w
  %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<hwcvt>}
      : !a, !w -> tensor<64x128xbf16>
  return %c : tensor<64x128xbf16>
}
