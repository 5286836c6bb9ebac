//===- CompiledConversion.cpp - A layout conversion JIT-compiled ----------===//
#include "microscale/Runtime/CPU/CompiledConversion.h"
#include "llvm/Support/MathExtras.h"
#include "microscale/Dialect/Microscale/Utils/StorageConversion.h"

#include "microscale/Conversion/CPU/Pipeline.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/MemRefUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::microscale;

CompiledConversion::~CompiledConversion() = default;

std::unique_ptr<CompiledConversion>
CompiledConversion::compile(QTensorType from, QTensorType to, StoragePart part,
                            std::string &error,
                            llvm::function_ref<LogicalResult(ModuleOp)> prepare) {
  static const bool targetReady = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targetReady;

  MLIRContext *context = from.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context->appendDialectRegistry(registry);
  context->loadDialect<func::FuncDialect, LLVM::LLVMDialect,
                       MicroscaleDialect>();

  // func @convert(%src: memref<?xi8>, %dst: memref<?xi8>, %begin, %end)
  OwningOpRef<ModuleOp> module =
      buildConversionModule(from, to, part, /*unitRange=*/true, error);
  if (!module)
    return nullptr;
  cast<func::FuncOp>(module->lookupSymbol("convert"))
      ->setAttr("llvm.emit_c_interface", UnitAttr::get(context));

  if (prepare && failed(prepare(*module))) {
    error = "preparing the conversion's module failed";
    return nullptr;
  }
  PassManager pm(context);
  // The JIT compiles for this machine: use what it has.
  buildMicroscaleCPUToLLVMPipeline(pm, getHostCPUPipelineOptions());
  if (failed(pm.run(*module))) {
    error = "lowering the conversion to LLVM failed";
    return nullptr;
  }

  // `transformer` is a function_ref: the callable it refers to must outlive
  // ExecutionEngine::create, which calls it.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  // The perf and GDB listeners write jitdump files under /tmp/.debug for every
  // compile (and fail for the next user of that directory); a conversion
  // kernel is not something to profile by symbol.
  options.enablePerfNotificationListener = false;
  options.enableGDBNotificationListener = false;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    error = llvm::toString(engine.takeError());
    return nullptr;
  }
  auto kernel = (*engine)->lookupPacked("convert");
  if (!kernel) {
    error = llvm::toString(kernel.takeError());
    return nullptr;
  }

  std::unique_ptr<CompiledConversion> result(new CompiledConversion());
  result->engine = std::move(*engine);
  result->kernel = *kernel;
  bool values = part == StoragePart::values;
  result->sourceBytes = ShapedType::getNumElements(
      values ? from.getValueStorageShape() : from.getScaleStorageShape());
  result->destBytes = ShapedType::getNumElements(
      values ? to.getValueStorageShape() : to.getScaleStorageShape());
  LayoutAttrInterface destLayout =
      values ? to.getValueLayout() : to.getScaleLayout();
  unsigned bits = values ? to.getFormat().getElementBits() : 8;
  result->numUnits = result->destBytes / destLayout.getStoreUnitBytes(bits);
  return result;
}

void CompiledConversion::run(const uint8_t *source, uint8_t *dest,
                             unsigned threads) const {
  runUnits(source, dest, 0, numUnits, threads);
}

void CompiledConversion::runUnits(const uint8_t *source, uint8_t *dest,
                                  int64_t first, int64_t last,
                                  unsigned threads) const {
  if (first >= last)
    return;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  // Below this, a thread costs more than the work it takes.
  constexpr int64_t kMinUnitsPerThread = 1 << 16;
  const int64_t count = last - first;
  threads = static_cast<unsigned>(std::clamp<int64_t>(
      count / kMinUnitsPerThread, 1, static_cast<int64_t>(threads)));
  auto runRange = [&](int64_t begin, int64_t end) {
    // The packed interface: one pointer per scalar of the flattened memref
    // descriptors (allocated, aligned, offset, size, stride) and each index.
    int8_t *src = const_cast<int8_t *>(reinterpret_cast<const int8_t *>(source));
    int8_t *dst = reinterpret_cast<int8_t *>(dest);
    int64_t zero = 0, one = 1, srcSize = sourceBytes, dstSize = destBytes;
    void *args[] = {&src, &src, &zero, &srcSize, &one,
                    &dst, &dst, &zero, &dstSize, &one,
                    &begin, &end};
    kernel(args);
  };
  if (threads == 1) {
    runRange(first, last);
    return;
  }
  std::vector<std::thread> workers;
  const int64_t chunk = llvm::divideCeil(count, threads);
  for (unsigned t = 0; t < threads; ++t) {
    int64_t begin = std::min<int64_t>(last, first + t * chunk);
    int64_t end = std::min<int64_t>(last, begin + chunk);
    if (begin < end)
      workers.emplace_back(runRange, begin, end);
  }
  for (std::thread &worker : workers)
    worker.join();
}
