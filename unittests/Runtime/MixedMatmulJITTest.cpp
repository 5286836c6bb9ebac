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
using ::microscale::testing::RandomWeight;
using ::microscale::testing::randomWeight;

namespace {

/// A random weight of `type` (blocked along `axis`) and its value and scale
/// bytes in the type's layouts: random element codes, E8M0 scale codes near
/// 2^0 or E4M3 codes 0x30..0x3F (0.5 .. 1.875).


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
      ::microscale::testing::mixedMatmulFunction(lhs, c.weight, out);
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(5);
  std::vector<uint16_t> a =
      ::microscale::testing::randomActivations(m * k, rng);
  RandomWeight random = randomWeight(type, 0, rng);
  const ref::QuantizedTensor &w = random.tensor;
  std::vector<float> got(m * n, std::nanf(""));
  llvm::Error error = ::microscale::testing::invokeMixedMatmul(
      *engine, m, k, n, a.data(), random.values, random.scales,
      w.globalScale, got.data());
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  // The reference dequantizes with the global scale inside; the op applies
  // it to the sum: equal up to f32 rounding.
  ::microscale::testing::expectMixedMatmulProduct(
      m, k, n, a, ref::dequantize(w, ref::E8M0Edges::OCP), got);
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

namespace {

/// The ragged (mixture-of-experts) form on the host: experts [E, K, N],
/// slices by offsets and counts (an empty one, one running past the ragged
/// rows, a negative count), a gather with an out-of-range index and a
/// scatter, against a float64 reference that skips exactly the rows the op
/// documents as skipped; rows of `out` that nothing writes keep their
/// contents.
TEST(MixedMatmulJITRagged, ExpertsGatherScatter) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const int64_t experts = 4, k = 64, n = 16, tokens = 6, rows = 10,
                outRows = 12;
  const char *weight = "!microscale.qtensor<4x64x16, mxfp4, axis = 1, values "
                       "= #microscale.strided<major_dim = -2>>";
  auto type = dyn_cast_or_null<QTensorType>(parseType(weight, &context));
  ASSERT_TRUE(type);
  auto memref = [](int64_t a, int64_t b, const char *element) {
    return "memref<" + std::to_string(a) + "x" + std::to_string(b) + "x" +
           element + ">";
  };
  const std::string lhs = memref(tokens, k, "bf16"),
                    out = memref(outRows, n, "f32");
  const std::string e = "memref<4xi32>", r = "memref<10xi32>";
  std::string text =
      ::microscale::testing::raggedMatmulFunction(lhs, weight, out, e, r);
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(11);
  std::vector<uint16_t> a =
      ::microscale::testing::randomActivations(tokens * k, rng);
  RandomWeight random = randomWeight(type, 1, rng);
  const ref::QuantizedTensor &w = random.tensor;
  std::vector<uint8_t> &values = random.values, &scales = random.scales;

  // Expert 0: rows 0-2; expert 1: rows 8-11, of which 10 and 11 are past
  // the 10 ragged rows; expert 2: rows 3-7 (row 5's gather index is out of
  // range); expert 3: a negative count, an empty slice (last, so that a
  // lowering that took it as a large count would overwrite rows).
  std::vector<int32_t> offsets = {0, 8, 3, 0}, counts = {3, 4, 5, -3};
  std::vector<int32_t> gather = {5, 0, 2, 1, 1, 99, 4, 3, 0, 2};
  std::vector<int32_t> scatter = {11, 0, 2, 4, 6, 8, 10, 1, 3, 5};
  std::vector<float> got(outRows * n, std::nanf(""));
  ::microscale::testing::RaggedMatmulCall call{
      experts, k,      n,      tokens, rows,   outRows, a,
      values,  scales, got,    offsets, counts, gather, scatter};
  llvm::Error error = ::microscale::testing::invokeRaggedMatmul(*engine, call);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  // Rows 0-2, 3-4, 6-7 and 8-9: 9 ragged rows written.
  EXPECT_EQ(::microscale::testing::expectRaggedProduct(
                call, ref::dequantize(w, ref::E8M0Edges::OCP)),
            9u);
}

} // namespace

namespace {

/// Rows known at run time only: one function compiled for memref<?xKxbf16>
/// activations and a memref<?xNxf32> result, called at several M (odd ones,
/// one past a multiple of 8, and none) on random data, each against a
/// float64 product; with no rows the result keeps its contents.
TEST(MixedMatmulJITDynamic, OneCompileEveryM) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const int64_t k = 96, n = 24;
  const char *weight = "!microscale.qtensor<96x24, mxfp4, axis = 0, values = "
                       "#microscale.strided<major_dim = 0>>";
  auto type = dyn_cast_or_null<QTensorType>(parseType(weight, &context));
  ASSERT_TRUE(type);
  std::string text = ::microscale::testing::mixedMatmulFunction(
      "memref<?x96xbf16>", weight, "memref<?x24xf32>");
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(23);
  RandomWeight random = randomWeight(type, 0, rng);
  const ref::QuantizedTensor &w = random.tensor;
  std::vector<float> weightValues = ref::dequantize(w, ref::E8M0Edges::OCP);
  for (int64_t m : {1, 3, 9, 17, 0}) {
    std::vector<uint16_t> a = ::microscale::testing::randomActivations(
        std::max<int64_t>(m, 1) * k, rng);
    // One sentinel row past M: a lowering that ran past M would write it.
    std::vector<float> got((m + 1) * n, std::nanf(""));
    llvm::Error error = ::microscale::testing::invokeMixedMatmul(
        *engine, m, k, n, a.data(), random.values, random.scales,
        w.globalScale, got.data());
    ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
    ::microscale::testing::expectMixedMatmulProduct(
        m, k, n, a, weightValues, got, "M = " + std::to_string(m) + ": ");
    for (int64_t j = 0; j < n; ++j)
      EXPECT_TRUE(std::isnan(got[m * n + j])) << "M = " << m << ": row M written";
  }
}

} // namespace
