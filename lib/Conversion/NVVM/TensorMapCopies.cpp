//===- TensorMapCopies.cpp - TMA tile copies and mbarriers ----------------===//
#include "TensorMapCopies.h"

#include "InlinePtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <string>

using namespace mlir;
using namespace mlir::microscale;

Type tma::getTensorMapArgumentType(MLIRContext *context) {
  return LLVM::LLVMPointerType::get(context);
}

Value tma::createTensorMap(OpBuilder &b, Location loc, Value tensor,
                           ArrayRef<int64_t> box, bool swizzle128) {
  MLIRContext *context = b.getContext();
  auto type = cast<MemRefType>(tensor.getType());
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), Attribute()),
      tensor);
  auto boxType = MemRefType::get(
      box, type.getElementType(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
  // L2 promotion of 256 bytes: a box row is a part of a longer row, and
  // the next box along it reads the rest of the sector pair.
  auto descriptorType = nvgpu::TensorMapDescriptorType::get(
      context, boxType,
      swizzle128 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
                 : nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  SmallVector<Value> boxSizes;
  for (int64_t size : box)
    boxSizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  Value descriptor = nvgpu::TmaCreateDescriptorOp::create(
      b, loc, descriptorType, unranked, boxSizes);
  // The kernel takes the map as the pointer the descriptor lowers to
  // (convert-nvgpu-to-nvvm on the host code; the cast then folds away).
  return UnrealizedConversionCastOp::create(
             b, loc, getTensorMapArgumentType(context), descriptor)
      .getResult(0);
}

Value tma::createSwizzled128TensorMap(OpBuilder &b, Location loc,
                                      Value matrix, int64_t boxRows,
                                      int64_t boxColumns) {
  return createTensorMap(b, loc, matrix, {boxRows, boxColumns},
                         /*swizzle128=*/true);
}

void tma::initMbarriers(OpBuilder &b, Location loc, Value barriers,
                        int64_t count) {
  auto shared = LLVM::LLVMPointerType::get(b.getContext(), 3);
  for (int64_t i = 0; i < count; ++i) {
    Value address = arith::AddIOp::create(
        b, loc, barriers, arith::ConstantIndexOp::create(b, loc, 8 * i));
    Value pointer = LLVM::IntToPtrOp::create(
        b, loc, shared,
        arith::IndexCastOp::create(b, loc, b.getI64Type(), address)
            .getResult());
    NVVM::MBarrierInitOp::create(
        b, loc, pointer, arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1),
        /*predicate=*/Value());
  }
  // The copies complete on them from the async proxy, outside this
  // thread's program order.
  NVVM::FenceMbarrierInitOp::create(b, loc);
}

void tma::prefetchTensorMap(OpBuilder &b, Location loc, Value tensorMap) {
  inlinePtx(b, loc, Type(), ValueRange{tensorMap}, "prefetch.tensormap [$0];",
            "l");
}

void tma::waitParity(OpBuilder &b, Location loc, Value address,
                     Value parity) {
  Type i32 = b.getI32Type();
  auto loop = scf::WhileOp::create(b, loc, TypeRange(), ValueRange());
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore());
  b.setInsertionPointToStart(before);
  Value done =
      inlinePtx(b, loc, i32, ValueRange{address, parity},
                "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 "
                "p, [$1], $2;\nselp.u32 $0, 1, 0, p;\n}",
                "=r,r,r")
          .getResult(0);
  Value pending =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, done,
                            arith::ConstantIntOp::create(b, loc, i32, 0));
  scf::ConditionOp::create(b, loc, pending, ValueRange());
  Block *after = b.createBlock(&loop.getAfter());
  b.setInsertionPointToStart(after);
  scf::YieldOp::create(b, loc);
}

/// The PTX of one box copy of `rank` coordinates: destination $0, tensor
/// map $1, mbarrier $2, coordinates $3 on; and its constraints.
static std::pair<std::string, std::string> boxCopyPtx(size_t rank) {
  std::string ptx = "cp.async.bulk.tensor." + std::to_string(rank) +
                    "d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [$0], [$1, {";
  std::string constraints = "r,l,r";
  for (size_t i = 0; i < rank; ++i) {
    ptx += (i ? ", $" : "$") + std::to_string(3 + i);
    constraints += ",r";
  }
  ptx += "}], [$2];";
  return {ptx, constraints};
}

void tma::loadTensorBox(OpBuilder &b, Location loc, Value tensorMap,
                        Value destination, Value mbarrier, Value column,
                        Value row, int64_t bytes) {
  auto [copy, constraints] = boxCopyPtx(2);
  std::string ptx = "{\nmbarrier.arrive.expect_tx.shared::cta.b64 _, [$2], " +
                    std::to_string(bytes) + ";\n" + copy + "\n}";
  inlinePtx(b, loc, Type(),
            ValueRange{destination, tensorMap, mbarrier, column, row}, ptx,
            constraints);
}

void tma::expectTransaction(OpBuilder &b, Location loc, Value mbarrier,
                            int64_t bytes) {
  inlinePtx(b, loc, Type(), ValueRange{mbarrier},
            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], " +
                std::to_string(bytes) + ";",
            "r");
}

void tma::copyTensorBox(OpBuilder &b, Location loc, Value tensorMap,
                        Value destination, Value mbarrier,
                        ArrayRef<Value> coordinates) {
  auto [ptx, constraints] = boxCopyPtx(coordinates.size());
  SmallVector<Value> operands = {destination, tensorMap, mbarrier};
  operands.append(coordinates.begin(), coordinates.end());
  inlinePtx(b, loc, Type(), operands, ptx, constraints);
}

Value tma::alignedDynamicSharedAddress(OpBuilder &b, Location loc,
                                       Operation *function,
                                       int64_t alignment) {
  MLIRContext *context = b.getContext();
  constexpr StringLiteral kName = "microscale_dynamic_shared";
  auto module = function->getParentOfType<gpu::GPUModuleOp>();
  if (!module.lookupSymbol(kName)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kName,
        /*value=*/Attribute(), /*alignment=*/alignment, /*addrSpace=*/3);
  }
  Value pointer = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(context, 3), kName);
  Value base = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointer).getResult());
  // The array's alignment is the request; the rounding makes it a fact.
  Value mask = arith::ConstantIndexOp::create(b, loc, alignment - 1);
  return arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, mask),
      arith::ConstantIndexOp::create(b, loc, ~(alignment - 1)));
}
