//===- MicroscaleTypes.td - Quantized tensor type ----------*- tablegen -*-===//
#ifndef MICROSCALE_TYPES_TD
#define MICROSCALE_TYPES_TD

include "microscale/Dialect/Microscale/IR/MicroscaleAttrs.td"

def Microscale_QTensorType : TypeDef<Microscale_Dialect, "QTensor"> {
  let mnemonic = "qtensor";
  let summary = "A block-scaled tensor: values, scales and their layouts";
  let description = [{
    A quantized tensor with value semantics. It carries:

    * the logical shape (static; extents may be 0),
    * the format (`mxfp4`, `nvfp4`, ... or a full `#microscale.format<...>`),
    * the block axis: consecutive elements along it share one scale
      (Triton's `mx_axis`). It is printed non-negative; the parser also
      accepts a negative axis counted from the end;
    * the layout of the packed element codes (`values`) and of the scale
      codes (`scales`); both default to `#microscale.strided` (canonical)
      and are omitted from the printed form when they are.

    The logical scale tensor has the logical shape with the block axis
    divided by the block size, which must divide it. Formats with a global
    scale carry one f32 beside the two byte buffers (see `from_bytes`).

    ```mlir
    !microscale.qtensor<2x64x128, mxfp4, axis = 1>
    !microscale.qtensor<256x512, nvfp4, axis = 0,
                        values = #microscale.strided<major_dim = -2>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "FormatAttr":$format,
                        "int64_t":$axis,
                        "LayoutAttrInterface":$valueLayout,
                        "LayoutAttrInterface":$scaleLayout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 0;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "FormatAttr":$format, "int64_t":$axis), [{
      auto strided = StridedAttr::get(format.getContext(), -1);
      return $_get(format.getContext(), shape, format, axis, strided, strided);
    }]>,
  ];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    /// The logical scale shape: the block axis divided by the block size.
    ::llvm::SmallVector<int64_t> getScaleShape() const;
    /// Storage shapes of the element bytes and of the scale bytes (dense,
    /// memory order, padding included). The type verifier guarantees these
    /// succeed for a valid type.
    ::llvm::SmallVector<int64_t> getValueStorageShape() const;
    ::llvm::SmallVector<int64_t> getScaleStorageShape() const;
    /// Reference layouts for this tensor.
    std::unique_ptr<::microscale::ref::Layout> buildValueReference() const;
    std::unique_ptr<::microscale::ref::Layout> buildScaleReference() const;
    /// The same tensor in other layouts.
    QTensorType withLayouts(LayoutAttrInterface values,
                            LayoutAttrInterface scales) const;
  }];
}

#endif // MICROSCALE_TYPES_TD
