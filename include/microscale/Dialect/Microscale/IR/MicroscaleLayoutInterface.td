//===- MicroscaleLayoutInterface.td - Physical layouts -----*- tablegen -*-===//
#ifndef MICROSCALE_LAYOUT_INTERFACE_TD
#define MICROSCALE_LAYOUT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Microscale_LayoutAttrInterface : AttrInterface<"LayoutAttrInterface"> {
  let cppNamespace = "::mlir::microscale";
  let description = [{
    A physical layout of packed microscaling data: where every bit of every
    element of a logical tensor lives in a byte buffer. Element-value layouts
    describe a logical tensor of 4/6/8-bit element codes; scale layouts
    describe the logical scale tensor (one 8-bit code per block). Passes use
    this interface without knowing which layout they hold:

    * `supportsRole` says whether the layout can hold element values, scales
      or both;
    * `buildReference` builds the plain C++ reference map of the layout for a
      logical shape (storage shape with padding, and the bit-level placement
      of each element), or says why the shape is not supported. Verification,
      storage shapes and constant folding all go through it, so a new layout
      is one attribute plus its reference map, and no pass changes;
    * `getRequiredBlockAxis` names the block (MX) axis the layout is built
      around, when it has one, so that the type verifier can check it against
      the tensor's block axis.
  }];
  let methods = [
    InterfaceMethod<
      "Whether this layout can hold data of the given role.",
      "bool", "supportsRole", (ins "::mlir::microscale::LayoutRole":$role)>,
    InterfaceMethod<
      [{Builds the reference layout for `logicalShape` of `elementBits`-bit
        codes. Returns null and sets `*error` when the shape is unsupported.}],
      "std::unique_ptr<::microscale::ref::Layout>", "buildReference",
      (ins "::llvm::ArrayRef<int64_t>":$logicalShape,
           "unsigned":$elementBits, "std::string *":$error)>,
    InterfaceMethod<
      [{The block axis (non-negative, for a tensor of rank `rank`) that this
        layout requires, or std::nullopt when any block axis is acceptable.}],
      "std::optional<int64_t>", "getRequiredBlockAxis", (ins "int64_t":$rank),
      /*methodBody=*/"", /*defaultImplementation=*/"return std::nullopt;">,
  ];
  let extraSharedClassDeclaration = [{
    /// The dense physical storage shape (memory order, padding included) for
    /// `logicalShape`, or failure with a diagnostic through `emitError`.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getStorageShape(::llvm::ArrayRef<int64_t> logicalShape,
                    unsigned elementBits,
                    ::llvm::function_ref<::mlir::InFlightDiagnostic()>
                        emitError) const {
      std::string error;
      auto reference = $_attr.buildReference(logicalShape, elementBits, &error);
      if (!reference)
        return emitError() << error;
      auto shape = reference->getStorageShape();
      return ::llvm::SmallVector<int64_t>(shape.begin(), shape.end());
    }
  }];
}

#endif // MICROSCALE_LAYOUT_INTERFACE_TD
