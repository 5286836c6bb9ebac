//===- TensorMapCopies.h - TMA tile copies and mbarriers ------*- C++ -*-===//
//
// The tensor-map (TMA) copies of the NVIDIA kernels, both halves:
//  * the host code's tensor map of a row-major matrix, created with
//    `nvgpu.tma.create.descriptor` (cuTensorMapEncodeTiled at run time,
//    through MLIR's CUDA runtime; the map lives in device memory) and handed
//    to the kernel as the generic pointer the PTX instruction takes;
//  * in the kernel, the mbarriers the copies complete on and the copy of
//    one box, `cp.async.bulk.tensor.2d` with its transaction count, as
//    inline PTX (NVVM's ops of these are lowered by convert-nvvm-to-llvm,
//    which the kernel pipeline does not run), and the kernel's dynamic
//    shared memory, aligned for the swizzles.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_TENSORMAPCOPIES_H
#define MICROSCALE_LIB_CONVERSION_NVVM_TENSORMAPCOPIES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::microscale::tma {

/// The kernel argument type of a tensor map: a generic pointer to the
/// 128-byte CUtensorMap in device memory.
Type getTensorMapArgumentType(MLIRContext *context);

/// Host: the tensor map of `tensor` (a ranked memref, any strides that
/// are multiples of 16 bytes but the innermost, which is 1) for boxes of
/// `box` elements (outermost first, as the memref's dims), written to
/// shared memory unswizzled (the box's elements in row-major order) or in
/// the 128-byte swizzle, elements out of bounds read as zeros.
Value createTensorMap(OpBuilder &b, Location loc, Value tensor,
                     ArrayRef<int64_t> box, bool swizzle128);

/// Host: the tensor map of the row-major matrix `matrix` (a rank-2 memref
/// with unit inner stride and 16-byte aligned rows) for boxes of
/// `boxRows` x `boxColumns` elements, written to shared memory in the
/// 128-byte swizzle (boxColumns x element bytes must be 128), elements out
/// of bounds read as zeros. The map records the matrix's address: build it
/// per call.
Value createSwizzled128TensorMap(OpBuilder &b, Location loc, Value matrix,
                                 int64_t boxRows, int64_t boxColumns);

/// Kernel, the one thread that initializes them: the `count` mbarriers at
/// shared address `barriers` (index; 8 bytes each, arrival count 1), and the
/// fence that makes the initialization visible to the async proxy; the
/// caller's block barrier publishes them to the other threads.
void initMbarriers(OpBuilder &b, Location loc, Value barriers, int64_t count);

/// Kernel: starts fetching the tensor map `tensorMap` into the TMA unit's
/// descriptor cache (the first copy would otherwise wait for it).
void prefetchTensorMap(OpBuilder &b, Location loc, Value tensorMap);

/// Kernel: waits until phase `parity` (i32, 0 or 1) of the mbarrier at
/// shared address `address` (i32) has completed.
void waitParity(OpBuilder &b, Location loc, Value address, Value parity);

/// Kernel: one thread's copy of the box at element (`column`, `row`) (i32;
/// column innermost) of `tensorMap` into shared address `destination`
/// (i32), completing `bytes` (the whole box, zero-filled parts included)
/// on the mbarrier at shared address `mbarrier`, which the same thread
/// arrives on with that transaction count.
void loadTensorBox(OpBuilder &b, Location loc, Value tensorMap,
                   Value destination, Value mbarrier, Value column, Value row,
                   int64_t bytes);

/// Kernel: announces `bytes` more to arrive on the mbarrier at shared
/// address `mbarrier` in its current phase, without arriving (the arrival
/// is someone else's, after every announcement).
void expectTransaction(OpBuilder &b, Location loc, Value mbarrier,
                       int64_t bytes);

/// Kernel: one thread's copy of the box at `coordinates` (i32, innermost
/// first, 1 to 5 of them) of `tensorMap` into shared address
/// `destination`, completing its bytes on the mbarrier at `mbarrier`
/// (announced by expectTransaction).
void copyTensorBox(OpBuilder &b, Location loc, Value tensorMap,
                   Value destination, Value mbarrier,
                   ArrayRef<Value> coordinates);

/// Kernel `function`: the shared address (index) of the block's dynamic
/// shared memory, rounded up to `alignment` bytes (the launch asks for the
/// bytes used plus `alignment`: dynamicSharedBytes). The window is an
/// `.extern .shared` array of the kernels' module (gpu.dynamic_shared_memory
/// lowers to an internal global that the NVPTX backend demotes to a
/// one-byte static variable, which other static shared memory may follow).
Value alignedDynamicSharedAddress(OpBuilder &b, Location loc,
                                  Operation *function, int64_t alignment);
inline int64_t dynamicSharedBytes(int64_t bytes, int64_t alignment) {
  return bytes + alignment;
}

} // namespace mlir::microscale::tma

#endif
