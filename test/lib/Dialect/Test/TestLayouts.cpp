//===- TestLayouts.cpp - Test-only layouts --------------------------------===//
//
// #microscale_test.tile_transposed: the attribute and its reference map,
// which is all a layout needs (see LayoutAttrInterface).
//
//===----------------------------------------------------------------------===//
#include "TestLayouts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::test;
namespace ref = ::microscale::ref;

#include "TestLayoutsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "TestLayoutsAttrs.cpp.inc"

void MicroscaleTestDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TestLayoutsAttrs.cpp.inc"
      >();
}

void mlir::microscale::test::registerTestLayoutsDialect(
    DialectRegistry &registry) {
  registry.insert<MicroscaleTestDialect>();
}

//===----------------------------------------------------------------------===//
// The reference map
//===----------------------------------------------------------------------===//

namespace {
class TileTransposedLayout final : public ref::Layout {
public:
  TileTransposedLayout(std::vector<int64_t> shape, unsigned bits, int64_t tile)
      : ref::Layout(std::move(shape), bits), tile(tile) {
    const size_t rank = logicalShape.size();
    tilesDown = llvm::divideCeil(logicalShape[rank - 2], tile);
    tilesAcross = llvm::divideCeil(logicalShape[rank - 1], tile);
    storageShape.assign(logicalShape.begin(), logicalShape.end() - 2);
    storageShape.push_back(tilesDown);
    storageShape.push_back(tilesAcross);
    storageShape.push_back(tile * tile * bits / 8);
  }

  std::vector<int64_t> getStorageShape() const override { return storageShape; }

  void locate(const int64_t *index, int64_t *bitOffsets) const override {
    const size_t rank = logicalShape.size();
    int64_t batch = 0;
    for (size_t d = 0; d + 2 < rank; ++d)
      batch = batch * logicalShape[d] + index[d];
    const int64_t r = index[rank - 2], c = index[rank - 1];
    const int64_t tileIndex =
        (batch * tilesDown + r / tile) * tilesAcross + c / tile;
    const int64_t slot =
        tileIndex * tile * tile + (c % tile) * tile + r % tile;
    for (unsigned i = 0; i < elementBits; ++i)
      bitOffsets[i] = slot * elementBits + i;
  }

private:
  int64_t tile, tilesDown = 0, tilesAcross = 0;
  std::vector<int64_t> storageShape;
};
} // namespace

//===----------------------------------------------------------------------===//
// The attribute
//===----------------------------------------------------------------------===//

LogicalResult
TileTransposedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t tile) {
  if (tile < 2 || tile > 256 || !llvm::isPowerOf2_64(tile))
    return emitError() << "tile must be a power of two in [2, 256], got "
                       << tile;
  return success();
}

bool TileTransposedAttr::supportsRole(StoragePart) const { return true; }

std::unique_ptr<ref::Layout>
TileTransposedAttr::buildReference(ArrayRef<int64_t> shape,
                                   unsigned elementBits,
                                   std::string *error) const {
  if (shape.size() < 2) {
    if (error)
      *error = "tile_transposed layout needs a tensor of rank >= 2";
    return nullptr;
  }
  if (elementBits != 4 && elementBits != 6 && elementBits != 8) {
    if (error)
      *error = "element width must be 4, 6 or 8 bits";
    return nullptr;
  }
  return std::make_unique<TileTransposedLayout>(
      std::vector<int64_t>(shape.begin(), shape.end()), elementBits,
      getTile());
}
