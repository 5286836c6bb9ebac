//===- BlackwellDequantizeJITTest.cpp - Native-conversion kernel on host --===//
//
// The Blackwell dequantization kernel (BlackwellDequantizeKernel.cpp:
// cvt.rn.f16x2.e2m1x2 and cvt.rn.bf16x2.ue8m0x2 with the 2^112 folded into
// the scale) run on the host by emulateBlackwellDequantizeOnHost: its tiles,
// swizzle, lane pairing and the PTX decode's bits, as integer operations.
// Every element code and every scale code (0 and 255 included) on random
// data, partial tiles in K and N, several batches; folded and exact paths.
// Must give the reference's bits exactly.
//
// What this cannot check (only a Blackwell GPU can): that ptxas's
// cvt.rn.f16x2.e2m1x2 and cvt.rn.bf16x2.ue8m0x2 give the bits emulated
// here (in particular code 0 as the bf16 subnormal 2^-127), and real
// concurrency.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *shape; // "KxN" or "BxKxN"
  bool fold;
};

class BlackwellDequantizeOnHost : public ::testing::TestWithParam<Case> {};

TEST_P(BlackwellDequantizeOnHost, MatchesTheReferenceBitForBit) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  std::string shape = c.shape;
  const int64_t rank = std::count(shape.begin(), shape.end(), 'x') + 1;
  std::string type = "!microscale.qtensor<" + shape + ", mxfp4, axis = " +
                     std::to_string(rank - 2) +
                     ", values = #microscale.blackwell_value, scales = "
                     "#microscale.blackwell_scale>";
  auto qtensor = cast<QTensorType>(parseType(type, &context));
  std::string text =
      "func.func @dequantize(%v: memref<?xi8>, %s: memref<?xi8>, "
      "%o: memref<?xbf16>) attributes {llvm.emit_c_interface} {\n"
      "  microscale.dequantize_storage %v, %s into %o : " +
      type + ", memref<?xi8>, memref<?xi8>, memref<?xbf16>\n  return\n}\n";
  std::string compileError;
  bool emulated = false;
  auto engine = ::microscale::testing::compileForHost(
      context, text, compileError, [&](ModuleOp module) {
        HopperDequantizeOptions options;
        options.foldScaleBias = c.fold;
        module.walk([&](DequantizeStorageOp op) {
          emulated = emulateBlackwellDequantizeOnHost(op, options);
        });
      });
  ASSERT_TRUE(engine) << compileError;
  ASSERT_TRUE(emulated) << type;

  ref::QuantizedTensor tensor;
  tensor.format = qtensor.getFormat().getReferenceFormat();
  tensor.shape.assign(qtensor.getShape().begin(), qtensor.getShape().end());
  tensor.axis = qtensor.getAxis();
  tensor.scaleShape = ref::scaleShapeFor(tensor.shape, tensor.axis,
                                         tensor.format.blockSize);
  std::mt19937 rng(20);
  tensor.elements.resize(qtensor.getNumElements());
  for (auto &code : tensor.elements)
    code = static_cast<uint8_t>(rng() & 0xF);
  // Every scale code at least once where there are enough scales.
  tensor.scales.resize(ShapedType::getNumElements(qtensor.getScaleShape()));
  for (size_t i = 0; i < tensor.scales.size(); ++i)
    tensor.scales[i] = static_cast<uint8_t>(i < 256 ? i : rng());
  std::shuffle(tensor.scales.begin(), tensor.scales.end(), rng);
  auto valueLayout = qtensor.buildValueReference();
  auto scaleLayout = qtensor.buildScaleReference();
  std::vector<uint8_t> values(valueLayout->getStorageBytes() + 1);
  std::vector<uint8_t> scales(scaleLayout->getStorageBytes() + 1);
  valueLayout->store(tensor.elements.data(), values.data());
  scaleLayout->store(tensor.scales.data(), scales.data());
  std::vector<float> expected = ref::dequantize(tensor, ref::E8M0Edges::OCP);

  const size_t n = expected.size();
  std::vector<uint16_t> out(n, 0xBEEF);
  void *outData = out.data();
  int64_t zero = 0, one = 1;
  int64_t vBytes = values.size() - 1, sBytes = scales.size() - 1;
  int64_t outSize = n;
  uint8_t *vp = values.data(), *sp = scales.data();
  std::vector<void *> args = {&vp, &vp, &zero, &vBytes, &one,
                              &sp, &sp, &zero, &sBytes, &one,
                              &outData, &outData, &zero, &outSize, &one};
  llvm::Error error = engine->invokePacked("dequantize", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != ref::toBF16Bits(expected[i]) && mismatches++ < 3)
      ADD_FAILURE() << type << " element " << i << ": got " << out[i]
                    << ", want " << ref::toBF16Bits(expected[i]) << " ("
                    << expected[i] << ")";
  EXPECT_EQ(mismatches, 0u);
}

// 256 x 2048: 16 x 64 = 1024 scales, every code; partial tiles in K (96)
// and N (200: element stores, N % 8 != 0 with 66); batches.
INSTANTIATE_TEST_SUITE_P(
    Shapes, BlackwellDequantizeOnHost,
    ::testing::Values(Case{"256x2048", true}, Case{"256x2048", false},
                      Case{"2x96x200", true}, Case{"64x66", false},
                      Case{"3x160x128", true}));

} // namespace
