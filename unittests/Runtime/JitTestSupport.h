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
#include <functional>
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

/// The ragged (experts) form of mixedMatmulFunction:
/// @mm(%a, %v, %s, %g, %o, %off, %cnt, %ga, %sc) with expert offsets and
/// counts of type `experts` and a gather and a scatter of type `rows`.
inline std::string raggedMatmulFunction(const std::string &lhs,
                                        const std::string &weight,
                                        const std::string &out,
                                        const std::string &experts,
                                        const std::string &rows) {
  const std::string &e = experts, &r = rows;
  return "func.func @mm(%a: " + lhs + ", %v: memref<?xi8>, %s: memref<?xi8>, "
         "%g: f32, %o: " + out + ", %off: " + e + ", %cnt: " + e +
         ", %ga: " + r + ", %sc: " + r +
         ") attributes {llvm.emit_c_interface} {\n"
         "  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o "
         "experts(%off, %cnt : " + e + ", " + e + ") gather(%ga : " + r +
         ") scatter(%sc : " + r + ") : " + lhs + ", " + weight +
         ", memref<?xi8>, memref<?xi8>, " + out + "\n  return\n}\n";
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

/// A random weight of `type` (blocked along `axis`) and its bytes in the
/// type's layouts. Codes come from `elementCode` and `scaleCode` (given
/// each code's index) where given, else: any element code, E8M0 scales
/// 120..131 (E4M3 0x30..0x3F).
struct RandomWeight {
  ::microscale::ref::QuantizedTensor tensor;
  std::vector<uint8_t> values, scales;
};
inline RandomWeight
randomWeight(mlir::microscale::QTensorType type, int64_t axis,
             std::mt19937 &rng,
             const std::function<uint8_t(size_t)> &elementCode = {},
             const std::function<uint8_t(size_t)> &scaleCode = {}) {
  namespace ref = ::microscale::ref;
  RandomWeight w;
  ref::QuantizedTensor &t = w.tensor;
  t.format = type.getFormat().getReferenceFormat();
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.axis = axis;
  t.scaleShape = ref::scaleShapeFor(t.shape, axis, t.format.blockSize);
  int64_t elements = 1, scales = 1;
  for (int64_t extent : t.shape)
    elements *= extent;
  for (int64_t extent : t.scaleShape)
    scales *= extent;
  t.elements.resize(elements);
  for (size_t i = 0; i < t.elements.size(); ++i)
    t.elements[i] =
        elementCode ? elementCode(i)
                    : static_cast<uint8_t>(
                          rng() & ((1u << type.getFormat().getElementBits()) - 1));
  t.scales.resize(scales);
  const bool e4m3 = t.format.scale == ref::ScalarFormat::E4M3FN;
  for (size_t i = 0; i < t.scales.size(); ++i)
    t.scales[i] = scaleCode ? scaleCode(i)
                            : static_cast<uint8_t>(e4m3 ? 0x30 + rng() % 16
                                                        : 120 + rng() % 12);
  t.globalScale = t.format.hasGlobalScale ? 0.75f : 1.0f;
  auto valueLayout = type.buildValueReference();
  auto scaleLayout = type.buildScaleReference();
  w.values.resize(valueLayout->getStorageBytes());
  w.scales.resize(scaleLayout->getStorageBytes());
  valueLayout->store(t.elements.data(), w.values.data());
  scaleLayout->store(t.scales.data(), w.scales.data());
  return w;
}

/// The ragged (experts) form's operands for the `mm` function of the ragged
/// tests: activations `a` (tokens x K), the weight's bytes, `out` (outRows x
/// N f32), expert offsets and counts, the gather and the scatter.
struct RaggedMatmulCall {
  int64_t experts, k, n, tokens, rows, outRows;
  std::vector<uint16_t> &a;
  std::vector<uint8_t> &values, &scales;
  std::vector<float> &out;
  std::vector<int32_t> &offsets, &counts, &gather, &scatter;
};

/// Calls @mm(%a, %v, %s, %g, %o, %off, %cnt, %ga, %sc) in `engine`.
inline llvm::Error invokeRaggedMatmul(mlir::ExecutionEngine &engine,
                                      const RaggedMatmulCall &c) {
  int64_t zero = 0, one = 1, vn = c.values.size(), sn = c.scales.size();
  int64_t at = c.tokens, ak = c.k, oRows = c.outRows, on = c.n,
          ne = c.experts, nr = c.rows;
  uint16_t *ap = c.a.data();
  uint8_t *vp = c.values.data(), *sp = c.scales.data();
  float *op = c.out.data();
  int32_t *offp = c.offsets.data(), *cntp = c.counts.data(),
          *gp = c.gather.data(), *scp = c.scatter.data();
  float g = 1.0f;
  std::vector<void *> args = {&ap,   &ap,   &zero, &at,   &ak,   &ak,   &one,
                              &vp,   &vp,   &zero, &vn,   &one,  &sp,   &sp,
                              &zero, &sn,   &one,  &g,    &op,   &op,   &zero,
                              &oRows, &on,  &on,   &one,  &offp, &offp, &zero,
                              &ne,   &one,  &cntp, &cntp, &zero, &ne,   &one,
                              &gp,   &gp,   &zero, &nr,   &one,  &scp,  &scp,
                              &zero, &nr,   &one};
  return engine.invokePacked("mm", args);
}

/// Checks `c.out` against a float64 product with the dequantized experts
/// `weight` ([E, K, N]) that skips exactly the rows the op documents as
/// skipped (outside the slice or the ragged rows, an index outside its
/// tensor); rows nothing writes must keep their NaN. Returns how many
/// ragged rows were written.
inline size_t expectRaggedProduct(const RaggedMatmulCall &c,
                                  const std::vector<float> &weight) {
  std::vector<bool> written(c.outRows, false);
  size_t rowsWritten = 0;
  for (int64_t ex = 0; ex < c.experts; ++ex)
    for (int64_t i = 0; i < std::max(c.counts[ex], 0); ++i) {
      const int64_t row = c.offsets[ex] + i;
      if (row < 0 || row >= c.rows || c.gather[row] >= c.tokens ||
          c.scatter[row] >= c.outRows)
        continue;
      written[c.scatter[row]] = true;
      ++rowsWritten;
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0, magnitude = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          const double x =
              ::microscale::ref::fromBF16Bits(c.a[c.gather[row] * c.k + kk]);
          const double y = weight[(ex * c.k + kk) * c.n + j];
          want += x * y;
          magnitude += std::fabs(x * y);
        }
        const float have = c.out[c.scatter[row] * c.n + j];
        EXPECT_LE(std::fabs(have - want), 1e-5 * magnitude + 1e-30)
            << "expert " << ex << ", ragged row " << row << ", column " << j;
      }
    }
  for (int64_t row = 0; row < c.outRows; ++row)
    if (!written[row])
      for (int64_t j = 0; j < c.n; ++j)
        EXPECT_TRUE(std::isnan(c.out[row * c.n + j]))
            << "out row " << row << " is written by no ragged row";
  return rowsWritten;
}

} // namespace microscale::testing

#endif
