//===- Passes.td - microscale for the host CPU -------------*- tablegen -*-===//
#ifndef MICROSCALE_CONVERSION_CPU_PASSES_TD
#define MICROSCALE_CONVERSION_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MicroscaleCPULowerStorage : Pass<"microscale-cpu-lower-storage"> {
  let summary = "Lower the buffer-level ops to loops for the host CPU, with "
                "what the host adds to the block route";
  let description = [{
    The lowering of `microscale-lower-storage-conversions` (every
    buffer-level op to `scf`/`arith`/`memref`/`vector` loops), plus what a
    host lowered through LLVM has and the target-neutral pass may not use:

    * where the block route's stores are whole aligned cache lines (or each
      block writes one aligned range), they are non-temporal when the
      destination is aligned enough (checked at run time), followed by one
      `llvm.fence`;
    * with `gfni`, word bit interleaves (Hopper's Step B) are applied with
      x86 GF(2) affine byte transforms (`llvm.x86.vgf2p8affineqb`) instead
      of shifts and masks.

    The `microscale-cpu-to-llvm` pipeline runs it; the JIT runtime sets
    `gfni` from the host it runs on.

    ```
    mx-opt --microscale-cpu-lower-storage='vector-bytes=64 gfni=true' in.mlir
    ```
  }];
  let options = [
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"64",
           "Vector register width, in bytes, of the block route for FP4 "
           "values, scales and FP8 (16, 32 or 64; 0 disables it)">,
    Option<"registerFileBytes", "register-file-bytes", "int64_t",
           /*default=*/"0",
           "Bytes of vector registers the block route may hold (the host's: "
           "2048 with AVX-512, 512 with AVX): blocks whose vectors outgrow "
           "them are ranked with their spills, and load runs that a band's "
           "next block continues count as whole cache lines; 0: no register "
           "model (the largest blocks with whole lines)">,
    Option<"minGapBytes", "min-gap-bytes", "int64_t",
           /*default=*/"int64_t(1) << 20",
           "The least destination size (bytes) for which the block route "
           "takes shapes it does not cover whole (padding, edges: written "
           "apart); smaller ones keep the per-unit loop, which compiles "
           "faster">,
    Option<"gfni", "gfni", "bool", /*default=*/"false",
           "The target has x86 GFNI (and AVX-512BW for 64-byte vectors): "
           "apply word bit interleaves (Hopper's Step B) with vgf2p8affineqb "
           "instead of shifts and masks">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // MICROSCALE_CONVERSION_CPU_PASSES_TD
