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

    The emitters need not be written by hand. By default they are derived
    from the reference map (`DerivedLayoutCodegen.h`): wherever an element's
    address is a permutation of its index bits within a block of the padded
    tensor, on a strided grid of blocks (every layout here except
    `blackwell_shuffled_value` with a `block_k / 2` that is not a power of
    two), the analysis `ref::analyzeBlockBits` finds the runs of index bits
    that move together and the emitters move each run with one mask and one
    shift. Padding is found from the reference too: it is the padded shape
    whose elements fill the storage. A layout whose map is of another kind
    implements `emitLoadElement` and `emitStoreUnit` itself, and may still
    call the derived emitters for the shapes where they apply.

    Adding a layout is then:

    1. a `ref::Layout` subclass and its factory in `lib/Reference` (the map:
       `locate`, the storage shape, and a word interleave if any), with unit
       tests against the format's own vectors in `unittests/Reference`;
    2. an attribute in `MicroscaleAttrs.td` that implements this interface
       (`supportsRole`, `buildReference` calling the factory, and
       `getRequiredBlockAxis` if it has one; `getStoreUnitBytes` for a word
       interleave), and its parser/verifier in `MicroscaleAttrs.cpp`;
    3. the layout in the JIT tests' lists (`unittests/Runtime`), which
       compare its generated conversions with the reference.

    No pass changes; `test/lib/Dialect/Test` adds a layout this way from
    outside the dialect.
  }];
  let methods = [
    InterfaceMethod<
      "Whether this layout can hold data of the given role.",
      "bool", "supportsRole", (ins "::mlir::microscale::StoragePart":$role)>,
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
        layouts, 3 for four 6-bit codes, 4 for Hopper's interleaved word).
        Layouts with a word interleave return the word.}],
      "int64_t", "getStoreUnitBytes", (ins "unsigned":$elementBits),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return elementBits == 6 ? 3 : 1;">,
    InterfaceMethod<
      [{Emits IR that reads the code of the element at `logicalIndex` (index
        values, in bounds) from `storage`, a 1-D memref of i8 holding the
        layout's storage bytes. Returns the code in the low bits of an i32.
        Derived from the reference map by default.}],
      "::mlir::Value", "emitLoadElement",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$storage, "::llvm::ArrayRef<int64_t>":$logicalShape,
           "unsigned":$elementBits, "::mlir::ValueRange":$logicalIndex),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::microscale::codegen::emitLoadElementFromReference(
            $_attr, builder, loc, storage, logicalShape, elementBits,
            logicalIndex);
      }]>,
    InterfaceMethod<
      [{Emits IR that computes store unit `unitIndex` (an index in
        [0, storage bytes / unit bytes)) as an i32 whose low 8 * unit bytes
        bits are the unit's bytes, little-endian. It calls `loadElement` with
        the logical index (in bounds) of every element the unit holds, and
        puts zeros in padding. Derived from the reference map by default.}],
      "::mlir::Value", "emitStoreUnit",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::llvm::ArrayRef<int64_t>":$logicalShape, "unsigned":$elementBits,
           "::mlir::Value":$unitIndex,
           "::llvm::function_ref<::mlir::Value(::mlir::OpBuilder &, ::mlir::Location, ::mlir::ValueRange)>":$loadElement),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::microscale::codegen::emitStoreUnitFromReference(
            $_attr, builder, loc, logicalShape, elementBits, unitIndex,
            loadElement);
      }]>,
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
