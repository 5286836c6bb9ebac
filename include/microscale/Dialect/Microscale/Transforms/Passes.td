//===- Passes.td - Microscale transformation passes --------*- tablegen -*-===//
#ifndef MICROSCALE_TRANSFORMS_PASSES_TD
#define MICROSCALE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MicroscaleFoldConstants : Pass<"microscale-fold-constants"> {
  let summary = "Quantize, convert and dequantize constant tensors at compile "
                "time through the C++ reference";
  let description = [{
    Folds `microscale.quantize` of a constant float tensor,
    `microscale.convert_layout` of constant bytes and `microscale.dequantize`
    of constant bytes into constants computed by the bit-exact C++ reference
    library. This is how a compiler with constant weights in its IR packs them
    offline into the layout its target's matmul wants (for example
    canonical MXFP4 into `#microscale.hopper_value`), with no code run at load
    time. Unlike the canonicalizer, whose limit is 65536 elements, the size
    limit here is an option: by default 2^24 (16777216) logical elements,
    which bounds what one fold allocates (a few hundred MiB for the float
    input of a quantize, whatever size its splat was spelled in); 0 means no
    limit. An op left unfolded for its size gets a remark that says so.

    ```
    mx-opt --microscale-fold-constants='max-elements=0' weights.mlir
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::microscale::MicroscaleDialect"];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"16777216",
           "Fold tensors of at most this many logical elements (default "
           "2^24; 0: any size)">,
  ];
}

def MicroscaleLowerStorageConversions
    : Pass<"microscale-lower-storage-conversions"> {
  let summary = "Lower the buffer-level ops (convert, quantize, dequantize, "
                "transcode, scaled_matmul) to loops for the host";
  let description = [{
    Replaces every `microscale.convert_storage` with an `scf.parallel` loop
    over the destination's store units. Each iteration asks the destination
    layout which logical elements its unit holds (the layout's inverse map,
    `emitStoreUnit`), loads each of them from the source buffer through the
    source layout's forward map (`emitLoadElement`), packs them, and stores
    the unit. Padding is written as zeros. Nothing but the destination is
    written, and no buffer is allocated. Works for any pair of layouts,
    because each layout only describes itself.

    Packed FP4 values whose two layouts place, on some block of the logical
    tensor, every nibble at an address that is a permutation of its index
    bits (every Triton value layout on unpadded shapes) take a faster route
    where the block routing exists: each block is loaded into `vector-bytes`
    wide vectors, its nibbles routed with nibble swaps and two-input byte
    shuffles (`vector.shuffle`), Hopper's bit interleave applied to whole
    words, and the block stored; see `BlockConversion.h`. The routing is
    planned from the layouts' reference maps and checked against them on
    sampled blocks. A `units` range maps to whole bands of blocks plus
    per-unit edges. `vector-bytes=0` turns this route off. Scales and FP8
    take the same route, their bytes routed as pairs of nibbles.

    This pass is target-neutral: it emits only arith, vector, memref, scf
    and math. The CPU target's `microscale-cpu-lower-storage` runs the same
    lowering with what the host adds (streaming stores and their fence, x86
    GFNI); that is the one the `microscale-cpu-to-llvm` pipeline runs.

    Every `microscale.dequantize_storage` becomes a parallel loop over the
    logical elements: the element and its scale are read through their
    layouts' forward maps and decoded through constant tables (private
    `memref.global`s), multiplied in f32 and rounded once to the result
    type.

    Every `microscale.quantize_storage` becomes the loops that compute block
    scales and element codes; every `microscale.transcode_storage` two
    parallel gather loops over constant tables built by the reference; every
    `microscale.scaled_matmul_storage` a parallel loop over the result whose
    inner loop over K blocks assembles each operand block with the register
    transcode sequence of the gfx950 kernel (the byte permute emulated), sums
    the 32 products in f32 and applies the two E8M0 scales.
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
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def MicroscaleLowerToStorage : Pass<"microscale-lower-to-storage"> {
  let summary = "Lower tensor-level convert_layout and dequantize to byte "
                "buffers";
  let description = [{
    Rewrites the tensor-level ops on quantized tensors whose bytes are known
    (values that come from `microscale.from_bytes`) into the buffer-level
    ops: `convert_layout` becomes a `convert_storage` of each buffer whose
    layout changes into a fresh allocation of exactly the destination's
    storage bytes, and `dequantize` a `dequantize_storage` into a fresh
    allocation of the result; both bridged with `bufferization.to_buffer` /
    `to_tensor`, so that one-shot bufferization handles the rest. A
    quantized tensor that does not come from `from_bytes` (a function
    argument, a `quantize`) is reported, not silently left behind. The
    ragged forms of `scaled_matmul` zero-fill their result (an
    `scf.parallel` of stores) before the `mixed_matmul_storage` writes its
    rows.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // MICROSCALE_TRANSFORMS_PASSES_TD
