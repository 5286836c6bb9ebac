//===- TCGen05ScaledMatmulJITTest.cpp - sm_100a tcgen05 kernel on host ----===//
//
// The sm_100a scaled_matmul kernel (TCGen05ScaledMatmulKernel.cpp:
// tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X,
// kind::mxf4nvf4 scale_vec::4X for NVFP4, kind::mxf8f6f4 scale_vec::1X
// for MXFP8 activations x an MXFP4 weight) run on the host by
// emulateTCGen05ScaledMatmulOnHost: the kernel's own copies of the weight
// and token rows (its 1-D bulk copies run as 16-byte copies to the
// shared addresses it hands them; its TMA boxes copied as the tensor map
// lays them out) into the no-swizzle K-major core-matrix
// layout of an emulated shared memory and of the scale codes into the
// 128 x 4 atoms
// (word for word from #microscale.blackwell_scale where the weight's
// scales are stored as atoms, through the layout's emitter otherwise), its
// own shared-memory, instruction and tensor-memory operands, and its
// epilogue; tcgen05.cp, tcgen05.mma and tcgen05.ld are replaced by code
// that interprets what they are handed as the PTX ISA defines it (the
// descriptors' start, leading and stride offsets, the instruction
// descriptor's N, M, scale IDs and types, the atom -> TMEM copy of
// 32x128b.warpx4, the scale of row r at lane r, column r / 32, byte
// ID + block). A wrong descriptor field, atom byte or tensor-memory
// address changes the result (or makes it NaN).
//
// Random operands (every E2M1 code; E8M0 scale codes 112..142 and E4M3
// codes 0x01..0x5F with negative ones, or the quantization of random
// floats) against a float64 product of the reference's dequantized
// operands: decode (M = 1, 2, 5: the MMA's N = 16), token tiles of 48 and
// two of 128, partial and whole 128-column weight tiles, K a whole and a
// partial number of atoms (MXFP4: 128 values per atom, NVFP4: 64), both
// weight layouts, the gpt-oss K = 2880.
//
// kind::mxf8f6f4 likewise (a second suite): MXFP8 activations (every
// finite E4M3 / E5M2 code, or quantized floats) x the MXFP4 weight, whose
// codes the kernel copies into the padded shared-memory form; the
// emulated MMA reads the A and B types from the instruction descriptor.
//
// The tolerance: the MMA's internal summation order and rounding are not
// specified by the PTX ISA; the emulation adds exact block sums in K order
// in f32 (relative 2^-24 per block of the sum of magnitudes).
//
// What only a Blackwell GPU can confirm: that the hardware reads these
// descriptors, the atom and tensor memory as the PTX ISA's tables say (the
// emulation is written from them, not from a GPU), its accumulation order
// and rounding, and the synchronization (mbarrier phases, fences).
//
//===----------------------------------------------------------------------===//
#include "JitTestSupport.h"

#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Conversion/NVVM/TCGen05ScaledMatmul.h"

#include "mlir/AsmParser/AsmParser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::microscale;
namespace ref = ::microscale::ref;

namespace {

struct Case {
  const char *format; // mxfp4 or nvfp4 (the weight; both without activations)
  int64_t m, k, n;
  const char *weightLayout; // values = ..., scales = ... of the weight
  bool quantizeFloats;      // quantize random floats, else random codes
  /// The activations' format where it is not `format` (mxfp8_e4m3 or
  /// mxfp8_e5m2 times an mxfp4 weight: kind::mxf8f6f4).
  const char *activations = nullptr;
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
  const bool e4m3Elements = tensor.format == ref::MXFormat::mxfp8E4M3();
  const bool e5m2Elements = tensor.format == ref::MXFormat::mxfp8E5M2();
  for (uint8_t &code : tensor.elements) {
    if (!e4m3Elements && !e5m2Elements) {
      code = static_cast<uint8_t>(rng() & 0xF);
      continue;
    }
    // Every FP8 code but NaN (E4M3 s.1111.111) and E5M2's Inf and NaN
    // (s.11111.mm).
    do
      code = static_cast<uint8_t>(rng() & 0xFF);
    while (e4m3Elements ? (code & 0x7F) == 0x7F : (code & 0x7C) == 0x7C);
  }
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

class TCGen05ScaledMatmulOnHost : public ::testing::TestWithParam<Case> {};

TEST_P(TCGen05ScaledMatmulOnHost, MatchesTheFloat64Product) {
  const Case &c = GetParam();
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  const std::string lhsText =
      "!microscale.qtensor<" + std::to_string(c.m) + "x" + std::to_string(c.k) +
      ", " + (c.activations ? c.activations : c.format) + ", axis = 1>";
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
          // Every way of copying the operand tiles, the cases rotating:
          // TMA boxes where they apply (the default), the threads' 1-D
          // bulk copies, their loads and shared stores.
          const int way = (c.m + c.k + c.n) % 3;
          if (way)
            op->setAttr(
                kTilingAttrName,
                DictionaryAttr::get(
                    &context,
                    {NamedAttribute(StringAttr::get(&context, "bulk_copies"),
                                    BoolAttr::get(&context, way == 1)),
                     NamedAttribute(StringAttr::get(&context, "tensor_maps"),
                                    BoolAttr::get(&context, false))}));
          emulated = emulateTCGen05ScaledMatmulOnHost(op);
        });
      });
  ASSERT_TRUE(engine) << compileError;
  ASSERT_TRUE(emulated);

  std::mt19937 rng(100 + c.m + c.k + c.n);
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
      &avp,    &avp,     &zero,    &avSize, &one,     &asp,    &asp,
      &zero,   &asSize,  &one,     &ag,     &wvp,     &wvp,    &zero,
      &wvSize, &one,     &wsp,     &wsp,    &zero,    &wsSize, &one,
      &wg,     &outData, &outData, &zero,   &outSize, &one};
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
        ADD_FAILURE() << lhsText << " x " << rhsText << " out[" << i << "]["
                      << j << "] = " << got << ", want " << sum
                      << " (tolerance " << tolerance << ")";
    }
  EXPECT_EQ(mismatches, 0u);
}

constexpr const char *kBlackwell =
    "values = #microscale.blackwell_value, scales = "
    "#microscale.blackwell_scale";
constexpr const char *kStrided = "values = #microscale.strided<major_dim = 0>";

// Triton's TMA boxes: [block_n, block_k / 2] bytes, K-tiles outermost.
constexpr const char *kShuffled =
    "values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = "
    "256>, scales = #microscale.blackwell_scale";
constexpr const char *kSmallBoxes =
    "values = #microscale.blackwell_shuffled_value<block_k = 64, block_n = "
    "32>";
// 12-byte box rows: copied in 32-bit words.
constexpr const char *kNarrowBoxes =
    "values = #microscale.blackwell_shuffled_value<block_k = 24, block_n = "
    "16>";

// 24-byte box rows: copied in 8-byte units under kind::mxf8f6f4.
constexpr const char *kEightByteBoxes =
    "values = #microscale.blackwell_shuffled_value<block_k = 48, block_n = "
    "16>";

constexpr const char *kNVFP4Weight =
    "values = #microscale.strided<major_dim = 0>, scales = "
    "#microscale.blackwell_scale";

// See the file comment. Weight scales in #microscale.blackwell_scale take
// the word-for-word atom copy (K = 96, 80 and MXFP4's 2880 end in a partial
// atom: the layout's zero padding), the others and every token scale are
// gathered through their layout's emitter.
INSTANTIATE_TEST_SUITE_P(
    Shapes, TCGen05ScaledMatmulOnHost,
    ::testing::Values(Case{"mxfp4", 1, 128, 128, kBlackwell, false},
                      Case{"mxfp4", 5, 96, 40, kBlackwell, false},
                      Case{"mxfp4", 12, 256, 72, kStrided, false},
                      Case{"mxfp4", 33, 128, 130, kBlackwell, true},
                      Case{"mxfp4", 2, 2880, 24, kBlackwell, true},
                      Case{"mxfp4", 130, 128, 24, kBlackwell, true},
                      Case{"mxfp4", 16, 512, 256, kBlackwell, false},
                      Case{"nvfp4", 1, 128, 64, kStrided, false},
                      Case{"nvfp4", 9, 80, 40, kNVFP4Weight, false},
                      Case{"nvfp4", 20, 112, 24, kStrided, true},
                      Case{"nvfp4", 3, 2880, 16, kNVFP4Weight, true},
                      Case{"nvfp4", 16, 128, 128, kNVFP4Weight, false},
                      Case{"mxfp4", 3, 256, 300, kShuffled, false},
                      Case{"mxfp4", 20, 2880, 64, kSmallBoxes, true},
                      Case{"nvfp4", 5, 96, 40, kNarrowBoxes, false}));

// kind::mxf8f6f4: MXFP8 activations (E4M3, E5M2) x an MXFP4 weight padded
// into the 16-byte units of the 4-bit packing format (PTX ISA
// 9.7.16.10.4.4), four 1X MMAs per atom (scale IDs 0-3), 48-token tiles:
// decode (the MMA's N = 16), two token tiles (50 = 48 + 2), K a partial
// atom (96, and 160: one whole and one of a single block), the gpt-oss
// K = 2880, every weight layout (Triton's boxes of 64-byte rows, stored as
// 8-byte halves, of 24-byte rows: 8-byte copies, and of 12-byte rows:
// 32-bit copies).
INSTANTIATE_TEST_SUITE_P(
    Mxf8f6f4, TCGen05ScaledMatmulOnHost,
    ::testing::Values(
        Case{"mxfp4", 1, 128, 128, kBlackwell, false, "mxfp8_e4m3"},
        Case{"mxfp4", 5, 96, 40, kBlackwell, false, "mxfp8_e5m2"},
        Case{"mxfp4", 50, 256, 130, kStrided, true, "mxfp8_e4m3"},
        Case{"mxfp4", 7, 160, 16, kStrided, false, "mxfp8_e4m3"},
        Case{"mxfp4", 2, 2880, 24, kBlackwell, true, "mxfp8_e4m3"},
        Case{"mxfp4", 16, 512, 256, kBlackwell, false, "mxfp8_e5m2"},
        Case{"mxfp4", 20, 2880, 64, kSmallBoxes, true, "mxfp8_e5m2"},
        Case{"mxfp4", 3, 256, 300, kShuffled, false, "mxfp8_e4m3"},
        Case{"mxfp4", 5, 96, 40, kNarrowBoxes, false, "mxfp8_e4m3"},
        Case{"mxfp4", 9, 192, 40, kEightByteBoxes, false, "mxfp8_e5m2"}));

// What the kernel does not take is left alone (false, the op unchanged):
// an N-major weight, shuffled boxes of 6-byte rows, MXFP8 x MXFP8 and
// MXFP4 x an MXFP8 weight (kind::mxf8f6f4 is written for MXFP8
// activations x an MXFP4 weight only).
TEST(TCGen05ScaledMatmulEmulation, DeclinesOperandsItDoesNotTake) {
  auto contextOwner = ::microscale::testing::makeJitContext();
  MLIRContext &context = *contextOwner;
  for (const char *types :
       {"!microscale.qtensor<4x64, mxfp4, axis = 1>, "
        "!microscale.qtensor<64x8, mxfp4, axis = 0>",
        "!microscale.qtensor<4x128, mxfp4, axis = 1>, "
        "!microscale.qtensor<128x256, mxfp4, axis = 0, values = "
        "#microscale.blackwell_shuffled_value<block_k = 12, block_n = "
        "256>>",
        "!microscale.qtensor<4x64, mxfp8_e4m3, axis = 1>, "
        "!microscale.qtensor<64x8, mxfp8_e4m3, axis = 0, values = "
        "#microscale.strided<major_dim = 0>>",
        "!microscale.qtensor<4x64, mxfp4, axis = 1>, "
        "!microscale.qtensor<64x8, mxfp8_e5m2, axis = 0, values = "
        "#microscale.strided<major_dim = 0>>"}) {
    std::string text =
        std::string("func.func @f(%av: memref<?xi8>, %as: memref<?xi8>, %g: "
                    "f32, %wv: memref<?xi8>, %ws: memref<?xi8>, %o: "
                    "memref<?xf32>) {\n  microscale.scaled_matmul_storage(%av, "
                    "%as, %g) times (%wv, %ws, %g) into %o : ") +
        types +
        ", memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xi8>, "
        "memref<?xf32>\n  return\n}\n";
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << types;
    bool emulated = true;
    module->walk([&](ScaledMatmulStorageOp op) {
      emulated = emulateTCGen05ScaledMatmulOnHost(op);
    });
    EXPECT_FALSE(emulated) << types;
    int count = 0;
    module->walk([&](ScaledMatmulStorageOp) { ++count; });
    EXPECT_EQ(count, 1) << types;
  }
}

} // namespace
