// scaled_matmul on the host, lowered for the CPU and run: w4a6_tc (an MXFP6
// activation times an NVFP4 B32 weight transcoded to MXFP6 first, LUT and
// HWCVT), then bf16 activations times an MXFP4 weight.
// RUN: mx-opt %s --microscale-lower-to-storage --one-shot-bufferize=bufferize-function-boundaries --microscale-cpu-to-llvm \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_utils,%c_runner_utils | FileCheck %s
//
// Activations: row 0 all 1.0 (E2M3 code 8), row 1 all -1.0 (code 40), E8M0
// scale 2^0. Weight (global scale 0.5): column 0 all 6 (E2M1 0x7) with E4M3
// scale 12 (0x54): 72 after the transcode, exactly; column 1 all 3 (0x5) with
// scale 1.125 (0x39): 3.375, a midpoint after the bump, which LUT rounds to
// 3.25 and HWCVT to 3.5. So out = 32 x a x w x 0.5:
// CHECK: [1152,   52],
// CHECK: [-1152,   -52]
// CHECK: [1152,   56],
// CHECK: [-1152,   -56]
//
// bf16 activations (row 0 all 1, row 1 all -0.5) times an MXFP4 weight
// (column 0 all 6, column 1 all -1.5; E8M0 scales 2^0 and 2^-2):
// out = 32 x a x w x s.
// CHECK: [192,   -12],
// CHECK: [-96,   6]

!a = !microscale.qtensor<2x32, mxfp6_e2m3, axis = 1>
!w = !microscale.qtensor<32x2, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>
!m = !microscale.qtensor<32x2, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %av = arith.constant dense<[[8, -126, 32, 8, -126, 32, 8, -126, 32, 8, -126, 32, 8, -126, 32, 8, -126, 32, 8, -126, 32, 8, -126, 32],
                              [40, -118, -94, 40, -118, -94, 40, -118, -94, 40, -118, -94, 40, -118, -94, 40, -118, -94, 40, -118, -94, 40, -118, -94]]> : tensor<2x24xi8>
  %as = arith.constant dense<[[127], [127]]> : tensor<2x1xi8>
  %wv = arith.constant dense<[[119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119],
                              [85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 85]]> : tensor<2x16xi8>
  %ws = arith.constant dense<[[84, 57]]> : tensor<1x2xi8>
  %g = arith.constant 0.5 : f32
  %a = microscale.from_bytes %av, %as : tensor<2x24xi8>, tensor<2x1xi8> -> !a
  %w = microscale.from_bytes %wv, %ws, %g : tensor<2x16xi8>, tensor<1x2xi8> -> !w
  %lut = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>} : !a, !w -> tensor<2x2xf32>
  call @print(%lut) : (tensor<2x2xf32>) -> ()
  %hw = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<hwcvt>} : !a, !w -> tensor<2x2xf32>
  call @print(%hw) : (tensor<2x2xf32>) -> ()

  %x = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                             [-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5]]> : tensor<2x32xbf16>
  %mv = arith.constant dense<[[119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119, 119],
                              [-69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69, -69]]> : tensor<2x16xi8>
  %ms = arith.constant dense<[[127, 125]]> : tensor<1x2xi8>
  %m = microscale.from_bytes %mv, %ms : tensor<2x16xi8>, tensor<1x2xi8> -> !m
  %y = microscale.scaled_matmul %x, %m : tensor<2x32xbf16>, !m -> tensor<2x2xf32>
  call @print(%y) : (tensor<2x2xf32>) -> ()
  return
}

func.func @print(%c: tensor<2x2xf32>) {
  %m = bufferization.to_buffer %c : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
