//===- MicroscaleAttrs.td - Formats and layouts ------------*- tablegen -*-===//
#ifndef MICROSCALE_ATTRS_TD
#define MICROSCALE_ATTRS_TD

include "microscale/Dialect/Microscale/IR/MicroscaleDialect.td"
include "microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Microscale_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Microscale_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

def Microscale_FormatAttr : Microscale_Attr<"Format", "format"> {
  let summary = "A microscaling format: element type, scale type, block size";
  let description = [{
    A block-scaled format, built from MLIR's builtin float types: an element
    type (`f4E2M1FN`, `f6E2M3FN`, `f6E3M2FN`, `f8E4M3FN`, `f8E5M2`), a scale
    type (`f8E8M0FNU` for OCP MX, `f8E4M3FN` for NVFP4), the number of
    consecutive elements along the block axis that share one scale (a power
    of two in [2, 1024]), and whether a tensor-wide f32 global scale
    multiplies every value (NVFP4; only with `f8E4M3FN` scales).

    The common formats have short names, which the printer always uses:

    | name         | elements   | scales      | block | global scale |
    |--------------|------------|-------------|-------|--------------|
    | `mxfp4`      | `f4E2M1FN` | `f8E8M0FNU` | 32    | no           |
    | `mxfp6_e2m3` | `f6E2M3FN` | `f8E8M0FNU` | 32    | no           |
    | `mxfp6_e3m2` | `f6E3M2FN` | `f8E8M0FNU` | 32    | no           |
    | `mxfp8_e4m3` | `f8E4M3FN` | `f8E8M0FNU` | 32    | no           |
    | `mxfp8_e5m2` | `f8E5M2`   | `f8E8M0FNU` | 32    | no           |
    | `nvfp4`      | `f4E2M1FN` | `f8E4M3FN`  | 16    | yes          |
    | `nvfp4_b32`  | `f4E2M1FN` | `f8E4M3FN`  | 32    | yes          |

    ```mlir
    #microscale.format<mxfp4>
    #microscale.format<f4E2M1FN, f8E8M0FNU, block = 64>
    #microscale.format<f4E2M1FN, f8E4M3FN, block = 16, global_scale>  // = nvfp4
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType,
                        "::mlir::Type":$scaleType,
                        "unsigned":$blockSize,
                        "bool":$globalScale);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The format as the plain C++ reference library sees it.
    ::microscale::ref::MXFormat getReferenceFormat() const;
    /// Width in bits of one element code (4, 6 or 8).
    unsigned getElementBits() const;
    /// The short name (`mxfp4`, ...) or an empty string.
    ::llvm::StringRef getShortName() const;
    /// Looks up a short name; returns a null attribute when unknown.
    static FormatAttr getNamed(::mlir::MLIRContext *context,
                               ::llvm::StringRef name);
    /// Prints the body (`mxfp4` or `f4E2M1FN, ..., block = N`).
    void printBody(::mlir::AsmPrinter &printer) const;
    /// Parses what printBody prints. Sets `consumedComma` when it read a
    /// trailing comma that did not introduce `global_scale`.
    static FormatAttr parseBody(::mlir::AsmParser &parser, bool &consumedComma);
  }];
}

def Microscale_E8M0Edges : I32EnumAttr<"E8M0Edges",
    "how E8M0 scale codes 0 and 255 decode", [
      I32EnumAttrCase<"ocp", 0>,
      I32EnumAttrCase<"zero_inf", 1>,
    ]> {
  let cppNamespace = "::mlir::microscale";
  let genSpecializedAttr = 0;
}

def Microscale_E8M0EdgesAttr
    : EnumAttr<Microscale_Dialect, Microscale_E8M0Edges, "e8m0_edges"> {
  let summary = "E8M0 edge semantics: `ocp` (2^-127, NaN) or `zero_inf` (+0, +inf)";
  let assemblyFormat = "`<` $value `>`";
}

def Microscale_TranscodeVariant : I32EnumAttr<"TranscodeVariant",
    "how a transcode rounds to the destination element type", [
      I32EnumAttrCase<"lut", 0>,
      I32EnumAttrCase<"hwcvt", 1>,
    ]> {
  let cppNamespace = "::mlir::microscale";
  let genSpecializedAttr = 0;
}

def Microscale_TranscodeVariantAttr
    : EnumAttr<Microscale_Dialect, Microscale_TranscodeVariant,
               "transcode_variant"> {
  let summary = "`lut` (ties to the lower magnitude, the bit-exact table) or "
                "`hwcvt` (ties to even, the hardware F16 -> FP6 conversion)";
  let assemblyFormat = "`<` $value `>`";
}

def Microscale_ExponentBump : I32EnumAttr<"ExponentBump",
    "when a transcode moves a power of two from the elements to the scale", [
      I32EnumAttrCase<"nonzero_mantissa", 0>,
      I32EnumAttrCase<"mantissa_at_least_3", 1>,
    ]> {
  let cppNamespace = "::mlir::microscale";
  let genSpecializedAttr = 0;
}

def Microscale_ExponentBumpAttr
    : EnumAttr<Microscale_Dialect, Microscale_ExponentBump, "exponent_bump"> {
  let summary = "`nonzero_mantissa` (the seed's implementation rule) or "
                "`mantissa_at_least_3` (the minimal rule)";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def Microscale_StridedAttr : Microscale_Attr<"Strided", "strided",
    [DeclareAttrInterfaceMethods<Microscale_LayoutAttrInterface>]> {
  let summary = "Packed strided storage (Triton's StridedLayout)";
  let description = [{
    Elements are packed along `major_dim` (two 4-bit codes per byte, even
    element in the low nibble; four 6-bit codes in three bytes, little-endian;
    one 8-bit code per byte) and `major_dim` varies fastest in memory, the
    other dims row-major on top. `major_dim` counts from the end when
    negative; the default, -1, is the canonical form: logical `[..., R, C]`
    stored as bytes `[..., R, C/2]` for FP4.

    The storage shape is dense and in memory order: the logical shape with
    `major_dim` moved last and scaled to bytes. For `[2, 256, 512]` FP4 with
    `major_dim = -2` that is `[2, 512, 128]`.

    Works for element values and for scales, along any block axis.

    ```mlir
    #microscale.strided                    // major_dim = -1
    #microscale.strided<major_dim = -2>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "-1">:$major_dim);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
}

//===----------------------------------------------------------------------===//
// Triton's triton_kernels layouts
//===----------------------------------------------------------------------===//

class Microscale_LayoutAttr<string name, string attrMnemonic,
                            list<string> overridden = []>
    : Microscale_Attr<name, attrMnemonic,
        [DeclareAttrInterfaceMethods<Microscale_LayoutAttrInterface,
                                     !listconcat(["getRequiredBlockAxis"],
                                                 overridden)>]>;

def Microscale_HopperValueAttr
    : Microscale_LayoutAttr<"HopperValue", "hopper_value",
                            ["getStoreUnitBytes"]> {
  let summary = "Triton's HopperMXValueLayout: FP4 values for Hopper MMA";
  let description = [{
    FP4 values tiled so that each thread's 32-bit loads hold its tensor-core
    operand fragment, with the bits of every 32-bit word interleaved so that
    and/shl/shr/or plus one `mul.bf16x2` rebuild BF16 lanes (Triton's matmul_ogs on Hopper).
    `mx_axis` (-1 or -2) is the block axis of the tensor; `mma_version`
    (2: mma.sync, 3: wgmma) picks the tile permutation.

    Storage (memory order): `[*L, Mp/4, 4*KBp]` bytes with the non-MX extent
    padded to 256 and the packed MX extent to 64 bytes (128 FP4), padding
    zero. Triton returns the same memory as a transposed view for
    `mx_axis = -2`. Holds element values only (FP4).

    ```mlir
    #microscale.hopper_value<mx_axis = -2, mma_version = 3>
    ```
  }];
  let parameters = (ins "int64_t":$mx_axis, "int64_t":$mma_version);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Microscale_HopperScaleAttr
    : Microscale_LayoutAttr<"HopperScale", "hopper_scale"> {
  let summary = "Triton's HopperMXScaleLayout: E8M0 scales for Hopper";
  let description = [{
    Scales permuted for a Hopper kernel with `num_warps` warps (a power of
    two, equal to the consuming kernel's `num_warps`). `mx_axis` (-1 or -2)
    is the block axis. Storage (memory order): `[*L, Mp/32, 32*Ksp]` with
    the non-MX extent padded to 32*num_warps and the scale extent to 2,
    padding zero. Holds scales only.

    ```mlir
    #microscale.hopper_scale<mx_axis = -2, num_warps = 8>
    ```
  }];
  let parameters = (ins "int64_t":$mx_axis, "int64_t":$num_warps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Microscale_BlackwellValueAttr
    : Microscale_LayoutAttr<"BlackwellValue", "blackwell_value"> {
  let summary = "Triton's BlackwellMXValueLayout: FP4 values, K-major";
  let description = [{
    FP4 weights `[*L, K, N]` blocked along K, packed along K with K fastest
    (`[*L, N, K2p]` bytes in memory, K2p = K/2 padded to 128 for TMA).
    Triton leaves the padding unspecified; we write zeros. Holds element
    values only, blocked along dim -2.
  }];
}

def Microscale_BlackwellShuffledValueAttr
    : Microscale_LayoutAttr<"BlackwellShuffledValue", "blackwell_shuffled_value",
                            ["emitLoadElement", "emitStoreUnit"]> {
  let summary = "Triton's BlackwellMX4ValueShuffledLayout: FP4 values in TMA tiles";
  let description = [{
    FP4 weights `[*L, K, N]` stored as contiguous `[E, K-tiles, N-tiles,
    block_n, block_k/2]` boxes, each one TMA load in the form the tcgen05
    kernel wants; K bytes padded to a multiple of lcm(128, block_k/2), N to
    block_n, padding zero. Holds element values only, blocked along dim -2.

    Its IR emitters are written by hand, for one case: with a `block_k / 2`
    that is not a power of two, a K byte's place in its box (`kb % (block_k
    / 2)`) is not a move of index bits, so the emitters derived from the
    reference map do not apply. Every other box size uses the derived ones.

    ```mlir
    #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>
    ```
  }];
  let parameters = (ins "int64_t":$block_k, "int64_t":$block_n);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Microscale_BlackwellScaleAttr
    : Microscale_LayoutAttr<"BlackwellScale", "blackwell_scale"> {
  let summary = "Triton's BlackwellMXScaleLayout: the 128x4 scale-factor atom";
  let description = [{
    Scales `[*L, Ks, N]` in 512-byte atoms of 128 n x 4 ks (the cuBLAS /
    CUTLASS tcgen05 block-scaled layout), Ks padded to 8 and N to 128,
    padding zero. Holds scales only, blocked along dim -2.
  }];
}

def Microscale_CDNA4ScaleAttr
    : Microscale_LayoutAttr<"CDNA4Scale", "cdna4_scale"> {
  let summary = "Triton's CDNA4MXScaleLayout: scales for gfx950 scaled MFMA";
  let description = [{
    Scales `[*L, Ks, N]` pre-shuffled so that one 32-bit word holds the
    scales of n and n+16 for ks and ks+4, as gfx950's scaled MFMA reads them.
    Ks padded to 8, N to 32, padding zero. Holds scales only, blocked along
    dim -2.
  }];
}

#endif // MICROSCALE_ATTRS_TD
