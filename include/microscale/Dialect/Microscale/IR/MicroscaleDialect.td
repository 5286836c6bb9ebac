//===- MicroscaleDialect.td - The microscale dialect -------*- tablegen -*-===//
#ifndef MICROSCALE_DIALECT_TD
#define MICROSCALE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Microscale_Dialect : Dialect {
  let name = "microscale";
  let cppNamespace = "::mlir::microscale";
  let summary = "Microscaling number formats (MXFP4/6/8, NVFP4) and their "
                "physical layouts";
  let description = [{
    The `microscale` dialect describes packed block-scaled tensors exactly: the
    element and scale formats (`#microscale.format`), the block axis, and the
    physical layouts of the packed element bytes and of the scale bytes (the
    layout attributes, all implementing `LayoutAttrInterface`). Its ops move
    data in from raw storage bytes and out to them (`from_bytes`, `to_bytes`),
    quantize and dequantize, and convert between layouts.

    Every quantized value has type `!microscale.qtensor`, which bundles the
    logical shape, the format, the block axis and both layouts, so that each
    op's verifier can check storage shapes, packing extents and scale shapes
    at the op. `docs/design.md` explains why this model was chosen.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Microscale_Op<string mnemonic, list<Trait> traits = []>
    : Op<Microscale_Dialect, mnemonic, traits>;

#endif // MICROSCALE_DIALECT_TD
