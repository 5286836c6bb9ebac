//===- MicroscaleOps.td - Microscale operations ------------*- tablegen -*-===//
#ifndef MICROSCALE_OPS_TD
#define MICROSCALE_OPS_TD

include "microscale/Dialect/Microscale/IR/MicroscaleTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

def Microscale_QTensor : Type<CPred<"::llvm::isa<::mlir::microscale::QTensorType>($_self)">,
    "quantized tensor", "::mlir::microscale::QTensorType">;

def Microscale_ByteTensor : RankedTensorOf<[I8]>;
def Microscale_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// from_bytes / to_bytes
//===----------------------------------------------------------------------===//

def Microscale_FromBytesOp : Microscale_Op<"from_bytes", [Pure]> {
  let summary = "View raw storage bytes as a quantized tensor";
  let description = [{
    Reinterprets the packed element bytes and the scale bytes, each already in
    the physical layout that the result type names, as a quantized tensor. No
    data moves: a checkpoint's packed values and scales become a `qtensor`
    as they are. Each byte tensor must have exactly the storage shape of its
    layout (dense, memory order, padding included). Formats with a global
    scale (NVFP4) take it as a third, f32 operand; others must not.

    ```mlir
    %q = microscale.from_bytes %values, %scales
        : tensor<2x64x64xi8>, tensor<2x2x128xi8> -> !microscale.qtensor<2x64x128, mxfp4, axis = 1>
    ```
  }];
  let arguments = (ins Microscale_ByteTensor:$values,
                       Microscale_ByteTensor:$scales,
                       Optional<F32>:$global_scale);
  let results = (outs Microscale_QTensor:$result);
  let assemblyFormat = [{
    $values `,` $scales (`,` $global_scale^)? attr-dict `:` type($values) `,`
    type($scales) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Microscale_ToBytesOp : Microscale_Op<"to_bytes", [Pure]> {
  let summary = "The raw storage bytes of a quantized tensor";
  let description = [{
    The inverse of `from_bytes`: the packed element bytes and the scale bytes
    in the layouts of the operand's type, plus the f32 global scale for
    formats that have one.

    ```mlir
    %v, %s = microscale.to_bytes %q
        : !microscale.qtensor<2x64x128, mxfp4, axis = 1> -> tensor<2x64x64xi8>, tensor<2x2x128xi8>
    ```
  }];
  let arguments = (ins Microscale_QTensor:$input);
  let results = (outs Microscale_ByteTensor:$values,
                      Microscale_ByteTensor:$scales,
                      Optional<F32>:$global_scale);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($values) `,`
    type($scales) (`,` type($global_scale)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// quantize / dequantize
//===----------------------------------------------------------------------===//

def Microscale_QuantizeOp : Microscale_Op<"quantize", [Pure]> {
  let summary = "Quantize a float tensor to a block-scaled format";
  let description = [{
    Quantizes along the result's block axis. MX formats (E8M0 scales) follow
    OCP MX v1.0: shared exponent floor(log2(amax)) - emax of the element
    type, elements rounded to nearest even and saturated. NVFP4 formats
    round amax / 6 / global to an E4M3 block scale; the global scale is the
    optional operand, or amax(tensor) / (6 * 448) when absent. A block that
    holds NaN or Inf gets a NaN scale. The result is laid out as its type
    says. A constant input of at most 65536 elements folds through the C++
    reference.
  }];
  let arguments = (ins Microscale_FloatTensor:$input,
                       Optional<F32>:$global_scale);
  let results = (outs Microscale_QTensor:$result);
  let assemblyFormat = [{
    $input (`,` $global_scale^)? attr-dict `:` type($input) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Microscale_DequantizeOp : Microscale_Op<"dequantize", [Pure]> {
  let summary = "Dequantize a block-scaled tensor to floats";
  let description = [{
    Computes element * scale (* global scale) for every element in f32 and
    rounds that to the result type (f32, f16 or bf16, nearest even). The
    product of an element and its scale is exact in f32; the NVFP4 global
    scale costs one f32 rounding, as it does on every GPU path. How E8M0 codes
    0 and 255 decode is explicit: `e8m0_edges = ocp` (the default: 2^-127 and
    NaN, as OCP MX v1.0 says) or `zero_inf` (+0 and +inf, as Triton's Hopper
    fast path computes them). A constant operand folds through the C++
    reference.
  }];
  let arguments = (ins Microscale_QTensor:$input,
      DefaultValuedAttr<Microscale_E8M0EdgesAttr,
                        "::mlir::microscale::E8M0Edges::ocp">:$e8m0_edges);
  let results = (outs Microscale_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// transcode
//===----------------------------------------------------------------------===//

def Microscale_TranscodeOp : Microscale_Op<"transcode", [Pure]> {
  let summary = "Re-express a quantized tensor in another block format";
  let description = [{
    Changes the format without going through floats. Supported: NVFP4 B32
    (`nvfp4_b32`) to MXFP6 E2M3 (`mxfp6_e2m3`), BitDance's on-chip
    transcode. Each E4M3 block scale 2^e (1 + m/8) splits into the E8M0
    scale 2^(e + bump) and the factor (1 + m/8) / 2^bump, which multiplies
    each E2M1 element before one rounding to E2M3. `exponent_bump` chooses
    when bump = 1: `nonzero_mantissa` (default, the seed's rule) or
    `mantissa_at_least_3` (the minimal rule that still cannot saturate).
    `variant` chooses the rounding at exact midpoints: `lut` (default, the
    lower magnitude) or `hwcvt` (even, as the hardware F16 -> FP6
    conversion); the two differ at 6 of the 64 (mantissa, element) pairs.
    E4M3 subnormal scales normalise exactly; a zero scale gives zero
    elements, a NaN scale the E8M0 NaN.

    The MX result format has no global scale, so the source's is the second
    result: multiply by it after dequantizing. The result may use any
    layouts; the shape and block axis are the input's. A constant input
    folds through the C++ reference (`microscale-fold-constants`, or the
    canonicalizer for small tensors); other inputs are not lowered yet.

    ```mlir
    %mx, %g = microscale.transcode %q {variant = #microscale.transcode_variant<hwcvt>}
        : !microscale.qtensor<64x128, nvfp4_b32, axis = 1>
       -> !microscale.qtensor<64x128, mxfp6_e2m3, axis = 1>
    ```
  }];
  let arguments = (ins Microscale_QTensor:$input,
      DefaultValuedAttr<Microscale_TranscodeVariantAttr,
                        "::mlir::microscale::TranscodeVariant::lut">:$variant,
      DefaultValuedAttr<Microscale_ExponentBumpAttr,
                        "::mlir::microscale::ExponentBump::nonzero_mantissa">:$exponent_bump);
  let results = (outs Microscale_QTensor:$result, F32:$global_scale);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

def Microscale_ScaledMatmulOp
    : Microscale_Op<"scaled_matmul", [Pure, AttrSizedOperandSegments]> {
  let summary = "Matrix product with a block-scaled weight";
  let description = [{
    `lhs` `[M, K]` times `rhs` `[K, N]` (quantized, blocked along K: axis
    0), accumulated in f32, converted once to the result's element type
    (f32, f16 or bf16). `lhs` is either quantized too (blocked along K:
    axis 1) or a float tensor (f32, f16 or bf16 activations: the mixed-input
    GEMM of Triton's `matmul_ogs`).

    With a `variant`, every NVFP4 B32 operand is first transcoded to MXFP6
    E2M3 (exactly as `microscale.transcode` with that `variant` and
    `exponent_bump`), and its global scale multiplies the result: this is
    what gfx950 runs natively (as in BitDance), as w4a6_tc (an NVFP4 B32 weight
    times MXFP6 activations) or w4a4_tc (both operands NVFP4 B32). Without
    a `variant`, operands are dequantized exactly.

    Each block's 32 products and their sum are exact in f32 (E2M3 values
    are multiples of 1/8 below 8); the two E8M0 scales multiply the block
    sum, and the block sums are added in f32 in an order that the target
    chooses (the host adds them in increasing K; a matrix core in its own).

    Lowerings: `microscale-lower-to-storage` turns it into
    `scaled_matmul_storage` when both operands come from `from_bytes`, and
    into `mixed_matmul_storage` for a float `lhs` and a `from_bytes` `rhs`.

    Ragged experts (the mixture-of-experts form of Triton's `matmul_ogs`),
    for a float `lhs` only: `rhs` is `[E, K, N]` (blocked along K: axis 1)
    and `experts(%offsets, %counts)` gives each expert's slice of ragged
    rows, `offsets[e] .. offsets[e] + counts[e]` (`tensor<E x i32>` each).
    Ragged row `r` reads activation row `gather[r]` (`gather(%g)`, a
    `tensor<R x i32>`; without it, row `r` itself) and writes result row
    `scatter[r]` (`scatter(%s)`; without it, row `r`), the product with its
    expert's weight. R is the length of `gather` or `scatter` (they must
    agree), else the activation's rows. Result rows that no ragged row
    writes are zero; two ragged rows scattered to one result row leave one
    of the two (which one is not specified). Rows whose slice, gather or
    scatter index falls outside its tensor are skipped, never dereferenced.
    `gather` and `scatter` also apply without `experts` (every row r in
    [0, R) then takes the single `[K, N]` weight).

    ```mlir
    %y = microscale.scaled_matmul %x, %experts
           experts(%offsets, %counts : tensor<32xi32>, tensor<32xi32>)
           gather(%rows : tensor<512xi32>)
        : tensor<128x4096xbf16>,
          !microscale.qtensor<32x4096x4096, mxfp4, axis = 1,
                              values = #microscale.strided<major_dim = -2>>
       -> tensor<512x4096xbf16>
    %c = microscale.scaled_matmul %a, %w {variant = #microscale.transcode_variant<lut>}
        : !microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>,
          !microscale.qtensor<64x32, nvfp4_b32, axis = 0,
                              values = #microscale.strided<major_dim = 0>>
       -> tensor<32x32xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[Microscale_QTensor, Microscale_FloatTensor]>:$lhs,
      Microscale_QTensor:$rhs,
      Optional<TensorRankOf<[I32], [1]>>:$expert_offsets,
      Optional<TensorRankOf<[I32], [1]>>:$expert_counts,
      Optional<TensorRankOf<[I32], [1]>>:$gather_indices,
      Optional<TensorRankOf<[I32], [1]>>:$scatter_indices,
      OptionalAttr<Microscale_TranscodeVariantAttr>:$variant,
      DefaultValuedAttr<Microscale_ExponentBumpAttr,
                        "::mlir::microscale::ExponentBump::nonzero_mantissa">:$exponent_bump);
  let results = (outs Microscale_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs
    (`experts` `(` $expert_offsets^ `,` $expert_counts `:`
        type($expert_offsets) `,` type($expert_counts) `)`)?
    (`gather` `(` $gather_indices^ `:` type($gather_indices) `)`)?
    (`scatter` `(` $scatter_indices^ `:` type($scatter_indices) `)`)?
    attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))
    `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$lhs,
                   "::mlir::Value":$rhs), [{
      build($_builder, $_state, result, lhs, rhs, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(),
            ::mlir::microscale::TranscodeVariantAttr(),
            ::mlir::microscale::ExponentBump::nonzero_mantissa);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// convert_layout
//===----------------------------------------------------------------------===//

def Microscale_ConvertLayoutOp : Microscale_Op<"convert_layout", [Pure]> {
  let summary = "Change the physical layouts of a quantized tensor";
  let description = [{
    The same logical tensor (shape, format, block axis and every bit of every
    element and scale) in other value and/or scale layouts. Folds away when
    nothing changes; a chain of conversions collapses into one; a conversion
    followed by its inverse cancels; a conversion of a small constant folds
    through the C++ reference.

    ```mlir
    %h = microscale.convert_layout %q
        : !microscale.qtensor<64x128, mxfp4, axis = 0>
       -> !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.strided<major_dim = -2>>
    ```
  }];
  let arguments = (ins Microscale_QTensor:$input);
  let results = (outs Microscale_QTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// convert_storage: the buffer-level form of convert_layout
//===----------------------------------------------------------------------===//

def Microscale_StoragePart : I32EnumAttr<"StoragePart",
    "which byte buffer of a quantized tensor", [
      I32EnumAttrCase<"values", 0>,
      I32EnumAttrCase<"scales", 1>,
    ]> {
  let cppNamespace = "::mlir::microscale";
  let genSpecializedAttr = 0;
}

def Microscale_StoragePartAttr
    : EnumAttr<Microscale_Dialect, Microscale_StoragePart, "part">;

def Microscale_ConvertStorageOp : Microscale_Op<"convert_storage"> {
  let summary = "Rewrite one byte buffer from one layout into another";
  let description = [{
    The buffer-level form of `convert_layout`, on one of the two byte buffers
    of a quantized tensor (`values` or `scales`): reads `source`, which holds
    that buffer in the layouts of `from`, and writes `dest` in the layouts of
    `to`. `from` and `to` are the same logical tensor. Both buffers are 1-D
    i8 memrefs of the layouts' storage byte counts.

    The destination is made of independent store units (see
    `LayoutAttrInterface`); the optional `units [%begin, %end]` restricts the
    op to that range of destination units, so that callers can split one
    conversion across threads. Without it, the op writes every unit.

    `microscale-lower-storage-conversions` lowers it to a parallel loop that
    computes each destination unit directly from its source elements: no
    intermediate buffer.

    ```mlir
    microscale.convert_storage values %src, %dst
        : !microscale.qtensor<64x128, mxfp4, axis = 0>
       -> !microscale.qtensor<64x128, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>,
          memref<4096xi8>, memref<16384xi8>
    ```
  }];
  let arguments = (ins Microscale_StoragePartAttr:$part,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$source,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemWrite]>:$dest,
                       Variadic<Index>:$unit_range,
                       TypeAttrOf<Microscale_QTensor>:$from,
                       TypeAttrOf<Microscale_QTensor>:$to);
  let assemblyFormat = [{
    $part $source `,` $dest (`units` `[` $unit_range^ `]`)? attr-dict `:`
    $from `->` $to `,` type($source) `,` type($dest)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getFromType() { return ::llvm::cast<QTensorType>(getFrom()); }
    QTensorType getToType() { return ::llvm::cast<QTensorType>(getTo()); }
    /// The logical shape and code width of the converted buffer.
    ::llvm::SmallVector<int64_t> getPartShape();
    unsigned getPartBits();
    LayoutAttrInterface getSourceLayout();
    LayoutAttrInterface getDestLayout();
  }];
}

def Microscale_DequantizeStorageOp : Microscale_Op<"dequantize_storage"> {
  let summary = "Dequantize from byte buffers into a float buffer";
  let description = [{
    The buffer-level form of `dequantize`: reads the packed element bytes and
    the scale bytes of a quantized tensor of type `type` (in its layouts,
    1-D i8 memrefs of their storage byte counts) and the f32 global scale for
    formats that have one, and writes every logical element, row-major, to
    `out` (a 1-D memref of f32, f16 or bf16 with one element per logical
    element). Same numerics as `dequantize`: element x scale exact in f32,
    the global scale one f32 rounding, one rounding to the result type, every
    NaN the positive quiet NaN, E8M0 edges per `e8m0_edges`.

    `microscale-lower-storage-conversions` lowers it to a parallel loop over
    the logical elements that decodes codes through small constant tables.
  }];
  let arguments = (ins Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$scales,
                       Optional<F32>:$global_scale,
                       Arg<MemRefRankOf<[F32, F16, BF16], [1]>, "", [MemWrite]>:$out,
                       TypeAttrOf<Microscale_QTensor>:$type,
                       DefaultValuedAttr<Microscale_E8M0EdgesAttr,
                           "::mlir::microscale::E8M0Edges::ocp">:$e8m0_edges);
  let assemblyFormat = [{
    $values `,` $scales (`,` $global_scale^)? `into` $out attr-dict `:` $type
    `,` type($values) `,` type($scales) `,` type($out)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getQTensorType() { return ::llvm::cast<QTensorType>(getType()); }
  }];
}

def Microscale_QuantizeStorageOp : Microscale_Op<"quantize_storage"> {
  let summary = "Quantize a float buffer into byte buffers";
  let description = [{
    The buffer-level form of `quantize`: reads the logical elements,
    row-major, from `input` (a 1-D memref of f32, f16 or bf16) and writes the
    packed element bytes and the scale bytes of a quantized tensor of type
    `type`, in its layouts (padding zero). Formats with a global scale take
    it as an f32 operand. Same numerics as `quantize` and the reference: OCP
    shared exponents or E4M3 block scales, elements rounded to nearest even
    and saturated, NaN/Inf blocks flagged by a NaN scale.

    `microscale-lower-storage-conversions` lowers it to three parallel loops
    (block scales; scale bytes; element bytes), with one temporary of one
    byte per block.
  }];
  let arguments = (ins Arg<MemRefRankOf<[F32, F16, BF16], [1]>, "", [MemRead]>:$input,
                       Optional<F32>:$global_scale,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemWrite]>:$values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemWrite]>:$scales,
                       TypeAttrOf<Microscale_QTensor>:$type);
  let assemblyFormat = [{
    $input (`,` $global_scale^)? `into` $values `,` $scales attr-dict `:`
    $type `,` type($input) `,` type($values) `,` type($scales)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getQTensorType() { return ::llvm::cast<QTensorType>(getType()); }
  }];
}

def Microscale_TranscodeStorageOp : Microscale_Op<"transcode_storage"> {
  let summary = "Transcode from byte buffers into byte buffers";
  let description = [{
    The buffer-level form of `transcode`: reads the element and scale bytes
    of a quantized tensor of type `from` (in its layouts) and writes those of
    `to` (in its layouts, padding zero). Same numerics as `transcode`; the
    global scale is not touched (it passes through unchanged).

    `microscale-lower-storage-conversions` lowers it to two parallel loops,
    over the destination's scale and element store units, that look codes up
    in constant tables computed by the C++ reference (256 entries for the
    scale, 4096 for (scale code, element code) pairs).
  }];
  let arguments = (ins Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$scales,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemWrite]>:$out_values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemWrite]>:$out_scales,
                       TypeAttrOf<Microscale_QTensor>:$from,
                       TypeAttrOf<Microscale_QTensor>:$to,
      DefaultValuedAttr<Microscale_TranscodeVariantAttr,
                        "::mlir::microscale::TranscodeVariant::lut">:$variant,
      DefaultValuedAttr<Microscale_ExponentBumpAttr,
                        "::mlir::microscale::ExponentBump::nonzero_mantissa">:$exponent_bump);
  let assemblyFormat = [{
    $values `,` $scales `into` $out_values `,` $out_scales attr-dict `:`
    $from `->` $to `,` type($values) `,` type($scales) `,` type($out_values)
    `,` type($out_scales)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getFromType() { return ::llvm::cast<QTensorType>(getFrom()); }
    QTensorType getToType() { return ::llvm::cast<QTensorType>(getTo()); }
  }];
}

def Microscale_ScaledMatmulStorageOp
    : Microscale_Op<"scaled_matmul_storage"> {
  let summary = "Matrix product of two block-scaled operands in byte buffers";
  let description = [{
    The buffer-level form of `scaled_matmul`: each operand is its element
    bytes and scale bytes (1-D i8 memrefs, in the layouts of `lhs` / `rhs`)
    and its f32 global scale (1.0 for formats without one); `out` receives
    the `[M, N]` result row-major. Same numerics as `scaled_matmul`.

    Lowerings: for the host, `microscale-lower-storage-conversions` (loops
    that run the same register transcode sequence as the gfx950 kernel, the
    byte permute emulated); for gfx950, `microscale-rocdl-outline-scaled-matmul`
    (one kernel of `amdgpu.scaled_mfma` 32x32x64 with FP6 operands); for
    sm_120a, `microscale-nvvm-outline-scaled-matmul` (MXFP4 x MXFP4 and
    NVFP4 x NVFP4, weight K-major, one kernel of the block-scaled
    `mma.sync` m16n8k64). sm_100a (tcgen05) has none yet.
  }];
  let arguments = (ins Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$lhs_values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$lhs_scales,
                       F32:$lhs_global_scale,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$rhs_values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$rhs_scales,
                       F32:$rhs_global_scale,
                       Arg<MemRefRankOf<[F32, F16, BF16], [1]>, "", [MemWrite]>:$out,
                       TypeAttrOf<Microscale_QTensor>:$lhs,
                       TypeAttrOf<Microscale_QTensor>:$rhs,
      OptionalAttr<Microscale_TranscodeVariantAttr>:$variant,
      DefaultValuedAttr<Microscale_ExponentBumpAttr,
                        "::mlir::microscale::ExponentBump::nonzero_mantissa">:$exponent_bump);
  let assemblyFormat = [{
    `(` $lhs_values `,` $lhs_scales `,` $lhs_global_scale `)` `times`
    `(` $rhs_values `,` $rhs_scales `,` $rhs_global_scale `)` `into` $out
    attr-dict `:` $lhs `,` $rhs `,` type($lhs_values) `,` type($lhs_scales)
    `,` type($rhs_values) `,` type($rhs_scales) `,` type($out)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getLhsType() { return ::llvm::cast<QTensorType>(getLhs()); }
    QTensorType getRhsType() { return ::llvm::cast<QTensorType>(getRhs()); }
  }];
}

def Microscale_MixedMatmulStorageOp
    : Microscale_Op<"mixed_matmul_storage", [AttrSizedOperandSegments]> {
  let summary = "Float activations times a block-scaled weight in byte buffers";
  let description = [{
    The buffer-level form of `scaled_matmul` with a float `lhs`:
    `lhs` (`[M, K]`, f32, f16 or bf16) times the weight whose element and
    scale bytes (1-D i8 memrefs, in the layouts of `rhs`) and f32 global
    scale (1.0 for formats without one) are given, into `out` (`[M, N]`).
    Each weight element is dequantized exactly (element x scale, the global
    scale applied to the sum); products are summed in f32 and rounded once
    to `out`'s element type.

    The ragged forms (`experts`, `gather`, `scatter`) are those of
    `scaled_matmul`, except that rows of `out` that no ragged row writes
    keep their contents (`microscale-lower-to-storage` zero-fills them
    first).

    The rows may be known at run time only (`memref<?xKxbf16>` activations
    and a `memref<?xN...>` result; in the ragged form, dynamic gather and
    scatter lengths too); K, N and the expert operands stay static. Row
    counts that are both static must agree; dynamic ones are the caller's
    contract.

    Lowerings: for the host, `microscale-lower-storage-conversions`; for
    NVIDIA GPUs, `microscale-nvvm-outline-matmul` (an mma.sync kernel,
    MXFP4 weights stored K-major; with dynamic rows, one kernel per
    rows-per-warp variant and host code that picks one at run time).
  }];
  let arguments = (ins Arg<MemRefRankOf<[F32, F16, BF16], [2]>, "", [MemRead]>:$lhs,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$rhs_values,
                       Arg<MemRefRankOf<[I8], [1]>, "", [MemRead]>:$rhs_scales,
                       F32:$rhs_global_scale,
                       Arg<MemRefRankOf<[F32, F16, BF16], [2]>, "", [MemWrite]>:$out,
                       Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$expert_offsets,
                       Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$expert_counts,
                       Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$gather_indices,
                       Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$scatter_indices,
                       TypeAttrOf<Microscale_QTensor>:$rhs);
  let assemblyFormat = [{
    $lhs `times` `(` $rhs_values `,` $rhs_scales `,` $rhs_global_scale `)`
    `into` $out
    (`experts` `(` $expert_offsets^ `,` $expert_counts `:`
        type($expert_offsets) `,` type($expert_counts) `)`)?
    (`gather` `(` $gather_indices^ `:` type($gather_indices) `)`)?
    (`scatter` `(` $scatter_indices^ `:` type($scatter_indices) `)`)?
    attr-dict `:` type($lhs) `,` $rhs `,` type($rhs_values) `,`
    type($rhs_scales) `,` type($out)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs_values,
                   "::mlir::Value":$rhs_scales, "::mlir::Value":$rhs_global_scale,
                   "::mlir::Value":$out, "::mlir::TypeAttr":$rhs), [{
      build($_builder, $_state, lhs, rhs_values, rhs_scales, rhs_global_scale,
            out, ::mlir::Value(), ::mlir::Value(), ::mlir::Value(),
            ::mlir::Value(), rhs);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    QTensorType getRhsType() { return ::llvm::cast<QTensorType>(getRhs()); }
  }];
}

#endif // MICROSCALE_OPS_TD
