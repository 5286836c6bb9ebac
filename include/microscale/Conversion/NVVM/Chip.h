//===- Chip.h - What an NVIDIA chip offers the kernels ----------*- C++ -*-===//
//
// The NVIDIA chip model: from a target's chip string (`sm_90a`, `sm_100a`,
// `sm_120a`, ...) the limits and the instructions every planner and kernel
// emitter of this library chooses by. Nothing else in the NVVM lowering may
// name a chip or hard-code one of these numbers.
//
// The SM count is not a property of the chip string (sm_90a is an H100 PCIe
// with 114 SMs, an H100 SXM or H200 with 132, an H20 with 78):
// `defaultSMCount` is only the planning default, overridable per pass.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_CHIP_H
#define MICROSCALE_CONVERSION_NVVM_CHIP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::microscale::nvvm {

struct NVIDIAChip {
  /// The chip string as the NVVM target spells it, e.g. "sm_90a".
  llvm::StringRef name;
  /// Compute capability, e.g. 90 for sm_90a.
  unsigned computeCapability = 0;
  /// The lowest PTX ISA version (e.g. 78 for 7.8) that can target the chip.
  unsigned minimumPTXVersion = 0;

  /// Planning defaults and hard limits.
  int64_t defaultSMCount = 0;
  int64_t maxThreadsPerBlock = 1024;
  int64_t maxThreadsPerSM = 0;
  int64_t registersPerSM = 65536;
  /// Registers are allocated to a block for whole groups of this many
  /// warps (a block of 9 warps takes the registers of 12).
  int64_t registerAllocationWarps = 4;
  int64_t maxRegistersPerThread = 255;
  /// Shared memory a block may declare statically (no opt-in), the most a
  /// block may have with the dynamic opt-in, and what one SM has.
  int64_t staticSharedMemoryPerBlock = 48 * 1024;
  int64_t maxSharedMemoryPerBlock = 0;
  int64_t sharedMemoryPerSM = 0;
  /// Device memory: peak bandwidth and the latency of a load under load,
  /// of the part the SM count describes. Their product is the bytes a
  /// memory-bound kernel must keep in flight to read at full bandwidth
  /// (Little's law); the decode-sized planners size their grids by it.
  int64_t memoryBandwidthGBps = 0;
  int64_t memoryLatencyNs = 0;

  /// Bytes in flight per SM that cover the memory latency at full
  /// bandwidth on `smCount` SMs.
  int64_t bytesInFlightPerSM(int64_t smCount) const {
    return memoryBandwidthGBps * memoryLatencyNs / smCount;
  }

  /// Blocks of `warps` warps at `registersPerThread` registers that one SM
  /// holds at once, by threads and registers: the register file is split
  /// evenly over `registerAllocationWarps` schedulers, each holding the
  /// registers of the warps placed on it, so a lone block of 9 warps takes
  /// the registers of 12 while three blocks of 10 fit where 30 warps'
  /// registers do (shared memory not counted).
  int64_t residentBlocks(int64_t warps, int64_t registersPerThread) const;

  /// Instructions kernels choose by.
  bool hasCpAsync = false;             // cp.async (sm_80+)
  bool hasBF16x2Arithmetic = false;    // mul/fma.rn.bf16x2 (sm_90+)
  bool hasTMA = false;                 // cp.async.bulk.tensor (sm_90+)
  bool hasWGMMA = false;               // wgmma.mma_async (sm_90a only)
  bool hasTcgen05 = false;             // tcgen05.* and tensor memory
  bool hasNativeFP4Conversion = false; // cvt.rn.f16x2.e2m1x2, ue8m0x2
  bool hasBlockScaledMmaSync = false;  // mma.sync ... block_scale

  /// The chip named `chip`, or std::nullopt for a chip this library does not
  /// know.
  static std::optional<NVIDIAChip> lookup(llvm::StringRef chip);
  /// The chips `lookup` knows, for diagnostics: "sm_80, sm_86, ...".
  static std::string knownChips();
};

} // namespace mlir::microscale::nvvm

#endif
