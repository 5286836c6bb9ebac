//===- DequantizeJITTest.cpp - Generated dequantization vs reference ------===//
//
// microscale.dequantize_storage lowered by our passes for the host, run
// through MLIR's JIT on random codes (every element code, NaN and zero scale
// codes included), must give exactly the reference's bits: f32, bf16 and f16
// results, every format, strided and Triton layouts, both E8M0 edge choices.
// Cases marked `gpu` run the staged Hopper GPU kernel's own code on the host
// instead (emulateHopperDequantizeOnHost: its tiles, swizzle and the PTX
// decode's bits), so that CI checks its logic without a GPU.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *type;     // the qtensor type
  const char *outType;  // f32, bf16 or f16
  const char *edges;    // "" or "zero_inf"
  const char *gpu = ""; // "", or the emulated GPU kernel: "folded", "exact"
};

class DequantizeJIT : public ::testing::TestWithParam<Case> {};

TEST_P(DequantizeJIT, MatchesTheReferenceBitForBit) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  auto qtensor = cast<QTensorType>(parseType(c.type, &context));
  const bool global = qtensor.getFormat().getGlobalScale();
  std::string edges = *c.edges ? std::string(" {e8m0_edges = #microscale.e8m0_edges<") +
                                     c.edges + ">}"
                               : "";
  std::string text =
      std::string("func.func @dequantize(%v: memref<?xi8>, %s: memref<?xi8>, "
                  "%o: memref<?x") +
      c.outType + ">" + (global ? ", %g: f32" : "") +
      ") attributes {llvm.emit_c_interface} {\n"
      "  microscale.dequantize_storage %v, %s" +
      (global ? ", %g" : "") + " into %o" + edges + " : " + c.type +
      ", memref<?xi8>, memref<?xi8>, memref<?x" + c.outType +
      ">\n  return\n}\n";
  std::string compileError;
  bool emulated = false;
  auto engine = ::microscale::testing::compileForHost(
      context, text, compileError, [&](ModuleOp module) {
        if (!*c.gpu)
          return;
        HopperDequantizeOptions options;
        options.foldScaleBias = std::string(c.gpu) == "folded";
        module.walk([&](DequantizeStorageOp op) {
          emulated = emulateHopperDequantizeOnHost(op, options);
        });
      });
  ASSERT_TRUE(engine) << compileError;
  EXPECT_EQ(emulated, *c.gpu != 0) << c.type;

  // Random codes, with the scale edge codes forced into the mix.
  ref::QuantizedTensor tensor;
  tensor.format = qtensor.getFormat().getReferenceFormat();
  tensor.shape.assign(qtensor.getShape().begin(), qtensor.getShape().end());
  tensor.axis = qtensor.getAxis();
  tensor.scaleShape = ref::scaleShapeFor(tensor.shape, tensor.axis,
                                         tensor.format.blockSize);
  std::mt19937 rng(7);
  const unsigned bits = ref::getInfo(tensor.format.element).bits;
  tensor.elements.resize(qtensor.getNumElements());
  for (auto &code : tensor.elements)
    code = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
  tensor.scales.resize(ShapedType::getNumElements(qtensor.getScaleShape()));
  for (auto &code : tensor.scales)
    code = static_cast<uint8_t>(rng());
  if (!tensor.scales.empty())
    tensor.scales[0] = 0;
  if (tensor.scales.size() > 1)
    tensor.scales[1] = 255;
  tensor.globalScale = 0.3f;
  auto valueLayout = qtensor.buildValueReference();
  auto scaleLayout = qtensor.buildScaleReference();
  std::vector<uint8_t> values(valueLayout->getStorageBytes() + 1);
  std::vector<uint8_t> scales(scaleLayout->getStorageBytes() + 1);
  valueLayout->store(tensor.elements.data(), values.data());
  scaleLayout->store(tensor.scales.data(), scales.data());
  std::vector<float> expected = ref::dequantize(
      tensor, *c.edges ? ref::E8M0Edges::ZeroInf : ref::E8M0Edges::OCP);

  const size_t n = expected.size();
  const bool f32 = std::string(c.outType) == "f32";
  std::vector<uint32_t> out32(n, 0xDEADBEEF);
  std::vector<uint16_t> out16(n, 0xBEEF);
  void *outData = f32 ? static_cast<void *>(out32.data()) : out16.data();
  int64_t zero = 0, one = 1;
  int64_t vBytes = values.size() - 1, sBytes = scales.size() - 1;
  int64_t outSize = n;
  uint8_t *vp = values.data(), *sp = scales.data();
  float g = tensor.globalScale;
  std::vector<void *> args = {&vp, &vp, &zero, &vBytes, &one,
                              &sp, &sp, &zero, &sBytes, &one,
                              &outData, &outData, &zero, &outSize, &one};
  if (global)
    args.push_back(&g);
  llvm::Error error = engine->invokePacked("dequantize", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t want32;
    std::memcpy(&want32, &expected[i], 4);
    bool same;
    if (f32)
      same = out32[i] == want32;
    else if (std::string(c.outType) == "bf16")
      same = out16[i] == ref::toBF16Bits(expected[i]);
    else
      same = out16[i] == ref::toF16Bits(expected[i]);
    if (!same && mismatches++ < 3)
      ADD_FAILURE() << c.type << " -> " << c.outType << " element " << i
                    << ": got " << (f32 ? out32[i] : out16[i]) << ", want "
                    << expected[i];
  }
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, DequantizeJIT,
    ::testing::Values(
        Case{"!microscale.qtensor<4x64, mxfp4, axis = 1>", "f32", ""},
        Case{"!microscale.qtensor<4x64, mxfp4, axis = 1>", "bf16", ""},
        Case{"!microscale.qtensor<4x64, mxfp4, axis = 1>", "f16", ""},
        Case{"!microscale.qtensor<4x64, mxfp4, axis = 1>", "bf16", "zero_inf"},
        Case{"!microscale.qtensor<64x8, mxfp6_e2m3, axis = 0>", "f32", ""},
        Case{"!microscale.qtensor<64x8, mxfp6_e3m2, axis = 0, values = #microscale.strided<major_dim = -2>>", "bf16", ""},
        Case{"!microscale.qtensor<4x64, mxfp8_e4m3, axis = 1>", "f32", ""},
        Case{"!microscale.qtensor<4x64, mxfp8_e5m2, axis = 1>", "f16", ""},
        Case{"!microscale.qtensor<4x64, nvfp4, axis = 1>", "f32", ""},
        Case{"!microscale.qtensor<4x64, nvfp4_b32, axis = 1>", "bf16", ""},
        Case{"!microscale.qtensor<2x64x66, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16", ""},
        Case{"!microscale.qtensor<2x34x64, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 2>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 4>>", "f32", "zero_inf"},
        Case{"!microscale.qtensor<2x64x130, mxfp4, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>, scales = #microscale.cdna4_scale>", "bf16", ""},
        Case{"!microscale.qtensor<64x0, mxfp4, axis = 0>", "bf16", ""}));

// The staged Hopper GPU kernel, emulated: both mx_axis, folded and exact,
// padded shapes (partial tiles, rows of 66 bf16: the element-store path),
// several batches, one and several tiles per block.
INSTANTIATE_TEST_SUITE_P(
    HopperGPUKernelOnHost, DequantizeJIT,
    ::testing::Values(
        Case{"!microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16", "", "folded"},
        Case{"!microscale.qtensor<512x1024, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16", "", "exact"},
        Case{"!microscale.qtensor<1024x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 8>>", "bf16", "", "folded"},
        Case{"!microscale.qtensor<2x96x200, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16", "", "folded"},
        Case{"!microscale.qtensor<64x66, mxfp4, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>", "bf16", "", "exact"},
        Case{"!microscale.qtensor<3x66x160, mxfp4, axis = 2, values = #microscale.hopper_value<mx_axis = -1, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -1, num_warps = 8>>", "bf16", "", "folded"}));

} // namespace
