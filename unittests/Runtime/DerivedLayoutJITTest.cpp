//===- DerivedLayoutJITTest.cpp - Layouts whose emitters are derived ------===//
//
// Layout emitters derived from the reference map (DerivedLayoutCodegen.h),
// compiled by our passes for the host and run on random non-zero codes;
// the output must equal the reference byte for byte, padding included.
//
//  * #microscale_test.tile_transposed (test/lib/Dialect/Test): a layout
//    added with one attribute and one reference map, converted to and from
//    the canonical form and the Triton layouts, padded and unpadded, FP4,
//    FP6 and FP8;
//  * the automatic fallback to hand-written emitters where the map is not a
//    move of index bits (a Blackwell shuffled box of 3 bytes), next to the
//    derived path of the same attribute.
//
//===----------------------------------------------------------------------===//
#include "microscale/Runtime/CPU/CompiledConversion.h"

#include "microscale/Dialect/Microscale/IR/DerivedLayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Reference/Layout.h"

#include "TestLayouts.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::microscale;

namespace {

struct DerivedLayouts : public ::testing::Test {
  MLIRContext context;
  DerivedLayouts() {
    context.loadDialect<MicroscaleDialect, test::MicroscaleTestDialect>();
  }

  LayoutAttrInterface layout(StringRef text) {
    auto attr = dyn_cast_or_null<LayoutAttrInterface>(
        parseAttribute(text, &context));
    EXPECT_TRUE(attr) << text.str();
    return attr;
  }

  QTensorType type(ArrayRef<int64_t> shape, StringRef format, int64_t axis,
                   StringRef values, StringRef scales) {
    return QTensorType::getChecked(
        [&] { return emitError(UnknownLoc::get(&context)); }, &context, shape,
        FormatAttr::getNamed(&context, format), axis, layout(values),
        layout(scales));
  }

  /// Converts random non-zero codes from `from` to `to` with generated code
  /// and with the reference; compares every destination byte.
  void check(QTensorType from, QTensorType to, StoragePart part,
             unsigned seed) {
    ASSERT_TRUE(from && to);
    const bool values = part == StoragePart::values;
    auto refFrom =
        values ? from.buildValueReference() : from.buildScaleReference();
    auto refTo = values ? to.buildValueReference() : to.buildScaleReference();
    std::mt19937 rng(seed);
    const unsigned bits = refFrom->getElementBits();
    std::vector<uint8_t> codes(refFrom->getNumElements());
    for (uint8_t &c : codes)
      c = static_cast<uint8_t>(1 + rng() % ((1u << bits) - 1));
    std::vector<uint8_t> source(refFrom->getStorageBytes());
    refFrom->store(codes.data(), source.data());
    std::vector<uint8_t> expected(refTo->getStorageBytes() + 1, 0);
    refTo->store(codes.data(), expected.data());

    std::string error;
    auto conversion = CompiledConversion::compile(from, to, part, error);
    ASSERT_TRUE(conversion) << error;
    std::vector<uint8_t> actual(expected.size(), 0xA5);
    actual.back() = 0;
    conversion->run(source.data(), actual.data(), /*threads=*/2);
    size_t mismatches = 0, first = actual.size();
    for (size_t i = 0; i < actual.size(); ++i)
      if (actual[i] != expected[i] && mismatches++ == 0)
        first = i;
    std::string fromText, toText;
    llvm::raw_string_ostream(fromText) << from;
    llvm::raw_string_ostream(toText) << to;
    EXPECT_EQ(mismatches, 0u) << fromText << " -> " << toText
                              << ": first mismatch at byte " << first;
  }
};

const char *kTestLayout = "#microscale_test.tile_transposed<tile = 16>";

TEST_F(DerivedLayouts, TestLayoutIsDerived) {
  EXPECT_TRUE(codegen::deriveBlockBits(layout(kTestLayout), {2, 40, 50}, 4, 1));
  EXPECT_TRUE(codegen::deriveBlockBits(layout(kTestLayout), {3, 32, 8}, 6, 3));
}

TEST_F(DerivedLayouts, TestLayoutValuesConvertByteExactly) {
  const char *others[] = {
      "#microscale.strided",
      "#microscale.strided<major_dim = -2>",
      "#microscale.hopper_value<mx_axis = -2, mma_version = 3>",
      "#microscale.blackwell_value",
      "#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>",
      "#microscale_test.tile_transposed<tile = 4>",
  };
  unsigned seed = 1;
  // Unpadded (multiples of the tile), then padded.
  for (auto shape : std::vector<std::vector<int64_t>>{
           {2, 256, 512}, {2, 64, 258}, {3, 2, 32, 18}})
    for (const char *other : others) {
      const int64_t axis = shape.size() - 2;
      check(type(shape, "mxfp4", axis, other, "#microscale.strided"),
            type(shape, "mxfp4", axis, kTestLayout, "#microscale.strided"),
            StoragePart::values, seed++);
      check(type(shape, "mxfp4", axis, kTestLayout, "#microscale.strided"),
            type(shape, "mxfp4", axis, other, "#microscale.strided"),
            StoragePart::values, seed++);
    }
}

TEST_F(DerivedLayouts, TestLayoutScalesConvertByteExactly) {
  const char *others[] = {"#microscale.strided",
                          "#microscale.hopper_scale<mx_axis = -2, num_warps = 8>",
                          "#microscale.blackwell_scale",
                          "#microscale.cdna4_scale"};
  unsigned seed = 100;
  for (auto shape : std::vector<std::vector<int64_t>>{{2, 512, 64},
                                                       {2, 224, 200}})
    for (const char *other : others) {
      check(type(shape, "mxfp4", 1, "#microscale.strided", other),
            type(shape, "mxfp4", 1, "#microscale.strided", kTestLayout),
            StoragePart::scales, seed++);
      check(type(shape, "mxfp4", 1, "#microscale.strided", kTestLayout),
            type(shape, "mxfp4", 1, "#microscale.strided", other),
            StoragePart::scales, seed++);
    }
}

TEST_F(DerivedLayouts, TestLayoutSixAndEightBit) {
  unsigned seed = 200;
  for (StringRef format : {"mxfp6_e2m3", "mxfp8_e4m3"})
    for (auto shape :
         std::vector<std::vector<int64_t>>{{4, 64, 32}, {3, 64, 20}})
      for (const char *other :
           {"#microscale.strided", "#microscale.strided<major_dim = -2>"}) {
        check(type(shape, format, 1, other, "#microscale.strided"),
              type(shape, format, 1, kTestLayout, "#microscale.strided"),
              StoragePart::values, seed++);
        check(type(shape, format, 1, kTestLayout, "#microscale.strided"),
              type(shape, format, 1, other, "#microscale.strided"),
              StoragePart::values, seed++);
      }
}

// blackwell_shuffled_value derives its emitters for power-of-two boxes and
// falls back to the hand-written ones otherwise; both convert exactly.
TEST_F(DerivedLayouts, BlackwellShuffledFallsBackWhereTheMapNeedsIt) {
  const char *derived =
      "#microscale.blackwell_shuffled_value<block_k = 64, block_n = 24>";
  const char *handWritten =
      "#microscale.blackwell_shuffled_value<block_k = 6, block_n = 8>";
  const std::vector<int64_t> shape = {2, 96, 30};
  EXPECT_TRUE(codegen::deriveBlockBits(layout(derived), shape, 4, 1));
  EXPECT_FALSE(codegen::deriveBlockBits(layout(handWritten), shape, 4, 1));
  unsigned seed = 300;
  for (const char *shuffled : {derived, handWritten})
    for (const char *other : {"#microscale.strided", kTestLayout}) {
      check(type(shape, "mxfp4", 1, other, "#microscale.strided"),
            type(shape, "mxfp4", 1, shuffled, "#microscale.strided"),
            StoragePart::values, seed++);
      check(type(shape, "mxfp4", 1, shuffled, "#microscale.strided"),
            type(shape, "mxfp4", 1, other, "#microscale.strided"),
            StoragePart::values, seed++);
    }
}

// Every layout that now takes the derived emitters, on random non-zero
// codes (the existing pair tests draw zeros too), padded and unpadded.
TEST_F(DerivedLayouts, EveryDerivedLayoutOnNonZeroCodes) {
  const char *valueLayouts[] = {
      "#microscale.strided<major_dim = -2>",
      "#microscale.hopper_value<mx_axis = -2, mma_version = 3>",
      "#microscale.hopper_value<mx_axis = -2, mma_version = 2>",
      "#microscale.blackwell_value",
      "#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>",
  };
  const char *scaleLayouts[] = {
      "#microscale.strided<major_dim = -2>",
      "#microscale.hopper_scale<mx_axis = -2, num_warps = 8>",
      "#microscale.hopper_scale<mx_axis = -2, num_warps = 4>",
      "#microscale.blackwell_scale", "#microscale.cdna4_scale"};
  unsigned seed = 400;
  for (auto shape : std::vector<std::vector<int64_t>>{
           {2, 64, 258}, {2, 256, 512}, {320, 330}}) {
    const int64_t axis = shape.size() - 2;
    for (const char *l : valueLayouts) {
      check(type(shape, "mxfp4", axis, "#microscale.strided", "#microscale.strided"),
            type(shape, "mxfp4", axis, l, "#microscale.strided"),
            StoragePart::values, seed++);
      check(type(shape, "mxfp4", axis, l, "#microscale.strided"),
            type(shape, "mxfp4", axis, "#microscale.strided", "#microscale.strided"),
            StoragePart::values, seed++);
    }
    for (const char *l : scaleLayouts) {
      check(type(shape, "mxfp4", axis, "#microscale.strided", "#microscale.strided"),
            type(shape, "mxfp4", axis, "#microscale.strided", l),
            StoragePart::scales, seed++);
      check(type(shape, "mxfp4", axis, "#microscale.strided", l),
            type(shape, "mxfp4", axis, "#microscale.strided", "#microscale.strided"),
            StoragePart::scales, seed++);
    }
  }
  for (const char *l : {"#microscale.hopper_value<mx_axis = -1, mma_version = 3>",
                        "#microscale.hopper_value<mx_axis = -1, mma_version = 2>"})
    for (auto shape : std::vector<std::vector<int64_t>>{{2, 34, 96}, {300, 320}}) {
      check(type(shape, "mxfp4", shape.size() - 1, "#microscale.strided", "#microscale.strided"),
            type(shape, "mxfp4", shape.size() - 1, l, "#microscale.strided"),
            StoragePart::values, seed++);
      check(type(shape, "mxfp4", shape.size() - 1, l, "#microscale.strided"),
            type(shape, "mxfp4", shape.size() - 1, "#microscale.strided", "#microscale.strided"),
            StoragePart::values, seed++);
    }
}

} // namespace
