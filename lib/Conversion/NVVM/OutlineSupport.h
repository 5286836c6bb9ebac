//===- OutlineSupport.h - What the NVVM outlining passes share --*- C++ -*-===//
#ifndef MICROSCALE_LIB_CONVERSION_NVVM_OUTLINESUPPORT_H
#define MICROSCALE_LIB_CONVERSION_NVVM_OUTLINESUPPORT_H

#include "microscale/Conversion/NVVM/Chip.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include <numeric>
#include <optional>
#include <string>

namespace mlir::microscale {

/// The gpu.module every NVIDIA kernel is outlined into.
inline constexpr llvm::StringLiteral kNVVMKernelModule = "microscale_kernels";

/// The chip named by a pass's `chip` option, or std::nullopt after an error
/// at `op` that names it and the chips that are known.
inline std::optional<nvvm::NVIDIAChip>
lookupChip(Operation *op, StringRef chip, StringRef pass) {
  std::optional<nvvm::NVIDIAChip> known = nvvm::NVIDIAChip::lookup(chip);
  // At the op's location, without the op itself attached: a pass option is
  // wrong, not the module.
  if (!known)
    mlir::emitError(op->getLoc())
        << pass << ": unknown NVIDIA chip '" << chip
        << "' (known: " << nvvm::NVIDIAChip::knownChips() << ")";
  return known;
}

/// The index of the next kernel of `kernels`: kernels are named by family
/// and index, in the order they are outlined.
inline unsigned getNextKernelIndex(gpu::GPUModuleOp kernels) {
  return llvm::range_size(kernels.getOps<gpu::GPUFuncOp>());
}

/// The ops of type OpT that are not inside a gpu.module yet (and that
/// `accept`, when given), in walk order: what an outlining pass outlines.
template <typename OpT>
SmallVector<OpT> collectOpsToOutline(Operation *root,
                                     function_ref<bool(OpT)> accept = {}) {
  SmallVector<OpT> ops;
  root->walk([&](OpT op) {
    if (!op->template getParentOfType<gpu::GPUModuleOp>() &&
        (!accept || accept(op)))
      ops.push_back(op);
  });
  return ops;
}

/// Reports every op of the types OpTs outside a gpu.module: the NVIDIA
/// target has no lowering for them, and they must not be left silently for
/// the host. Failure when there was any.
template <typename... OpTs> LogicalResult reportNoNVIDIALowering(Operation *root) {
  bool unsupported = false;
  root->walk([&](Operation *op) {
    if (isa<OpTs...>(op) && !op->getParentOfType<gpu::GPUModuleOp>()) {
      op->emitOpError() << "has no NVIDIA lowering (the CPU one is "
                           "microscale-cpu-lower-storage)";
      unsupported = true;
    }
  });
  return failure(unsupported);
}

/// `buffer` as `type` (a kernel's static-shaped argument), cast where the
/// caller's memref differs.
inline Value castToArgument(OpBuilder &builder, Location loc, Value buffer,
                            Type type) {
  if (buffer.getType() == type)
    return buffer;
  return memref::CastOp::create(builder, loc, cast<MemRefType>(type), buffer);
}

/// `buffer` (rank 1 or 2) as `type`, a kernel's one-dimensional static
/// argument: collapsed to one dimension, then reinterpreted where its
/// extent is known at run time only or differs from the argument's (rows
/// known at run time are passed as a bound no buffer reaches; a static
/// buffer beside a dynamic one takes that bound too, which memref.cast
/// cannot give it), else cast where only the type differs.
inline Value flattenToArgument(OpBuilder &builder, Location loc, Value buffer,
                               Type type) {
  Value result = buffer;
  if (cast<MemRefType>(buffer.getType()).getRank() == 2)
    result = memref::CollapseShapeOp::create(
        builder, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  auto target = cast<MemRefType>(type);
  auto resultType = cast<MemRefType>(result.getType());
  if (resultType.isDynamicDim(0) ||
      resultType.getShape()[0] != target.getShape()[0])
    return memref::ReinterpretCastOp::create(
        builder, loc, target, result, /*offset=*/0,
        /*sizes=*/ArrayRef<int64_t>{target.getShape()[0]},
        /*strides=*/ArrayRef<int64_t>{1});
  return castToArgument(builder, loc, result, type);
}

/// An LLVM pointer in address space `space` (1 global, 3 shared, ...) to
/// byte `byteOffset` (index; null: the start) of `memref`: what the
/// instructions taking raw pointers (cp.async, tcgen05.alloc) need.
inline Value pointerToByte(OpBuilder &b, Location loc, Value memref,
                           Value byteOffset, unsigned space) {
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  if (byteOffset)
    address = arith::AddIOp::create(b, loc, address, byteOffset);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), space), i64);
}

/// The host emulations run block i of `count` as block i * stride mod
/// `count`: a permutation (stride coprime with the count) that puts
/// neighbouring blocks far apart, so that a block writing bytes another
/// owns shows as a wrong result.
inline int64_t scatteredOrderStride(int64_t count) {
  int64_t stride = 7919;
  while (count > 0 && std::gcd(stride, count) != 1)
    stride += 2;
  return stride;
}

/// `base`, or `base`_i for the first i, such that no symbol `prefix` +
/// `suffix` exists in `symbolTable` yet (the emulations' tables, one set per
/// emulated op in one module).
inline std::string uniqueSymbolPrefix(Operation *symbolTable, StringRef base,
                                      StringRef suffix = "") {
  std::string prefix = base.str();
  for (int i = 0; SymbolTable::lookupSymbolIn(symbolTable, prefix + suffix.str());
       ++i)
    prefix = base.str() + "_" + std::to_string(i);
  return prefix;
}

/// Checks an explicit tiling's threads per block against the chip.
inline LogicalResult checkBlockSize(Operation *op, int64_t blockSize,
                                    const nvvm::NVIDIAChip &chip) {
  if (blockSize <= chip.maxThreadsPerBlock)
    return success();
  return op->emitOpError() << "tiling block_size = " << blockSize
                           << " exceeds the " << chip.maxThreadsPerBlock
                           << " threads per block of " << chip.name;
}

} // namespace mlir::microscale

#endif
