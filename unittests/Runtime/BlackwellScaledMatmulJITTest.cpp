//===- BlackwellScaledMatmulJITTest.cpp - sm_120a block-scaled MMA on host ===//
//
// The sm_120a scaled_matmul kernel (BlackwellScaledMatmulKernel.cpp:
// mma.sync m16n8k64 kind::mxf4.block_scale.scale_vec::2X) run on the host by
// emulateBlackwellScaledMatmulOnHost: the kernel's own loads (which lane
// reads which 4 bytes of which weight column and activation row, which
// lane provides which scale codes in which bytes) and epilogue stores, lane
// by lane, with each MMA replaced by loops that take every A, B and scale
// element from the lane, register, nibble and byte the PTX ISA's tables put
// it in (written from the element's side, independently of the loads). A
// misplaced word, nibble order, provider lane or scale byte changes the
// result.
//
// Random MXFP4 operands (every element code; scale codes over a range that
// keeps the f32 products finite, and operands quantized from random
// floats) against a float64 product of the reference's dequantized
// operands; partial tiles in M and N, K an odd multiple of 32, the three
// warp tilings (8, 16 and 32 activation rows), both weight layouts.
//
// The tolerance: the MMA's internal summation order and rounding are not
// specified by the PTX ISA; the emulation adds exact block sums in K order
// in f32, so it may differ from the float64 product by the f32 roundings of
// its additions (relative 2^-24 per block of the sum of magnitudes).
//
// What only a Blackwell GPU can confirm: the hardware's accumulation order
// and rounding, its handling of scale products outside f32's range, and
// that the fragment and scale-provider tables assumed here (PTX ISA
// 9.7.14.5, m16n8k64, and 9.7.14.3) are what sm_120a does.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *format; // mxfp4 or nvfp4 (both operands)
  int64_t m, k, n;
  const char *weightLayout; // values = ..., scales = ... of the weight
  bool quantizeFloats;      // quantize random floats, else random codes
};

std::string weightType(const Case &c) {
  return "!microscale.qtensor<" + std::to_string(c.k) + "x" +
         std::to_string(c.n) + ", " + c.format + ", axis = 0, " +
         c.weightLayout + ">";
}

/// Random codes (every element code; E8M0 scale codes 112..142, so that no
/// product leaves f32's range; E4M3 codes 0x01..0x5F, subnormals included,
/// one in eight negative) or the quantization of random floats (NVFP4 with
/// its default global scale).
ref::QuantizedTensor makeOperand(QTensorType type, bool quantizeFloats,
                                 std::mt19937 &rng) {
  ref::QuantizedTensor tensor;
  tensor.format = type.getFormat().getReferenceFormat();
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  tensor.axis = type.getAxis();
  if (quantizeFloats) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(type.getNumElements());
    for (float &v : values)
      v = normal(rng) * std::exp2(float(int(rng() % 9) - 4));
    return ref::quantize(tensor.format, tensor.shape, tensor.axis,
                         values.data());
  }
  tensor.scaleShape =
      ref::scaleShapeFor(tensor.shape, tensor.axis, tensor.format.blockSize);
  tensor.elements.resize(type.getNumElements());
  for (uint8_t &code : tensor.elements)
    code = static_cast<uint8_t>(rng() & 0xF);
  tensor.scales.resize(ShapedType::getNumElements(type.getScaleShape()));
  const bool e4m3 = tensor.format.blockSize == 16;
  for (uint8_t &code : tensor.scales)
    code = e4m3 ? static_cast<uint8_t>((1 + rng() % 0x5F) |
                                       (rng() % 8 == 0 ? 0x80 : 0))
                : static_cast<uint8_t>(112 + rng() % 31);
  return tensor;
}

/// The operand's storage bytes (plus one, so that no buffer is empty).
std::pair<std::vector<uint8_t>, std::vector<uint8_t>>
store(QTensorType type, const ref::QuantizedTensor &tensor) {
  auto values = type.buildValueReference();
  auto scales = type.buildScaleReference();
  std::vector<uint8_t> v(values->getStorageBytes() + 1, 0);
  std::vector<uint8_t> s(scales->getStorageBytes() + 1, 0);
  values->store(tensor.elements.data(), v.data());
  scales->store(tensor.scales.data(), s.data());
  return {std::move(v), std::move(s)};
}

class BlackwellScaledMatmulOnHost : public ::testing::TestWithParam<Case> {};

TEST_P(BlackwellScaledMatmulOnHost, MatchesTheFloat64Product) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const std::string lhsText = "!microscale.qtensor<" + std::to_string(c.m) +
                              "x" + std::to_string(c.k) + ", " + c.format +
                              ", axis = 1>";
  const std::string rhsText = weightType(c);
  auto lhsType = cast<QTensorType>(parseType(lhsText, &context));
  auto rhsType = cast<QTensorType>(parseType(rhsText, &context));
  std::string text =
      "func.func @matmul(%av: memref<?xi8>, %as: memref<?xi8>, %ag: f32, "
      "%wv: memref<?xi8>, %ws: memref<?xi8>, %wg: f32, %o: memref<?xf32>) "
      "attributes {llvm.emit_c_interface} {\n"
      "  microscale.scaled_matmul_storage(%av, %as, %ag) times (%wv, %ws, "
      "%wg) into %o : " +
      lhsText + ", " + rhsText +
      ", memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, "
      "memref<?xf32>\n  return\n}\n";
  std::string compileError;
  bool emulated = false;
  auto engine = ::microscale::testing::compileForHost(
      context, text, compileError, [&](ModuleOp module) {
        module.walk([&](ScaledMatmulStorageOp op) {
          emulated = emulateBlackwellScaledMatmulOnHost(op);
        });
      });
  ASSERT_TRUE(engine) << compileError;
  ASSERT_TRUE(emulated);

  std::mt19937 rng(120 + c.m + c.k + c.n);
  ref::QuantizedTensor lhs = makeOperand(lhsType, c.quantizeFloats, rng);
  ref::QuantizedTensor rhs = makeOperand(rhsType, c.quantizeFloats, rng);
  auto [av, as] = store(lhsType, lhs);
  auto [wv, ws] = store(rhsType, rhs);
  std::vector<float> a = ref::dequantize(lhs), w = ref::dequantize(rhs);

  std::vector<float> out(c.m * c.n, -12345.0f);
  void *outData = out.data();
  int64_t zero = 0, one = 1, outSize = out.size();
  int64_t avSize = av.size() - 1, asSize = as.size() - 1,
          wvSize = wv.size() - 1, wsSize = ws.size() - 1;
  uint8_t *avp = av.data(), *asp = as.data(), *wvp = wv.data(),
          *wsp = ws.data();
  float ag = lhs.globalScale, wg = rhs.globalScale;
  std::vector<void *> args = {
      &avp, &avp, &zero, &avSize, &one, &asp, &asp, &zero, &asSize, &one,
      &ag,  &wvp, &wvp,  &zero,   &wvSize, &one, &wsp, &wsp, &zero, &wsSize,
      &one, &wg,  &outData, &outData, &zero, &outSize, &one};
  llvm::Error error = engine->invokePacked("matmul", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  size_t mismatches = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const double p = double(a[i * c.k + k]) * double(w[k * c.n + j]);
        sum += p;
        magnitude += std::fabs(p);
      }
      const double got = out[i * c.n + j];
      // One f32 rounding per block addition, the global scales' product
      // and its multiply, and the reference's per-element global scale.
      const double blocks = double(c.k / lhs.format.blockSize);
      const double tolerance =
          std::ldexp(magnitude, -24) * (blocks + 4) + 1e-30;
      if (!(std::fabs(got - sum) <= tolerance) && mismatches++ < 5)
        ADD_FAILURE() << rhsText << " out[" << i << "][" << j << "] = " << got
                      << ", want " << sum << " (tolerance " << tolerance
                      << ")";
    }
  EXPECT_EQ(mismatches, 0u);
}

constexpr const char *kBlackwell =
    "values = #microscale.blackwell_value, scales = "
    "#microscale.blackwell_scale";
constexpr const char *kStrided = "values = #microscale.strided<major_dim = 0>";

constexpr const char *kNVFP4Weight =
    "values = #microscale.strided<major_dim = 0>, scales = "
    "#microscale.blackwell_scale";

// M = 1 and 5 (8-row warp tiles), 12 (16), 33 (32, with a second row of
// blocks); N partial in the last warp (40, 72, 130); K = 96 (an odd multiple
// of 32: a half step) and 2880 (gpt-oss, 45 steps). NVFP4: K = 80 and 112
// (partial steps of one and three 16-value blocks), the tcgen05 scale atoms
// for the weight's E4M3 scales. And whole tiles in M, N and K, where the
// kernel emits no bounds checks.
INSTANTIATE_TEST_SUITE_P(
    Shapes, BlackwellScaledMatmulOnHost,
    ::testing::Values(Case{"mxfp4", 1, 128, 64, kBlackwell, false},
                      Case{"mxfp4", 5, 96, 40, kBlackwell, false},
                      Case{"mxfp4", 12, 256, 72, kStrided, false},
                      Case{"mxfp4", 33, 64, 130, kBlackwell, true},
                      Case{"mxfp4", 2, 2880, 24, kBlackwell, true},
                      Case{"mxfp4", 17, 160, 16, kStrided, true},
                      Case{"nvfp4", 1, 128, 64, kStrided, false},
                      Case{"nvfp4", 9, 80, 40, kNVFP4Weight, false},
                      Case{"nvfp4", 20, 112, 24, kStrided, true},
                      Case{"nvfp4", 3, 2880, 16, kNVFP4Weight, true},
                      // Whole tiles (no bounds checks emitted).
                      Case{"mxfp4", 32, 128, 128, kBlackwell, true},
                      Case{"nvfp4", 16, 64, 64, kNVFP4Weight, false}));

// What the kernel does not take is left alone (false, the op unchanged).
TEST(BlackwellScaledMatmulEmulation, DeclinesOperandsItDoesNotTake) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const char *text =
      "func.func @f(%av: memref<?xi8>, %as: memref<?xi8>, %g: f32, "
      "%wv: memref<?xi8>, %ws: memref<?xi8>, %o: memref<?xf32>) {\n"
      "  microscale.scaled_matmul_storage(%av, %as, %g) times (%wv, %ws, %g) "
      "into %o : !microscale.qtensor<4x64, mxfp4, axis = 1>, "
      "!microscale.qtensor<64x8, mxfp4, axis = 0>, memref<?xi8>, "
      "memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xf32>\n"
      "  return\n}\n";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  // The weight is N-major (#microscale.strided, N contiguous).
  bool emulated = true;
  module->walk([&](ScaledMatmulStorageOp op) {
    emulated = emulateBlackwellScaledMatmulOnHost(op);
  });
  EXPECT_FALSE(emulated);
  int count = 0;
  module->walk([&](ScaledMatmulStorageOp) { ++count; });
  EXPECT_EQ(count, 1);
}

} // namespace
