//===- mx-convert.cpp - Convert packed weight bytes between layouts -------===//
//
//   mx-convert --type 2x64x128xf4E2M1FN \
//     --from '#microscale.strided' \
//     --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' IN -o OUT
//
// --type is the logical tensor: f4E2M1FN for packed FP4 values, f8E8M0FNU for
// E8M0 scale bytes. IN and OUT are raw bytes in the layouts' physical storage
// order, padding included. The conversion is compiled by our own passes
// (the layouts' IR maps, microscale-cpu-to-llvm) and run on the host's cores.
// On any error it exits non-zero, says why, and writes nothing.
//
//===----------------------------------------------------------------------===//
#include "microscale/Runtime/CPU/CompiledConversion.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::microscale;
namespace cl = llvm::cl;

static cl::OptionCategory category("mx-convert options");
static cl::opt<std::string> typeOption(
    "type", cl::Required, cl::cat(category),
    cl::desc("Logical tensor, e.g. 2x64x128xf4E2M1FN (FP4 values) or "
             "2x2x128xf8E8M0FNU (E8M0 scales)"));
static cl::opt<std::string>
    fromOption("from", cl::init("#microscale.strided"), cl::cat(category),
               cl::desc("Layout of IN (default: the canonical "
                        "#microscale.strided)"));
static cl::opt<std::string> toOption("to", cl::Required, cl::cat(category),
                                     cl::desc("Layout of OUT"));
static cl::opt<std::string> inputOption(cl::Positional, cl::Required,
                                        cl::desc("IN"), cl::cat(category));
static cl::opt<std::string> outputOption("o", cl::Required, cl::cat(category),
                                         cl::desc("OUT"),
                                         cl::value_desc("file"));
static cl::opt<unsigned>
    threadsOption("host-threads", cl::init(0), cl::cat(category),
                  cl::desc("Host threads (0: one per hardware thread)"));
static cl::opt<bool> timeOption("time", cl::init(false), cl::cat(category),
                                cl::desc("Print compile and run times"));
static cl::opt<bool>
    progressOption("progress", cl::init(false), cl::cat(category),
                   cl::desc("Show progress (also on for inputs of 64 MiB or "
                            "more when stderr is a terminal)"));

static std::string toString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "mx-convert: error: " << message << "\n";
  return 1;
}

static double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

/// The layout attribute spelled `text`, or a message saying what is wrong.
static LayoutAttrInterface parseLayout(MLIRContext &context, StringRef flag,
                                       StringRef text, std::string &error) {
  Attribute attr = parseAttribute(text, &context);
  if (!attr) {
    error = ("--" + flag + ": cannot parse '" + text + "' as an attribute")
                .str();
    return {};
  }
  auto layout = dyn_cast<LayoutAttrInterface>(attr);
  if (!layout)
    error = ("--" + flag + ": '" + text +
             "' is not a microscale layout (e.g. #microscale.strided, "
             "#microscale.hopper_value<mx_axis = -2, mma_version = 3>)")
                .str();
  return layout;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mx-convert: convert packed microscaling bytes between layouts\n");

  MLIRContext context;
  context.loadDialect<MicroscaleDialect>();
  // Diagnostics from parsing and verification go to stderr, prefixed.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diagnostic) {
    llvm::errs() << "mx-convert: error: " << diagnostic << "\n";
    return success();
  });

  // The shaped-type spelling of a tensor body: 2x64x128xf4E2M1FN.
  StringRef typeText = typeOption;
  std::string wrapped = typeText.starts_with("tensor<")
                            ? typeText.str()
                            : "tensor<" + typeText.str() + ">";
  Type parsed = parseType(wrapped, &context);
  auto tensor = dyn_cast_or_null<RankedTensorType>(parsed);
  if (!tensor || !tensor.hasStaticShape())
    return fail("--type: expected a static shaped type such as "
                "2x64x128xf4E2M1FN, got '" + typeOption + "'");
  bool isScales = isa<Float8E8M0FNUType>(tensor.getElementType());
  if (!isScales && !isa<Float4E2M1FNType>(tensor.getElementType()))
    return fail("--type: the element type must be f4E2M1FN (packed FP4 "
                "values) or f8E8M0FNU (scale bytes), got " +
                llvm::Twine(typeOption));
  if (tensor.getRank() < 1)
    return fail("--type: the tensor must have rank >= 1");

  std::string error;
  LayoutAttrInterface from = parseLayout(context, "from", fromOption, error);
  if (!from)
    return fail(error);
  LayoutAttrInterface to = parseLayout(context, "to", toOption, error);
  if (!to)
    return fail(error);
  const LayoutRole role = isScales ? LayoutRole::Scales : LayoutRole::Values;
  for (auto [layout, flag] : {std::pair(from, "--from"), std::pair(to, "--to")})
    if (!layout.supportsRole(role))
      return fail(llvm::Twine(flag) + ": " + toString(layout) +
                  " cannot hold " + (isScales ? "scales" : "FP4 values"));

  // The byte conversion depends only on the layouts, not on the scales'
  // block size, so the tensor is described with blocks of 2, the smallest
  // that packs, along the block axis the layouts name.
  // When no layout names one, the block axis is the first dim from the
  // second-to-last down whose extent packs (so that a bad extent is reported
  // by the layout that cannot pack it, not by the block size).
  const int64_t rank = tensor.getRank();
  int64_t axis = rank >= 2 ? rank - 2 : 0;
  if (!isScales)
    for (int64_t d : {rank - 2, rank - 1})
      if (d >= 0 && tensor.getDimSize(d) % 2 == 0) {
        axis = d;
        break;
      }
  for (LayoutAttrInterface layout : {from, to})
    if (std::optional<int64_t> required = layout.getRequiredBlockAxis(rank))
      axis = *required;
  auto emitter = [&] { return emitError(UnknownLoc::get(&context)); };
  FormatAttr format = FormatAttr::getChecked(
      emitter, &context, Type(Float4E2M1FNType::get(&context)),
      Type(Float8E8M0FNUType::get(&context)), 2u, false);
  SmallVector<int64_t> shape(tensor.getShape());
  auto strided = StridedAttr::get(&context, -1);
  if (isScales)
    shape[axis] *= 2; // the values whose scales these are
  auto make = [&](LayoutAttrInterface layout) {
    LayoutAttrInterface values = isScales ? LayoutAttrInterface(strided) : layout;
    LayoutAttrInterface scales = isScales ? layout : LayoutAttrInterface(strided);
    return QTensorType::getChecked(emitter, &context, ArrayRef<int64_t>(shape),
                                   format, axis, values, scales);
  };
  QTensorType fromType = make(from);
  if (!fromType)
    return 1; // the verifier said why
  QTensorType toType = make(to);
  if (!toType)
    return 1;

  auto start = std::chrono::steady_clock::now();
  auto conversion = CompiledConversion::compile(
      fromType, toType, isScales ? StoragePart::scales : StoragePart::values,
      error);
  if (!conversion)
    return fail(error);
  double compileSeconds = seconds(start);

  auto input = llvm::MemoryBuffer::getFile(inputOption, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!input)
    return fail("cannot read '" + inputOption +
                "': " + input.getError().message());
  const int64_t inBytes = (*input)->getBufferSize();
  if (inBytes != conversion->getSourceBytes())
    return fail("'" + inputOption + "' has " + llvm::Twine(inBytes) +
                " bytes, but a " + typeOption + " tensor in " + fromOption +
                " has " + llvm::Twine(conversion->getSourceBytes()) +
                " storage bytes");

  std::vector<uint8_t> output(conversion->getDestBytes());
  const auto *source =
      reinterpret_cast<const uint8_t *>((*input)->getBufferStart());
  bool progress = progressOption ||
                  (inBytes >= (64 << 20) &&
                   llvm::sys::Process::StandardErrIsDisplayed());
  start = std::chrono::steady_clock::now();
  const int64_t units = conversion->getNumUnits();
  const int steps = progress ? 20 : 1;
  for (int step = 0; step < steps; ++step) {
    conversion->runUnits(source, output.data(), units * step / steps,
                         units * (step + 1) / steps, threadsOption);
    if (progress)
      llvm::errs() << "\rmx-convert: " << (step + 1) * 100 / steps << "%";
  }
  if (progress)
    llvm::errs() << "\n";
  double runSeconds = seconds(start);

  // Write beside the destination and rename: no partial output on failure.
  std::string temporary = outputOption + ".mx-convert-partial";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + outputOption + "': " + ec.message());
    out.write(reinterpret_cast<const char *>(output.data()), output.size());
    out.close();
    if (out.has_error()) {
      llvm::sys::fs::remove(temporary);
      return fail("cannot write '" + outputOption +
                  "': " + out.error().message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, outputOption)) {
    llvm::sys::fs::remove(temporary);
    return fail("cannot write '" + outputOption + "': " + ec.message());
  }
  if (timeOption)
    llvm::errs() << llvm::format(
        "mx-convert: compile %.1f ms, convert %.3f ms (%lld -> %lld bytes, "
        "%.2f GB/s read + write)\n",
        compileSeconds * 1e3, runSeconds * 1e3, (long long)inBytes,
        (long long)output.size(),
        (inBytes + output.size()) / runSeconds / 1e9);
  return 0;
}
