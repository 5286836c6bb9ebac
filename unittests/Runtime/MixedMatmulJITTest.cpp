//===- MixedMatmulJITTest.cpp - bf16 x quantized weight on the host -------===//
//
// mixed_matmul_storage lowered for the host, on random bf16 activations and
// random weight codes (every layout it reads through), against a float64
// product of the activations and the reference's dequantized weight.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Reference/FloatFormats.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  int64_t m;
  const char *weight;
};

class MixedMatmulJIT : public ::testing::TestWithParam<Case> {};

TEST_P(MixedMatmulJIT, MatchesAFloat64Product) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  auto type = dyn_cast_or_null<QTensorType>(parseType(c.weight, &context));
  ASSERT_TRUE(type) << c.weight;
  const int64_t k = type.getShape()[0], n = type.getShape()[1], m = c.m;
  const std::string lhs = "memref<" + std::to_string(m) + "x" +
                          std::to_string(k) + "xbf16>";
  const std::string out = "memref<" + std::to_string(m) + "x" +
                          std::to_string(n) + "xf32>";
  std::string text =
      "func.func @mm(%a: " + lhs + ", %v: memref<?xi8>, %s: memref<?xi8>, "
      "%g: f32, %o: " + out + ") attributes {llvm.emit_c_interface} {\n"
      "  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : " +
      lhs + ", " + c.weight + ", memref<?xi8>, memref<?xi8>, " + out +
      "\n  return\n}\n";
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<uint16_t> a(m * k);
  for (auto &x : a)
    x = ref::toBF16Bits(gauss(rng));
  ref::QuantizedTensor w;
  w.format = type.getFormat().getReferenceFormat();
  w.shape = {k, n};
  w.axis = 0;
  w.scaleShape = ref::scaleShapeFor(w.shape, 0, w.format.blockSize);
  w.elements.resize(k * n);
  for (auto &code : w.elements)
    code = static_cast<uint8_t>(rng() & ((1u << type.getFormat().getElementBits()) - 1));
  w.scales.resize(w.scaleShape[0] * w.scaleShape[1]);
  // E8M0 codes near 2^0; E4M3 codes 0x30..0x3F (0.5 .. 1.875).
  const bool e4m3 = w.format.scale == ref::ScalarFormat::E4M3FN;
  for (auto &code : w.scales)
    code = static_cast<uint8_t>(e4m3 ? 0x30 + rng() % 16 : 120 + rng() % 12);
  w.globalScale = w.format.hasGlobalScale ? 0.75f : 1.0f;
  auto valueLayout = type.buildValueReference();
  auto scaleLayout = type.buildScaleReference();
  std::vector<uint8_t> values(valueLayout->getStorageBytes()),
      scales(scaleLayout->getStorageBytes());
  valueLayout->store(w.elements.data(), values.data());
  scaleLayout->store(w.scales.data(), scales.data());
  std::vector<float> got(m * n, std::nanf(""));

  int64_t zero = 0, one = 1, vn = values.size(), sn = scales.size();
  int64_t am = m, ak = k, on = n;
  uint16_t *ap = a.data();
  uint8_t *vp = values.data(), *sp = scales.data();
  float *op = got.data();
  float g = w.globalScale;
  std::vector<void *> args = {&ap, &ap, &zero, &am, &ak, &ak, &one,
                              &vp, &vp, &zero, &vn, &one,
                              &sp, &sp, &zero, &sn, &one, &g,
                              &op, &op, &zero, &am, &on, &on, &one};
  llvm::Error error = engine->invokePacked("mm", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  // The reference dequantizes with the global scale inside; the op applies
  // it to the sum: equal up to f32 rounding.
  std::vector<float> weight = ref::dequantize(w, ref::E8M0Edges::OCP);
  size_t bad = 0;
  double errorNorm = 0, refNorm = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double x = ref::fromBF16Bits(a[i * k + kk]);
        want += x * weight[kk * n + j];
        magnitude += std::fabs(x * weight[kk * n + j]);
      }
      const double have = got[i * n + j];
      if (!(std::fabs(have - want) <= 1e-5 * magnitude + 1e-30) && bad++ < 3)
        ADD_FAILURE() << "out[" << i << ", " << j << "] = " << have
                      << ", want " << want;
      errorNorm += (have - want) * (have - want);
      refNorm += want * want;
    }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(refNorm, 0.0);
  EXPECT_LT(std::sqrt(errorNorm / refNorm), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Weights, MixedMatmulJIT,
    ::testing::Values(
        Case{1, "!microscale.qtensor<128x16, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>"},
        Case{5, "!microscale.qtensor<64x24, mxfp4, axis = 0>"},
        Case{3, "!microscale.qtensor<256x32, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.cdna4_scale>"},
        Case{2, "!microscale.qtensor<64x16, nvfp4, axis = 0>"},
        Case{4, "!microscale.qtensor<64x8, mxfp6_e2m3, axis = 0>"}));

} // namespace
