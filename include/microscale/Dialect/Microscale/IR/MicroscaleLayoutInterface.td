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
      the tensor's block axis;
    * `getStoreUnitBytes`, `emitLoadElement` and `emitStoreUnit` emit the
      layout's map as IR: a conversion from layout A to layout B computes
      every store unit of B, gathering each of its elements from A. No
      intermediate tensor exists, and every unit is independent, so the loop
      over units is parallel.
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
    InterfaceMethod<
      [{Bytes in one store unit: the smallest run of storage bytes whose
        contents a lowering can compute on their own (1 for byte-aligned
        layouts, 3 for four 6-bit codes, 4 for Hopper's interleaved word).}],
      "int64_t", "getStoreUnitBytes", (ins "unsigned":$elementBits),
      /*methodBody=*/"", /*defaultImplementation=*/"return 1;">,
    InterfaceMethod<
      [{Emits IR that reads the code of the element at `logicalIndex` (index
        values, in bounds) from `storage`, a 1-D memref of i8 holding the
        layout's storage bytes. Returns the code in the low bits of an i32.}],
      "::mlir::Value", "emitLoadElement",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$storage, "::llvm::ArrayRef<int64_t>":$logicalShape,
           "unsigned":$elementBits, "::mlir::ValueRange":$logicalIndex)>,
    InterfaceMethod<
      [{Emits IR that computes store unit `unitIndex` (an index in
        [0, storage bytes / unit bytes)) as an i32 whose low 8 * unit bytes
        bits are the unit's bytes, little-endian. It calls `loadElement` with
        the logical index (in bounds) of every element the unit holds, and
        puts zeros in padding.}],
      "::mlir::Value", "emitStoreUnit",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::llvm::ArrayRef<int64_t>":$logicalShape, "unsigned":$elementBits,
           "::mlir::Value":$unitIndex,
           "::llvm::function_ref<::mlir::Value(::mlir::OpBuilder &, ::mlir::Location, ::mlir::ValueRange)>":$loadElement)>,
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
