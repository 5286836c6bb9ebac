//===- stream-check.cpp - Every kernel family on a non-blocking stream ----===//
//
// Checks that the CUDA runtime queues work on the stream it is given, after
// the work already queued there, and nothing on the legacy default stream:
//  1. a first run of every kernel of the check set (make_check_kernels.sh)
//     on a non-blocking stream S, checked (KernelChecks.h): the baseline;
//  2. the inputs on the device are zeroed, and the right inputs kept in
//     staging buffers; the legacy default stream is made to wait for an
//     event behind a 3 s spin kernel on another stream B;
//  3. on S: a 0.3 s spin kernel, then for every kernel the copies of its
//     inputs from the staging buffers, the poisoning of its output, the
//     launch, the copy of its output to the host. Right after queueing, S
//     must still be busy; after waiting for S, the results must be right
//     (byte-exact against the reference; the matmul byte-exact against the
//     baseline and within 1e-2 of the float64 product), so the kernels ran
//     after the copies that the spin kernel held back, and the legacy
//     default stream's event must still be pending: nothing we queued went
//     there (it would have waited 3 s, and the copies back with it);
//  4. cuda::runConversion(..., S) on host buffers, still before the event:
//     with the kernel loaded beforehand, it must return before the event
//     (its copies, its launch, its stream-ordered allocation and frees go
//     on S alone); with the module loaded and unloaded inside, it waits
//     (the driver's module load and unload wait for every stream: printed
//     as a NOTE, and step 5 shows which calls).
//
//  5. which of runConversion's steps wait for other work: each step alone,
//     while another stream B runs a 0.5 s spin kernel, once with the legacy
//     default stream waiting for B and once without (printed, not checked).
//
//   stream-check [KERNELS]     (default bench/gpu/kernels-check)
//
//===----------------------------------------------------------------------===//
#include "KernelChecks.h"

#include <chrono>
#include <functional>
#include <map>

using namespace microscale;

static double secondsSince(std::chrono::steady_clock::time_point start);

/// Step 5: runConversion's steps one by one, each while `blocker` spins.
static void timeSteps(cuda::Driver &driver, cuda::Function spin,
                      cuda::Stream stream, cuda::Stream blocker,
                      const bench::KernelCase &c) {
  const cuda::ConversionKernel &k = c.conversion;
  cuda::Module module = nullptr;
  cuda::Function function = nullptr;
  cuda::DevicePtr in = 0, out = 0;
  std::vector<uint8_t> dest(k.destBytes);
  struct Step {
    const char *name;
    std::function<void()> run;
  };
  std::vector<Step> steps = {
      {"cuModuleLoadData (PTX)", [&] { module = driver.loadModule(k.image); }},
      {"cuModuleGetFunction", [&] { function = driver.getFunction(module, k.name); }},
      {"cuMemAllocAsync x2", [&] {
         in = driver.allocate(k.sourceBytes, stream);
         out = driver.allocate(k.destBytes, stream);
       }},
      {"cuMemcpyHtoDAsync (pageable)", [&] {
         driver.copyToDevice(in, c.inputs[0].bytes.data(), k.sourceBytes, stream);
       }},
      {"first launch (cuLaunchKernel)", [&] {
         cuda::launchConversion(driver, function, k, in, out, stream);
       }},
      {"cuMemcpyDtoHAsync (pageable) + cuStreamSynchronize", [&] {
         driver.copyToHost(dest.data(), out, k.destBytes, stream);
         driver.synchronize(stream);
       }},
      {"cuMemFreeAsync x2", [&] {
         driver.free(in, stream);
         driver.free(out, stream);
       }},
      {"cuModuleUnload", [&] { driver.unloadModule(module); }},
      {"runConversion, whole", [&] {
         std::string error;
         cuda::runConversion(driver, k, c.inputs[0].bytes.data(), dest.data(),
                             error, stream);
       }}};
  const uint64_t spinNs = 500000000ull;
  cuda::Event event = driver.createEvent();
  for (int legacyWaits = 1; legacyWaits >= 0; --legacyWaits) {
    std::printf("runConversion's steps while another stream runs a 0.5 s "
                "spin kernel%s:\n",
                legacyWaits ? ", the legacy default stream waiting for it"
                            : " (the legacy default stream free)");
    for (const Step &step : steps) {
      driver.synchronize();
      bench::launchSpin(driver, spin, spinNs, blocker);
      driver.record(event, blocker);
      if (legacyWaits)
        driver.wait(nullptr, event);
      auto start = std::chrono::steady_clock::now();
      step.run();
      const double seconds = secondsSince(start);
      const bool waited = driver.eventDone(event);
      std::printf("  %-52s %8.4f s  %s\n", step.name, seconds,
                  waited ? "WAITED for the other stream" : "returned at once");
    }
    driver.synchronize();
  }
  driver.destroyEvent(event);
}

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

int main(int argc, char **argv) {
  const std::string kernels = argc > 1 ? argv[1] : "bench/gpu/kernels-check";
  cuda::Driver driver;
  if (!driver.ok()) {
    std::printf("SKIP: %s\n", driver.getError().c_str());
    return 0;
  }
  bench::Cases cases;
  std::string error;
  if (!bench::addAllFamilies(driver, kernels, cases, /*outOfRange=*/false, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  int failures = 0;
  auto expect = [&](bool holds, const std::string &what) {
    std::printf("%s %s\n", holds ? "ok" : "FAIL", what.c_str());
    failures += !holds;
  };
  cuda::Stream stream = driver.createStream(), blocker = driver.createStream();
  cuda::Module spinModule = driver.loadModule(bench::spinPtx());
  cuda::Function spin = driver.getFunction(spinModule, "spin");

  // 1. The baseline, every kernel once (this also loads every kernel).
  std::map<std::string, int> perFamily;
  for (auto &c : cases) {
    bench::queueUploads(driver, *c, stream);
    bench::queueRun(driver, *c, stream);
    ++perFamily[c->family];
  }
  bench::launchSpin(driver, spin, 0, stream);
  driver.synchronize(stream);
  int baselineFailures = 0;
  for (auto &c : cases) {
    std::string problem = c->verify(c->result);
    if (!problem.empty())
      std::printf("  baseline %s: %s\n", c->label.c_str(), problem.c_str());
    baselineFailures += !problem.empty();
    c->baseline.assign(c->result, c->result + c->outputBytes);
  }
  expect(baselineFailures == 0,
         "baseline on a non-blocking stream: " +
             std::to_string(perFamily["conversion"]) + " conversions, " +
             std::to_string(perFamily["dequantization"]) + " dequantizations, " +
             std::to_string(perFamily["matmul"]) + " matmuls checked");

  // 2. Inputs zeroed, the right ones in staging buffers; everything idle.
  for (auto &c : cases) {
    bench::makeStaging(driver, *c);
    for (auto &input : c->inputs)
      driver.memset(input.device, 0, input.bytes.size());
    std::memset(c->result, 0x5A, c->outputBytes);
  }
  // For step 4: the first conversion, loaded now.
  bench::KernelCase *first = nullptr;
  for (auto &c : cases)
    if (!first && c->family == "conversion")
      first = c.get();
  if (!first) {
    std::printf("FAIL: no conversion in %s/conv\n", kernels.c_str());
    return 1;
  }
  cuda::Module preloaded = driver.loadModule(first->conversion.image);
  cuda::Function preloadedFunction =
      driver.getFunction(preloaded, first->conversion.name);
  driver.synchronize();
  if (!driver.ok()) {
    std::printf("FAIL: CUDA error: %s\n", driver.getError().c_str());
    return 1;
  }
  const uint64_t blockNs = 3000000000ull, spinNs = 300000000ull;
  cuda::Event blocked = driver.createEvent();
  bench::launchSpin(driver, spin, blockNs, blocker);
  driver.record(blocked, blocker);
  driver.wait(nullptr, blocked); // the legacy default stream waits 3 s
  auto start = std::chrono::steady_clock::now();

  // 3. The spin, then every kernel's copies, launch and copy back, on S.
  bench::launchSpin(driver, spin, spinNs, stream);
  for (auto &c : cases) {
    bench::queueStagedInputs(driver, *c, stream);
    bench::queueRun(driver, *c, stream);
  }
  const double queueSeconds = secondsSince(start);
  const bool busyAfterQueue = !driver.streamDone(stream);
  const bool legacyBusy = !driver.streamDone(nullptr);
  driver.synchronize(stream);
  const double doneSeconds = secondsSince(start);
  const bool legacyStillWaiting = !driver.eventDone(blocked);
  std::printf("queued %zu kernels with their copies in %.3f s; the stream "
              "done after %.3f s (its spin: %.1f s; the legacy default "
              "stream's wait: %.1f s)\n",
              cases.size(), queueSeconds, doneSeconds, spinNs * 1e-9,
              blockNs * 1e-9);
  expect(busyAfterQueue, "the stream still busy right after queueing (work "
                         "queued behind the spin kernel, nothing waited for)");
  expect(legacyBusy, "the legacy default stream busy (waiting for the event)");
  expect(legacyStillWaiting && doneSeconds < blockNs * 1e-9,
         "the stream done while the legacy default stream still waits: "
         "nothing of ours went to the legacy default stream");
  int exact = 0;
  for (auto &c : cases) {
    std::string problem = c->verify(c->result);
    if (problem.empty() &&
        std::memcmp(c->result, c->baseline.data(), c->outputBytes) != 0)
      problem = "differs from the baseline run";
    if (!problem.empty())
      std::printf("FAIL %s %s after the queued work: %s\n", c->family.c_str(),
                  c->label.c_str(), problem.c_str());
    failures += !problem.empty();
    exact += problem.empty();
  }
  std::printf("%s %d of %zu kernels right after the queued copies "
              "(conversions and dequantizations byte-exact against the "
              "reference, matmuls byte-exact against the baseline)\n",
              exact == static_cast<int>(cases.size()) ? "ok" : "FAIL", exact,
              cases.size());

  // 4. runConversion on host buffers, on S, the legacy stream still waiting:
  // the kernel loaded beforehand, then loaded inside.
  {
    std::vector<uint8_t> out(first->conversion.destBytes, 0x5A);
    bool ran = cuda::runConversion(driver, preloadedFunction, first->conversion,
                                   first->inputs[0].bytes.data(), out.data(),
                                   error, stream);
    expect(ran && out == first->expected && !driver.eventDone(blocked),
           "runConversion(function, stream) byte-exact, returned while the "
           "legacy default stream still waits: " + first->label);
  }
  for (auto &c : cases) {
    if (c->family != "conversion")
      continue;
    std::vector<uint8_t> out(c->conversion.destBytes, 0x5A);
    auto runStart = std::chrono::steady_clock::now();
    bool ran = cuda::runConversion(driver, c->conversion,
                                   c->inputs[0].bytes.data(), out.data(),
                                   error, stream);
    const double runSeconds = secondsSince(runStart);
    const bool stillWaiting = !driver.eventDone(blocked);
    expect(ran && out == c->expected,
           "runConversion(stream) byte-exact: " + c->label +
               (ran ? "" : ": " + error));
    std::printf("%s runConversion(stream) returned in %.3f s, the legacy "
                "default stream still waiting: %s\n",
                stillWaiting ? "ok" : "NOTE", runSeconds,
                stillWaiting ? "yes" : "no (module load or unload, or a free, "
                                       "waited for the device)");
    break;
  }
  driver.synchronize();
  // 5. Which steps wait.
  for (auto &c : cases)
    if (c->family == "conversion") {
      timeSteps(driver, spin, stream, blocker, *c);
      break;
    }
  driver.unloadModule(preloaded);
  driver.destroyEvent(blocked);
  driver.destroyStream(stream);
  driver.destroyStream(blocker);
  driver.unloadModule(spinModule);
  bench::release(driver, cases);
  if (!driver.ok()) {
    std::printf("FAIL: CUDA error: %s\n", driver.getError().c_str());
    return 1;
  }
  std::printf("stream-check: %d failed\n", failures);
  return failures ? 1 : 0;
}
