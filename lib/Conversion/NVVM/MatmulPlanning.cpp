//===- MatmulPlanning.cpp - Split-K planning the NVIDIA matmuls share -----===//
//
// See MatmulPlanning.h.
//
//===----------------------------------------------------------------------===//
#include "MatmulPlanning.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir::microscale::nvvm;

int64_t mlir::microscale::nvvm::chooseSplitK(const SplitKProblem &p,
                                             const NVIDIAChip &chip,
                                             int64_t smCount) {
  const int64_t warpRegisters = static_cast<int64_t>(
      llvm::alignTo(p.registersPerThread, 8) * 32);
  const double inFlight =
      static_cast<double>(chip.bytesInFlightPerSM(smCount)) * smCount;
  const double bandwidthSteps = p.weightBytes / inFlight;
  const int64_t maxSplit = p.maxSplit ? std::min(p.maxSplit, p.chunks)
                                      : p.chunks;
  int64_t best = 1;
  double bestTime = 0;
  for (int64_t split = 1; split <= maxSplit; ++split) {
    const int64_t warps = split * p.columnWarps;
    // A block must fit on an SM, registers allocated for whole groups of
    // warps (else the backend caps the registers and spills).
    const int64_t allocatedWarps = static_cast<int64_t>(
        llvm::alignTo(warps, chip.registerAllocationWarps));
    if (warps * 32 > chip.maxThreadsPerBlock ||
        allocatedWarps * warpRegisters > chip.registersPerSM)
      break;
    if (p.divisorStep && p.chunks % (split * p.divisorStep))
      continue;
    const int64_t perSM =
        std::min<int64_t>(chip.maxThreadsPerSM / 32 / warps,
                          chip.registersPerSM / (allocatedWarps * warpRegisters));
    const int64_t waves = llvm::divideCeil(p.blocks, smCount * perSM);
    const int64_t rounds = llvm::divideCeil(
        llvm::divideCeil(p.chunks, split), std::max<int64_t>(1, p.chunksInFlight));
    const double time =
        std::max(bandwidthSteps, static_cast<double>(waves * (rounds + 1)));
    if (split == 1 || time < bestTime) {
      best = split;
      bestTime = time;
    }
  }
  return best;
}
