//===- TranscodeJITTest.cpp - Generated transcode vs reference ------------===//
//
// microscale.transcode_storage lowered by our passes for the host, run
// through MLIR's JIT on random NVFP4 B32 bytes (every element code; scale
// codes random, with zero, subnormal, negative and NaN scales forced in),
// must write exactly the reference's MXFP6 bytes, padding included, into
// poisoned buffers: both variants, both bump rules, strided and Triton
// layouts on either side.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Reference/Transcode.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *from;
  const char *to;
  bool hwcvt;
  bool minimalBump;
};

class TranscodeJIT : public ::testing::TestWithParam<Case> {};

TEST_P(TranscodeJIT, MatchesTheReferenceByteForByte) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  auto from = cast<QTensorType>(parseType(c.from, &context));
  auto to = cast<QTensorType>(parseType(c.to, &context));
  std::string attrs =
      std::string(" {variant = #microscale.transcode_variant<") +
      (c.hwcvt ? "hwcvt" : "lut") + ">, exponent_bump = #microscale.exponent_bump<" +
      (c.minimalBump ? "mantissa_at_least_3" : "nonzero_mantissa") + ">}";
  std::string text =
      "func.func @transcode(%v: memref<?xi8>, %s: memref<?xi8>, "
      "%ov: memref<?xi8>, %os: memref<?xi8>) attributes "
      "{llvm.emit_c_interface} {\n"
      "  microscale.transcode_storage %v, %s into %ov, %os" + attrs + " : " +
      c.from + " -> " + c.to +
      ", memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>\n"
      "  return\n}\n";
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  ref::QuantizedTensor source;
  source.format = ref::MXFormat::nvfp4B32();
  source.shape.assign(from.getShape().begin(), from.getShape().end());
  source.axis = from.getAxis();
  source.scaleShape = ref::scaleShapeFor(source.shape, source.axis, 32);
  source.globalScale = 0.75f;
  std::mt19937 rng(29);
  source.elements.resize(from.getNumElements());
  for (auto &code : source.elements)
    code = static_cast<uint8_t>(rng() & 0xF);
  source.scales.resize(ShapedType::getNumElements(from.getScaleShape()));
  for (auto &code : source.scales)
    code = static_cast<uint8_t>(rng());
  const uint8_t edges[] = {0x00, 0x80, 0x7F, 0x03, 0x05, 0xB9, 0x39, 0x54};
  for (size_t i = 0; i < std::size(edges) && i < source.scales.size(); ++i)
    source.scales[i] = edges[i];

  auto fromValues = from.buildValueReference();
  auto fromScales = from.buildScaleReference();
  std::vector<uint8_t> values(fromValues->getStorageBytes());
  std::vector<uint8_t> scales(fromScales->getStorageBytes());
  fromValues->store(source.elements.data(), values.data());
  fromScales->store(source.scales.data(), scales.data());

  ref::TranscodedTensor expected;
  ASSERT_EQ(ref::transcode(source,
                           c.hwcvt ? ref::TranscodeVariant::HWCVT
                                   : ref::TranscodeVariant::LUT,
                           c.minimalBump
                               ? ref::ExponentBumpRule::MantissaAtLeast3
                               : ref::ExponentBumpRule::NonzeroMantissa,
                           expected),
            "");
  auto toValues = to.buildValueReference();
  auto toScales = to.buildScaleReference();
  std::vector<uint8_t> wantValues(toValues->getStorageBytes());
  std::vector<uint8_t> wantScales(toScales->getStorageBytes());
  toValues->store(expected.mx.elements.data(), wantValues.data());
  toScales->store(expected.mx.scales.data(), wantScales.data());

  std::vector<uint8_t> gotValues(wantValues.size(), 0xA5);
  std::vector<uint8_t> gotScales(wantScales.size(), 0xA5);
  int64_t zero = 0, one = 1;
  int64_t vBytes = values.size(), sBytes = scales.size();
  int64_t ovBytes = gotValues.size(), osBytes = gotScales.size();
  uint8_t *vp = values.data(), *sp = scales.data();
  uint8_t *ovp = gotValues.data(), *osp = gotScales.data();
  std::vector<void *> args = {&vp,  &vp,  &zero, &vBytes,  &one,
                              &sp,  &sp,  &zero, &sBytes,  &one,
                              &ovp, &ovp, &zero, &ovBytes, &one,
                              &osp, &osp, &zero, &osBytes, &one};
  llvm::Error error = engine->invokePacked("transcode", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  EXPECT_EQ(gotScales, wantScales);
  size_t mismatches = 0;
  for (size_t i = 0; i < wantValues.size(); ++i)
    if (gotValues[i] != wantValues[i] && mismatches++ < 3)
      ADD_FAILURE() << "value byte " << i << ": got " << int(gotValues[i])
                    << ", want " << int(wantValues[i]);
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, TranscodeJIT,
    ::testing::Values(
        Case{"!microscale.qtensor<4x64, nvfp4_b32, axis = 1>",
             "!microscale.qtensor<4x64, mxfp6_e2m3, axis = 1>", false, false},
        Case{"!microscale.qtensor<4x64, nvfp4_b32, axis = 1>",
             "!microscale.qtensor<4x64, mxfp6_e2m3, axis = 1>", true, false},
        Case{"!microscale.qtensor<4x64, nvfp4_b32, axis = 1>",
             "!microscale.qtensor<4x64, mxfp6_e2m3, axis = 1>", false, true},
        Case{"!microscale.qtensor<4x64, nvfp4_b32, axis = 1>",
             "!microscale.qtensor<4x64, mxfp6_e2m3, axis = 1>", true, true},
        Case{"!microscale.qtensor<3x96x8, nvfp4_b32, axis = 1, values = #microscale.strided<major_dim = -2>>",
             "!microscale.qtensor<3x96x8, mxfp6_e2m3, axis = 1>", false, false},
        Case{"!microscale.qtensor<64x8, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = -2>>",
             "!microscale.qtensor<64x8, mxfp6_e2m3, axis = 0>", true, false},
        Case{"!microscale.qtensor<2x64x132, nvfp4_b32, axis = 1>",
             "!microscale.qtensor<2x64x132, mxfp6_e2m3, axis = 1, scales = #microscale.cdna4_scale>", true, false},
        Case{"!microscale.qtensor<64x0, nvfp4_b32, axis = 0>",
             "!microscale.qtensor<64x0, mxfp6_e2m3, axis = 0>", false, false}));

} // namespace
