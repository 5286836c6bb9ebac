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
  const double inFlight =
      static_cast<double>(chip.bytesInFlightPerSM(smCount)) * smCount;
  const double bandwidthSteps = p.weightBytes / inFlight;
  const int64_t maxSplit =
      p.maxSplit ? std::min(p.maxSplit, p.chunks) : p.chunks;
  int64_t best = 1;
  double bestTime = 0;
  for (int64_t split = 1; split <= maxSplit; ++split) {
    const int64_t warps = split * p.columnWarps;
    // Blocks an SM holds by threads and by its schedulers' register files
    // (a lone block of 9 warps takes the registers of 12; three of 10 fit
    // where 30 warps' registers do).
    if (warps * 32 > chip.maxThreadsPerBlock)
      break;
    const int64_t perSM = chip.residentBlocks(warps, p.registersPerThread);
    if (perSM == 0)
      break;
    if (p.divisorStep && p.chunks % (split * p.divisorStep))
      continue;
    const int64_t waves = llvm::divideCeil(p.blocks, smCount * perSM);
    const int64_t rounds =
        llvm::divideCeil(llvm::divideCeil(p.chunks, split),
                         std::max<int64_t>(1, p.chunksInFlight));
    const double time =
        std::max(bandwidthSteps, static_cast<double>(waves * (rounds + 1)));
    if (split == 1 || time < bestTime) {
      best = split;
      bestTime = time;
    }
  }
  return best;
}
