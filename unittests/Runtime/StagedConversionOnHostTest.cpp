//===- StagedConversionOnHostTest.cpp - The GPU staged kernel, on the host ===//
//
// The staged GPU conversion kernel (TiledConversionToGPU.cpp) is checked
// byte for byte on the H200 (bench/gpu); here, without a GPU, the same
// planner and emitter run on the host (emulateTiledConversionOnHost: each
// phase a loop over the block's threads, shared memory as stack buffers,
// prmt as integer operations), JIT-compiled and compared with the C++
// reference on random codes, for every pair of layouts the kernel takes.
// What this cannot catch: PTX-specific code (the prmt inline assembly
// itself) and real concurrency; the H200 runs cover those.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/GPU/Passes.h"
#include "microscale/Reference/Layout.h"
#include "microscale/Runtime/CPU/CompiledConversion.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::microscale;

namespace {

std::string debugString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

struct StagedOnHost : public ::testing::Test {
  MLIRContext context;
  StagedOnHost() { context.loadDialect<MicroscaleDialect>(); }

  QTensorType type(const std::string &shape, int64_t axis,
                   const std::string &values, const std::string &scales) {
    std::string text = "!microscale.qtensor<" + shape +
                       ", f4E2M1FN, f8E8M0FNU, block = 2, axis = " +
                       std::to_string(axis) + ", values = " + values +
                       ", scales = " + scales + ">";
    return cast<QTensorType>(parseType(text, &context));
  }

  /// Converts random codes from `from` to `to` with the emulated staged
  /// kernel; false when the kernel does not take the pair.
  bool check(QTensorType from, QTensorType to, StoragePart part,
             unsigned seed, int64_t tilesInSequence = 1) {
    bool staged = false;
    std::string error;
    auto conversion = CompiledConversion::compile(
        from, to, part, error, [&](ModuleOp module) {
          ConvertStorageOp op;
          module.walk([&](ConvertStorageOp c) { op = c; });
          // The whole conversion, without the unit range.
          OpBuilder builder(op);
          auto whole = ConvertStorageOp::create(
              builder, op.getLoc(), op.getPartAttr(), op.getSource(),
              op.getDest(), ValueRange{}, op.getFromAttr(),
              op.getToAttr());
          op.erase();
          staged = emulateTiledConversionOnHost(whole, tilesInSequence);
          return success();
        });
    EXPECT_TRUE(conversion) << error;
    if (!conversion || !staged)
      return false;
    bool values = part == StoragePart::values;
    auto refFrom = values ? from.buildValueReference() : from.buildScaleReference();
    auto refTo = values ? to.buildValueReference() : to.buildScaleReference();
    std::mt19937 rng(seed);
    const unsigned bits = refFrom->getElementBits();
    std::vector<uint8_t> codes(refFrom->getNumElements());
    for (uint8_t &c : codes)
      c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
    std::vector<uint8_t> source(refFrom->getStorageBytes());
    refFrom->store(codes.data(), source.data());
    std::vector<uint8_t> expected(refTo->getStorageBytes());
    refTo->store(codes.data(), expected.data());
    std::vector<uint8_t> actual(expected.size(), 0xA5);
    conversion->run(source.data(), actual.data(), /*threads=*/1);
    size_t mismatches = 0;
    for (size_t i = 0; i < actual.size(); ++i)
      mismatches += actual[i] != expected[i];
    EXPECT_EQ(mismatches, 0u)
        << (values ? "values " : "scales ") << debugString(from) << " -> "
        << debugString(to) << " (" << tilesInSequence << " tiles per block)";
    return true;
  }
};

const char *kValueLayouts[] = {
    "#microscale.strided",
    "#microscale.strided<major_dim = -2>",
    "#microscale.hopper_value<mx_axis = -2, mma_version = 3>",
    "#microscale.hopper_value<mx_axis = -2, mma_version = 2>",
    "#microscale.blackwell_value",
    "#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>",
    "#microscale.blackwell_shuffled_value<block_k = 256, block_n = 128>",
};
const char *kScaleLayouts[] = {
    "#microscale.strided",
    "#microscale.strided<major_dim = -2>",
    "#microscale.hopper_scale<mx_axis = -2, num_warps = 8>",
    "#microscale.hopper_scale<mx_axis = -2, num_warps = 4>",
    "#microscale.blackwell_scale",
    "#microscale.cdna4_scale",
};
const char *kCanonical = "#microscale.strided";

TEST_F(StagedOnHost, EveryPairOfValueLayouts) {
  unsigned seed = 1, staged = 0, total = 0;
  for (const char *a : kValueLayouts)
    for (const char *b : kValueLayouts) {
      staged += check(type("2x256x512", 1, a, kCanonical),
                      type("2x256x512", 1, b, kCanonical),
                      StoragePart::values, seed++);
      ++total;
    }
  const char *last[] = {
      kCanonical, "#microscale.hopper_value<mx_axis = -1, mma_version = 3>",
      "#microscale.hopper_value<mx_axis = -1, mma_version = 2>"};
  for (const char *a : last)
    for (const char *b : last) {
      staged += check(type("2x256x512", 2, a, kCanonical),
                      type("2x256x512", 2, b, kCanonical),
                      StoragePart::values, seed++);
      ++total;
    }
  // 44 of 58 on 2026-11-30. Not staged: the canonical form to itself,
  // and pairs among the K-packed layouts (strided<major_dim = -2>,
  // blackwell_value, blackwell_shuffled_value), for which the block
  // planner finds no block (they take the per-unit kernel).
  EXPECT_GE(staged, 44u) << "of " << total;
  llvm::outs() << "staged kernel emulated on " << staged << " of " << total
               << " value conversions\n";
}

TEST_F(StagedOnHost, EveryPairOfScaleLayouts) {
  unsigned seed = 100, staged = 0;
  for (const char *a : kScaleLayouts)
    for (const char *b : kScaleLayouts)
      staged += check(type("2x8192x512", 1, kCanonical, a),
                      type("2x8192x512", 1, kCanonical, b),
                      StoragePart::scales, seed++);
  // All but the canonical form to itself.
  EXPECT_GE(staged, 35u);
}

TEST_F(StagedOnHost, SeveralTilesPerBlock) {
  const char *hopper = "#microscale.hopper_value<mx_axis = -2, mma_version = 3>";
  const char *shuffled =
      "#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>";
  for (int64_t tiles : {2, 4})
    for (auto [a, b] : {std::pair(kCanonical, hopper), std::pair(hopper, kCanonical),
                        std::pair(shuffled, hopper)})
      EXPECT_TRUE(check(type("2x256x512", 1, a, kCanonical),
                        type("2x256x512", 1, b, kCanonical),
                        StoragePart::values, 7, tiles));
}

TEST_F(StagedOnHost, PaddedShapesAreNotStaged) {
  EXPECT_FALSE(check(
      type("130x66", 0, kCanonical, kCanonical),
      type("130x66", 0, "#microscale.hopper_value<mx_axis = -2, mma_version = 3>",
           kCanonical),
      StoragePart::values, 3));
}

} // namespace
