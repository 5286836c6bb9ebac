//===- HostEmulation.h - PTX instructions as arith for the emulations -*- C++ -*-===//
//
// The host emulations of the NVIDIA kernels (CI has no GPU) run the kernels'
// own emitters with each inline PTX instruction replaced by arith that gives
// the same bits. The instructions more than one kernel needs live here.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_HOSTEMULATION_H
#define MICROSCALE_LIB_CONVERSION_NVVM_HOSTEMULATION_H

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::microscale {

/// Loads the dialects the host emulations build with (arith, memref, scf,
/// vector, LLVM) into `context`. Before any of their ops is created: an op
/// of a dialect not loaded is not created (null).
void loadHostEmulationDialects(MLIRContext *context);

/// `mul.rn.bf16x2`: the two bf16 lanes of the i32s `a` and `b` multiplied,
/// each exactly in f32 (two 8-bit significands) and rounded to nearest even
/// on the bits.
Value emitHostMulBF16x2(codegen::Emitter &e, Value a, Value b);

/// The staged dequantization kernels' blocks on the host, at `builder`: per
/// block and tile, every thread's load and shared-memory staging, then (the
/// barrier between them being the end of a loop over the threads) every
/// thread's row stores. `TileEmitter` is a staged dequantization emitter
/// (getNumBlocks, getTilesPerBlock, locate, load, stage, storeRows);
/// `threads` its block size.
template <typename TileEmitter>
void emitStagedTilesOnHost(OpBuilder &builder, Location loc,
                           TileEmitter &emitter, int64_t threads) {
  codegen::Emitter e(builder, loc);
  auto blocks = scf::ForOp::create(builder, loc, e.index(0),
                                   e.index(emitter.getNumBlocks()), e.index(1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(blocks.getBody());
  Value block = blocks.getInductionVar();
  auto forThreads = [&](auto body) {
    auto loop = scf::ForOp::create(builder, loc, e.index(0), e.index(threads),
                                   e.index(1));
    OpBuilder::InsertionGuard inner(builder);
    builder.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  };
  for (int64_t t = 0; t < emitter.getTilesPerBlock(); ++t) {
    forThreads([&](Value thread) {
      auto d = emitter.locate(block, t);
      emitter.load(d, thread);
      emitter.stage(d, thread);
    });
    forThreads([&](Value thread) {
      emitter.storeRows(emitter.locate(block, t), thread);
    });
  }
}

} // namespace mlir::microscale

#endif
