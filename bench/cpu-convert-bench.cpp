//===- cpu-convert-bench.cpp - CPU layout conversions vs memcpy -----------===//
//
// Times each generated CPU conversion of a [16, 4096, 4096] FP4 weight
// (128 MiB canonical) against a plain memcpy of the same bytes in the same
// process (the whole canonical tensor once at the start, and a copy of each
// conversion's own bytes alternated with it, the ratio to trust on a host
// whose speed drifts), and reports the compile time. Not a test: run it by hand,
//   build/bin/cpu-convert-bench [--shape 16,4096,4096] [--reps 3]
// (--plan prints each conversion's block-route plan instead: block shape,
// runs, gaps, edge blocks.)
//
//===----------------------------------------------------------------------===//
#include "microscale/Runtime/CPU/CompiledConversion.h"
#include "microscale/Conversion/CPU/HostBlockConversion.h"
#include "microscale/Conversion/CPU/Pipeline.h"
#include "microscale/Dialect/Microscale/Utils/BandCopy.h"
#include "microscale/Dialect/Microscale/Utils/BlockConversion.h"
#include "microscale/Reference/Layout.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sys/mman.h>
#include <thread>

using namespace mlir;
using namespace mlir::microscale;
namespace cl = llvm::cl;

static cl::list<int64_t> shapeOption("shape", cl::CommaSeparated,
                                     cl::desc("Logical FP4 shape (E,K,N)"));
static cl::opt<int> repsOption("reps", cl::init(3),
                               cl::desc("Timed repetitions (best is kept)"));
static cl::opt<unsigned> threadsOption(
    "conversion-threads", cl::init(0),
    cl::desc("Threads for the conversions (0: one per hardware thread)"));
static cl::list<std::string> onlyOption(
    "only",
    cl::desc("Run only the conversions whose name contains one of these "
             "strings (repeat the option, or separate them with commas not "
             "followed by a space: names such as 'hopper_value(mx=-2, mma3)' "
             "keep theirs)"));

/// The --only strings: each option value split at the commas that are not
/// followed by a space.
static std::vector<std::string> onlyStrings() {
  std::vector<std::string> strings;
  for (const std::string &value : onlyOption) {
    size_t begin = 0;
    for (size_t i = 0; i <= value.size(); ++i)
      if (i == value.size() ||
          (value[i] == ',' && (i + 1 == value.size() || value[i + 1] != ' '))) {
        if (i > begin)
          strings.push_back(value.substr(begin, i - begin));
        begin = i + 1;
      }
  }
  return strings;
}

static cl::opt<bool> hugePagesOption(
    "huge-pages", cl::init(false),
    cl::desc("Back the buffers with transparent huge pages (madvise), to "
             "see what the TLB costs"));
static cl::opt<bool> planOption(
    "plan", cl::init(false),
    cl::desc("Print each conversion's block-route plan (no timing)"));

/// One line per plan property, for finding what limits a conversion.
static void printPlan(const BlockConversionPlan &p) {
  // The host's target: whether bands go through buffers depends on it.
  const HostBlockConversionTarget host(/*gfni=*/false);
  llvm::outs() << "  block " << p.blockRows << "x" << p.blockCols << " ("
               << p.getBlockBytes() << " B), bands " << p.numBands << " ("
               << p.bandsPerBatch << "/batch) x " << p.blocksPerBand
               << " blocks, innerAlongCols " << p.innerAlongCols
               << ", loads " << p.loads.size() << " x "
               << p.loads[0].offsets.size() << " runs of "
               << p.loads[0].runBytes << " B, stores " << p.stores.size()
               << " x " << p.stores[0].offsets.size() << " runs of "
               << p.stores[0].runBytes << " B, steps " << p.steps.size()
               << " (nibble swaps "
               << llvm::count_if(p.steps,
                                 [](const BlockConversionPlan::Step &s) {
                                   return s.kind == BlockConversionPlan::Step::
                                                        Kind::NibbleSwap;
                                 })
               << ", stages "
               << (p.steps.empty() ? 0 : p.steps.back().stage + 1) << ")"
               << ", streaming " << p.streamingAlignment
               << ", band buffer " << writesBandsThroughBuffer(p)
               << ", bands together " << bandsWalkedTogether(p, &host)
               << ", band copy pieces " << planBandCopy(p).size() << "\n";
  // The first access's run offsets on each side (where a block's bytes
  // lie: rows of the storage, or one range).
  for (auto *list : {&p.loads, &p.stores}) {
    llvm::outs() << (list == &p.loads ? "  first load's runs at"
                                      : "  first store's runs at");
    for (int64_t o : llvm::ArrayRef(list->front().offsets).take_front(8))
      llvm::outs() << " " << o;
    if (list->front().offsets.size() > 8)
      llvm::outs() << " ...";
    llvm::outs() << "\n";
  }
  llvm::outs() << "  strides src " << p.sourceBatchStride << "/"
               << p.sourceBandStride << "/" << p.sourceInnerStride << " dst "
               << p.destBatchStride << "/" << p.destBandStride << "/"
               << p.destInnerStride << "; span " << p.spanBytes << " band "
               << p.bandBytes << " tail " << p.batchTailBytes << "\n";
  int64_t elementGap = 0, padGap = 0, elementTail = 0, padTail = 0;
  for (auto [gap, el] : llvm::zip(p.spanGaps, p.spanGapHoldsElements))
    (el ? elementGap : padGap) += gap.second;
  for (auto [run, el] : llvm::zip(p.batchTailRuns, p.batchTailRunHoldsElements))
    (el ? elementTail : padTail) += run.second;
  llvm::outs() << "  gaps " << p.spanGaps.size() << " per span: elements "
               << elementGap << " B, padding " << padGap
               << " B; tail runs " << p.batchTailRuns.size() << ": elements "
               << elementTail << " B, padding " << padTail << " B; edge blocks:"
               << (p.innerEdge ? " inner" : "") << (p.bandEdge ? " band" : "")
               << (p.cornerEdge ? " corner" : "")
               << (p.hasEdgeBlocks() ? "" : " none") << "\n";
}

template <typename Fn> static double bestSeconds(int reps, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

/// The best time of each of `first` and `second` over `reps` rounds, the
/// two alternated within each round: a machine whose speed drifts between
/// rounds (a shared host) moves both alike, so their ratio holds.
template <typename Fn, typename Gn>
static std::pair<double, double> bestAlternated(int reps, Fn first,
                                                Gn second) {
  double a = 1e30, b = 1e30;
  for (int i = 0; i < reps; ++i) {
    a = std::min(a, bestSeconds(1, first));
    b = std::min(b, bestSeconds(1, second));
  }
  return {a, b};
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "CPU layout-conversion benchmark\n");
  std::vector<int64_t> shape(shapeOption.begin(), shapeOption.end());
  if (shape.empty())
    shape = {16, 4096, 4096};
  MLIRContext context;
  context.loadDialect<MicroscaleDialect>();
  auto layout = [&](const char *text) {
    return cast<LayoutAttrInterface>(parseAttribute(text, &context));
  };
  auto format = FormatAttr::getNamed(&context, "mxfp4");
  auto strided = layout("#microscale.strided");
  const int64_t rank = shape.size();
  auto weight = [&](const char *values, int64_t axis) {
    return QTensorType::get(&context, shape, format, axis, layout(values),
                            strided);
  };
  auto weightScales = [&](const char *scales, int64_t axis) {
    return QTensorType::get(&context, shape, format, axis, strided,
                            layout(scales));
  };
  struct Case {
    std::string name;
    QTensorType from, to;
    StoragePart part = StoragePart::values;
  };
  const char *hopperK = "#microscale.hopper_value<mx_axis = -2, mma_version = 3>";
  const char *hopperLast = "#microscale.hopper_value<mx_axis = -1, mma_version = 3>";
  const char *shuffled =
      "#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>";
  const char *canonical = "#microscale.strided";
  const char *kMajor = "#microscale.strided<major_dim = -2>";
  const char *blackwellValue = "#microscale.blackwell_value";
  const char *hopperScale = "#microscale.hopper_scale<mx_axis = -2, num_warps = 8>";
  const char *blackwellScale = "#microscale.blackwell_scale";
  // The scales' conversion `from` -> `to` (values strided), named
  // "scales: " + `name`.
  auto scales = [&](const char *name, const char *from, const char *to) {
    return Case{std::string("scales: ") + name, weightScales(from, rank - 2),
                weightScales(to, rank - 2), StoragePart::scales};
  };
  std::vector<Case> cases = {
      {"strided -> hopper_value(mx=-2, mma3)", weight(canonical, rank - 2),
       weight(hopperK, rank - 2)},
      {"hopper_value(mx=-2, mma3) -> strided", weight(hopperK, rank - 2),
       weight(canonical, rank - 2)},
      {"strided -> hopper_value(mx=-1, mma3)", weight(canonical, rank - 1),
       weight(hopperLast, rank - 1)},
      {"hopper_value(mx=-1, mma3) -> strided", weight(hopperLast, rank - 1),
       weight(canonical, rank - 1)},
      {"strided -> blackwell_shuffled(128,256)", weight(canonical, rank - 2),
       weight(shuffled, rank - 2)},
      {"blackwell_shuffled(128,256) -> strided", weight(shuffled, rank - 2),
       weight(canonical, rank - 2)},
      // From the checkpoint's form (gpt-oss stores its weights K-major):
      // to each GPU's layout and back, and the transpose.
      {"strided(-2) -> hopper_value(mx=-2, mma3)", weight(kMajor, rank - 2),
       weight(hopperK, rank - 2)},
      {"hopper_value(mx=-2, mma3) -> strided(-2)", weight(hopperK, rank - 2),
       weight(kMajor, rank - 2)},
      {"strided(-2) -> blackwell_shuffled(128,256)", weight(kMajor, rank - 2),
       weight(shuffled, rank - 2)},
      {"blackwell_shuffled(128,256) -> strided(-2)", weight(shuffled, rank - 2),
       weight(kMajor, rank - 2)},
      {"strided(-2) -> blackwell_value", weight(kMajor, rank - 2),
       weight(blackwellValue, rank - 2)},
      {"blackwell_value -> strided(-2)", weight(blackwellValue, rank - 2),
       weight(kMajor, rank - 2)},
      {"strided(-2) -> strided (transpose)", weight(kMajor, rank - 2),
       weight(canonical, rank - 2)},
      {"strided -> strided(-2) (transpose)", weight(canonical, rank - 2),
       weight(kMajor, rank - 2)},
      // The weight's E8M0 scales ([16, 128, 4096]: 8 MiB).
      scales("strided -> hopper_scale(mx=-2, 8 warps)", canonical, hopperScale),
      scales("hopper_scale(mx=-2, 8 warps) -> strided", hopperScale, canonical),
      scales("strided -> blackwell_scale", canonical, blackwellScale),
      scales("blackwell_scale -> strided", blackwellScale, canonical),
      // The scales in the checkpoint's K-major form (gpt-oss: [E, 90, N]
      // with the 90 blocks contiguous): to each GPU's layout, back, and the
      // transposes.
      scales("strided(-2) -> hopper_scale(mx=-2, 8 warps)", kMajor,
             hopperScale),
      scales("hopper_scale(mx=-2, 8 warps) -> strided(-2)", hopperScale,
             kMajor),
      scales("strided(-2) -> blackwell_scale", kMajor, blackwellScale),
      scales("blackwell_scale -> strided(-2)", blackwellScale, kMajor),
      scales("strided(-2) -> strided (transpose)", kMajor, canonical),
      scales("strided -> strided(-2) (transpose)", canonical, kMajor),
  };

  int64_t canonicalBytes = 1;
  for (int64_t d : shape)
    canonicalBytes *= d;
  canonicalBytes /= 2;
  // Page-aligned buffers, as a framework's allocator gives them (the
  // streaming stores of the block route need aligned destinations).
  struct Buffer {
    explicit Buffer(size_t bytes) : bytes(bytes) {
      const size_t huge = size_t(2) << 20;
      if (!hugePagesOption) {
        storage = static_cast<uint8_t *>(std::aligned_alloc(4096, bytes));
        return;
      }
      storage = static_cast<uint8_t *>(
          std::aligned_alloc(huge, (bytes + huge - 1) / huge * huge));
      madvise(storage, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
    }
    ~Buffer() { std::free(storage); }
    uint8_t *data() { return storage; }
    uint8_t *begin() { return storage; }
    uint8_t *end() { return storage + bytes; }
    size_t size() const { return bytes; }
    uint8_t *storage;
    size_t bytes;
  };
  Buffer source(canonicalBytes * 2), dest(canonicalBytes * 2);
  std::mt19937 rng(0);
  for (auto &byte : source)
    byte = static_cast<uint8_t>(rng());
  // memcpy baseline: the same bytes, read + written, single thread (libc)
  // and split over the host's threads like the conversions.
  double copySeconds = bestSeconds(repsOption, [&] {
    std::memcpy(dest.data(), source.data(), canonicalBytes);
  });
  unsigned threads = threadsOption ? threadsOption.getValue()
                                   : std::max(1u, std::thread::hardware_concurrency());
  // A copy of `bytes` split over the threads, as the conversions run.
  auto parallelCopy = [&](int64_t bytes) {
    std::vector<std::thread> workers;
    int64_t chunk = (bytes + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        int64_t begin = std::min<int64_t>(bytes, t * chunk);
        int64_t end = std::min<int64_t>(bytes, begin + chunk);
        std::memcpy(dest.data() + begin, source.data() + begin, end - begin);
      });
    for (auto &w : workers)
      w.join();
  };
  double parallelCopySeconds =
      bestSeconds(repsOption, [&] { parallelCopy(canonicalBytes); });
  double copyTime = std::min(copySeconds, parallelCopySeconds);
  llvm::outs() << "shape";
  for (int64_t d : shape)
    llvm::outs() << " " << d;
  llvm::outs() << llvm::format(
      ", canonical %.1f MiB, %u threads; memcpy %.2f ms (%.2f GB/s read + "
      "write; 1 thread %.2f ms)\n",
      canonicalBytes / 1048576.0, threads, copyTime * 1e3,
      2 * canonicalBytes / copyTime / 1e9, copySeconds * 1e3);
  llvm::outs() << "| conversion | compile ms | convert ms | GB/s (read+write) "
                  "| memcpy / convert | copy of its bytes, alternated (ms) "
                  "| that copy / convert |\n|---|---|---|---|---|---|---|\n";
  const std::vector<std::string> only = onlyStrings();
  for (const Case &c : cases) {
    if (!only.empty() &&
        llvm::none_of(only, [&](const std::string &s) {
          return llvm::StringRef(c.name).contains(s);
        }))
      continue;
    if (planOption) {
      // The JIT's own planning options (CompiledConversion.cpp).
      const int64_t hostRegisterFileBytes =
          getHostCPUPipelineOptions().registerFileBytes;
      bool values = c.part == StoragePart::values;
      auto from = values ? c.from.buildValueReference()
                         : c.from.buildScaleReference();
      auto to = values ? c.to.buildValueReference() : c.to.buildScaleReference();
      llvm::outs() << c.name << ":\n";
      // As the host lowering plans it (LowerStorageConversions.cpp).
      if (auto plan = planBlockConversion(*from, *to, /*vectorBytes=*/64,
                                          kDefaultMinBytesWithGaps,
                                          /*minBlockBits=*/0,
                                          /*edgeBlocks=*/true,
                                          hostRegisterFileBytes))
        printPlan(*plan);
      else
        llvm::outs() << "  no block plan\n";
      continue;
    }
    std::string error;
    auto start = std::chrono::steady_clock::now();
    auto conversion =
        CompiledConversion::compile(c.from, c.to, c.part, error);
    double compileSeconds = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    if (!conversion) {
      llvm::errs() << c.name << ": " << error << "\n";
      return 1;
    }
    if (conversion->getSourceBytes() > (int64_t)source.size() ||
        conversion->getDestBytes() > (int64_t)dest.size()) {
      llvm::errs() << "buffers too small\n";
      return 1;
    }
    double bytes = conversion->getSourceBytes() + conversion->getDestBytes();
    // The conversion alternated with a copy of as many bytes (half its
    // reads and writes each way), so that both see the same machine.
    const int64_t copyBytes = static_cast<int64_t>(bytes / 2);
    auto [seconds, ownCopySeconds] = bestAlternated(
        repsOption,
        [&] { conversion->run(source.data(), dest.data(), threads); },
        [&] { parallelCopy(copyBytes); });
    // memcpy moves canonicalBytes both ways in copyTime.
    double ratio = (bytes / seconds) / (2 * canonicalBytes / copyTime);
    llvm::outs() << llvm::format(
        "| %s | %.0f | %.1f | %.2f | %.1f%% | %.2f | %.1f%% |\n",
        c.name.c_str(), compileSeconds * 1e3, seconds * 1e3,
        bytes / seconds / 1e9, 100 * ratio, ownCopySeconds * 1e3,
        100 * ownCopySeconds / seconds);
  }
  return 0;
}
