//===- JitTestSupport.h - Compile test IR for the host ----------*- C++ -*-===//
//
// The JIT tests' common setup: a context with the dialects and translations
// the CPU pipeline needs, and IR text compiled through
// microscale-cpu-to-llvm into an ExecutionEngine; and what the mixed_matmul
// tests share: random bf16 activations, the function of one dense
// mixed_matmul_storage, its call and the check against a float64 product.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_UNITTESTS_RUNTIME_JITTESTSUPPORT_H
#define MICROSCALE_UNITTESTS_RUNTIME_JITTESTSUPPORT_H

#include "microscale/Conversion/CPU/Pipeline.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Reference/FloatFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace microscale::testing {

/// A context ready for microscale IR and the host JIT.
inline std::unique_ptr<mlir::MLIRContext> makeJitContext() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadDialect<mlir::microscale::MicroscaleDialect,
                       mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                       mlir::memref::MemRefDialect>();
  return context;
}

/// Parses `text`, lowers it with microscale-cpu-to-llvm and JIT-compiles it;
/// on failure returns null and says why in `error`.
/// `prepare`, when given, may rewrite the parsed module first.
inline std::unique_ptr<mlir::ExecutionEngine>
compileForHost(mlir::MLIRContext &context, const std::string &text,
               std::string &error,
               llvm::function_ref<void(mlir::ModuleOp)> prepare = nullptr) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module) {
    error = "cannot parse:\n" + text;
    return nullptr;
  }
  if (prepare)
    prepare(*module);
  mlir::PassManager pm(&context);
  mlir::microscale::buildMicroscaleCPUToLLVMPipeline(pm);
  if (mlir::failed(pm.run(*module))) {
    error = "the CPU pipeline failed on:\n" + text;
    return nullptr;
  }
  auto engine = mlir::ExecutionEngine::create(*module);
  if (!engine) {
    error = llvm::toString(engine.takeError());
    return nullptr;
  }
  return std::move(*engine);
}

/// Random bf16 activations from N(0, 1).
inline std::vector<uint16_t> randomActivations(int64_t count,
                                               std::mt19937 &rng) {
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<uint16_t> a(count);
  for (auto &x : a)
    x = ::microscale::ref::toBF16Bits(gauss(rng));
  return a;
}

/// A function @mm(%a: `lhs`, %v: memref<?xi8>, %s: memref<?xi8>, %g: f32,
/// %o: `out`) holding one mixed_matmul_storage of the weight type `weight`
/// (values %v, scales %s, global scale %g), for invokeMixedMatmul.
inline std::string mixedMatmulFunction(const std::string &lhs,
                                       const std::string &weight,
                                       const std::string &out) {
  return "func.func @mm(%a: " + lhs + ", %v: memref<?xi8>, %s: memref<?xi8>, "
         "%g: f32, %o: " + out + ") attributes {llvm.emit_c_interface} {\n"
         "  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : " +
         lhs + ", " + weight + ", memref<?xi8>, memref<?xi8>, " + out +
         "\n  return\n}\n";
}

/// Calls mixedMatmulFunction's @mm in `engine` on `a` (M x K bf16), the
/// weight's `values` and `scales` bytes and global scale `g`, into `out`
/// (M x N f32).
inline llvm::Error invokeMixedMatmul(mlir::ExecutionEngine &engine, int64_t m,
                                     int64_t k, int64_t n, uint16_t *a,
                                     std::vector<uint8_t> &values,
                                     std::vector<uint8_t> &scales, float g,
                                     float *out) {
  int64_t zero = 0, one = 1, vn = values.size(), sn = scales.size();
  int64_t am = m, ak = k, on = n;
  uint16_t *ap = a;
  uint8_t *vp = values.data(), *sp = scales.data();
  float *op = out;
  std::vector<void *> args = {&ap, &ap, &zero, &am, &ak, &ak, &one,
                              &vp, &vp, &zero, &vn, &one,
                              &sp, &sp, &zero, &sn, &one, &g,
                              &op, &op, &zero, &am, &on, &on, &one};
  return engine.invokePacked("mm", args);
}

/// Expects `got` (M x N, f32) to be the float64 product of `a(i, kk)`
/// (M x K) and `b(kk, j)` (K x N): each element within `tolerance` times
/// the sum of its products' magnitudes (the first 3 misses reported,
/// prefixed by `what`), and, with rows, the whole within a relative norm of
/// `tolerance`.
template <typename A, typename B>
void expectFloat64Product(int64_t m, int64_t k, int64_t n, A a, B b,
                          const std::vector<float> &got, double tolerance,
                          const std::string &what = "") {
  size_t bad = 0;
  double errorNorm = 0, refNorm = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double product = double(a(i, kk)) * double(b(kk, j));
        want += product;
        magnitude += std::fabs(product);
      }
      const double have = got[i * n + j];
      if (!(std::fabs(have - want) <= tolerance * magnitude + 1e-30) &&
          bad++ < 3)
        ADD_FAILURE() << what << "out[" << i << ", " << j << "] = " << have
                      << ", want " << want;
      errorNorm += (have - want) * (have - want);
      refNorm += want * want;
    }
  EXPECT_EQ(bad, 0u) << what;
  if (m > 0) {
    EXPECT_GT(refNorm, 0.0) << what << "a product of zeros checks nothing";
    EXPECT_LT(std::sqrt(errorNorm / refNorm), tolerance) << what;
  }
}

/// expectFloat64Product for mixed_matmul: bf16 activations `a` (M x K) times
/// the dequantized `weight` (K x N), to 1e-5 (the f32 sums' rounding).
inline void expectMixedMatmulProduct(int64_t m, int64_t k, int64_t n,
                                     const std::vector<uint16_t> &a,
                                     const std::vector<float> &weight,
                                     const std::vector<float> &got,
                                     const std::string &what = "") {
  expectFloat64Product(
      m, k, n,
      [&](int64_t i, int64_t kk) {
        return ::microscale::ref::fromBF16Bits(a[i * k + kk]);
      },
      [&](int64_t kk, int64_t j) { return weight[kk * n + j]; }, got, 1e-5,
      what);
}

} // namespace microscale::testing

#endif
