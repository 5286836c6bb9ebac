//===- ScaledMatmulJITTest.cpp - Register transcode and scaled_matmul -----===//
//
// 1. The register sequence that gfx950 kernels run on an NVFP4 B32 block
//    (TranscodeBlock.h; the byte permute emulated), compiled for the host and
//    run on every E4M3 scale code with every E2M1 code in every nibble
//    position, must give the reference's E2M3 codes packed six bits apart
//    and its E8M0 code: both variants, both bump rules.
// 2. scaled_matmul_storage lowered for the host (which assembles operand
//    blocks with that same sequence) on random operands must match a float64
//    product of the reference's transcoded, dequantized operands.
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Dialect/Microscale/Utils/TranscodeBlock.h"
#include "microscale/Reference/Transcode.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
namespace ref = ::microscale::ref;

namespace {

struct Rules {
  bool hwcvt;
  bool minimalBump;
};

ref::TranscodeVariant refVariant(const Rules &r) {
  return r.hwcvt ? ref::TranscodeVariant::HWCVT : ref::TranscodeVariant::LUT;
}
ref::ExponentBumpRule refRule(const Rules &r) {
  return r.minimalBump ? ref::ExponentBumpRule::MantissaAtLeast3
                       : ref::ExponentBumpRule::NonzeroMantissa;
}

/// func @blocks(%words: memref<?xi32>, %scales: memref<?xi32>,
///              %out: memref<?xi32>): for each block b, four words and a
/// scale code in; six packed words and the E8M0 code out (7 words).
std::string buildBlockModule(MLIRContext &context, const Rules &rules) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module.getBody());
  auto words = MemRefType::get({ShapedType::kDynamic}, builder.getI32Type());
  auto function = func::FuncOp::create(
      builder, loc, "blocks",
      builder.getFunctionType({words, words, words}, {}));
  function->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  Emitter e(builder, loc);
  Value in = entry->getArgument(0), scales = entry->getArgument(1),
        out = entry->getArgument(2);
  Value count = memref::DimOp::create(builder, loc, scales, 0);
  scf::ForOp::create(
      builder, loc, e.index(0), count, e.index(1), ValueRange(),
      [&](OpBuilder &b, Location l, Value block, ValueRange) {
        Emitter body(b, l);
        SmallVector<Value, 4> fp4;
        for (int w = 0; w < 4; ++w)
          fp4.push_back(memref::LoadOp::create(
              b, l, in, ValueRange{body.add(body.mul(block, 4), w)}));
        Value scale = memref::LoadOp::create(b, l, scales, ValueRange{block});
        TranscodedBlock result = emitTableTranscodeBlock(
            body, fp4, scale,
            rules.hwcvt ? TranscodeVariant::hwcvt : TranscodeVariant::lut,
            rules.minimalBump ? ExponentBump::mantissa_at_least_3
                              : ExponentBump::nonzero_mantissa,
            emitBytePermuteEmulation);
        result.words.push_back(result.e8m0);
        for (int w = 0; w < 7; ++w)
          memref::StoreOp::create(
              b, l, result.words[w], out,
              ValueRange{body.add(body.mul(block, 7), w)});
        scf::YieldOp::create(b, l);
      });
  func::ReturnOp::create(builder, loc);
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  module.erase();
  return text;
}

class TranscodeBlockJIT : public ::testing::TestWithParam<Rules> {};

TEST_P(TranscodeBlockJIT, EveryScaleCodeAndElementCodeMatchesTheReference) {
  const Rules rules = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  context.loadDialect<arith::ArithDialect, math::MathDialect, scf::SCFDialect>();
  std::string compileError;
  auto engine = ::microscale::testing::compileForHost(
      context, buildBlockModule(context, rules), compileError);
  ASSERT_TRUE(engine) << compileError;

  // Per scale code two blocks: elements 0..15 twice (every code in every
  // nibble parity), and a random block.
  std::mt19937 rng(2026);
  std::vector<uint8_t> elements;
  std::vector<int32_t> scaleCodes;
  for (int s = 0; s < 256; ++s)
    for (int copy = 0; copy < 2; ++copy) {
      scaleCodes.push_back(s);
      for (int i = 0; i < 32; ++i)
        elements.push_back(copy == 0 ? (i + s) & 0xF : rng() & 0xF);
    }
  const size_t blocks = scaleCodes.size();
  std::vector<int32_t> in(blocks * 4, 0);
  for (size_t i = 0; i < elements.size(); ++i)
    in[i / 8] |= static_cast<int32_t>(elements[i]) << (4 * (i % 8));
  std::vector<int32_t> got(blocks * 7, 0x5A5A5A5A);

  int64_t zero = 0, one = 1;
  int64_t inCount = in.size(), scaleCount = blocks, outCount = got.size();
  int32_t *ip = in.data(), *sp = scaleCodes.data(), *op = got.data();
  std::vector<void *> args = {&ip, &ip, &zero, &inCount,    &one,
                              &sp, &sp, &zero, &scaleCount, &one,
                              &op, &op, &zero, &outCount,   &one};
  llvm::Error error = engine->invokePacked("blocks", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  size_t mismatches = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const ref::SplitScale split =
        ref::splitE4M3Scale(static_cast<uint8_t>(scaleCodes[b]),
                            refRule(rules));
    uint32_t want[6] = {};
    for (int i = 0; i < 32; ++i) {
      const uint64_t code = ref::transcodeElement(
          elements[32 * b + i], split, refVariant(rules), refRule(rules));
      const int bit = 6 * i;
      want[bit / 32] |= static_cast<uint32_t>(code << (bit % 32));
      if (bit % 32 > 26)
        want[bit / 32 + 1] |= static_cast<uint32_t>(code >> (32 - bit % 32));
    }
    for (int w = 0; w < 6; ++w)
      if (static_cast<uint32_t>(got[7 * b + w]) != want[w] &&
          mismatches++ < 3)
        ADD_FAILURE() << "scale code " << scaleCodes[b] << " block " << b
                      << " word " << w << ": got " << std::hex
                      << got[7 * b + w] << ", want " << want[w];
    if (static_cast<uint32_t>(got[7 * b + 6]) != split.e8m0Code &&
        mismatches++ < 3)
      ADD_FAILURE() << "scale code " << scaleCodes[b] << ": E8M0 "
                    << got[7 * b + 6] << ", want " << int(split.e8m0Code);
  }
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(VariantsAndBumpRules, TranscodeBlockJIT,
                         ::testing::Values(Rules{false, false},
                                           Rules{true, false},
                                           Rules{false, true},
                                           Rules{true, true}));

//===----------------------------------------------------------------------===//
// scaled_matmul_storage on the host
//===----------------------------------------------------------------------===//

struct MatmulCase {
  const char *lhs;
  const char *rhs;
  const char *variant; // null: no transcode attribute
  bool minimalBump;
};

/// Random codes for a quantized operand: NVFP4 B32 scales avoid NaN (it
/// would make whole rows NaN) but include zero, subnormal and negative
/// codes; E8M0 scales stay near 2^0.
ref::QuantizedTensor randomOperand(QTensorType type, std::mt19937 &rng) {
  ref::QuantizedTensor q;
  q.format = type.getFormat().getReferenceFormat();
  q.shape.assign(type.getShape().begin(), type.getShape().end());
  q.axis = type.getAxis();
  q.scaleShape = ref::scaleShapeFor(q.shape, q.axis, q.format.blockSize);
  const unsigned bits = type.getFormat().getElementBits();
  q.elements.resize(type.getNumElements());
  for (auto &code : q.elements)
    code = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
  q.scales.resize(ShapedType::getNumElements(type.getScaleShape()));
  const bool e4m3 = q.format.scale == ref::ScalarFormat::E4M3FN;
  for (auto &code : q.scales) {
    code = e4m3 ? static_cast<uint8_t>(rng()) : 120 + rng() % 15;
    if (e4m3 && (code & 0x7F) == 0x7F)
      code = 0x38;
  }
  if (e4m3 && q.scales.size() > 4) {
    q.scales[0] = 0x00; // zero
    q.scales[1] = 0x03; // subnormal
    q.scales[2] = 0xB9; // negative
  }
  q.globalScale = e4m3 ? 0.625f : 1.0f;
  return q;
}

/// The operand's values as the op defines them: transcoded first when it
/// is NVFP4 B32 and a variant is given.
std::vector<double> operandValues(const ref::QuantizedTensor &q,
                                  const MatmulCase &c) {
  std::vector<float> values;
  if (c.variant && q.format == ref::MXFormat::nvfp4B32()) {
    ref::TranscodedTensor t;
    const bool hwcvt = std::string(c.variant) == "hwcvt";
    EXPECT_EQ(ref::transcode(q,
                             hwcvt ? ref::TranscodeVariant::HWCVT
                                   : ref::TranscodeVariant::LUT,
                             c.minimalBump
                                 ? ref::ExponentBumpRule::MantissaAtLeast3
                                 : ref::ExponentBumpRule::NonzeroMantissa,
                             t),
              "");
    values = ref::dequantize(t);
  } else {
    values = ref::dequantize(q);
  }
  return std::vector<double>(values.begin(), values.end());
}

class ScaledMatmulJIT : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(ScaledMatmulJIT, MatchesAFloat64ProductOfTheReferenceOperands) {
  const MatmulCase &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  auto lhsType = dyn_cast_or_null<QTensorType>(parseType(c.lhs, &context));
  auto rhsType = dyn_cast_or_null<QTensorType>(parseType(c.rhs, &context));
  ASSERT_TRUE(lhsType && rhsType) << c.lhs << " / " << c.rhs;
  const int64_t m = lhsType.getShape()[0], k = lhsType.getShape()[1],
                n = rhsType.getShape()[1];
  std::string attrs = " {";
  if (c.variant)
    attrs += std::string("variant = #microscale.transcode_variant<") +
             c.variant + ">, ";
  attrs += std::string("exponent_bump = #microscale.exponent_bump<") +
           (c.minimalBump ? "mantissa_at_least_3" : "nonzero_mantissa") +
           ">}";
  std::string text =
      "func.func @mm(%lv: memref<?xi8>, %ls: memref<?xi8>, %lg: f32, "
      "%rv: memref<?xi8>, %rs: memref<?xi8>, %rg: f32, %out: memref<?xf32>) "
      "attributes {llvm.emit_c_interface} {\n"
      "  microscale.scaled_matmul_storage(%lv, %ls, %lg) times (%rv, %rs, "
      "%rg) into %out" + attrs + " : " + c.lhs + ", " + c.rhs +
      ", memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, "
      "memref<?xf32>\n  return\n}\n";
  std::string compileError;
  auto engine =
      ::microscale::testing::compileForHost(context, text, compileError);
  ASSERT_TRUE(engine) << compileError;

  std::mt19937 rng(11);
  ref::QuantizedTensor lhs = randomOperand(lhsType, rng);
  ref::QuantizedTensor rhs = randomOperand(rhsType, rng);
  auto store = [](QTensorType type, const ref::QuantizedTensor &q,
                  std::vector<uint8_t> &values, std::vector<uint8_t> &scales) {
    auto v = type.buildValueReference();
    auto s = type.buildScaleReference();
    values.assign(v->getStorageBytes(), 0);
    scales.assign(s->getStorageBytes(), 0);
    v->store(q.elements.data(), values.data());
    s->store(q.scales.data(), scales.data());
  };
  std::vector<uint8_t> lv, ls, rv, rs;
  store(lhsType, lhs, lv, ls);
  store(rhsType, rhs, rv, rs);
  std::vector<float> got(m * n, std::nanf(""));

  int64_t zero = 0, one = 1;
  int64_t lvn = lv.size(), lsn = ls.size(), rvn = rv.size(), rsn = rs.size(),
          outn = got.size();
  uint8_t *lvp = lv.data(), *lsp = ls.data(), *rvp = rv.data(),
          *rsp = rs.data();
  float *outp = got.data();
  float lg = lhs.globalScale, rg = rhs.globalScale;
  std::vector<void *> args = {
      &lvp, &lvp, &zero, &lvn, &one, &lsp, &lsp, &zero, &lsn, &one, &lg,
      &rvp, &rvp, &zero, &rvn, &one, &rsp, &rsp, &zero, &rsn, &one, &rg,
      &outp, &outp, &zero, &outn, &one};
  llvm::Error error = engine->invokePacked("mm", args);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));

  const std::vector<double> a = operandValues(lhs, c), b = operandValues(rhs, c);
  // Block sums are exact; only the f32 additions across blocks round.
  ::microscale::testing::expectFloat64Product(
      m, k, n, [&](int64_t i, int64_t kk) { return a[i * k + kk]; },
      [&](int64_t kk, int64_t j) { return b[kk * n + j]; }, got, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    W4A6AndW4A4, ScaledMatmulJIT,
    ::testing::Values(
        // w4a6_tc: MXFP6 activations, an NVFP4 B32 weight stored K-major.
        MatmulCase{"!microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>",
                   "!microscale.qtensor<64x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>",
                   "lut", false},
        MatmulCase{"!microscale.qtensor<32x64, mxfp6_e2m3, axis = 1>",
                   "!microscale.qtensor<64x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>",
                   "hwcvt", false},
        // Odd M and N; the weight's scales in the CDNA4 scale layout.
        MatmulCase{"!microscale.qtensor<5x96, mxfp6_e2m3, axis = 1>",
                   "!microscale.qtensor<96x6, nvfp4_b32, axis = 0>",
                   "lut", true},
        MatmulCase{"!microscale.qtensor<32x256, mxfp6_e2m3, axis = 1>",
                   "!microscale.qtensor<256x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>, scales = #microscale.cdna4_scale>",
                   "hwcvt", true},
        // w4a4_tc: both operands NVFP4 B32.
        MatmulCase{"!microscale.qtensor<32x128, nvfp4_b32, axis = 1>",
                   "!microscale.qtensor<128x32, nvfp4_b32, axis = 0, values = #microscale.strided<major_dim = 0>>",
                   "lut", false},
        MatmulCase{"!microscale.qtensor<3x64, nvfp4_b32, axis = 1>",
                   "!microscale.qtensor<64x10, nvfp4_b32, axis = 0>",
                   "hwcvt", false},
        // MXFP6 x MXFP6 needs no transcode.
        MatmulCase{"!microscale.qtensor<4x64, mxfp6_e2m3, axis = 1>",
                   "!microscale.qtensor<64x8, mxfp6_e2m3, axis = 0>",
                   nullptr, false}));

} // namespace
