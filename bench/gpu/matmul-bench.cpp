//===- matmul-bench.cpp - The generated bf16 x MXFP4 matmul on the GPU ----===//
//
// Runs the mixed_matmul kernels that make_matmul_kernels.sh generated on the
// GPU through the MLIR-free CUDA runtime:
//  * correctness on random data (bf16 activations from N(0, 1), random FP4
//    codes, E8M0 scales 2^-7 .. 2^0) against a float64 product of the
//    reference's dequantized weight: every output of the small shapes, 512
//    sampled outputs of the benchmark shapes; ||out - ref|| / ||ref||;
//  * timing: back-to-back launches between CUDA events, rotating up to 16
//    copies of the weight so that it comes from device memory, not L2;
//    median over 15 rounds of the time per launch; and the same launches
//    captured once into a CUDA graph and replayed (graph_us), the flow
//    cublas-matmul.py times cuBLAS in and a serving engine's decode step
//    runs in (no host launch cost between kernels). The decode floor: the
//    FP4 weight and its scales read once at the device-to-device copy
//    bandwidth measured in the same run.
//  * the read baseline, where MATMUL_BENCH_READ_CUBIN names the cubin of
//    read-floor.cu (run-matmul-on-h200.sh builds it): a kernel that only
//    reads the same weight copies, timed the same two ways (read_us,
//    read_graph_us): what any kernel reading those bytes takes, launch and
//    ramp included, which the floor (bytes over the copy bandwidth of
//    256 MiB) leaves out.
// Prints one CSV line per case:
// m,k,n,ours_us,floor_us,rel_error,split_k,kernel,experts,weight_tb_s,graph_us,read_us,read_graph_us
// (weight_tb_s: the weight's and scales' bytes over our time; -1 where the
// driver has no graph API or no read cubin was given).
//
// MoE routing: each token to top-k distinct experts drawn uniformly, or,
// with MATMUL_BENCH_ROUTING=skewed, with probability proportional to
// 1 / (e + 1) (a Zipf-like load: expert 0 takes several times the mean),
// with skewed-last 1 / (E - e) (the same load, the largest expert last).
//
//   g++ -O2 -std=c++17 -Iinclude bench/gpu/matmul-bench.cpp lib/Reference/*.cpp
//       lib/Runtime/CUDA/CudaDriver.cpp -ldl -pthread -o matmul-bench
//   [MATMUL_BENCH_ROUTING=skewed|skewed-last] ./matmul-bench bench/gpu/kernels-mm
//
//===----------------------------------------------------------------------===//
#include "microscale/Reference/FloatFormats.h"
#include "microscale/Reference/MXFormat.h"
#include "microscale/Reference/TritonLayouts.h"
#include "microscale/Runtime/CUDA/CudaDriver.h"

#include "BenchSupport.h"

#include <algorithm>
#include <dlfcn.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace microscale;

namespace {
/// The driver's stream capture and graph calls (not in cuda::Driver, which
/// the library ships: only this benchmark replays graphs). Resolved from
/// the libcuda the driver already loaded.
struct GraphApi {
  int (*beginCapture)(cuda::Stream, int) = nullptr;
  int (*endCapture)(cuda::Stream, void **) = nullptr;
  int (*instantiate)(void **, void *, unsigned long long) = nullptr;
  int (*launch)(void *, cuda::Stream) = nullptr;
  int (*destroyExec)(void *) = nullptr;
  int (*destroy)(void *) = nullptr;

  GraphApi() {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!library)
      return;
    auto bind = [&](auto &slot, const char *name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          dlsym(library, name));
      return slot != nullptr;
    };
    if (!(bind(beginCapture, "cuStreamBeginCapture_v2") &&
          bind(endCapture, "cuStreamEndCapture") &&
          bind(instantiate, "cuGraphInstantiateWithFlags") &&
          bind(launch, "cuGraphLaunch") &&
          bind(destroyExec, "cuGraphExecDestroy") &&
          bind(destroy, "cuGraphDestroy")))
      beginCapture = nullptr;
  }
  bool ok() const { return beginCapture != nullptr; }

  /// `enqueue`'s work on `stream` captured into a graph (relaxed mode: the
  /// other threads' calls are not ours), or null.
  template <typename Fn> void *capture(cuda::Stream stream, Fn enqueue) {
    constexpr int kRelaxed = 2; // CU_STREAM_CAPTURE_MODE_RELAXED
    void *graph = nullptr, *exec = nullptr;
    if (!ok() || beginCapture(stream, kRelaxed))
      return nullptr;
    enqueue();
    if (endCapture(stream, &graph) || !graph)
      return nullptr;
    const int failed = instantiate(&exec, graph, 0);
    destroy(graph);
    return failed ? nullptr : exec;
  }
};
} // namespace

/// dst[i] = src[i] for the first n 32-bit words (256 threads a block): the
/// kernel that writes the activations before a product in the check of
/// programmatic dependent launches. PTX, compiled by the driver.
static const char kCopyWordsPtx[] = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry copy_words(.param .u64 src, .param .u64 dst, .param .u64 n) {
  .reg .b64 %rd<8>;
  .reg .b32 %r<6>;
  .reg .pred %p;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u64 %rd3, [n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  mad.wide.u32 %rd4, %r1, 256, 0;
  cvt.u64.u32 %rd5, %r2;
  add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra done;
  shl.b64 %rd5, %rd4, 2;
  add.u64 %rd6, %rd1, %rd5;
  add.u64 %rd7, %rd2, %rd5;
  ld.global.u32 %r3, [%rd6];
  st.global.u32 [%rd7], %r3;
done:
  ret;
}
)";

int main(int argc, char **argv) {
  const std::string dir = argc > 1 ? argv[1] : "bench/gpu/kernels-mm";
  cuda::Driver driver;
  if (!driver.ok()) {
    std::printf("SKIP: %s\n", driver.getError().c_str());
    return 0;
  }
  // All the work on one non-blocking stream: copies, poisoning, launches,
  // timing events.
  cuda::Stream stream = driver.createStream();
  // Copy bandwidth (read + write) of 256 MiB, for the decode floor.
  const size_t copyBytes = size_t(256) << 20;
  cuda::DevicePtr copyA = driver.allocate(copyBytes),
                  copyB = driver.allocate(copyBytes);
  const float copyMs = bench::medianMs(
      driver, [&] { driver.copyOnDevice(copyB, copyA, copyBytes, stream); },
      5, 30, stream);
  const double bandwidth = 2.0 * copyBytes / (copyMs * 1e-3);
  driver.free(copyA);
  driver.free(copyB);
  std::printf("# copy bandwidth %.2f TB/s (read + write)\n", bandwidth / 1e12);
  std::printf("m,k,n,ours_us,floor_us,rel_error,split_k,kernel,experts,"
              "weight_tb_s,graph_us,read_us,read_graph_us,pdl_graph_us,"
              "pdl_exact\n");
  GraphApi graphs;
  const bool checkOnly = std::getenv("MATMUL_BENCH_CHECK_ONLY") != nullptr;
  // MATMUL_BENCH_PDL: also the graph of programmatic dependent launches
  // (each product may start while the one before it ends), and a check that
  // the kernels wait for the activations a previous kernel writes.
  const bool pdl = std::getenv("MATMUL_BENCH_PDL") != nullptr;
  cuda::Module copyModule = nullptr;
  cuda::Function copyWords = nullptr;
  if (pdl) {
    copyModule = driver.loadModule(kCopyWordsPtx);
    copyWords = driver.getFunction(copyModule, "copy_words");
  }
  // The read baseline's kernel: 4 blocks of 8 warps per SM of an H200 (a
  // contiguous read of 32 MiB was fastest at 32 warps per SM:
  // probe/inflight.cu).
  const char *readCubin = std::getenv("MATMUL_BENCH_READ_CUBIN");
  cuda::Module readModule = nullptr;
  cuda::Function readKernel = nullptr;
  cuda::DevicePtr readSink = 0;
  constexpr unsigned kReadBlocks = 4 * 132, kReadThreads = 256;
  if (readCubin) {
    readModule = driver.loadModule(bench::readFile(readCubin));
    readKernel = driver.getFunction(readModule, "read_floor");
    readSink = driver.allocate(4);
  }

  std::ifstream cases(dir + "/cases.txt");
  // A case: m k n threads name gridX gridY gridZ experts tokens [entry
  // dynamic [layout [shared box]]]: the cubin `name`.cubin, its kernel `entry`
  // (mixed_matmul_0), the weight's layout (kmajor, or hopper<W>: the Hopper
  // value layout and the Hopper scale layout of num_warps W),
  // a launch with `shared` bytes of dynamic shared memory and, where `box`
  // is not 0, the activations' tensor map for boxes of `box` tokens as the
  // last argument (the fields after `layout`: shared box),
  // and with dynamic = 1 a kernel of rows known at run time only (one
  // variant of those the host code chooses from; it takes the ragged, lhs
  // and out rows as three more arguments). Dense
  // products have experts = 0 and tokens = m; a ragged (MoE) product has
  // m ragged rows, `tokens` activation rows each routed to m / tokens
  // distinct experts (top-k), rows grouped by expert, read through a gather
  // and written through a scatter (a random permutation).
  int64_t m, k, n, threads, experts, tokens;
  std::string name;
  int failures = 0;
  std::mt19937 rng;
  unsigned gridX = 0, gridY = 0, gridZ = 0;
  std::string line;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string entry = "mixed_matmul_0", layout = "kmajor";
    int dynamicRows = 0;
    unsigned sharedBytes = 0, boxRows = 0;
    if (!(fields >> m >> k >> n >> threads >> name >> gridX >> gridY >>
          gridZ >> experts >> tokens))
      continue;
    fields >> entry >> dynamicRows >> layout >> sharedBytes >> boxRows;
    // Activations and routing seeded by the case's shape: two kernels of
    // one shape (a static and a run-time compile, two builds) see the
    // same rows, whatever the order of the cases.
    rng.seed(static_cast<unsigned>(m * 7919 + k * 104729 + n * 31 +
                                   experts * 1009 + tokens));
    const int64_t batches = experts ? experts : 1;
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<uint16_t> a(tokens * k);
    for (auto &x : a)
      x = ref::toBF16Bits(gauss(rng));
    // The routing: each token to topk distinct experts, rows by expert.
    std::vector<int32_t> offsets(batches), counts(batches), gather, scatter;
    std::vector<int64_t> expertOfRow;
    if (experts) {
      const int64_t topk = m / tokens;
      std::vector<std::vector<int32_t>> byExpert(experts);
      // Small (correctness) cases leave the last expert without rows: an
      // empty slice, whose blocks must write nothing.
      const bool small = k <= 1024;
      const int64_t routed = small ? experts - 1 : experts;
      const char *routing = std::getenv("MATMUL_BENCH_ROUTING");
      const std::string route = routing ? routing : "";
      const bool skewedLast = route == "skewed-last";
      const bool skewed = route == "skewed" || skewedLast;
      std::vector<double> weights(routed);
      for (int64_t e = 0; e < routed; ++e)
        weights[e] = 1.0 / static_cast<double>(
                               skewedLast ? routed - e : e + 1);
      std::discrete_distribution<int64_t> zipf(weights.begin(), weights.end());
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<int32_t> chosen;
        while (static_cast<int64_t>(chosen.size()) < topk) {
          int32_t e = skewed ? static_cast<int32_t>(zipf(rng))
                             : static_cast<int32_t>(rng() % routed);
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end())
            chosen.push_back(e);
        }
        for (int32_t e : chosen)
          byExpert[e].push_back(static_cast<int32_t>(t));
      }
      for (int64_t e = 0; e < experts; ++e) {
        offsets[e] = static_cast<int32_t>(gather.size());
        counts[e] = static_cast<int32_t>(byExpert[e].size());
        for (int32_t t : byExpert[e]) {
          gather.push_back(t);
          expertOfRow.push_back(e);
        }
      }
      std::printf("# %s: %s routing, largest expert %d rows (mean "
                  "%.1f)\n",
                  name.c_str(), skewedLast ? "skewed-last"
                                : skewed   ? "skewed"
                                           : "uniform",
                  *std::max_element(counts.begin(), counts.end()),
                  static_cast<double>(m) / static_cast<double>(routed));
      // The output rows: a random permutation of the ragged rows.
      scatter.resize(m);
      for (int64_t r = 0; r < m; ++r)
        scatter[r] = static_cast<int32_t>(r);
      std::shuffle(scatter.begin(), scatter.end(), rng);
    }
    // K-major weight storage: column n's K/2 bytes, low nibble = even K
    // (per expert, experts one after the other).
    // The weight's own generator, seeded by its shape, so that cases of one
    // weight shape share its bytes (and its Hopper images, below).
    std::mt19937 weightRng(static_cast<unsigned>(k * 1000003 + n * 31 + batches));
    std::vector<uint8_t> values(batches * k * n / 2),
        scaleCodes(batches * (k / 32) * n);
    for (auto &b : values)
      b = static_cast<uint8_t>(weightRng());
    // Benchmark shapes: real weights' scales (2^-7 .. 2^0). Small shapes:
    // codes across 128 (both the folded and the exact scale paths of the
    // kernel) and the subnormal-producing codes 0..2.
    const bool small = k <= 1024;
    for (auto &s : scaleCodes)
      s = static_cast<uint8_t>(small ? (weightRng() % 10 == 0
                                            ? weightRng() % 3
                                            : 100 + weightRng() % 61)
                                     : 120 + weightRng() % 8);
    auto weight = [&](int64_t e, int64_t kk, int64_t nn) {
      uint8_t byte = values[((e * n + nn) * k + kk) / 2];
      uint8_t code = kk % 2 ? byte >> 4 : byte & 0xF;
      return ref::decode(ref::ScalarFormat::E2M1, code) *
             ref::decode(ref::ScalarFormat::E8M0,
                         scaleCodes[(e * (k / 32) + kk / 32) * n + nn]);
    };
    const float globalScale = 1.0f;

    // A Hopper-layout case ("hopper<W>"): the same codes stored into
    // Triton's Hopper value layout (mma_version 3) and scale layout
    // (num_warps W) by the reference library, expert after expert (each
    // expert's images follow one another); the device gets those bytes.
    std::vector<uint8_t> deviceValues = values, deviceScales = scaleCodes;
    // The last Hopper images stored, by weight shape and layout (storing
    // 32 experts of 2880 x 5760 through the reference takes ~15 s).
    static std::string cachedKey;
    static std::vector<uint8_t> cachedValues, cachedScales;
    const std::string imageKey = layout + ":" + std::to_string(k) + "x" +
                                 std::to_string(n) + "x" +
                                 std::to_string(batches);
    if (layout.rfind("hopper", 0) == 0 && imageKey == cachedKey) {
      deviceValues = cachedValues;
      deviceScales = cachedScales;
    } else if (layout.rfind("hopper", 0) == 0) {
      const int warps = std::stoi(layout.substr(6));
      std::string error;
      auto valueLayout = ref::makeHopperValueLayout({k, n}, -2, 3, &error);
      auto scaleLayout =
          ref::makeHopperScaleLayout({k / 32, n}, -2, warps, &error);
      if (!valueLayout || !scaleLayout) {
        std::printf("# %s: %s\n", name.c_str(), error.c_str());
        return 1;
      }
      const size_t valueBytes = valueLayout->getStorageBytes(),
                   scaleBytes = scaleLayout->getStorageBytes();
      deviceValues.assign(batches * valueBytes, 0);
      deviceScales.assign(batches * scaleBytes, 0);
      // Experts in parallel (each thread its own codes buffer).
      auto storeExperts = [&](int64_t first, int64_t step) {
        std::vector<uint8_t> codes(k * n);
        for (int64_t e = first; e < batches; e += step) {
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t nn = 0; nn < n; ++nn) {
              const uint8_t byte = values[((e * n + nn) * k + kk) / 2];
              codes[kk * n + nn] = kk % 2 ? byte >> 4 : byte & 0xF;
            }
          valueLayout->store(codes.data(),
                             deviceValues.data() + e * valueBytes);
          scaleLayout->store(scaleCodes.data() + e * (k / 32) * n,
                             deviceScales.data() + e * scaleBytes);
        }
      };
      const int64_t workers = std::min<int64_t>(
          batches, std::max(1u, std::thread::hardware_concurrency()));
      std::vector<std::thread> pool;
      for (int64_t t = 1; t < workers; ++t)
        pool.emplace_back(storeExperts, t, workers);
      storeExperts(0, workers);
      for (std::thread &t : pool)
        t.join();
      cachedKey = imageKey;
      cachedValues = deviceValues;
      cachedScales = deviceScales;
    }
    cuda::Module module = driver.loadModule(bench::readFile(dir + "/" + name + ".cubin"));
    cuda::Function kernel = driver.getFunction(module, entry);
    // Several copies of the weight, rotated in the timing loop, so that a
    // weight smaller than the 50 MB L2 is still read from device memory.
    const size_t weightBytes = values.size() + scaleCodes.size();
    const int copies = static_cast<int>(std::min<size_t>(
        16, std::max<size_t>(1, (size_t(256) << 20) /
                                    (deviceValues.size() + deviceScales.size()))));
    // MATMUL_BENCH_TMA_PAD_ROWS (an experiment, not what the host code
    // does): the activations' tensor map declares the rows rounded up to
    // whole boxes (the extra rows allocated, zeros), so that no box reads
    // out of bounds; the kernels still take M rows.
    const bool padMapRows =
        boxRows && std::getenv("MATMUL_BENCH_TMA_PAD_ROWS") != nullptr;
    const int64_t mapRows =
        padMapRows ? (tokens + boxRows - 1) / boxRows * boxRows : tokens;
    cuda::DevicePtr da = driver.allocate(mapRows * k * 2),
                    dout = driver.allocate(m * n * 2);
    if (padMapRows)
      driver.memset(da, 0, mapRows * k * 2, stream);
    std::vector<cuda::DevicePtr> dv(copies), ds(copies);
    for (int c = 0; c < copies; ++c) {
      dv[c] = driver.allocate(deviceValues.size());
      ds[c] = driver.allocate(deviceScales.size());
      driver.copyToDevice(dv[c], deviceValues.data(), deviceValues.size(),
                          stream);
      driver.copyToDevice(ds[c], deviceScales.data(), deviceScales.size(),
                          stream);
    }
    cuda::DevicePtr doffsets = 0, dcounts = 0, dgather = 0, dscatter = 0;
    if (experts) {
      doffsets = driver.allocate(experts * 4);
      dcounts = driver.allocate(experts * 4);
      dgather = driver.allocate(gather.size() * 4);
      driver.copyToDevice(doffsets, offsets.data(), experts * 4, stream);
      driver.copyToDevice(dcounts, counts.data(), experts * 4, stream);
      driver.copyToDevice(dgather, gather.data(), gather.size() * 4, stream);
      dscatter = driver.allocate(scatter.size() * 4);
      driver.copyToDevice(dscatter, scatter.data(), scatter.size() * 4, stream);
    }
    driver.copyToDevice(da, a.data(), a.size() * 2, stream);
    driver.memset(dout, 0xFF, m * n * 2, stream); // poison: bf16 NaN
    float g = globalScale;
    // The wgmma kernel with TMA copies: the activations' tensor map, built
    // as the host code builds it (nvgpu.tma.create.descriptor: boxes of
    // boxRows tokens x 64 K, 128-byte swizzle, zeros out of bounds) and
    // kept in device memory; its last argument.
    // The host bytes live through the case: the copy is asynchronous, and
    // the stream is synchronized after the first launch.
    cuda::DevicePtr dmap = 0;
    alignas(64) uint8_t map[128];
    if (boxRows) {
      if (!driver.encodeSwizzled128TensorMap(map, da, mapRows, k, k * 2,
                                             boxRows, 64)) {
        std::printf("# %s: %s\n", name.c_str(), driver.getError().c_str());
        return 1;
      }
      dmap = driver.allocate(sizeof(map));
      driver.copyToDevice(dmap, map, sizeof(map), stream);
    }
    std::vector<std::vector<void *>> args(copies);
    // Dynamic rows: the ragged rows, lhs rows and out rows (index).
    int64_t raggedRows = m, lhsRows = tokens, outRows = m;
    for (int c = 0; c < copies; ++c) {
      args[c] = {&da, &dv[c], &ds[c], &dout, &g};
      if (experts)
        args[c].insert(args[c].end(),
                       {&doffsets, &dcounts, &dgather, &dscatter});
      // (The Hopper-layout kernels take one in the dense form: the rows,
      // min(lhs, out); three in the ragged form, as the K-major kernel.)
      if (dynamicRows && layout.rfind("hopper", 0) == 0 && !experts)
        args[c].push_back(&raggedRows);
      else if (dynamicRows)
        args[c].insert(args[c].end(), {&raggedRows, &lhsRows, &outRows});
      if (boxRows)
        args[c].push_back(&dmap);
    }
    // The launch the compiler emits (cases.txt records its grid).
    const unsigned block = static_cast<unsigned>(threads);
    driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes, args[0],
                  stream);
    driver.synchronize(stream);
    std::vector<uint16_t> out(m * n);
    driver.copyToHost(out.data(), dout, out.size() * 2, stream);
    driver.synchronize(stream);

    // Every output of small shapes, 512 samples of large ones.
    const bool full = small;
    double errorNorm = 0, refNorm = 0;
    auto check = [&](int64_t i, int64_t j) {
      double want = 0;
      const int64_t e = experts ? expertOfRow[i] : 0;
      const int64_t row = experts ? gather[i] : i;
      for (int64_t kk = 0; kk < k; ++kk)
        want += double(ref::fromBF16Bits(a[row * k + kk])) * weight(e, kk, j);
      want *= globalScale;
      const double have =
          ref::fromBF16Bits(out[(experts ? scatter[i] : i) * n + j]);
      errorNorm += (have - want) * (have - want);
      refNorm += want * want;
    };
    if (full) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          check(i, j);
    } else {
      for (int s = 0; s < 512; ++s)
        check(rng() % m, rng() % n);
    }
    const double relError = std::sqrt(errorNorm / refNorm);
    failures += !(relError < 1e-2);

    // MATMUL_BENCH_CHECK_ONLY: the check alone, one launch per case (the
    // run under compute-sanitizer, bench/gpu/run-matmul-sanitizers-on-h200.sh).
    float ours = -1, inGraph = -1, readLaunches = -1, readGraph = -1,
          pdlGraph = -1;
    if (!checkOnly) {
      // Back-to-back launches (the GPU never waits for the host), rotating
      // the weight copies; the median over rounds of the time per launch.
      const int perRound = std::max(copies, 20);
      ours =
          bench::medianMs(
              driver,
              [&] {
                for (int i = 0; i < perRound; ++i)
                  driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes,
                                args[i % copies], stream);
              },
              2, 15, stream) /
          perRound;
      // The same launches as one CUDA graph, replayed.
      // A round of launches captured once and replayed: ms per launch, or -1.
      auto perLaunchInGraph = [&](auto round) -> float {
        void *exec = graphs.capture(stream, round);
        if (!exec)
          return -1;
        const float ms = bench::medianMs(
                             driver, [&] { graphs.launch(exec, stream); }, 2, 15,
                             stream) /
                         perRound;
        driver.synchronize(stream);
        graphs.destroyExec(exec);
        return ms;
      };
      inGraph = perLaunchInGraph([&] {
        for (int i = 0; i < perRound; ++i)
          driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes,
                        args[i % copies], stream);
      });
      // The read baseline on the same copies, the same two ways.
      if (readKernel) {
        uint64_t valueUnits = values.size() / 16,
                 scaleUnits = scaleCodes.size() / 16;
        std::vector<std::vector<void *>> readArgs(copies);
        for (int c = 0; c < copies; ++c)
          readArgs[c] = {&dv[c], &valueUnits, &ds[c], &scaleUnits, &readSink};
        auto readRound = [&] {
          for (int i = 0; i < perRound; ++i)
            driver.launch(readKernel, kReadBlocks, 1, 1, kReadThreads, 0,
                          readArgs[i % copies], stream);
        };
        readLaunches = bench::medianMs(driver, readRound, 2, 15, stream) /
                       perRound;
        readGraph = perLaunchInGraph(readRound);
      }
      if (pdl)
        pdlGraph = perLaunchInGraph([&] {
          for (int i = 0; i < perRound; ++i)
            driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes,
                          args[i % copies], stream, /*overlapPrevious=*/true);
        });
    }
    // Programmatic dependent launches: the graph, then the check. The
    // check alternates two activation sets, each written into `da` by a
    // copy kernel just before a product launched to overlap it; the last
    // product's output must equal the plain launch's, bit for bit (-1: not
    // run).
    int pdlExact = -1;
    if (pdl && driver.ok()) {
      uint64_t words = uint64_t(tokens) * k / 2;
      std::vector<uint16_t> other(a.size());
      for (auto &x : other)
        x = ref::toBF16Bits(float(int(rng() % 2001) - 1000) / 1000.0f);
      cuda::DevicePtr first = driver.allocate(a.size() * 2),
                      second = driver.allocate(a.size() * 2);
      driver.copyToDevice(first, a.data(), a.size() * 2, stream);
      driver.copyToDevice(second, other.data(), other.size() * 2, stream);
      // The plain launch's output for the second set.
      driver.copyOnDevice(da, second, a.size() * 2, stream);
      driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes, args[0],
                    stream);
      std::vector<uint16_t> outSecond(m * n), have(m * n);
      driver.copyToHost(outSecond.data(), dout, outSecond.size() * 2, stream);
      driver.synchronize(stream);
      pdlExact = 1;
      for (int round = 0; round < 8; ++round) {
        cuda::DevicePtr source = round % 2 ? first : second;
        std::vector<void *> copyArgs = {&source, &da, &words};
        driver.launch(copyWords, unsigned((words + 255) / 256), 1, 1, 256, 0,
                      copyArgs, stream);
        driver.launch(kernel, gridX, gridY, gridZ, block, sharedBytes,
                      args[round % copies], stream, /*overlapPrevious=*/true);
        if (round >= 6) {
          driver.copyToHost(have.data(), dout, have.size() * 2, stream);
          driver.synchronize(stream);
          pdlExact &= have == (round % 2 ? out : outSecond);
        }
      }
      // Leave the first set in place, as the timing rounds had it.
      driver.copyOnDevice(da, first, a.size() * 2, stream);
      driver.synchronize(stream);
      driver.free(first);
      driver.free(second);
      failures += pdlExact != 1;
    }
    // The decode floor: the weight and its scales read once.
    const double floorUs = (values.size() + scaleCodes.size()) / bandwidth * 1e6;
    std::printf(
        "%lld,%lld,%lld,%.2f,%.2f,%.2e,%u,%s,%lld,%.2f,%.2f,%.2f,%.2f,"
        "%.2f,%d\n",
        (long long)m, (long long)k, (long long)n, ours > 0 ? ours * 1e3 : -1.0,
        floorUs, relError, block / 32,
        (dynamicRows ? name + ":" + entry + ":m" + std::to_string(m) : name)
            .c_str(),
        (long long)experts,
        ours > 0 ? weightBytes / (ours * 1e-3) / 1e12 : -1.0,
        inGraph > 0 ? inGraph * 1e3 : -1.0,
        readLaunches > 0 ? readLaunches * 1e3 : -1.0,
        readGraph > 0 ? readGraph * 1e3 : -1.0,
        pdlGraph > 0 ? pdlGraph * 1e3 : -1.0, pdlExact);
    std::fflush(stdout); // a later hang must not lose the lines so far
    for (int c = 0; c < copies; ++c) {
      driver.free(dv[c]);
      driver.free(ds[c]);
    }
    driver.free(da);
    driver.free(dout);
    if (dmap)
      driver.free(dmap);
    if (experts) {
      driver.free(doffsets);
      driver.free(dcounts);
      driver.free(dgather);
      driver.free(dscatter);
    }
    driver.unloadModule(module);
    if (!driver.ok()) {
      std::printf("CUDA error: %s\n", driver.getError().c_str());
      return 1;
    }
  }
  if (copyModule)
    driver.unloadModule(copyModule);
  if (readModule) {
    driver.free(readSink);
    driver.unloadModule(readModule);
  }
  return failures ? 1 : 0;
}
