//===- HopperRaggedForm.h - The ragged (experts) form, both kernels -*- C++ -*-===//
//
// What the two Hopper-layout matmul kernels share for the ragged (MoE) form
// of mixed_matmul_storage (experts(offsets, counts), gather, scatter): the
// op's static facts, the kernel arguments, and per block the expert's slice
// of ragged rows walked in groups (token tiles) whose rows map through the
// gather to lhs rows and through the scatter to out rows.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOPPERRAGGEDFORM_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOPPERRAGGEDFORM_H

#include "HopperLayoutMatmulEmitter.h"

namespace mlir::microscale::hopperlayout {

/// The ragged form's static facts. Row counts known at run time only are
/// ShapedType::kDynamic, with `dynamicRows` set: the kernel then takes all
/// three counts as index arguments after the index buffers.
struct RaggedForm {
  int64_t experts = 0;
  int64_t raggedRows = 0, lhsRows = 0, outRows = 0;
  int64_t valueBytes = 0, scaleBytes = 0; // per expert's images
  bool gather = false, scatter = false;
  bool dynamicRows = false;

  /// Nothing to compute, known at compile time: no experts or no rows.
  bool empty() const {
    return experts == 0 || raggedRows == 0 || lhsRows == 0 || outRows == 0;
  }
  /// Ragged rows per expert, rounded up (at least 1).
  int64_t meanRows() const {
    return std::max<int64_t>(
        1, llvm::divideCeil(raggedRows, std::max<int64_t>(1, experts)));
  }
};

/// Whether `op` is the ragged (experts) form.
bool isRagged(MixedMatmulStorageOp op);

/// The ragged form's facts of `op` (static row counts: checked before).
RaggedForm getRaggedForm(MixedMatmulStorageOp op);

/// The ragged form's kernel arguments: lhs and out flat with their own
/// rows, value and scale bytes, the global scale, then the expert offsets
/// and counts, the gather and the scatter (where given); buffers of rows
/// known at run time as kDynamicRowsBound elements, and then the ragged,
/// lhs and out rows (index) last.
SmallVector<Type> raggedKernelArguments(MixedMatmulStorageOp op,
                                        const HopperMatmulPlan &p,
                                        const RaggedForm &r);
SmallVector<Value> raggedKernelOperands(OpBuilder &builder,
                                        MixedMatmulStorageOp op,
                                        ArrayRef<Type> types,
                                        const RaggedForm &r);

/// One block's expert: its slice cut to the ragged rows [0, R) (its first
/// row and its rows; a negative count is an empty slice), their groups of
/// `groupRows`, and the ragged index buffers.
struct RaggedSlice {
  Value start, count, groups, gather, scatter;
  Value raggedRows, lhsRows, outRows; // the kernel's counts (index)
  int64_t groupRows = 0;
};

/// The ragged form's tile map: the token tiles of `tileRows` rows of every
/// expert in expert order (expert e has ceil(rows / tileRows) of them, its
/// slice cut to the ragged rows). Grid y has `countRaggedSlots` slots;
/// slot s takes tiles s, s + slots, ... of the map, so that an expert with
/// many rows spreads over that many slots wherever it lies in expert order.
///
/// Slots: min(experts, R), the experts that can have rows when the slices
/// partition the R ragged rows (with random routing about one tile each;
/// more slots would be blocks with nothing to do), from the kernel
/// operands `operands` (raggedKernelOperands) where the rows are known at
/// run time only.
Value countRaggedSlots(Emitter &e, const RaggedForm &ragged,
                       ArrayRef<Value> operands);

/// A found tile of the map: its expert and its index among the expert's
/// tiles (meaningful where the tile is below the map's tiles), and the
/// map's tiles (index).
struct RaggedTile {
  Value expert, tile, tiles;
};

/// The map over the kernel's index arguments (`indices`: those after the
/// global scale, as beginRaggedSlice takes them). Each warp scans the
/// experts' tile counts 32 at a time (lane l holds expert 32 c + l's: an
/// inclusive scan by shuffles, then a ballot for the first lane past the
/// tile); with `onHost`, the same scan and ballot as loops over the lanes
/// (`lane` unused). Slices are cut to the ragged rows first (rows outside
/// them are skipped by the op's definition), so no expert has more tiles
/// than the rows give.
struct RaggedTileMap {
  Value offsets, counts, raggedRows;
  int64_t experts = 0, tileRows = 1;
  bool onHost = false;

  static RaggedTileMap get(Emitter &e, const RaggedForm &ragged,
                           int64_t tileRows, ValueRange indices, bool onHost);
  /// The `tile`-th tile of the map (and the map's tiles).
  RaggedTile find(Emitter &e, Value tile, Value lane) const;
};

/// Reads expert `expert`'s slice from `indices` (the kernel's arguments
/// after the global scale: offsets, counts, gather and scatter where given,
/// the three row counts where known at run time only) and
/// sets `weights`' image offsets to the expert's images.
RaggedSlice beginRaggedSlice(Emitter &e, HopperMatmulEmitter &weights,
                             int64_t groupRows, const RaggedForm &ragged,
                             Value expert, ValueRange indices);

/// Sets `weights`' row maps for row group `group` of `slice` (local row r
/// is ragged row start + group x groupRows + r).
void enterRaggedGroup(Emitter &e, HopperMatmulEmitter &weights,
                      const RaggedSlice &slice, Value group);

} // namespace mlir::microscale::hopperlayout

#endif
