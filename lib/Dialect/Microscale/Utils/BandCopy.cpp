//===- BandCopy.cpp - Bands of the block route written as range copies ----===//
//
// See BandCopy.h.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/Utils/BandCopy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::microscale;

namespace {
/// Line and span limits: the destination is written in whole lines, and a
/// span is mapped byte by byte at compile time.
constexpr int64_t kLineBytes = 64;
constexpr int64_t kMaxSpanBytes = int64_t(256) << 10;

/// Byte (block-relative) of lane `lane` of `access`.
int64_t laneOffset(const BlockConversionPlan::Access &access, int64_t lane) {
  return access.offsets[lane / access.runBytes] + lane % access.runBytes;
}

/// A destination line's share of one piece: line bytes [begin, end) from
/// the band's source at `source`.
struct LinePart {
  int64_t begin, end, source;
};
} // namespace

SmallVector<BandCopyPiece>
mlir::microscale::planBandCopy(const BlockConversionPlan &plan) {
  if (!plan.steps.empty() || plan.sourceWordMap || plan.destWordMap ||
      !plan.coversDestination() || plan.streamingAlignment == kLineBytes ||
      plan.spanBytes <= 0 || plan.spanBytes > kMaxSpanBytes ||
      plan.spanBytes % kLineBytes || plan.destBandStride % kLineBytes ||
      plan.destBatchStride % kLineBytes || plan.loads.empty())
    return {};
  // Each destination byte of the span, and the source byte it takes.
  std::vector<int64_t> from(plan.spanBytes, -1);
  for (const auto &store : plan.stores) {
    const auto *load = llvm::find_if(plan.loads, [&](const auto &l) {
      return l.value == store.value;
    });
    if (load == plan.loads.end())
      return {};
    const int64_t lanes =
        static_cast<int64_t>(store.offsets.size()) * store.runBytes;
    if (lanes !=
        static_cast<int64_t>(load->offsets.size()) * load->runBytes)
      return {};
    for (int64_t block = 0; block < plan.blocksPerBand; ++block)
      for (int64_t lane = 0; lane < lanes; ++lane) {
        const int64_t d =
            block * plan.destInnerStride + laneOffset(store, lane);
        if (d >= plan.spanBytes || from[d] >= 0)
          return {};
        from[d] = block * plan.sourceInnerStride + laneOffset(*load, lane);
      }
  }
  SmallVector<BandCopyPiece> pieces;
  for (int64_t d = 0; d < plan.spanBytes; ++d) {
    if (from[d] < 0)
      return {};
    if (!pieces.empty() && from[d] == from[d - 1] + 1) {
      ++pieces.back().bytes;
      continue;
    }
    if (static_cast<int64_t>(pieces.size()) == kMaxBandCopyPieces)
      return {};
    pieces.push_back({d, from[d], 1});
  }
  return pieces;
}

void mlir::microscale::emitBandCopy(OpBuilder &builder, Location loc,
                                    ArrayRef<BandCopyPiece> pieces,
                                    int64_t spanBytes, Value source,
                                    Value dest, Value sourceBand,
                                    Value destBand, bool nontemporal) {
  auto constant = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](OpBuilder &b, Value x, int64_t y) -> Value {
    return y ? arith::AddIOp::create(b, loc, x, constant(b, y)).getResult()
             : x;
  };
  // The span's lines in order: runs of lines inside one piece (one load
  // each, from the piece's source at `shift` past the line's offset), and
  // lines shared by pieces (their parts, one by one).
  struct Lines {
    int64_t first, count, shift;
    SmallVector<LinePart, 2> parts; // a shared line's; empty otherwise
  };
  SmallVector<Lines> lines;
  size_t piece = 0;
  for (int64_t line = 0; line < spanBytes / kLineBytes; ++line) {
    const int64_t begin = line * kLineBytes, end = begin + kLineBytes;
    while (pieces[piece].destOffset + pieces[piece].bytes <= begin)
      ++piece;
    const BandCopyPiece &p = pieces[piece];
    if (p.destOffset <= begin && p.destOffset + p.bytes >= end) {
      const int64_t shift = p.sourceOffset - p.destOffset;
      if (!lines.empty() && lines.back().parts.empty() &&
          lines.back().shift == shift) {
        ++lines.back().count;
        continue;
      }
      lines.push_back({line, 1, shift, {}});
      continue;
    }
    Lines shared{line, 1, 0, {}};
    for (size_t q = piece; q < pieces.size() && pieces[q].destOffset < end;
         ++q) {
      const int64_t from = std::max(begin, pieces[q].destOffset);
      const int64_t to =
          std::min(end, pieces[q].destOffset + pieces[q].bytes);
      shared.parts.push_back(
          {from - begin, to - begin,
           pieces[q].sourceOffset + (from - pieces[q].destOffset)});
    }
    lines.push_back(std::move(shared));
  }

  auto lineType = VectorType::get({kLineBytes}, builder.getI8Type());
  auto store = [&](OpBuilder &b, Value bytes, Value at) {
    vector::StoreOp::create(b, loc, bytes, dest, ValueRange{at}, nontemporal,
                            nontemporal ? llvm::MaybeAlign(kLineBytes)
                                        : llvm::MaybeAlign());
  };
  for (const Lines &run : lines) {
    if (run.parts.empty()) {
      scf::ForOp::create(
          builder, loc, constant(builder, run.first * kLineBytes),
          constant(builder, (run.first + run.count) * kLineBytes),
          constant(builder, kLineBytes), ValueRange{},
          [&](OpBuilder &lb, Location, Value at, ValueRange) {
            Value bytes = vector::LoadOp::create(
                lb, loc, lineType, source,
                ValueRange{add(
                    lb, arith::AddIOp::create(lb, loc, sourceBand, at),
                    run.shift)});
            store(lb, bytes, arith::AddIOp::create(lb, loc, destBand, at));
            scf::YieldOp::create(lb, loc);
          });
      continue;
    }
    Value bytes = arith::ConstantOp::create(
        builder, loc, lineType,
        DenseElementsAttr::get(lineType, builder.getI8IntegerAttr(0)));
    for (const LinePart &part : run.parts) {
      auto partType =
          VectorType::get({part.end - part.begin}, builder.getI8Type());
      Value loaded = vector::LoadOp::create(
          builder, loc, partType, source,
          ValueRange{add(builder, sourceBand, part.source)});
      bytes = vector::InsertStridedSliceOp::create(
          builder, loc, loaded, bytes, ArrayRef<int64_t>{part.begin},
          ArrayRef<int64_t>{1});
    }
    store(builder, bytes, add(builder, destBand, run.first * kLineBytes));
  }
}
