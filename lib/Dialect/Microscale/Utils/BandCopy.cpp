//===- BandCopy.cpp - Bands of the block route written as range copies ----===//
//
// See BandCopy.h.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/Utils/BandCopy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::microscale;

namespace {
/// Line and span limits: the destination is written in whole lines, and a
/// span is mapped byte by byte at compile time.
constexpr int64_t kLineBytes = 64;
constexpr int64_t kMaxSpanBytes = int64_t(256) << 10;

/// Source byte (band-relative) of lane `lane` of `access`, or -1 past its
/// runs.
int64_t laneOffset(const BlockConversionPlan::Access &access, int64_t lane) {
  const int64_t run = lane / access.runBytes;
  if (run >= static_cast<int64_t>(access.offsets.size()))
    return -1;
  return access.offsets[run] + lane % access.runBytes;
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
        if (d < 0 || d >= plan.spanBytes || from[d] >= 0)
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

void mlir::microscale::emitBandCopies(OpBuilder &builder, Location loc,
                                      const BlockConversionPlan &plan,
                                      ArrayRef<BandCopyPiece> pieces,
                                      Value source, Value dest,
                                      Value bandBegin, Value bandEnd,
                                      const BlockConversionTarget *target) {
  auto constant = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](OpBuilder &b, Value x, int64_t y) -> Value {
    return y ? arith::AddIOp::create(b, loc, x, constant(b, y)).getResult()
             : x;
  };
  auto mul = [&](OpBuilder &b, Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, loc, x, constant(b, y));
  };
  // The span's lines in order: runs of lines inside one piece (a loop of
  // single loads), and lines shared by pieces (their parts, one by one).
  struct Lines {
    int64_t first, count;
    SmallVector<LinePart, 2> parts; // per line of a shared line; else the
                                    // piece's source at line `first`
  };
  SmallVector<Lines> lines;
  const int64_t numLines = plan.spanBytes / kLineBytes;
  size_t piece = 0;
  for (int64_t line = 0; line < numLines; ++line) {
    const int64_t begin = line * kLineBytes, end = begin + kLineBytes;
    while (pieces[piece].destOffset + pieces[piece].bytes <= begin)
      ++piece;
    const BandCopyPiece &p = pieces[piece];
    const int64_t shift = p.sourceOffset - p.destOffset;
    if (p.destOffset <= begin && p.destOffset + p.bytes >= end) {
      if (!lines.empty() && lines.back().parts.size() == 1 &&
          lines.back().first + lines.back().count == line &&
          lines.back().parts[0].source - lines.back().first * kLineBytes ==
              shift) {
        ++lines.back().count;
        continue;
      }
      lines.push_back({line, 1, {{0, kLineBytes, begin + shift}}});
      continue;
    }
    Lines shared{line, 1, {}};
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
  Value aligned;
  if (target && target->hasStreamingStores()) {
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, dest);
    aligned = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(builder, loc, pointer,
                               constant(builder, kLineBytes)),
        constant(builder, 0));
  }
  // One band's span from `sourceBand` to `destBand`.
  auto copyBand = [&](OpBuilder &b, Value sourceBand, Value destBand,
                      bool nontemporal) {
    auto store = [&](OpBuilder &sb, Value bytes, Value at) {
      vector::StoreOp::create(sb, loc, bytes, dest, ValueRange{at},
                              nontemporal,
                              nontemporal ? llvm::MaybeAlign(kLineBytes)
                                          : llvm::MaybeAlign());
    };
    for (const Lines &run : lines) {
      if (run.parts.size() == 1 && run.parts[0].end - run.parts[0].begin ==
                                       kLineBytes &&
          run.count > 1) {
        const int64_t shift = run.parts[0].source - run.first * kLineBytes;
        scf::ForOp::create(
            b, loc, constant(b, run.first * kLineBytes),
            constant(b, (run.first + run.count) * kLineBytes),
            constant(b, kLineBytes), ValueRange{},
            [&](OpBuilder &lb, Location, Value at, ValueRange) {
              Value bytes = vector::LoadOp::create(
                  lb, loc, lineType, source,
                  ValueRange{add(lb, arith::AddIOp::create(lb, loc,
                                                           sourceBand, at),
                                 shift)});
              store(lb, bytes, arith::AddIOp::create(lb, loc, destBand, at));
              scf::YieldOp::create(lb, loc);
            });
        continue;
      }
      Value bytes;
      if (run.parts.size() == 1 &&
          run.parts[0].end - run.parts[0].begin == kLineBytes) {
        bytes = vector::LoadOp::create(
            b, loc, lineType, source,
            ValueRange{add(b, sourceBand, run.parts[0].source)});
      } else {
        bytes = arith::ConstantOp::create(
            b, loc, lineType,
            DenseElementsAttr::get(lineType, b.getI8IntegerAttr(0)));
        for (const LinePart &part : run.parts) {
          auto partType =
              VectorType::get({part.end - part.begin}, b.getI8Type());
          Value piece = vector::LoadOp::create(
              b, loc, partType, source,
              ValueRange{add(b, sourceBand, part.source)});
          bytes = vector::InsertStridedSliceOp::create(
              b, loc, piece, bytes, ArrayRef<int64_t>{part.begin},
              ArrayRef<int64_t>{1});
        }
      }
      store(b, bytes, add(b, destBand, run.first * kLineBytes));
    }
  };
  scf::ForOp::create(
      builder, loc, bandBegin, bandEnd, constant(builder, 1), ValueRange{},
      [&](OpBuilder &b, Location, Value band, ValueRange) {
        Value perBatch = constant(b, plan.bandsPerBatch);
        Value batch = arith::DivUIOp::create(b, loc, band, perBatch);
        Value outer = arith::RemUIOp::create(b, loc, band, perBatch);
        Value sourceBand = arith::AddIOp::create(
            b, loc, mul(b, batch, plan.sourceBatchStride),
            mul(b, outer, plan.sourceBandStride));
        Value destBand = arith::AddIOp::create(
            b, loc, mul(b, batch, plan.destBatchStride),
            mul(b, outer, plan.destBandStride));
        if (!aligned) {
          copyBand(b, sourceBand, destBand, false);
        } else {
          scf::IfOp::create(
              b, loc, aligned,
              [&](OpBuilder &tb, Location) {
                copyBand(tb, sourceBand, destBand, true);
                scf::YieldOp::create(tb, loc);
              },
              [&](OpBuilder &eb, Location) {
                copyBand(eb, sourceBand, destBand, false);
                scf::YieldOp::create(eb, loc);
              });
        }
        scf::YieldOp::create(b, loc);
      });
  if (aligned)
    target->emitStreamingFence(builder, loc);
}
