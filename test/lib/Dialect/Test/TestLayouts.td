//===- TestLayouts.td - Test-only layouts ------------------*- tablegen -*-===//
//
// A layout added from outside the dialect, in one attribute and one reference
// map (TestLayouts.cpp), to show that the lowerings need nothing else: its
// IR emitters are the interface's defaults, derived from the map.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TEST_LAYOUTS_TD
#define MICROSCALE_TEST_LAYOUTS_TD

include "microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"

def MicroscaleTest_Dialect : Dialect {
  let name = "microscale_test";
  let cppNamespace = "::mlir::microscale::test";
  let summary = "Test-only layouts for the microscale dialect";
  let useDefaultAttributePrinterParser = 1;
}

def MicroscaleTest_TileTransposedAttr
    : AttrDef<MicroscaleTest_Dialect, "TileTransposed",
              [DeclareAttrInterfaceMethods<Microscale_LayoutAttrInterface>]> {
  let mnemonic = "tile_transposed";
  let summary = "Square tiles, each stored column-major";
  let description = [{
    A logical `[*L, R, C]` tensor of 4-, 6- or 8-bit codes cut into
    `tile x tile` tiles (R and C padded to a multiple of `tile`, padding
    zero), stored tile after tile in row-major order; inside a tile the
    elements are column-major, packed densely (two FP4 codes per byte, low
    nibble first). Storage shape `[*L, Rp/tile, Cp/tile, tile*tile*bits/8]`.
    On each tile, the address is the in-tile index with its row and column
    bits swapped.
  }];
  let parameters = (ins "int64_t":$tile);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // MICROSCALE_TEST_LAYOUTS_TD
