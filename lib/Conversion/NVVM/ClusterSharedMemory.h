//===- ClusterSharedMemory.h - A thread block cluster's shared memory -*- C++ -*-===//
//
// sm_90's thread block clusters: blocks launched together on one GPC that
// read each other's shared memory (distributed shared memory). A kernel
// declares its cluster shape with the `nvvm.cluster_dim` attribute
// (`.reqnctapercluster`, so a plain launch forms the clusters, the grid a
// multiple of them); these are the statements it uses them with, as inline
// PTX (NVVM's ops of these are lowered by convert-nvvm-to-llvm, which the
// kernel pipeline does not run). Addresses are 32-bit shared addresses.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_CLUSTERSHAREDMEMORY_H
#define MICROSCALE_LIB_CONVERSION_NVVM_CLUSTERSHAREDMEMORY_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::microscale::cluster {

/// Every thread of every block of the cluster (aligned: each warp whole):
/// what each wrote to shared memory before is visible to the others'
/// reads after (arrive.release, wait.acquire).
void barrier(OpBuilder &b, Location loc);

/// Stores `value` (f32) at this block's shared address `address` (i32).
void storeSharedF32(OpBuilder &b, Location loc, Value address, Value value);

/// The address in the shared memory of the cluster's block `rank` (i32) of
/// this block's shared address `address` (i32).
Value mapShared(OpBuilder &b, Location loc, Value address, Value rank);

/// The f32 at `address` (i32, from mapShared) of the cluster's shared
/// memory.
Value loadSharedF32(OpBuilder &b, Location loc, Value address);

} // namespace mlir::microscale::cluster

#endif
