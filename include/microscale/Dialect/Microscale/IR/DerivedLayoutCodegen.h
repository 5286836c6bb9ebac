//===- DerivedLayoutCodegen.h - Layout emitters from the reference -*- C++ -*-===//
//
// The IR emitters of a layout (LayoutAttrInterface's emitLoadElement and
// emitStoreUnit) derived from its reference map alone, wherever that map
// places elements by moving the bits of their index (ref::BlockBits: a bit
// permutation within blocks, and a strided grid of blocks over the padded
// storage). This is the interface's default, so a layout of that kind is
// one attribute and one `ref::Layout`; only maps of another kind need
// hand-written emitters.
//
// The emitted arithmetic works on runs of index bits, not single bits: a run
// that moves as one piece costs one mask and one shift (or, at the top of a
// dim, one multiplication by the block grid's stride).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_IR_DERIVEDLAYOUTCODEGEN_H
#define MICROSCALE_DIALECT_MICROSCALE_IR_DERIVEDLAYOUTCODEGEN_H

#include "microscale/Reference/BlockBits.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::microscale::codegen {

using LoadElementFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// The bit map of `layout` (a LayoutAttrInterface attribute) for
/// `logicalShape` when the emitters below can use it with store units of
/// `unitBytes` bytes, else std::nullopt. Cached per layout and shape.
std::optional<::microscale::ref::BlockBits>
deriveBlockBits(Attribute layout, ArrayRef<int64_t> logicalShape,
                unsigned elementBits, int64_t unitBytes);

/// emitLoadElement from a derived map (see LayoutAttrInterface).
Value emitDerivedLoadElement(OpBuilder &builder, Location loc,
                             const ::microscale::ref::BlockBits &map,
                             int64_t unitBytes, Value storage,
                             ValueRange logicalIndex);

/// emitStoreUnit from a derived map: elements of the padded shape outside
/// `logicalShape` are padding and stored as zeros.
Value emitDerivedStoreUnit(OpBuilder &builder, Location loc,
                           const ::microscale::ref::BlockBits &map,
                           int64_t unitBytes, ArrayRef<int64_t> logicalShape,
                           Value unitIndex, LoadElementFn loadElement);

/// The interface's default emitters: derived from `layout`'s reference map.
/// Empty tensors need no map (their conversions never run). Other layouts
/// whose map is not of the derived kind must implement the methods.
Value emitLoadElementFromReference(Attribute layout, OpBuilder &builder,
                                   Location loc, Value storage,
                                   ArrayRef<int64_t> logicalShape,
                                   unsigned elementBits,
                                   ValueRange logicalIndex);
Value emitStoreUnitFromReference(Attribute layout, OpBuilder &builder,
                                 Location loc, ArrayRef<int64_t> logicalShape,
                                 unsigned elementBits, Value unitIndex,
                                 LoadElementFn loadElement);

} // namespace mlir::microscale::codegen

#endif
