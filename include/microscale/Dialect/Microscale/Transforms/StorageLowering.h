//===- StorageLowering.h - Buffer-level ops as host loops -------*- C++ -*-===//
//
// The target-neutral lowerings of the buffer-level ops to scf/arith/memref/
// vector loops, shared by `microscale-lower-storage-conversions` and the
// CPU target's `microscale-cpu-lower-storage` (which adds what only the host
// has: GFNI, streaming stores and their fence; see BlockConversion.h).
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_STORAGELOWERING_H
#define MICROSCALE_DIALECT_MICROSCALE_TRANSFORMS_STORAGELOWERING_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Dialect/Microscale/Utils/ConstantTable.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::microscale {
class BlockConversionTarget;

/// How `lowerStorageOps` lowers.
struct StorageLoweringOptions {
  /// Vector register width of the block route, in bytes (16, 32 or 64; 0
  /// disables the route).
  int64_t vectorBytes = 64;
  /// What the target adds to the block route; null: nothing.
  const BlockConversionTarget *target = nullptr;
  /// The least destination size for block routes with gaps (padding,
  /// edges); see BlockConversion.h.
  int64_t minBytesWithGaps = int64_t(1) << 20;
  /// Bytes of vector registers the block route's blocks may hold (the
  /// host's: 32 x 64 with AVX-512); 0: blocks ranked without a register
  /// model. See planBlockConversion.
  int64_t registerFileBytes = 0;
};

/// Lowers every buffer-level op under `root` (convert, quantize, dequantize,
/// transcode, scaled_matmul and mixed_matmul storage) to loops. Failure,
/// with a diagnostic at the op, for an op it cannot lower.
LogicalResult lowerStorageOps(Operation *root,
                              const StorageLoweringOptions &options);

/// Replaces a quantize_storage with the loops that compute it (block scales
/// into a temporary of one byte per block, then the scale bytes and the
/// element bytes through their layouts). Defined in LowerQuantize.cpp.
void lowerQuantizeStorage(QuantizeStorageOp op);

/// One parallel loop over the store units of `layout`'s storage of `shape`
/// (`storageBytes` bytes), gathering each unit's codes from `loadElement`
/// (an i32 per logical index) and storing them into the 1-D i8 `dest`.
/// Defined in LowerQuantize.cpp.
void emitGatherLoop(OpBuilder &builder, Location loc,
                    LayoutAttrInterface layout, ArrayRef<int64_t> shape,
                    unsigned bits, int64_t storageBytes, Value dest,
                    function_ref<Value(OpBuilder &, Location, ValueRange)>
                        loadElement);

/// Replaces a transcode_storage with table-driven gather loops. Returns
/// failure (with a diagnostic) when the op has no enclosing module for its
/// tables. Defined in LowerTranscode.cpp.
LogicalResult lowerTranscodeStorage(TranscodeStorageOp op);

/// Replaces a scaled_matmul_storage with host loops that assemble each
/// operand block as gfx950's matrix core gets it (see TranscodeBlock.h).
/// Returns failure (with a diagnostic) for operand formats it does not
/// handle. Defined in LowerScaledMatmul.cpp.
LogicalResult lowerScaledMatmulStorage(ScaledMatmulStorageOp op);

/// The f32 decode tables of a format's element codes and scale codes, as
/// constant module globals. Defined in LowerStorageConversions.cpp.
struct DecodeTables {
  Value element, scale;
};
DecodeTables getDecodeTables(OpBuilder &builder, Location loc, ModuleOp module,
                             FormatAttr format, E8M0Edges edges);

/// Replaces a mixed_matmul_storage with host loops (each weight element
/// dequantized through the decode tables, products summed in f32). Returns
/// failure (with a diagnostic) without an enclosing module. Defined in
/// LowerMixedMatmul.cpp.
LogicalResult lowerMixedMatmulStorage(MixedMatmulStorageOp op);
} // namespace mlir::microscale

#endif
