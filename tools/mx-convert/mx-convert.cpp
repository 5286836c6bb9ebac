//===- mx-convert.cpp - Convert packed weight bytes between layouts -------===//
//
//   mx-convert --type 2x64x128xf4E2M1FN \
//     --from '#microscale.strided' \
//     --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' IN -o OUT
//
// --type is the logical tensor: f4E2M1FN for packed FP4 values, f8E8M0FNU for
// E8M0 scale bytes. IN and OUT are raw bytes in the layouts' physical storage
// order, padding included. The conversion is compiled by our own passes
// (the layouts' IR maps, microscale-cpu-to-llvm) and run on the host's cores,
// or with --device cuda compiled by microscale-gpu-to-ptx into one kernel
// that the MLIR-free CUDA runtime runs on an NVIDIA GPU. On any error it
// exits non-zero, says why, and writes nothing.
//
// OUT is written as OutputFile.h says: `-` is stdout, a device or FIFO is
// written in place, anything else goes through a uniquely named temporary
// next to OUT, removed on error and on SIGINT/SIGTERM, renamed over OUT once
// complete. Before anything is allocated, the output's size is bounded (see
// Request.h: at most 8 x the input + 64 MiB, and the available memory).
//
// With a .safetensors IN, --tensor names the tensors to convert; every other
// tensor is copied through. MXFP4 checkpoints store values as `*_blocks`
// (uint8 [E, N, K/32, 16]) and scales as `*_scales` (uint8 [E, N, K/32]): for
// such names the logical type is inferred ([E, K, N] FP4 values or [E, K/32,
// N] scales, packed along K: --from defaults to
// #microscale.strided<major_dim = -2>), values go to --to and scales to
// --scales-to.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/CompileConversion.h"
#include "microscale/Runtime/CPU/CompiledConversion.h"
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include "OutputFile.h"
#include "Request.h"
#include "Safetensors.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>

using namespace mlir;
using namespace mlir::microscale;
using namespace ::microscale::convert;
using ::microscale::OutputFile;
namespace cl = llvm::cl;

static cl::OptionCategory category("mx-convert options");
static cl::opt<std::string> typeOption(
    "type", cl::cat(category),
    cl::desc("Logical tensor, e.g. 2x64x128xf4E2M1FN (FP4 values) or "
             "2x2x128xf8E8M0FNU (E8M0 scales)"));
static cl::opt<std::string>
    fromOption("from", cl::cat(category),
               cl::desc("Layout of IN (default: the canonical "
                        "#microscale.strided; for safetensors checkpoints "
                        "#microscale.strided<major_dim = -2>)"));
static cl::opt<std::string> toOption("to", cl::cat(category),
                                     cl::desc("Layout of OUT (values)"));
static cl::opt<std::string>
    scalesToOption("scales-to", cl::cat(category),
                   cl::desc("safetensors: layout for the *_scales tensors"));
static cl::opt<std::string> scalesFromOption(
    "scales-from", cl::cat(category),
    cl::desc("safetensors: layout of the *_scales tensors in IN (default as "
             "--from)"));
static cl::list<std::string>
    tensorOption("tensor", cl::CommaSeparated, cl::cat(category),
                 cl::desc("safetensors: the tensors to convert"));
static cl::opt<std::string> inputOption(cl::Positional, cl::Required,
                                        cl::desc("IN"), cl::cat(category));
static cl::opt<std::string>
    outputOption("o", cl::Required, cl::cat(category),
                 cl::desc("OUT (- for stdout; a device or FIFO is written "
                          "in place)"),
                 cl::value_desc("file"));
static cl::opt<unsigned>
    threadsOption("host-threads", cl::init(0), cl::cat(category),
                  cl::desc("Host threads (0: one per hardware thread)"));
static cl::opt<std::string>
    deviceOption("device", cl::init("host"), cl::cat(category),
                 cl::desc("Where the conversion runs: host (the CPU's cores) "
                          "or cuda (an NVIDIA GPU, through the CUDA driver)"));
static cl::opt<int> cudaOrdinalOption("cuda-device", cl::init(0),
                                      cl::cat(category),
                                      cl::desc("--device cuda: the GPU ordinal"));
static cl::opt<std::string>
    cudaChipOption("cuda-chip", cl::init("sm_90a"), cl::cat(category),
                   cl::desc("--device cuda: the chip to compile for"));
static cl::opt<std::string> cudaFormatOption(
    "cuda-format", cl::init("auto"), cl::cat(category),
    cl::desc("--device cuda: bin (a cubin, assembled by ptxas at compile "
             "time), isa (PTX, compiled by the driver at load) or auto (bin "
             "where ptxas is found)"));
static cl::opt<std::string> cudaSaveKernelOption(
    "cuda-save-kernel", cl::cat(category), cl::value_desc("prefix"),
    cl::desc("--device cuda: also write the compiled kernel to PREFIX.image "
             "and its launch to PREFIX.launch (name grid block "
             "takes-unit-range units source-bytes dest-bytes), before "
             "running it"));
static cl::opt<bool> timeOption("time", cl::init(false), cl::cat(category),
                                cl::desc("Print compile and run times"));
static cl::opt<bool>
    progressOption("progress", cl::init(false), cl::cat(category),
                   cl::desc("Show progress (also on for inputs of 64 MiB or "
                            "more when stderr is a terminal)"));

/// Says why on stderr; false, for the functions that report and return.
static bool reject(const llvm::Twine &message) {
  llvm::errs() << "mx-convert: error: " << message << "\n";
  return false;
}

/// Says why on stderr; the exit status of main.
static int fail(const llvm::Twine &message) {
  reject(message);
  return 1;
}

static double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

namespace {
/// One conversion: a logical tensor, its bytes, and the two layouts.
struct Request {
  std::string typeText;   // e.g. 2x64x128xf4E2M1FN
  std::string fromText;   // layout of the input bytes
  std::string toText;     // layout of the output bytes
  llvm::ArrayRef<uint8_t> input;
  std::string inputName;  // for messages
};
} // namespace

/// Writes `bytes` to `path` as OutputFile does; says why it cannot.
static bool writeFile(StringRef path, ArrayRef<uint8_t> bytes) {
  llvm::Expected<OutputFile> out = OutputFile::open(path);
  if (!out)
    return reject(llvm::toString(out.takeError()));
  out->os().write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  if (llvm::Error error = out->commit())
    return reject(llvm::toString(std::move(error)));
  return true;
}

/// The NVIDIA pipeline's options from the --cuda-* flags.
static NVVMPipelineOptions cudaPipelineOptions() {
  NVVMPipelineOptions options;
  options.chip = cudaChipOption;
  options.format = cudaFormatOption == "isa" ? "isa" : "bin";
  if (cudaFormatOption == "auto") {
    // A cubin where ptxas is found (no JIT at load), else PTX.
    std::string toolkit = findCUDAToolkit();
    if (toolkit.empty())
      options.format = "isa";
    else
      options.toolkit = toolkit;
  }
  return options;
}

/// --device cuda: compiles the conversion into one kernel and runs it on
/// the GPU through the MLIR-free runtime.
static bool convertOnCuda(const Request &request, const Conversion &checked,
                          ::microscale::safetensors::AlignedBytes &output) {
  if (cudaFormatOption != "auto" && cudaFormatOption != "bin" &&
      cudaFormatOption != "isa")
    return reject("--cuda-format must be auto, bin or isa, got '" +
                cudaFormatOption + "'");
  // An empty tensor launches nothing (and needs neither a kernel nor a
  // GPU); checkConversion matched the input's size.
  if (checked.fromType.getNumElements() == 0) {
    output.clear();
    return true;
  }
  auto start = std::chrono::steady_clock::now();
  std::string error;
  std::optional<::microscale::cuda::ConversionKernel> kernel =
      compileConversionForCUDA(checked.fromType, checked.toType, checked.part,
                               cudaPipelineOptions(), error);
  if (!kernel)
    return reject("--device cuda: " + error);
  double compileSeconds = seconds(start);
  if (kernel->sourceBytes != checked.sourceBytes ||
      kernel->destBytes != checked.destBytes)
    return reject("--device cuda: the kernel's sizes (" +
                  llvm::Twine(kernel->sourceBytes) + " -> " +
                  llvm::Twine(kernel->destBytes) +
                  " bytes) disagree with the layouts' (" +
                  llvm::Twine(checked.sourceBytes) + " -> " +
                  llvm::Twine(checked.destBytes) + ")");
  if (!cudaSaveKernelOption.empty()) {
    std::string launch;
    llvm::raw_string_ostream os(launch);
    os << kernel->name << " " << kernel->grid << " " << kernel->block << " "
       << (kernel->takesUnitRange ? 1 : 0) << " " << kernel->units << " "
       << kernel->sourceBytes << " " << kernel->destBytes << "\n";
    ArrayRef<uint8_t> image(
        reinterpret_cast<const uint8_t *>(kernel->image.data()),
        kernel->image.size());
    ArrayRef<uint8_t> launchBytes(
        reinterpret_cast<const uint8_t *>(launch.data()), launch.size());
    if (!writeFile(cudaSaveKernelOption + ".image", image) ||
        !writeFile(cudaSaveKernelOption + ".launch", launchBytes))
      return false;
  }
  output.assign(kernel->destBytes, 0);
  // One driver for every tensor of the run.
  static std::unique_ptr<::microscale::cuda::Driver> driver;
  if (!driver)
    driver = std::make_unique<::microscale::cuda::Driver>(cudaOrdinalOption);
  start = std::chrono::steady_clock::now();
  if (!::microscale::cuda::runConversion(*driver, *kernel,
                                         request.input.data(), output.data(),
                                         error))
    return reject("--device cuda: " + error);
  double runSeconds = seconds(start);
  if (timeOption)
    llvm::errs() << llvm::format(
        "mx-convert: compile %.1f ms (%s for %s, kernel %s: %u blocks of %u "
        "threads), run on the GPU %.3f ms (copies in and out included)\n",
        compileSeconds * 1e3,
        kernel->image.rfind("//", 0) == 0 ? "PTX" : "cubin",
        cudaChipOption.c_str(), kernel->name.c_str(), kernel->grid,
        kernel->block, runSeconds * 1e3);
  return true;
}

/// Checks, compiles and runs `request`; fills `output` or returns false
/// after saying why on stderr.
static bool convert(MLIRContext &context, const Request &request,
                    ::microscale::safetensors::AlignedBytes &output,
                    SmallVectorImpl<int64_t> &storageShape) {
  std::string error;
  std::optional<Conversion> checked = checkConversion(
      context, request.typeText, request.fromText, request.toText,
      request.input.size(), request.inputName, availableMemoryBytes(), error);
  if (!checked)
    return error.empty() ? false : reject(error); // else a diagnostic said why
  storageShape.assign(checked->destStorageShape.begin(),
                      checked->destStorageShape.end());

  if (deviceOption == "cuda")
    return convertOnCuda(request, *checked, output);
  auto start = std::chrono::steady_clock::now();
  auto conversion = CompiledConversion::compile(
      checked->fromType, checked->toType, checked->part, error);
  if (!conversion)
    return reject(error);
  double compileSeconds = seconds(start);
  const int64_t inBytes = request.input.size();
  if (static_cast<uint64_t>(conversion->getSourceBytes()) !=
          checked->sourceBytes ||
      static_cast<uint64_t>(conversion->getDestBytes()) != checked->destBytes)
    return reject("the compiled conversion's sizes (" +
                  llvm::Twine(conversion->getSourceBytes()) + " -> " +
                  llvm::Twine(conversion->getDestBytes()) +
                  " bytes) disagree with the layouts' (" +
                  llvm::Twine(checked->sourceBytes) + " -> " +
                  llvm::Twine(checked->destBytes) + ")");

  output.assign(checked->destBytes, 0);
  bool progress = progressOption ||
                  (inBytes >= (64 << 20) &&
                   llvm::sys::Process::StandardErrIsDisplayed());
  start = std::chrono::steady_clock::now();
  const int64_t units = conversion->getNumUnits();
  const int steps = progress ? 20 : 1;
  for (int step = 0; step < steps; ++step) {
    conversion->runUnits(request.input.data(), output.data(),
                         units * step / steps, units * (step + 1) / steps,
                         threadsOption);
    if (progress)
      llvm::errs() << "\rmx-convert: " << request.inputName << " "
                   << (step + 1) * 100 / steps << "%";
  }
  if (progress)
    llvm::errs() << "\n";
  double runSeconds = seconds(start);
  if (timeOption)
    llvm::errs() << llvm::format(
        "mx-convert: compile %.1f ms, convert %.3f ms (%lld -> %lld bytes, "
        "%.2f GB/s read + write)\n",
        compileSeconds * 1e3, runSeconds * 1e3, (long long)inBytes,
        (long long)output.size(),
        (inBytes + output.size()) / runSeconds / 1e9);
  return true;
}

/// Whether the spellings `given` and `recorded` parse (with `parse`) to the
/// same layout or type; unparsable ones are compared as text, and the
/// conversion reports them.
template <typename ParseFn>
static bool sameEntity(StringRef given, StringRef recorded, ParseFn parse) {
  auto a = parse(given), b = parse(recorded);
  return a && b ? a == b : given == recorded;
}

/// MXFP4 checkpoints pair P_blocks [..., N, K/32, 16] with P_scales
/// [..., N, K/32]; converting a pair whose shapes disagree would produce a
/// checkpoint no kernel can use. Checked for tensors still in the checkpoint
/// convention (no record of an earlier mx-convert in the metadata).
static bool checkPair(::microscale::safetensors::File &file, StringRef name) {
  StringRef prefix;
  bool blocks = name.ends_with("_blocks");
  if (blocks)
    prefix = name.drop_back(strlen("_blocks"));
  else if (name.ends_with("_scales"))
    prefix = name.drop_back(strlen("_scales"));
  else
    return true;
  std::string blocksName = (prefix + "_blocks").str();
  std::string scalesName = (prefix + "_scales").str();
  auto *blocksTensor = file.find(blocksName);
  auto *scalesTensor = file.find(scalesName);
  if (!blocksTensor || !scalesTensor ||
      file.metadata.count("microscale." + blocksName) ||
      file.metadata.count("microscale." + scalesName))
    return true;
  ArrayRef<int64_t> b = blocksTensor->shape, s = scalesTensor->shape;
  if (!b.empty() && b.drop_back() == s)
    return true;
  auto spell = [](ArrayRef<int64_t> shape) {
    std::string text = "[";
    llvm::raw_string_ostream os(text);
    llvm::interleaveComma(shape, os);
    return text + "]";
  };
  return reject("tensors '" + blocksName + "' " + spell(b) + " and '" +
                scalesName + "' " + spell(s) +
                " disagree: the scales of blocks [..., N, K/32, 16] are "
                "[..., N, K/32]");
}

/// safetensors: converts the --tensor tensors, copies the others through,
/// into `out`.
static int convertSafetensors(MLIRContext &context, OutputFile &out) {
  auto file = ::microscale::safetensors::read(inputOption);
  if (!file)
    return fail(llvm::toString(file.takeError()));
  if (tensorOption.empty())
    return fail("--tensor: name the tensors of '" + inputOption +
                "' to convert");
  // Converting a tensor twice would convert its converted bytes again.
  llvm::StringSet<> named;
  for (const std::string &name : tensorOption)
    if (!named.insert(name).second)
      return fail("--tensor: '" + name + "' is named more than once");
  if (!typeOption.empty() && tensorOption.size() != 1)
    return fail("--type applies to one tensor; " +
                llvm::Twine(tensorOption.size()) + " are selected");
  auto parseLayoutOrNull = [&](StringRef text) -> Attribute {
    std::string ignored;
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
      return success();
    });
    return parseLayout(context, "", text, ignored);
  };
  auto parseTypeOrNull = [&](StringRef text) -> Type {
    std::string ignored;
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
      return success();
    });
    return parseLogicalType(context, text, ignored);
  };
  for (const std::string &name : tensorOption) {
    ::microscale::safetensors::Tensor *tensor = file->find(name);
    if (!tensor)
      return fail("'" + inputOption + "' has no tensor named '" + name + "'");
    if (tensor->dtype != "U8")
      return fail("tensor '" + name + "' has dtype " + tensor->dtype +
                  "; packed FP4 values and E8M0 scales are stored as U8");
    if (!checkPair(*file, name))
      return 1;
    StringRef nameRef = name;
    const bool blocks = nameRef.ends_with("_blocks");
    const bool scales = nameRef.ends_with("_scales");
    Request request;
    request.input = tensor->data;
    request.inputName = "tensor '" + name + "'";
    // What the tensor is: the record that an earlier mx-convert left in the
    // metadata ("<type> <layout>"), else the flags, else the MXFP4
    // checkpoint convention. A flag that contradicts the record is refused:
    // converting bytes as what they are not gives garbage.
    std::string recordedType, recordedLayout;
    auto record = file->metadata.find("microscale." + name);
    if (record != file->metadata.end()) {
      auto [type, layout] = StringRef(record->second).split(' ');
      recordedType = type.str();
      recordedLayout = layout.str();
    }
    std::string from = scales && !scalesFromOption.empty()
                           ? scalesFromOption.getValue()
                           : fromOption.getValue();
    const char *fromFlag =
        scales && !scalesFromOption.empty() ? "--scales-from" : "--from";
    if (!recordedLayout.empty() && !from.empty() &&
        !sameEntity(from, recordedLayout, parseLayoutOrNull))
      return fail(llvm::Twine(fromFlag) + ": tensor '" + name +
                  "' is recorded in the metadata as " + recordedLayout +
                  ", not " + from + " (leave " + fromFlag + " out)");
    if (!recordedType.empty() && !typeOption.empty() &&
        !sameEntity(typeOption, recordedType, parseTypeOrNull))
      return fail("--type: tensor '" + name +
                  "' is recorded in the metadata as " + recordedType +
                  ", not " + typeOption + " (leave --type out)");
    request.typeText =
        !typeOption.empty() ? typeOption.getValue() : recordedType;
    if (request.typeText.empty()) {
      std::string error;
      std::optional<std::string> inferred =
          inferCheckpointType(name, tensor->shape, error);
      if (!inferred)
        return fail(error);
      request.typeText = *inferred;
    }
    request.fromText = !from.empty()             ? from
                       : !recordedLayout.empty() ? recordedLayout
                       : (blocks || scales) ? "#microscale.strided<major_dim = -2>"
                                            : "#microscale.strided";
    request.toText = scales ? scalesToOption : toOption;
    if (request.toText.empty())
      return fail(llvm::Twine(scales ? "--scales-to" : "--to") +
                  ": no layout given for tensor '" + name + "'");
    ::microscale::safetensors::AlignedBytes converted;
    SmallVector<int64_t> storageShape;
    if (!convert(context, request, converted, storageShape))
      return 1;
    tensor->owned = std::move(converted);
    tensor->data = tensor->owned;
    tensor->shape.assign(storageShape.begin(), storageShape.end());
    file->metadata["microscale." + name] =
        request.typeText + " " + request.toText;
  }
  ::microscale::safetensors::write(*file, out.os());
  if (llvm::Error error = out.commit())
    return fail(llvm::toString(std::move(error)));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mx-convert: convert packed microscaling bytes between layouts\n");
  // A file-size limit (ulimit -f) would kill the process with SIGXFSZ in the
  // middle of a write; ignored, the write fails with EFBIG and is reported,
  // naming the file, like a full disk.
  std::signal(SIGXFSZ, SIG_IGN);

  if (deviceOption != "host" && deviceOption != "cuda")
    return fail("--device must be host or cuda, got '" + deviceOption + "'");

  MLIRContext context;
  context.loadDialect<MicroscaleDialect>();
  // Diagnostics from parsing and verification go to stderr, prefixed.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diagnostic) {
    llvm::errs() << "mx-convert: error: " << diagnostic << "\n";
    return success();
  });

  const bool safetensors = StringRef(inputOption).ends_with(".safetensors");
  if (!safetensors) {
    if (typeOption.empty())
      return fail("--type: give the logical tensor, e.g. 2x64x128xf4E2M1FN");
    if (toOption.empty())
      return fail("--to: give the layout to convert to");
  }
  // OUT is prepared first: a path that cannot be written is reported before
  // the conversion runs, and the temporary is registered for removal on
  // SIGINT/SIGTERM for the whole run. Until commit(), OUT is untouched.
  llvm::Expected<OutputFile> out = OutputFile::open(outputOption);
  if (!out)
    return fail(llvm::toString(out.takeError()));
  if (safetensors)
    return convertSafetensors(context, *out);

  auto input = llvm::MemoryBuffer::getFile(inputOption, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!input)
    return fail("cannot read '" + inputOption +
                "': " + input.getError().message());
  Request request;
  request.typeText = typeOption;
  request.fromText =
      fromOption.empty() ? "#microscale.strided" : fromOption.getValue();
  request.toText = toOption;
  request.input = ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>((*input)->getBufferStart()),
      (*input)->getBufferSize());
  request.inputName = "'" + inputOption + "'";
  // 64-byte aligned, so that the conversion may stream its stores.
  ::microscale::safetensors::AlignedBytes output;
  SmallVector<int64_t> storageShape;
  if (!convert(context, request, output, storageShape))
    return 1;
  out->os().write(reinterpret_cast<const char *>(output.data()),
                  output.size());
  if (llvm::Error error = out->commit())
    return fail(llvm::toString(std::move(error)));
  return 0;
}
