//===- Passes.td - microscale to gfx950 kernels ------------*- tablegen -*-===//
#ifndef MICROSCALE_CONVERSION_ROCDL_PASSES_TD
#define MICROSCALE_CONVERSION_ROCDL_PASSES_TD

include "mlir/Pass/PassBase.td"

def MicroscaleROCDLOutlineScaledMatmul
    : Pass<"microscale-rocdl-outline-scaled-matmul", "::mlir::ModuleOp"> {
  let summary = "Turn each scaled_matmul_storage into one gfx950 kernel of "
                "scaled MFMAs";
  let description = [{
    Outlines every `microscale.scaled_matmul_storage` into a `gpu.func` of
    the `gpu.module @microscale_gfx950_kernels` and replaces it with a
    `gpu.launch_func`: one 64-lane wave per 32x32 tile of the result, one
    `amdgpu.scaled_mfma` 32x32x64 per 64 of K, with FP6 E2M3 operands
    (format code 2) and E8M0 scales.

    Lane l supplies row (lhs) or column (rhs) l % 32 and the 32 consecutive
    K values of block 2s + l / 32 at step s, with that block's scale: the
    operand layout of gfx950's f8f6f4 scaled MFMA for FP6 and FP4. MXFP6
    operands are loaded as they are (24 bytes); NVFP4 B32 operands (16
    bytes and an E4M3 scale) are transcoded in registers by the op's
    `variant` (see GFX950Transcode.h): w4a6_tc when only the weight is
    NVFP4 B32, w4a4_tc when both are. Scales are read through their layouts
    (strided or `#microscale.cdna4_scale`); values must be stored K-major
    (`#microscale.strided` with `major_dim` = the block axis), M and N
    multiples of 32 and K a multiple of 64: other operands are reported.
    So are chips without the scaled MFMA (the chip model,
    `Conversion/ROCDL/Chip.h`, knows gfx942 and gfx950).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"gfx950\"",
           "The AMD chip the kernels are for">,
  ];
  let dependentDialects = ["::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif
