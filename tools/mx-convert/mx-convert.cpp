//===- mx-convert.cpp - Convert packed weight bytes between layouts -------===//
//
//   mx-convert --type 2x64x128xf4E2M1FN \
//     --from '#microscale.strided' \
//     --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' IN -o OUT
//   mx-convert CHECKPOINT -o OUT --to VALUE-LAYOUT --scales-to SCALE-LAYOUT
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
// A checkpoint (Checkpoint.h: a .safetensors file, a sharded checkpoint's
// index, or the directory holding either) is converted tensor by tensor:
// every MX tensor (the `*_blocks` / `*_scales` pairs of MXFP4 checkpoints,
// values uint8 [E, N, K/32, 16] and scales uint8 [E, N, K/32], and tensors
// whose metadata records what an earlier mx-convert made of them), or those
// matching the --tensor globs; every other tensor is copied through byte for
// byte. OUT is then a file, or for shards a directory that receives the same
// shards and the index with its new total size. The logical type of a
// checkpoint tensor is inferred ([E, K, N] FP4 values or [E, K/32, N]
// scales, packed along K: --from defaults to
// #microscale.strided<major_dim = -2>); values go to --to, scales to
// --scales-to. The metadata records each converted tensor's logical type and
// layout (in normal form) and the shape and layout it had in the
// checkpoint, so that converting it back to that layout restores that shape
// (and drops the record): the round trip gives the checkpoint back.
//
// Memory: the shards are mapped, each tensor's pages given back once
// written, copied tensors are copied by the kernel (copy_file_range), and
// converted ones go through one buffer the size of the largest. One compiled
// conversion serves every tensor of the same logical type and layouts; the
// distinct ones compile on threads of their own from the start, and into
// regular files each tensor is written at its offset, so that one whose
// conversion is still compiling waits while the tensors after it are done.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/CompileConversion.h"
#include "microscale/Runtime/CPU/CompiledConversion.h"
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include "Checkpoint.h"
#include "OutputFile.h"
#include "Progress.h"
#include "Request.h"
#include "Safetensors.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/ScopeExit.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::microscale;
using namespace ::microscale::convert;
using ::microscale::OutputFile;
namespace cl = llvm::cl;
namespace st = ::microscale::safetensors;

static cl::OptionCategory category("mx-convert options");
static cl::opt<std::string> typeOption(
    "type", cl::cat(category),
    cl::desc("Logical tensor, e.g. 2x64x128xf4E2M1FN (FP4 values) or "
             "2x2x128xf8E8M0FNU (E8M0 scales)"));
static cl::opt<std::string>
    fromOption("from", cl::cat(category),
               cl::desc("Layout of IN (default: the canonical "
                        "#microscale.strided; for checkpoints "
                        "#microscale.strided<major_dim = -2>)"));
static cl::opt<std::string> toOption("to", cl::cat(category),
                                     cl::desc("Layout of OUT (values)"));
static cl::opt<std::string>
    scalesToOption("scales-to", cl::cat(category),
                   cl::desc("Checkpoints: layout for the *_scales tensors"));
static cl::opt<std::string> scalesFromOption(
    "scales-from", cl::cat(category),
    cl::desc("Checkpoints: layout of the *_scales tensors in IN (default as "
             "--from)"));
static cl::list<std::string> tensorOption(
    "tensor", cl::CommaSeparated, cl::cat(category),
    cl::desc("Checkpoints: the tensors to convert, by name or glob "
             "(default: every MX tensor)"));
static cl::opt<std::string> inputOption(
    cl::Positional, cl::Required,
    cl::desc("IN (raw bytes, a .safetensors file, a sharded checkpoint's "
             "index or its directory)"),
    cl::cat(category));
static cl::opt<std::string>
    outputOption("o", cl::Required, cl::cat(category),
                 cl::desc("OUT (- for stdout; a device or FIFO is written "
                          "in place; a directory for a sharded checkpoint)"),
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
             "running it; for checkpoints one PREFIX-<i> per distinct "
             "conversion"));
static cl::opt<bool>
    timeOption("time", cl::init(false), cl::cat(category),
               cl::desc("Print each tensor's compile and run times"));
static cl::opt<bool> progressOption(
    "progress", cl::init(false), cl::cat(category),
    cl::desc("Show progress and a summary (on by default when stderr is a "
             "terminal)"));

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

/// "compile 12.3 ms", or that the conversion was compiled for an earlier
/// tensor.
static std::string compileText(bool compiled, double compileSeconds) {
  if (!compiled)
    return "compiled before";
  std::string text;
  llvm::raw_string_ostream(text)
      << llvm::format("compile %.1f ms", compileSeconds * 1e3);
  return text;
}

namespace {
/// Runs checked conversions, compiling each distinct one (logical type,
/// layouts, part) once: a checkpoint's layers share a few shapes.
class Converter {
public:
  /// Converts `input` (checked.sourceBytes) into `output` (checked.destBytes,
  /// 64-byte aligned: the CPU route streams its stores). `name` names the
  /// tensor in --time lines; `progress` hears how far a long run is.
  bool run(const Conversion &checked, ArrayRef<uint8_t> input, uint8_t *output,
           StringRef name, Progress &progress);
  /// Starts compiling `checked` (for the host or the GPU, as --device says)
  /// on a thread of its own (with a context of its own), so that a checkpoint's
  /// few distinct conversions compile side by side and while the tensors before
  /// them are copied.
  void startCompiling(const Conversion &checked);
  /// Whether run() would start converting `checked` at once, rather than
  /// wait for its compilation to finish.
  bool isReady(const Conversion &checked) const;
  ~Converter();

private:
  using Key = std::tuple<const void *, const void *, int>;
  struct Kernel {
    ::microscale::cuda::ConversionKernel kernel;
    ::microscale::cuda::Function function = nullptr;
  };
  bool runOnHost(const Conversion &checked, const Key &key,
                 ArrayRef<uint8_t> input, uint8_t *output, StringRef name,
                 Progress &progress);
  bool runOnCuda(const Conversion &checked, const Key &key,
                 ArrayRef<uint8_t> input, uint8_t *output, StringRef name);

  /// A host compilation under way: its own context (a context is not for
  /// two threads to load dialects and compile in at once), its result.
  struct Compilation {
    std::unique_ptr<MLIRContext> context;
    std::unique_ptr<CompiledConversion> conversion;             // host
    std::optional<::microscale::cuda::ConversionKernel> kernel; // cuda
    std::string error;
    double seconds = 0;
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  /// `key`'s compiled conversion, `result` of a Compilation (the host's
  /// conversion or the GPU's kernel): the one startCompiling began, its
  /// thread joined (`compileSeconds`: the thread's time), else the one
  /// `compileNow(error)` makes here (`compileSeconds`: its time). `error`
  /// says why it is empty. With `erase`, the joined compilation leaves
  /// `compiling` (the host keeps it: its context).
  template <typename T, typename CompileNow>
  T joinOrCompile(const Key &key, T Compilation::*result, bool erase,
                  CompileNow compileNow, std::string &error,
                  double &compileSeconds);
  static Key keyOf(const Conversion &checked) {
    return Key(checked.fromType.getAsOpaquePointer(),
               checked.toType.getAsOpaquePointer(),
               static_cast<int>(checked.part));
  }

  std::map<Key, std::unique_ptr<Compilation>> compiling;
  std::map<Key, std::unique_ptr<CompiledConversion>> host;
  std::map<Key, Kernel> cuda;
  std::unique_ptr<::microscale::cuda::Driver> driver;
};
} // namespace

Converter::~Converter() {
  for (auto &[key, compilation] : compiling)
    if (compilation->thread.joinable())
      compilation->thread.join();
}

void Converter::startCompiling(const Conversion &checked) {
  Key key = keyOf(checked);
  if (host.count(key) || cuda.count(key) || compiling.count(key))
    return;
  auto compilation = std::make_unique<Compilation>();
  Compilation *c = compilation.get();
  // The types cross to the thread's context as text.
  std::string fromText, toText;
  llvm::raw_string_ostream(fromText) << checked.fromType;
  llvm::raw_string_ostream(toText) << checked.toType;
  StoragePart part = checked.part;
  c->thread = std::thread([c, fromText, toText, part] {
    auto start = std::chrono::steady_clock::now();
    c->context =
        std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
    c->context->loadDialect<MicroscaleDialect>();
    auto from =
        dyn_cast_or_null<QTensorType>(parseType(fromText, c->context.get()));
    auto to =
        dyn_cast_or_null<QTensorType>(parseType(toText, c->context.get()));
    if (!from || !to)
      c->error = "cannot read back the types " + fromText + " and " + toText;
    else if (deviceOption == "cuda")
      c->kernel = compileConversionForCUDA(from, to, part,
                                           cudaPipelineOptions(), c->error);
    else
      c->conversion = CompiledConversion::compile(from, to, part, c->error);
    c->seconds = seconds(start);
    c->finished = true;
  });
  compiling.emplace(key, std::move(compilation));
}

bool Converter::isReady(const Conversion &checked) const {
  Key key = keyOf(checked);
  auto started = compiling.find(key);
  return host.count(key) || started == compiling.end() ||
         started->second->finished;
}

bool Converter::run(const Conversion &checked, ArrayRef<uint8_t> input,
                    uint8_t *output, StringRef name, Progress &progress) {
  Key key = keyOf(checked);
  if (deviceOption == "cuda")
    return runOnCuda(checked, key, input, output, name);
  return runOnHost(checked, key, input, output, name, progress);
}

template <typename T, typename CompileNow>
T Converter::joinOrCompile(const Key &key, T Compilation::*result, bool erase,
                           CompileNow compileNow, std::string &error,
                           double &compileSeconds) {
  auto started = compiling.find(key);
  if (started == compiling.end()) {
    auto start = std::chrono::steady_clock::now();
    T compiled = compileNow(error);
    compileSeconds = seconds(start);
    return compiled;
  }
  // Compiled on its own thread: its time is the thread's.
  Compilation &c = *started->second;
  c.thread.join();
  T compiled = std::move(c.*result);
  error = c.error;
  compileSeconds = c.seconds;
  if (erase)
    compiling.erase(started);
  return compiled;
}

bool Converter::runOnHost(const Conversion &checked, const Key &key,
                          ArrayRef<uint8_t> input, uint8_t *output,
                          StringRef name, Progress &progress) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CompiledConversion> &conversion = host[key];
  const bool compiled = !conversion;
  double compileSeconds = 0;
  if (!conversion) {
    std::string error;
    conversion = joinOrCompile(
        key, &Compilation::conversion, /*erase=*/false,
        [&](std::string &message) {
          return CompiledConversion::compile(checked.fromType, checked.toType,
                                             checked.part, message);
        },
        error, compileSeconds);
    if (!conversion) {
      host.erase(key);
      return reject(error);
    }
    if (static_cast<uint64_t>(conversion->getSourceBytes()) !=
            checked.sourceBytes ||
        static_cast<uint64_t>(conversion->getDestBytes()) != checked.destBytes)
      return reject("the compiled conversion's sizes (" +
                    llvm::Twine(conversion->getSourceBytes()) + " -> " +
                    llvm::Twine(conversion->getDestBytes()) +
                    " bytes) disagree with the layouts' (" +
                    llvm::Twine(checked.sourceBytes) + " -> " +
                    llvm::Twine(checked.destBytes) + ")");
  }
  start = std::chrono::steady_clock::now();
  // In steps where someone watches a long run, else in one go.
  const int64_t units = conversion->getNumUnits();
  const int steps =
      progress.isEnabled() && checked.destBytes >= (uint64_t(64) << 20) ? 20
                                                                        : 1;
  for (int step = 0; step < steps; ++step) {
    conversion->runUnits(input.data(), output, units * step / steps,
                         units * (step + 1) / steps, threadsOption);
    progress.advance(double(step + 1) / steps);
  }
  double runSeconds = seconds(start);
  if (timeOption)
    llvm::errs() << "mx-convert: " << name << ": "
                 << compileText(compiled, compileSeconds)
                 << llvm::format(", convert %.3f ms (%llu -> %llu bytes, "
                                 "%.2f GB/s read + write)\n",
                                 runSeconds * 1e3,
                                 (unsigned long long)checked.sourceBytes,
                                 (unsigned long long)checked.destBytes,
                                 (checked.sourceBytes + checked.destBytes) /
                                     std::max(runSeconds, 1e-9) / 1e9);
  return true;
}

/// --device cuda: compiles the conversion into one kernel (once) and runs
/// it on the GPU through the MLIR-free runtime: copy in, convert, copy out.
bool Converter::runOnCuda(const Conversion &checked, const Key &key,
                          ArrayRef<uint8_t> input, uint8_t *output,
                          StringRef name) {
  // An empty tensor launches nothing (and needs neither a kernel nor a
  // GPU); checkConversion matched the input's size.
  if (checked.fromType.getNumElements() == 0)
    return true;
  auto start = std::chrono::steady_clock::now();
  auto found = cuda.find(key);
  const bool compiled = found == cuda.end();
  if (compiled) {
    std::string error;
    // Unused: the --time line counts the compile from `start` (the wait on
    // the thread and the saved kernel included).
    double ownSeconds = 0;
    std::optional<::microscale::cuda::ConversionKernel> kernel = joinOrCompile(
        key, &Compilation::kernel, /*erase=*/true,
        [&](std::string &message) {
          return compileConversionForCUDA(checked.fromType, checked.toType,
                                          checked.part, cudaPipelineOptions(),
                                          message);
        },
        error, ownSeconds);
    if (!kernel)
      return reject("--device cuda: " + error);
    if (kernel->sourceBytes != checked.sourceBytes ||
        kernel->destBytes != checked.destBytes)
      return reject("--device cuda: the kernel's sizes (" +
                    llvm::Twine(kernel->sourceBytes) + " -> " +
                    llvm::Twine(kernel->destBytes) +
                    " bytes) disagree with the layouts' (" +
                    llvm::Twine(checked.sourceBytes) + " -> " +
                    llvm::Twine(checked.destBytes) + ")");
    if (!cudaSaveKernelOption.empty()) {
      // One prefix per distinct conversion; the first keeps the bare
      // prefix (what a single tensor's conversion always wrote).
      std::string prefix = cudaSaveKernelOption;
      if (!cuda.empty())
        prefix += "-" + std::to_string(cuda.size());
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
      if (!writeFile(prefix + ".image", image) ||
          !writeFile(prefix + ".launch", launchBytes))
        return false;
    }
    found = cuda.emplace(key, Kernel{std::move(*kernel), nullptr}).first;
  }
  Kernel &entry = found->second;
  double compileSeconds = seconds(start);
  // One driver, and one loaded module per kernel, for every tensor.
  if (!driver)
    driver = std::make_unique<::microscale::cuda::Driver>(cudaOrdinalOption);
  if (!driver->ok())
    return reject("--device cuda: " + driver->getError());
  start = std::chrono::steady_clock::now();
  if (!entry.function) {
    ::microscale::cuda::Module module = driver->loadModule(entry.kernel.image);
    if (module)
      entry.function = driver->getFunction(module, entry.kernel.name);
    if (!entry.function)
      return reject("--device cuda: " + driver->getError());
  }
  std::string error;
  if (!::microscale::cuda::runConversion(*driver, entry.function, entry.kernel,
                                         input.data(), output, error,
                                         /*stream=*/nullptr))
    return reject("--device cuda: " + error);
  double runSeconds = seconds(start);
  if (timeOption)
    llvm::errs() << "mx-convert: " << name << ": "
                 << compileText(compiled, compileSeconds)
                 << llvm::format(
                        " (%s for %s, kernel %s: %u blocks of %u threads), "
                        "run on the GPU %.3f ms (copies in and out "
                        "included)\n",
                        entry.kernel.image.rfind("//", 0) == 0 ? "PTX"
                                                               : "cubin",
                        cudaChipOption.c_str(), entry.kernel.name.c_str(),
                        entry.kernel.grid, entry.kernel.block,
                        runSeconds * 1e3);
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

static std::string spellShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  return text + "]";
}

namespace {
/// What the metadata says about a tensor an earlier mx-convert converted:
///   "<type> <layout>[; originally [<shape>] in <layout>]"
/// (the part after ';' since the checkpoint tools: the shape and layout the
/// tensor had in the checkpoint, restored when it is converted back).
struct Record {
  std::string type, layout;
  std::optional<std::vector<int64_t>> originalShape;
  std::string originalLayout;
};
} // namespace

static constexpr StringLiteral kOriginally = "; originally ";

static std::optional<Record> parseRecord(StringRef name, StringRef value,
                                         std::string &error) {
  Record record;
  auto [current, original] = value.split(kOriginally);
  auto [type, layout] = current.split(' ');
  record.type = type.str();
  record.layout = layout.str();
  auto malformed = [&] {
    error = ("the metadata record of tensor '" + name + "' ('" + value +
             "') is malformed: expected '<type> <layout>[" + kOriginally +
             "[<shape>] in <layout>]'")
                .str();
    return std::nullopt;
  };
  if (record.type.empty() || record.layout.empty())
    return malformed();
  if (original.empty())
    return record;
  if (!original.consume_front("["))
    return malformed();
  auto [shapeText, rest] = original.split(']');
  if (!rest.consume_front(" in ") || rest.empty())
    return malformed();
  std::vector<int64_t> shape;
  SmallVector<StringRef> extents;
  if (!shapeText.trim().empty())
    shapeText.split(extents, ',');
  for (StringRef extent : extents) {
    int64_t value;
    if (extent.trim().getAsInteger(10, value) || value < 0)
      return malformed();
    shape.push_back(value);
  }
  record.originalShape = std::move(shape);
  record.originalLayout = rest.str();
  return record;
}

static std::string metadataKey(StringRef name) {
  return ("microscale." + name).str();
}

namespace {
/// One tensor of the output: copied, or converted.
struct Job {
  const st::Tensor *input = nullptr;
  st::TensorInfo output;
  std::optional<Conversion> conversion;
  std::string label; // "tensor 'name'", for messages
};

/// Everything the checkpoint's conversion does, decided (and every request
/// checked) before the first byte is written.
struct Plan {
  std::vector<std::vector<Job>> shards; // parallel to Checkpoint::shards
  std::vector<std::map<std::string, std::string>> metadata;
  size_t converted = 0, copied = 0;
  uint64_t inputBytes = 0, outputBytes = 0, largestConverted = 0;
};
} // namespace

/// The tensors to convert: those matching --tensor, else every MX tensor
/// (recorded in the metadata, or a U8 *_blocks / *_scales pair).
static std::optional<std::set<std::string>>
selectTensors(const st::Checkpoint &checkpoint) {
  std::set<std::string> selected;
  if (!tensorOption.empty()) {
    llvm::StringSet<> named;
    for (const std::string &pattern : tensorOption) {
      // Converting a tensor twice would convert its converted bytes again:
      // a set cannot, but a name given twice is likely a mistake.
      if (!named.insert(pattern).second) {
        reject("--tensor: '" + pattern + "' is named more than once");
        return std::nullopt;
      }
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(pattern);
      if (!glob) {
        reject("--tensor: '" + pattern +
               "' is not a valid glob: " + llvm::toString(glob.takeError()));
        return std::nullopt;
      }
      // A name selects its tensor (one that is not U8 is refused below); a
      // pattern selects the U8 tensors it matches (`model.layers.0.*`: the
      // layer's MX tensors, not its bf16 ones).
      const bool wildcard =
          pattern.find_first_of("*?[{\\") != std::string::npos;
      bool matched = false;
      for (const st::Shard &shard : checkpoint.shards)
        for (const st::Tensor &tensor : shard.file.tensors)
          if (glob->match(tensor.name) && (!wildcard || tensor.dtype == "U8")) {
            selected.insert(tensor.name);
            matched = true;
          }
      if (!matched) {
        reject("'" + inputOption + "' has no tensor " +
               (wildcard ? "of dtype U8 matching '" : "named '") + pattern +
               "'");
        return std::nullopt;
      }
    }
    return selected;
  }
  for (const st::Shard &shard : checkpoint.shards)
    for (const st::Tensor &tensor : shard.file.tensors) {
      if (shard.file.metadata.count(metadataKey(tensor.name))) {
        selected.insert(tensor.name);
        continue;
      }
      StringRef name = tensor.name;
      StringRef prefix;
      if (name.ends_with("_blocks"))
        prefix = name.drop_back(strlen("_blocks"));
      else if (name.ends_with("_scales"))
        prefix = name.drop_back(strlen("_scales"));
      else
        continue;
      const st::Tensor *blocks = checkpoint.find((prefix + "_blocks").str());
      const st::Tensor *scales = checkpoint.find((prefix + "_scales").str());
      if (blocks && scales && blocks->dtype == "U8" && scales->dtype == "U8")
        selected.insert(tensor.name);
    }
  if (selected.empty()) {
    reject("'" + inputOption +
           "' has no MX tensors (no U8 *_blocks / *_scales pairs, no "
           "microscale records in its metadata): name them with --tensor");
    return std::nullopt;
  }
  return selected;
}

/// MXFP4 checkpoints pair P_blocks [..., N, K/32, 16] with P_scales
/// [..., N, K/32]; converting a pair whose shapes disagree would produce a
/// checkpoint no kernel can use. Checked for tensors still in the checkpoint
/// convention (no record of an earlier mx-convert in the metadata).
static bool checkPair(const st::Checkpoint &checkpoint, StringRef name) {
  StringRef prefix;
  if (name.ends_with("_blocks"))
    prefix = name.drop_back(strlen("_blocks"));
  else if (name.ends_with("_scales"))
    prefix = name.drop_back(strlen("_scales"));
  else
    return true;
  std::string blocksName = (prefix + "_blocks").str();
  std::string scalesName = (prefix + "_scales").str();
  const st::Tensor *blocksTensor = checkpoint.find(blocksName);
  const st::Tensor *scalesTensor = checkpoint.find(scalesName);
  if (!blocksTensor || !scalesTensor ||
      checkpoint.shardOf(*blocksTensor)
          .file.metadata.count(metadataKey(blocksName)) ||
      checkpoint.shardOf(*scalesTensor)
          .file.metadata.count(metadataKey(scalesName)))
    return true;
  ArrayRef<int64_t> b = blocksTensor->shape, s = scalesTensor->shape;
  if (!b.empty() && b.drop_back() == s)
    return true;
  return reject("tensors '" + blocksName + "' " + spellShape(b) + " and '" +
                scalesName + "' " + spellShape(s) +
                " disagree: the scales of blocks [..., N, K/32, 16] are "
                "[..., N, K/32]");
}

/// Decides and checks the conversion of every selected tensor.
static std::optional<Plan> planCheckpoint(MLIRContext &context,
                                          const st::Checkpoint &checkpoint) {
  std::optional<std::set<std::string>> selected = selectTensors(checkpoint);
  if (!selected)
    return std::nullopt;
  if (!typeOption.empty() && selected->size() != 1) {
    reject("--type applies to one tensor; " + llvm::Twine(selected->size()) +
           " are selected");
    return std::nullopt;
  }
  auto quietly = [&](auto parse) {
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    return parse();
  };
  auto parseLayoutOrNull = [&](StringRef text) -> Attribute {
    std::string ignored;
    return quietly([&] { return parseLayout(context, "", text, ignored); });
  };
  auto parseTypeOrNull = [&](StringRef text) -> Type {
    std::string ignored;
    return quietly([&] { return parseLogicalType(context, text, ignored); });
  };
  // The flags' layouts in normal form (a bad one is reported by the first
  // conversion that uses it, naming the flag).
  auto normal = [&](StringRef text) -> std::string {
    if (text.empty())
      return "";
    Attribute layout = parseLayoutOrNull(text);
    return layout ? spell(layout) : text.str();
  };

  Plan plan;
  for (const st::Shard &shard : checkpoint.shards) {
    std::vector<Job> &jobs = plan.shards.emplace_back();
    std::map<std::string, std::string> &metadata =
        plan.metadata.emplace_back(shard.file.metadata);
    for (const st::Tensor &tensor : shard.file.tensors) {
      Job &job = jobs.emplace_back();
      job.input = &tensor;
      job.label = "tensor '" + tensor.name + "'";
      job.output = {tensor.name, tensor.dtype, tensor.shape,
                    static_cast<uint64_t>(tensor.data.size())};
      plan.inputBytes += tensor.data.size();
      if (!selected->count(tensor.name)) {
        ++plan.copied;
        plan.outputBytes += job.output.bytes;
        continue;
      }
      const std::string &name = tensor.name;
      if (tensor.dtype != "U8") {
        reject("tensor '" + name + "' has dtype " + tensor.dtype +
               "; packed FP4 values and E8M0 scales are stored as U8");
        return std::nullopt;
      }
      if (!checkPair(checkpoint, name))
        return std::nullopt;
      StringRef nameRef = name;
      const bool blocks = nameRef.ends_with("_blocks");
      const bool scales = nameRef.ends_with("_scales");
      // What the tensor is: the record that an earlier mx-convert left in
      // the metadata, else the flags, else the MXFP4 checkpoint convention.
      // A flag that contradicts the record is refused: converting bytes as
      // what they are not gives garbage.
      std::optional<Record> record;
      auto recorded = metadata.find(metadataKey(name));
      if (recorded != metadata.end()) {
        std::string error;
        record = parseRecord(name, recorded->second, error);
        if (!record) {
          reject(error);
          return std::nullopt;
        }
      }
      std::string from = scales && !scalesFromOption.empty()
                             ? scalesFromOption.getValue()
                             : fromOption.getValue();
      const char *fromFlag =
          scales && !scalesFromOption.empty() ? "--scales-from" : "--from";
      if (record && !from.empty() &&
          !sameEntity(from, record->layout, parseLayoutOrNull)) {
        reject(llvm::Twine(fromFlag) + ": tensor '" + name +
               "' is recorded in the metadata as " + record->layout + ", not " +
               from + " (leave " + fromFlag + " out)");
        return std::nullopt;
      }
      if (record && !typeOption.empty() &&
          !sameEntity(typeOption, record->type, parseTypeOrNull)) {
        reject("--type: tensor '" + name + "' is recorded in the metadata as " +
               record->type + ", not " + typeOption + " (leave --type out)");
        return std::nullopt;
      }
      std::string type = !typeOption.empty() ? typeOption.getValue()
                         : record            ? record->type
                                             : "";
      if (type.empty()) {
        std::string error;
        std::optional<std::string> inferred =
            inferCheckpointType(name, tensor.shape, error);
        if (!inferred) {
          reject(error);
          return std::nullopt;
        }
        type = *inferred;
      }
      if (!from.empty())
        from = normal(from);
      else if (record)
        from = normal(record->layout);
      else
        from = normal(blocks || scales ? "#microscale.strided<major_dim = -2>"
                                       : "#microscale.strided");
      std::string to = normal(scales ? scalesToOption : toOption);
      if (to.empty()) {
        reject(llvm::Twine(scales ? "--scales-to" : "--to") +
               ": no layout given for tensor '" + name + "'");
        return std::nullopt;
      }
      std::string error;
      job.conversion =
          checkConversion(context, type, from, to, tensor.data.size(),
                          job.label, availableMemoryBytes(), error);
      if (!job.conversion) {
        if (!error.empty()) // else a diagnostic said why
          reject(error);
        return std::nullopt;
      }
      // The record's type in normal form too (checkConversion parsed it).
      if (auto parsed =
              dyn_cast_or_null<RankedTensorType>(parseTypeOrNull(type)))
        type = spell(parsed);
      // Where the tensor came from: the record's origin, else the tensor
      // as it is now. Back in that layout it takes that shape again, and
      // needs no record.
      std::vector<int64_t> originalShape = tensor.shape;
      std::string originalLayout = from;
      if (record) {
        if (record->originalShape) {
          originalShape = *record->originalShape;
          originalLayout = normal(record->originalLayout);
        } else {
          originalLayout.clear(); // unknown: the tensor keeps its record
        }
      }
      const Conversion &checked = *job.conversion;
      std::optional<int64_t> originalBytes = 1;
      for (int64_t extent : originalShape)
        originalBytes = originalBytes ? llvm::checkedMul(*originalBytes, extent)
                                      : std::nullopt;
      if (!originalLayout.empty() && originalLayout == to && originalBytes &&
          static_cast<uint64_t>(*originalBytes) == checked.destBytes) {
        job.output.shape = originalShape;
        metadata.erase(metadataKey(name));
      } else {
        job.output.shape.assign(checked.destStorageShape.begin(),
                                checked.destStorageShape.end());
        std::string value = type + " " + to;
        if (!originalLayout.empty())
          value += (kOriginally + spellShape(originalShape) + " in " +
                    originalLayout)
                       .str();
        metadata[metadataKey(name)] = value;
      }
      job.output.bytes = checked.destBytes;
      plan.outputBytes += checked.destBytes;
      plan.largestConverted =
          std::max<uint64_t>(plan.largestConverted, checked.destBytes);
      ++plan.converted;
    }
  }
  return plan;
}

/// Where the shards go: OUT itself for a single file, OUT/<shard> for a
/// directory.
static std::string outputPath(const st::Checkpoint &checkpoint, bool toDir,
                              StringRef fileName) {
  if (!toDir)
    return outputOption;
  llvm::SmallString<256> path(outputOption.getValue());
  llvm::sys::path::append(path, fileName);
  return path.str().str();
}

/// Appends `bytes` of `shard` to `os`: copied by the kernel from the file
/// (copy_file_range, as cp does: the bytes never pass through this
/// process's memory) where the system can, else written from the mapping.
/// `inFd` is the shard's file, opened on first use (-1: not yet).
static void copyTensor(const st::Checkpoint &checkpoint, const st::Shard &shard,
                       int &inFd, ArrayRef<uint8_t> bytes, OutputFile &out) {
  llvm::raw_fd_ostream &os = out.os();
#ifdef __linux__
  if (inFd == -1) {
    llvm::SmallString<256> path(checkpoint.directory);
    llvm::sys::path::append(path, shard.fileName);
    if (llvm::sys::fs::openFileForRead(path, inFd))
      inFd = -2; // not again
  }
  if (inFd >= 0 && !bytes.empty()) {
    os.flush();
    loff_t offset = st::fileOffset(shard.file, bytes);
    while (!bytes.empty()) {
      ssize_t copied = ::copy_file_range(inFd, &offset, out.getFD(), nullptr,
                                         bytes.size(), 0);
      if (copied <= 0)
        break; // a pipe, another file system, an old kernel: write() below
      bytes = bytes.drop_front(copied);
    }
  }
#endif
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

/// Writes all of `bytes` at `offset` of `fd`.
static std::error_code writeAt(int fd, ArrayRef<uint8_t> bytes,
                               uint64_t offset) {
  while (!bytes.empty()) {
    ssize_t written = ::pwrite(fd, bytes.data(), bytes.size(), offset);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return std::error_code(errno, std::generic_category());
    }
    bytes = bytes.drop_front(written);
    offset += written;
  }
  return {};
}

/// Puts `bytes` of `shard` at `offset` of `outFd`: copied by the kernel
/// where it can (copy_file_range), else written from the mapping.
static std::error_code copyAt(const st::Shard &shard, int inFd,
                              ArrayRef<uint8_t> bytes, int outFd,
                              uint64_t offset) {
#ifdef __linux__
  if (inFd >= 0) {
    loff_t in = st::fileOffset(shard.file, bytes);
    loff_t out = offset;
    while (!bytes.empty()) {
      ssize_t copied =
          ::copy_file_range(inFd, &in, outFd, &out, bytes.size(), 0);
      if (copied <= 0)
        break; // another file system, an old kernel: pwrite() below
      bytes = bytes.drop_front(copied);
    }
    offset = out;
  }
#endif
  return writeAt(outFd, bytes, offset);
}

/// Converts the checkpoint at IN into OUT: planned and checked first, then
/// written shard by shard, tensor by tensor, every file to a temporary;
/// only when all are complete are they renamed over OUT's.
static int convertCheckpoint(MLIRContext &context,
                             const st::Checkpoint &checkpoint, bool toDir) {
  std::optional<Plan> plan = planCheckpoint(context, checkpoint);
  if (!plan)
    return 1;
  std::vector<OutputFile> outs;
  for (const st::Shard &shard : checkpoint.shards) {
    llvm::Expected<OutputFile> out =
        OutputFile::open(outputPath(checkpoint, toDir, shard.fileName));
    if (!out)
      return fail(llvm::toString(out.takeError()));
    outs.push_back(std::move(*out));
  }
  const bool terminal = llvm::sys::Process::StandardErrIsDisplayed();
  Progress progress(progressOption || terminal, terminal,
                    checkpoint.numTensors(), plan->inputBytes);
  Converter converter;
  for (const std::vector<Job> &jobs : plan->shards)
    for (const Job &job : jobs)
      if (job.conversion)
        converter.startCompiling(*job.conversion);
  // One buffer for every converted tensor, the size of the largest.
  st::AlignedBytes buffer(plan->largestConverted);

  // Regular files (OUT's temporaries, or a stdout redirected to a file) are
  // written by offset, each tensor where the header puts it: a tensor whose
  // conversion is still compiling waits while the tensors after it are
  // copied and converted. Anything else (a pipe) is written in order.
  bool byOffset = true;
  for (OutputFile &out : outs) {
    struct stat status;
    byOffset &= ::fstat(out.getFD(), &status) == 0 && S_ISREG(status.st_mode);
  }
  if (byOffset) {
    std::vector<int> inFds(checkpoint.shards.size(), -1);
    llvm::scope_exit closeInputs([&] {
      for (int fd : inFds)
        if (fd >= 0)
          ::close(fd);
    });
    struct Placed {
      size_t shard;
      const Job *job;
      uint64_t offset;
    };
    std::vector<Placed> placed;
    for (size_t s = 0; s < checkpoint.shards.size(); ++s) {
      std::vector<st::TensorInfo> infos;
      for (const Job &job : plan->shards[s])
        infos.push_back(job.output);
      std::string header = st::encodeHeader(infos, plan->metadata[s]);
      outs[s].os().flush();
      if (std::error_code ec =
              writeAt(outs[s].getFD(),
                      ArrayRef<uint8_t>(
                          reinterpret_cast<const uint8_t *>(header.data()),
                          header.size()),
                      0))
        return fail("cannot write '" + outs[s].getPath() +
                    "': " + ec.message());
      uint64_t offset = header.size();
      for (const Job &job : plan->shards[s]) {
        placed.push_back({s, &job, offset});
        offset += job.output.bytes;
      }
      llvm::SmallString<256> path(checkpoint.directory);
      llvm::sys::path::append(path, checkpoint.shards[s].fileName);
      if (llvm::sys::fs::openFileForRead(path, inFds[s]))
        inFds[s] = -1; // written from the mapping instead
    }
    std::vector<bool> done(placed.size());
    size_t first = 0; // the first not done, in file order
    for (size_t left = placed.size(); left; --left) {
      // The first tensor that can go now, else the first left (whose
      // conversion is then waited for).
      size_t pick = first;
      for (size_t i = first; i < placed.size(); ++i)
        if (!done[i] && (!placed[i].job->conversion ||
                         converter.isReady(*placed[i].job->conversion))) {
          pick = i;
          break;
        }
      const Placed &p = placed[pick];
      const Job &job = *p.job;
      const st::Shard &shard = checkpoint.shards[p.shard];
      OutputFile &out = outs[p.shard];
      ArrayRef<uint8_t> input = job.input->data;
      progress.begin(job.input->name, input.size(),
                     job.conversion ? "convert" : "copy");
      std::error_code ec;
      if (job.conversion) {
        st::prefetchPages(shard.file, input);
        if (!converter.run(*job.conversion, input, buffer.data(), job.label,
                           progress))
          return 1;
        ec =
            writeAt(out.getFD(),
                    ArrayRef<uint8_t>(buffer.data(), job.conversion->destBytes),
                    p.offset);
      } else {
        ec = copyAt(shard, inFds[p.shard], input, out.getFD(), p.offset);
      }
      if (ec)
        return fail("cannot write '" + out.getPath() + "': " + ec.message());
      // Its pages are done with: the resident set stays about one tensor.
      st::releasePages(shard.file, input);
      progress.end();
      done[pick] = true;
      while (first < placed.size() && done[first])
        ++first;
    }
  }
  for (size_t s = 0; s < checkpoint.shards.size() && !byOffset; ++s) {
    const st::Shard &shard = checkpoint.shards[s];
    int inFd = -1;
    llvm::scope_exit closeInput([&] {
      if (inFd >= 0)
        ::close(inFd);
    });
    std::vector<st::TensorInfo> infos;
    for (const Job &job : plan->shards[s])
      infos.push_back(job.output);
    llvm::raw_fd_ostream &os = outs[s].os();
    os << st::encodeHeader(infos, plan->metadata[s]);
    for (const Job &job : plan->shards[s]) {
      ArrayRef<uint8_t> input = job.input->data;
      progress.begin(job.input->name, input.size(),
                     job.conversion ? "convert" : "copy");
      if (job.conversion) {
        st::prefetchPages(shard.file, input);
        if (!converter.run(*job.conversion, input, buffer.data(), job.label,
                           progress))
          return 1;
        os.write(reinterpret_cast<const char *>(buffer.data()),
                 job.conversion->destBytes);
      } else {
        copyTensor(checkpoint, shard, inFd, input, outs[s]);
      }
      // Its pages are done with: the resident set stays about one tensor.
      st::releasePages(shard.file, input);
      progress.end();
      // A full disk is reported now, not after the rest is converted.
      if (os.has_error())
        break;
    }
  }
  // Every file complete before any replaces OUT's.
  for (OutputFile &out : outs)
    if (llvm::Error error = out.finish())
      return fail(llvm::toString(std::move(error)));
  std::optional<OutputFile> indexOut;
  if (checkpoint.sharded()) {
    llvm::Expected<OutputFile> out =
        OutputFile::open(outputPath(checkpoint, true, *checkpoint.indexName));
    if (!out)
      return fail(llvm::toString(out.takeError()));
    indexOut.emplace(std::move(*out));
    indexOut->os() << st::encodeIndex(checkpoint, plan->outputBytes);
    if (llvm::Error error = indexOut->finish())
      return fail(llvm::toString(std::move(error)));
  }
  for (OutputFile &out : outs)
    if (llvm::Error error = out.commit())
      return fail(llvm::toString(std::move(error)));
  if (indexOut)
    if (llvm::Error error = indexOut->commit())
      return fail(llvm::toString(std::move(error)));
  progress.summary(outputOption, plan->converted, plan->copied,
                   plan->outputBytes);
  return 0;
}

/// A checkpoint at IN: opened, OUT prepared (a directory for shards or a
/// directory IN), converted; a directory created for OUT is removed again
/// on failure.
static int convertCheckpoint(MLIRContext &context) {
  llvm::Expected<st::Checkpoint> checkpoint = st::openCheckpoint(inputOption);
  if (!checkpoint)
    return fail(llvm::toString(checkpoint.takeError()));
  const bool toDir =
      checkpoint->sharded() || llvm::sys::fs::is_directory(inputOption);
  bool created = false;
  if (toDir) {
    if (outputOption == "-")
      return fail("-o -: a sharded checkpoint is written to a directory");
    if (llvm::sys::fs::exists(outputOption)) {
      if (!llvm::sys::fs::is_directory(outputOption))
        return fail("cannot write '" + outputOption +
                    "': a sharded checkpoint is written to a directory, and "
                    "this is not one");
      if (llvm::sys::fs::equivalent(outputOption, checkpoint->directory))
        return fail("cannot write '" + outputOption +
                    "': it is the directory of IN; write the converted "
                    "checkpoint elsewhere");
    } else {
      if (std::error_code ec = llvm::sys::fs::create_directory(outputOption))
        return fail("cannot write '" + outputOption + "': " + ec.message());
      created = true;
    }
  }
  int status = convertCheckpoint(context, *checkpoint, toDir);
  if (status && created)
    llvm::sys::fs::remove(outputOption); // empty: the temporaries are gone
  return status;
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
  if (deviceOption == "cuda" && cudaFormatOption != "auto" &&
      cudaFormatOption != "bin" && cudaFormatOption != "isa")
    return fail("--cuda-format must be auto, bin or isa, got '" +
                cudaFormatOption + "'");

  MLIRContext context;
  context.loadDialect<MicroscaleDialect>();
  // Diagnostics from parsing and verification go to stderr, prefixed.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diagnostic) {
    llvm::errs() << "mx-convert: error: " << diagnostic << "\n";
    return success();
  });

  // Raw bytes need --type; without it, a file that looks like a checkpoint
  // is read as one, whatever its name.
  if (StringRef(inputOption).ends_with(".safetensors") ||
      (typeOption.empty() && st::looksLikeCheckpoint(inputOption)) ||
      llvm::sys::fs::is_directory(inputOption))
    return convertCheckpoint(context);
  if (typeOption.empty())
    return fail("--type: give the logical tensor, e.g. 2x64x128xf4E2M1FN");
  if (toOption.empty())
    return fail("--to: give the layout to convert to");
  // OUT is prepared first: a path that cannot be written is reported before
  // the conversion runs, and the temporary is registered for removal on
  // SIGINT/SIGTERM for the whole run. Until commit(), OUT is untouched.
  llvm::Expected<OutputFile> out = OutputFile::open(outputOption);
  if (!out)
    return fail(llvm::toString(out.takeError()));

  auto input = llvm::MemoryBuffer::getFile(inputOption, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!input)
    return fail("cannot read '" + inputOption +
                "': " + input.getError().message());
  ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>((*input)->getBufferStart()),
      (*input)->getBufferSize());
  const std::string label = "'" + inputOption + "'";
  std::string error;
  std::optional<Conversion> checked = checkConversion(
      context, typeOption,
      fromOption.empty() ? "#microscale.strided" : fromOption.getValue(),
      toOption, bytes.size(), label, availableMemoryBytes(), error);
  if (!checked)
    return error.empty() ? 1 : fail(error); // else a diagnostic said why
  // 64-byte aligned, so that the conversion may stream its stores.
  st::AlignedBytes output(checked->destBytes);
  // A progress display for inputs of 64 MiB or more on a terminal.
  const bool terminal = llvm::sys::Process::StandardErrIsDisplayed();
  Progress progress(progressOption || (terminal && bytes.size() >= (64 << 20)),
                    terminal, 1, bytes.size());
  progress.begin(inputOption, bytes.size(), "convert");
  Converter converter;
  if (!converter.run(*checked, bytes, output.data(), label, progress))
    return 1;
  progress.end();
  out->os().write(reinterpret_cast<const char *>(output.data()),
                  output.size());
  if (llvm::Error error = out->commit())
    return fail(llvm::toString(std::move(error)));
  progress.summary(outputOption, 1, 0, output.size());
  return 0;
}
