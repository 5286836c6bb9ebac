//===- Chip.cpp - The NVIDIA chips the kernels know -----------------------===//
#include "microscale/Conversion/NVVM/Chip.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace mlir::microscale::nvvm;

namespace {
/// Figures from NVIDIA's CUDA programming guide (compute capabilities table)
/// and the PTX ISA release notes; SM counts are those of the part most
/// deployed for each chip (A100, RTX 3090, RTX 4090, H100 SXM / H200, B200,
/// RTX 5090). Memory bandwidth: the same parts' data sheets (sm_90a: the
/// H200's HBM3e, the part the kernels are tuned on); latency: the loaded
/// DRAM latency these generations show in microbenchmarks (600-800 ns;
/// HBM parts at the high end).
NVIDIAChip makeChip(llvm::StringRef name, unsigned cc, unsigned ptx,
                    int64_t sms, int64_t threadsPerSM, int64_t maxShared,
                    int64_t sharedPerSM, int64_t bandwidthGBps,
                    int64_t latencyNs) {
  NVIDIAChip chip;
  chip.name = name;
  chip.computeCapability = cc;
  chip.minimumPTXVersion = ptx;
  chip.defaultSMCount = sms;
  chip.maxThreadsPerSM = threadsPerSM;
  chip.maxSharedMemoryPerBlock = maxShared;
  chip.sharedMemoryPerSM = sharedPerSM;
  chip.memoryBandwidthGBps = bandwidthGBps;
  chip.memoryLatencyNs = latencyNs;
  chip.hasCpAsync = cc >= 80;
  chip.hasBF16x2Arithmetic = cc >= 90;
  chip.hasTMA = cc >= 90;
  return chip;
}

const llvm::SmallVector<NVIDIAChip> &chips() {
  static const llvm::SmallVector<NVIDIAChip> table = [] {
    constexpr int64_t KiB = 1024;
    llvm::SmallVector<NVIDIAChip> t;
    t.push_back(makeChip("sm_80", 80, 70, 108, 2048, 163 * KiB, 164 * KiB, 2039, 700));
    t.push_back(makeChip("sm_86", 86, 71, 82, 1536, 99 * KiB, 100 * KiB, 936, 600));
    t.push_back(makeChip("sm_89", 89, 78, 128, 1536, 99 * KiB, 100 * KiB, 1008, 600));
    t.push_back(makeChip("sm_90", 90, 78, 132, 2048, 227 * KiB, 228 * KiB, 4800, 700));
    NVIDIAChip hopper =
        makeChip("sm_90a", 90, 78, 132, 2048, 227 * KiB, 228 * KiB, 4800, 700);
    hopper.hasWGMMA = true;
    t.push_back(hopper);
    NVIDIAChip blackwell =
        makeChip("sm_100a", 100, 86, 148, 2048, 227 * KiB, 228 * KiB, 8000, 700);
    blackwell.hasTcgen05 = true;
    blackwell.hasNativeFP4Conversion = true;
    t.push_back(blackwell);
    NVIDIAChip consumer =
        makeChip("sm_120a", 120, 87, 170, 1536, 99 * KiB, 100 * KiB, 1792, 600);
    consumer.hasNativeFP4Conversion = true;
    consumer.hasBlockScaledMmaSync = true;
    t.push_back(consumer);
    return t;
  }();
  return table;
}
} // namespace

int64_t NVIDIAChip::residentBlocks(int64_t warps,
                                   int64_t registersPerThread) const {
  if (warps <= 0 || registersPerThread <= 0 || maxThreadsPerSM == 0)
    return 0;
  // Registers go to a warp in units of 8 per thread.
  const int64_t warpRegisters = (registersPerThread + 7) / 8 * 8 * 32;
  const int64_t perScheduler =
      registersPerSM / registerAllocationWarps / warpRegisters;
  return std::min(perScheduler * registerAllocationWarps / warps,
                  maxThreadsPerSM / 32 / warps);
}

std::optional<NVIDIAChip> NVIDIAChip::lookup(llvm::StringRef chip) {
  for (const NVIDIAChip &known : chips())
    if (known.name == chip)
      return known;
  return std::nullopt;
}

std::string NVIDIAChip::knownChips() {
  std::string list;
  for (const NVIDIAChip &known : chips()) {
    if (!list.empty())
      list += ", ";
    list += known.name.str();
  }
  return list;
}
