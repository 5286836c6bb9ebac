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
// With a .safetensors IN, --tensor names the tensors to convert; every other
// tensor is copied through. MXFP4 checkpoints store values as `*_blocks`
// (uint8 [E, N, K/32, 16]) and scales as `*_scales` (uint8 [E, N, K/32]): for
// such names the logical type is inferred ([E, K, N] FP4 values or [E, K/32,
// N] scales, packed along K: --from defaults to
// #microscale.strided<major_dim = -2>), values go to --to and scales to
// --scales-to.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/GPU/CompileConversion.h"
#include "microscale/Runtime/CPU/CompiledConversion.h"
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include "Safetensors.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::microscale;
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
static cl::opt<std::string> outputOption("o", cl::Required, cl::cat(category),
                                         cl::desc("OUT"),
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

static std::string toString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

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

static bool writeRaw(StringRef path, ArrayRef<uint8_t> bytes);

/// The NVIDIA pipeline's options from the --cuda-* flags.
static NVVMPipelineOptions cudaPipelineOptions() {
  NVVMPipelineOptions options;
  options.chip = cudaChipOption;
  options.format = cudaFormatOption == "isa" ? "isa" : "bin";
  if (cudaFormatOption == "auto") {
    // A cubin where ptxas is found (no JIT at load), else PTX.
    auto ptxas = llvm::sys::findProgramByName("ptxas");
    std::string toolkit;
    if (ptxas)
      toolkit = llvm::sys::path::parent_path(
                    llvm::sys::path::parent_path(*ptxas))
                    .str();
    else if (llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
      toolkit = "/usr/local/cuda";
    if (toolkit.empty())
      options.format = "isa";
    else
      options.toolkit = toolkit;
  }
  return options;
}

/// --device cuda: compiles the conversion into one kernel and runs it on
/// the GPU through the MLIR-free runtime.
static bool convertOnCuda(const Request &request, QTensorType fromType,
                          QTensorType toType, StoragePart part,
                          ::microscale::safetensors::AlignedBytes &output,
                          SmallVectorImpl<int64_t> &storageShape) {
  if (cudaFormatOption != "auto" && cudaFormatOption != "bin" &&
      cudaFormatOption != "isa")
    return reject("--cuda-format must be auto, bin or isa, got '" +
                cudaFormatOption + "'");
  // An empty tensor launches nothing (and needs neither a kernel nor a
  // GPU).
  if (fromType.getNumElements() == 0) {
    if (!request.input.empty())
      return reject(request.inputName + " has " +
                  llvm::Twine(request.input.size()) + " bytes, but a " +
                  request.typeText + " tensor has none");
    output.clear();
    storageShape.assign(part == StoragePart::scales
                            ? toType.getScaleStorageShape()
                            : toType.getValueStorageShape());
    return true;
  }
  auto start = std::chrono::steady_clock::now();
  std::string error;
  std::optional<::microscale::cuda::ConversionKernel> kernel =
      compileConversionForCUDA(fromType, toType, part, cudaPipelineOptions(),
                               error);
  if (!kernel)
    return reject("--device cuda: " + error);
  double compileSeconds = seconds(start);
  const int64_t inBytes = request.input.size();
  if (inBytes != static_cast<int64_t>(kernel->sourceBytes))
    return reject(request.inputName + " has " + llvm::Twine(inBytes) +
                " bytes, but a " + request.typeText + " tensor in " +
                request.fromText + " has " +
                llvm::Twine(kernel->sourceBytes) + " storage bytes");
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
    if (!writeRaw(cudaSaveKernelOption + ".image", image) ||
        !writeRaw(cudaSaveKernelOption + ".launch", launchBytes))
      return false;
  }
  output.assign(kernel->destBytes, 0);
  storageShape.assign(part == StoragePart::scales
                          ? toType.getScaleStorageShape()
                          : toType.getValueStorageShape());
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

/// Compiles and runs `request`; fills `output` or returns false after saying
/// why on stderr.
static bool convert(MLIRContext &context, const Request &request,
                    ::microscale::safetensors::AlignedBytes &output,
                    SmallVectorImpl<int64_t> &storageShape) {
  // The shaped-type spelling of a tensor body: 2x64x128xf4E2M1FN.
  StringRef typeText = request.typeText;
  std::string wrapped = typeText.starts_with("tensor<")
                            ? typeText.str()
                            : "tensor<" + typeText.str() + ">";
  Type parsed = parseType(wrapped, &context);
  auto tensor = dyn_cast_or_null<RankedTensorType>(parsed);
  if (!tensor || !tensor.hasStaticShape())
    return reject("--type: expected a static shaped type such as "
                "2x64x128xf4E2M1FN, got '" + request.typeText + "'");
  bool isScales = isa<Float8E8M0FNUType>(tensor.getElementType());
  if (!isScales && !isa<Float4E2M1FNType>(tensor.getElementType()))
    return reject("--type: the element type must be f4E2M1FN (packed FP4 "
                "values) or f8E8M0FNU (scale bytes), got " +
                llvm::Twine(request.typeText));
  if (tensor.getRank() < 1)
    return reject("--type: the tensor must have rank >= 1");

  std::string error;
  LayoutAttrInterface from =
      parseLayout(context, "from", request.fromText, error);
  if (!from)
    return reject(error);
  LayoutAttrInterface to = parseLayout(context, "to", request.toText, error);
  if (!to)
    return reject(error);
  const LayoutRole role = isScales ? LayoutRole::Scales : LayoutRole::Values;
  for (auto [layout, flag] : {std::pair(from, "--from"), std::pair(to, "--to")})
    if (!layout.supportsRole(role))
      return reject(llvm::Twine(flag) + ": " + toString(layout) +
                  " cannot hold " + (isScales ? "scales" : "FP4 values"));

  // The byte conversion depends only on the layouts, not on the scales'
  // block size, so the tensor is described with blocks of 2, the smallest
  // that packs, along the block axis the layouts name. When no layout names
  // one, it is the first dim from the second-to-last down whose extent packs
  // (so that a bad extent is reported by the layout that cannot pack it).
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
    return false; // the verifier said why
  QTensorType toType = make(to);
  if (!toType)
    return false;

  if (deviceOption == "cuda")
    return convertOnCuda(request, fromType, toType,
                         isScales ? StoragePart::scales : StoragePart::values,
                         output, storageShape);
  auto start = std::chrono::steady_clock::now();
  auto conversion = CompiledConversion::compile(
      fromType, toType, isScales ? StoragePart::scales : StoragePart::values,
      error);
  if (!conversion)
    return reject(error);
  double compileSeconds = seconds(start);

  const int64_t inBytes = request.input.size();
  if (inBytes != conversion->getSourceBytes())
    return reject(request.inputName + " has " + llvm::Twine(inBytes) +
                " bytes, but a " + request.typeText + " tensor in " +
                request.fromText + " has " +
                llvm::Twine(conversion->getSourceBytes()) + " storage bytes");

  output.assign(conversion->getDestBytes(), 0);
  storageShape.assign(isScales ? toType.getScaleStorageShape()
                               : toType.getValueStorageShape());
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

/// Writes `bytes` to `path` through a temporary file renamed into place.
static bool writeRaw(StringRef path, ArrayRef<uint8_t> bytes) {
  std::string temporary = (path + ".mx-convert-partial").str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message()), false;
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.close();
    if (out.has_error()) {
      llvm::sys::fs::remove(temporary);
      return fail("cannot write '" + path + "': " + out.error().message()),
             false;
    }
  }
  if ((ec = llvm::sys::fs::rename(temporary, path))) {
    llvm::sys::fs::remove(temporary);
    return fail("cannot write '" + path + "': " + ec.message()), false;
  }
  return true;
}

/// safetensors: converts the --tensor tensors, copies the others through.
static int convertSafetensors(MLIRContext &context) {
  auto file = ::microscale::safetensors::read(inputOption);
  if (!file)
    return fail(llvm::toString(file.takeError()));
  if (tensorOption.empty())
    return fail("--tensor: name the tensors of '" + inputOption +
                "' to convert");
  if (!typeOption.empty() && tensorOption.size() != 1)
    return fail("--type applies to one tensor; " +
                llvm::Twine(tensorOption.size()) + " are selected");
  for (const std::string &name : tensorOption) {
    ::microscale::safetensors::Tensor *tensor = file->find(name);
    if (!tensor)
      return fail("'" + inputOption + "' has no tensor named '" + name + "'");
    if (tensor->dtype != "U8")
      return fail("tensor '" + name + "' has dtype " + tensor->dtype +
                  "; packed FP4 values and E8M0 scales are stored as U8");
    StringRef nameRef = name;
    const bool blocks = nameRef.ends_with("_blocks");
    const bool scales = nameRef.ends_with("_scales");
    Request request;
    request.input = tensor->data;
    request.inputName = "tensor '" + name + "'";
    // What the tensor is: explicit flags first, then the record that an
    // earlier mx-convert left in the metadata ("<type> <layout>"), then the
    // MXFP4 checkpoint convention.
    std::string recordedType, recordedLayout;
    auto record = file->metadata.find("microscale." + name);
    if (record != file->metadata.end()) {
      auto [type, layout] = StringRef(record->second).split(' ');
      recordedType = type.str();
      recordedLayout = layout.str();
    }
    request.typeText = !typeOption.empty() ? typeOption.getValue()
                                            : recordedType;
    if (request.typeText.empty()) {
      // The checkpoint convention: [..., N, K/32, 16] blocks and
      // [..., N, K/32] scales, K fastest.
      const auto &shape = tensor->shape;
      if ((blocks && (shape.size() < 3 || shape.back() != 16)) ||
          (scales && shape.size() < 2) || (!blocks && !scales))
        return fail("cannot infer the logical type of tensor '" + name +
                    "' (expected *_blocks [..., N, K/32, 16] or *_scales "
                    "[..., N, K/32]): pass --type");
      size_t keep = shape.size() - (blocks ? 3 : 2);
      std::string leading;
      for (size_t i = 0; i < keep; ++i)
        leading += std::to_string(shape[i]) + "x";
      const int64_t n = shape[keep], groups = shape[keep + 1];
      request.typeText =
          blocks ? leading + std::to_string(groups * 32) + "x" +
                       std::to_string(n) + "xf4E2M1FN"
                 : leading + std::to_string(groups) + "x" + std::to_string(n) +
                       "xf8E8M0FNU";
    }
    std::string from = scales && !scalesFromOption.empty()
                           ? scalesFromOption.getValue()
                           : fromOption.getValue();
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
  if (llvm::Error error = ::microscale::safetensors::write(*file, outputOption))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mx-convert: convert packed microscaling bytes between layouts\n");

  if (deviceOption != "host" && deviceOption != "cuda")
    return fail("--device must be host or cuda, got '" + deviceOption + "'");

  MLIRContext context;
  context.loadDialect<MicroscaleDialect>();
  // Diagnostics from parsing and verification go to stderr, prefixed.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diagnostic) {
    llvm::errs() << "mx-convert: error: " << diagnostic << "\n";
    return success();
  });

  if (StringRef(inputOption).ends_with(".safetensors"))
    return convertSafetensors(context);

  if (typeOption.empty())
    return fail("--type: give the logical tensor, e.g. 2x64x128xf4E2M1FN");
  if (toOption.empty())
    return fail("--to: give the layout to convert to");
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
  return writeRaw(outputOption, output) ? 0 : 1;
}
