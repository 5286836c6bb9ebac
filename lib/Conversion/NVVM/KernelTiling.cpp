//===- KernelTiling.cpp - Explicit tilings of the NVIDIA kernels ----------===//
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALENVVMSETTILING
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;

namespace {
/// Reads the entries of one op's `microscale.tiling` dictionary, each by
/// name and kind; unknown names and wrong kinds are errors at the op.
class TilingReader {
public:
  explicit TilingReader(Operation *op) : op(op) {
    dictionary = op->getAttrOfType<DictionaryAttr>(kTilingAttrName);
    if (!dictionary && op->hasAttr(kTilingAttrName))
      valid = fail() << "'" << kTilingAttrName
                     << "' must be a dictionary attribute";
  }

  void integer(StringRef key, int64_t &value) {
    known.push_back(key);
    if (!dictionary)
      return;
    if (Attribute attr = dictionary.get(key)) {
      if (auto integer = dyn_cast<IntegerAttr>(attr);
          integer && !isa<IndexType>(integer.getType()) &&
          integer.getType().isSignlessInteger())
        value = integer.getInt();
      else
        valid = fail() << "tiling " << key << " must be an integer";
    }
  }
  void boolean(StringRef key, bool &value) {
    std::optional<bool> given;
    boolean(key, given);
    if (given)
      value = *given;
  }
  /// A boolean left unset where the tiling does not give it.
  void boolean(StringRef key, std::optional<bool> &value) {
    known.push_back(key);
    if (!dictionary)
      return;
    if (Attribute attr = dictionary.get(key)) {
      if (auto flag = dyn_cast<BoolAttr>(attr))
        value = flag.getValue();
      else
        valid = fail() << "tiling " << key << " must be true or false";
    }
  }
  /// A string naming one of `choices`; `index` gets its position.
  void choice(StringRef key, ArrayRef<StringRef> choices, unsigned &index) {
    known.push_back(key);
    if (!dictionary)
      return;
    Attribute attr = dictionary.get(key);
    if (!attr)
      return;
    auto string = dyn_cast<StringAttr>(attr);
    const auto *found =
        string ? llvm::find(choices, string.getValue()) : choices.end();
    if (found == choices.end()) {
      InFlightDiagnostic diag = fail() << "tiling " << key << " must be ";
      llvm::interleave(
          choices, diag, [&](StringRef c) { diag << "\"" << c << "\""; },
          " or ");
      valid = diag;
      return;
    }
    index = found - choices.begin();
  }
  /// A value in [low, high], or a power of two in it with `powerOfTwo`.
  void check(StringRef key, int64_t value, int64_t low, int64_t high,
             bool powerOfTwo = false) {
    if (value >= low && value <= high &&
        (!powerOfTwo || llvm::isPowerOf2_64(value)))
      return;
    InFlightDiagnostic diag = fail() << "tiling " << key << " = " << value
                                     << " must be ";
    if (powerOfTwo)
      diag << "a power of two ";
    diag << "in [" << low << ", " << high << "]";
    valid = diag;
  }

  LogicalResult finish() {
    if (dictionary)
      for (NamedAttribute entry : dictionary)
        if (!llvm::is_contained(known, entry.getName().getValue())) {
          InFlightDiagnostic diag =
              fail() << "unknown tiling " << entry.getName()
                     << " for this op (known: ";
          llvm::interleaveComma(known, diag);
          valid = diag << ")";
          break;
        }
    return valid;
  }

private:
  InFlightDiagnostic fail() { return op->emitOpError(); }
  Operation *op;
  DictionaryAttr dictionary;
  SmallVector<StringRef> known;
  LogicalResult valid = success();
};
} // namespace

FailureOr<ConversionTiling> mlir::microscale::getConversionTiling(Operation *op) {
  ConversionTiling tiling;
  TilingReader reader(op);
  unsigned traversal = 0;
  reader.boolean("staged", tiling.staged);
  reader.boolean("byte_tiles", tiling.byteTiles);
  reader.boolean("word_gather", tiling.wordGather);
  reader.boolean("transposed_copies", tiling.transposedCopies);
  reader.integer("resident_blocks", tiling.residentBlocks);
  reader.integer("buffers", tiling.buffers);
  reader.integer("min_tile_bytes", tiling.minTileBytes);
  reader.integer("min_run", tiling.minRun);
  reader.boolean("hoist_tables", tiling.hoistTables);
  reader.integer("tiles_per_block", tiling.tilesPerBlock);
  reader.integer("block_size", tiling.blockSize);
  reader.integer("units_per_thread", tiling.unitsPerThread);
  reader.choice("traversal", {"row-major", "column-major"}, traversal);
  tiling.traversal = static_cast<Traversal>(traversal);
  if (failed(reader.finish()))
    return failure();
  reader.check("tiles_per_block", tiling.tilesPerBlock, 1, 8, true);
  reader.check("block_size", tiling.blockSize, 1, 1024);
  reader.check("units_per_thread", tiling.unitsPerThread, 1, 64);
  reader.check("resident_blocks", tiling.residentBlocks, 0, 64);
  reader.check("buffers", tiling.buffers, 0, 2);
  reader.check("min_tile_bytes", tiling.minTileBytes, 256,
               kByteTileMaxSharedBytes);
  reader.check("min_run", tiling.minRun, 0, 4096);
  if (failed(reader.finish()))
    return failure();
  return tiling;
}

FailureOr<HopperDequantizeOptions>
mlir::microscale::getDequantizeTiling(Operation *op) {
  HopperDequantizeOptions tiling;
  TilingReader reader(op);
  unsigned order = 0, traversal = 0;
  reader.boolean("staged", tiling.staged);
  reader.integer("tiles_per_block", tiling.tilesPerBlock);
  reader.choice("tile_order", {"output", "image"}, order);
  reader.boolean("fold_scale_bias", tiling.foldScaleBias);
  reader.integer("block_size", tiling.blockSize);
  reader.choice("traversal", {"row-major", "column-major"}, traversal);
  tiling.outputOrder = order == 0;
  tiling.columnMajor = traversal == 1;
  if (failed(reader.finish()))
    return failure();
  reader.check("tiles_per_block", tiling.tilesPerBlock, 1, 8, true);
  reader.check("block_size", tiling.blockSize, 1, 1024);
  if (failed(reader.finish()))
    return failure();
  return tiling;
}

FailureOr<MixedMatmulOptions> mlir::microscale::getMatmulTiling(Operation *op) {
  // The values are checked against the shape by the matmul's planner, which
  // reports what would fit.
  MixedMatmulOptions tiling;
  TilingReader reader(op);
  reader.integer("split_k", tiling.splitK);
  reader.integer("unroll", tiling.unroll);
  reader.integer("chunk_k", tiling.chunkK);
  reader.integer("warp_columns", tiling.warpColumns);
  reader.integer("warp_rows", tiling.warpRows);
  reader.integer("column_warps", tiling.columnWarps);
  reader.integer("activation_stages", tiling.activationStages);
  reader.integer("weight_stages", tiling.weightStages);
  reader.integer("max_registers", tiling.maxRegisters);
  reader.integer("cluster_split_k", tiling.clusterSplitK);
  unsigned copies = 0;
  reader.choice("activation_copies", {"chosen", "tma", "cp.async"}, copies);
  tiling.activationCopies = static_cast<ActivationCopies>(copies);
  unsigned overlap = 0;
  reader.choice("decode_overlap", {"chosen", "on", "off"}, overlap);
  tiling.decodeOverlap = static_cast<DecodeOverlap>(overlap);
  unsigned weightCopies = 0;
  reader.choice("weight_copies", {"chosen", "registers", "shared"},
                weightCopies);
  tiling.weightCopies = static_cast<WeightCopies>(weightCopies);
  reader.boolean("chunk_groups", tiling.chunkGroups);
  if (failed(reader.finish()))
    return failure();
  reader.check("max_registers", tiling.maxRegisters, 0, 255);
  reader.check("cluster_split_k", tiling.clusterSplitK, 0, 8);
  if (failed(reader.finish()))
    return failure();
  return tiling;
}

FailureOr<ScaledMatmulTiling>
mlir::microscale::getScaledMatmulTiling(Operation *op) {
  ScaledMatmulTiling tiling;
  TilingReader reader(op);
  reader.boolean("bulk_copies", tiling.bulkCopies);
  reader.boolean("tensor_maps", tiling.tensorMaps);
  if (failed(reader.finish()))
    return failure();
  return tiling;
}

namespace {
struct SetTilingPass
    : public mlir::microscale::impl::MicroscaleNVVMSetTilingBase<SetTilingPass> {
  using MicroscaleNVVMSetTilingBase::MicroscaleNVVMSetTilingBase;

  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) {
      SmallVector<NamedAttribute> entries;
      Builder b(op->getContext());
      auto integer = [&](StringRef key, auto &option) {
        if (option.hasValue())
          entries.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(option)));
      };
      auto boolean = [&](StringRef key, auto &option) {
        if (option.hasValue())
          entries.push_back(b.getNamedAttr(key, b.getBoolAttr(option)));
      };
      auto traversalEntry = [&] {
        if (traversal.hasValue())
          entries.push_back(b.getNamedAttr(
              "traversal", b.getStringAttr(traversal == Traversal::RowMajor
                                               ? "row-major"
                                               : "column-major")));
      };
      if (isa<ConvertStorageOp>(op)) {
        boolean("staged", stageConversions);
        boolean("byte_tiles", byteTileConversions);
        boolean("word_gather", byteTileWordGather);
        boolean("transposed_copies", byteTileTransposedCopies);
        integer("resident_blocks", byteTileBlocksPerSM);
        integer("buffers", byteTileBuffers);
        integer("min_tile_bytes", byteTileMinTileBytes);
        integer("min_run", byteTileMinRun);
        boolean("hoist_tables", byteTileHoistTables);
        integer("tiles_per_block", conversionTilesPerBlock);
        integer("block_size", blockSize);
        integer("units_per_thread", unitsPerThread);
        traversalEntry();
      } else if (isa<DequantizeStorageOp>(op)) {
        boolean("staged", stageDequantize);
        integer("tiles_per_block", dequantizeTilesPerBlock);
        if (dequantizeTileOrder.hasValue())
          entries.push_back(b.getNamedAttr(
              "tile_order", b.getStringAttr(dequantizeTileOrder ==
                                                    TileOrder::Output
                                                ? "output"
                                                : "image")));
        boolean("fold_scale_bias", foldScaleBias);
        integer("block_size", blockSize);
        traversalEntry();
      } else if (isa<ScaledMatmulStorageOp>(op)) {
        boolean("bulk_copies", tcgen05BulkCopies);
        boolean("tensor_maps", tcgen05TensorMaps);
      } else if (isa<MixedMatmulStorageOp>(op)) {
        integer("split_k", matmulSplitK);
        integer("unroll", matmulUnroll);
        integer("chunk_k", matmulChunkK);
        integer("warp_columns", matmulWarpColumns);
        integer("warp_rows", matmulWarpRows);
        integer("column_warps", matmulColumnWarps);
        integer("activation_stages", matmulActivationStages);
        integer("weight_stages", matmulWeightStages);
        integer("max_registers", matmulMaxRegisters);
        integer("cluster_split_k", matmulClusterSplitK);
        if (matmulActivationCopies.hasValue())
          entries.push_back(b.getNamedAttr(
              "activation_copies", b.getStringAttr(matmulActivationCopies)));
        if (matmulDecodeOverlap.hasValue())
          entries.push_back(b.getNamedAttr(
              "decode_overlap", b.getStringAttr(matmulDecodeOverlap)));
        if (matmulWeightCopies.hasValue())
          entries.push_back(b.getNamedAttr(
              "weight_copies", b.getStringAttr(matmulWeightCopies)));
        boolean("chunk_groups", matmulChunkGroups);
      } else {
        return;
      }
      if (entries.empty())
        return;
      // Entries given here replace those already on the op.
      NamedAttrList merged;
      if (auto existing = op->getAttrOfType<DictionaryAttr>(kTilingAttrName))
        merged.append(existing.getValue());
      for (NamedAttribute entry : entries)
        merged.set(entry.getName(), entry.getValue());
      op->setAttr(kTilingAttrName, merged.getDictionary(op->getContext()));
    });
  }
};
} // namespace
