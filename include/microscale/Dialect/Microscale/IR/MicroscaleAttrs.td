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

#endif // MICROSCALE_ATTRS_TD
