//===- device-check.cpp - Every kernel family on a second device ----------===//
//
// Issue 21: conversions, the Hopper dequantization and the matmul honour the
// device they are given. On a machine with two GPUs, this runs the check set
// (make_check_kernels.sh; KernelChecks.h) on device 1 while a helper process
// keeps device 0 busy (spin kernels back to back, a buffer of its own), and
// checks:
//  * every result right (byte-exact against the reference; the matmul
//    within 1e-2 of the float64 product and byte-exact between two runs);
//  * the inputs and outputs on device 1 (cuPointerGetAttribute), the modules
//    loaded and the kernels launched in device 1's context (cuCtxGetDevice);
//  * nothing on device 0: this process never makes device 0's primary
//    context active (cuDevicePrimaryCtxGetState), and device 0's free memory
//    (cuMemGetInfo, taken by the helper in its context) is the same before
//    and after, so no context or allocation of ours went there; device 1's
//    free memory before and after is printed.
// With one GPU it prints "skipped: 1 GPU" and exits 0.
//
//   device-check [KERNELS] [--device N] [--busy M]
//
// `--device 0 --busy 0` runs the same steps on one GPU (the helper on the
// device under test): a dry run of the code, whose device-0 checks cannot
// hold and are only printed.
//
//===----------------------------------------------------------------------===//
#include "KernelChecks.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

using namespace microscale;

/// The helper: keeps device `ordinal` busy until told to stop; answers
/// "free" with the device's free memory.
static int busyWorker(int ordinal, int in, int out) {
  cuda::Driver driver(ordinal);
  if (!driver.ok()) {
    dprintf(out, "error %s\n", driver.getError().c_str());
    return 1;
  }
  cuda::Module module = driver.loadModule(bench::spinPtx());
  cuda::Function spin = driver.getFunction(module, "spin");
  cuda::Stream stream = driver.createStream();
  cuda::DevicePtr buffer = driver.allocate(size_t(256) << 20);
  driver.memset(buffer, 1, size_t(256) << 20);
  bench::launchSpin(driver, spin, 0, stream);
  driver.synchronize();
  size_t freeBytes = 0, total = 0;
  driver.memoryInfo(freeBytes, total);
  dprintf(out, "ready %zu %zu\n", freeBytes, total);
  std::string command;
  unsigned long long spins = 0;
  for (;;) {
    bench::launchSpin(driver, spin, 5000000, stream); // 5 ms
    driver.synchronize(stream);
    ++spins;
    if (!driver.ok())
      return 1;
    pollfd p = {in, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
      continue;
    char c;
    while (read(in, &c, 1) == 1 && c != '\n')
      command += c;
    if (command == "free") {
      driver.memoryInfo(freeBytes, total);
      dprintf(out, "free %zu %llu\n", freeBytes, spins);
    } else {
      break;
    }
    command.clear();
  }
  driver.free(buffer);
  driver.destroyStream(stream);
  driver.unloadModule(module);
  return driver.ok() ? 0 : 1;
}

static std::string readLine(FILE *from) {
  char line[512];
  return fgets(line, sizeof line, from) ? std::string(line) : std::string();
}

int main(int argc, char **argv) {
  if (argc == 5 && std::string(argv[1]) == "--busy-worker")
    return busyWorker(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
  std::string kernels = "bench/gpu/kernels-check";
  int device = 1, busy = 0;
  bool explicitDevices = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--device" || arg == "--busy") && i + 1 < argc) {
      (arg == "--device" ? device : busy) = std::atoi(argv[++i]);
      explicitDevices = true;
    } else {
      kernels = arg;
    }
  }
  std::string error;
  const int count = cuda::Driver::countDevices(&error);
  if (count < 0) {
    std::printf("SKIP: %s\n", error.c_str());
    return 0;
  }
  if (count < 2 && !explicitDevices) {
    std::printf("device-check: skipped: %d GPU (needs 2: runs on device 1 "
                "while device 0 is busy)\n", count);
    return 0;
  }
  if (device >= count || busy >= count) {
    std::printf("FAIL: %d GPUs, asked for devices %d and %d\n", count, device,
                busy);
    return 1;
  }
  const bool separate = device != busy;
  int failures = 0;
  auto expect = [&](bool holds, const std::string &what) {
    const char *verdict = holds ? "ok" : separate ? "FAIL" : "n/a (one device)";
    std::printf("%s %s\n", verdict, what.c_str());
    failures += !holds && separate;
  };
  auto hard = [&](bool holds, const std::string &what) {
    std::printf("%s %s\n", holds ? "ok" : "FAIL", what.c_str());
    failures += !holds;
  };

  // The helper on device `busy`, a fresh process (exec: no CUDA state
  // shared with ours).
  int toWorker[2], fromWorker[2];
  if (pipe(toWorker) || pipe(fromWorker)) {
    std::perror("pipe");
    return 1;
  }
  pid_t worker = fork();
  if (worker == 0) {
    close(toWorker[1]);
    close(fromWorker[0]);
    std::string b = std::to_string(busy), i = std::to_string(toWorker[0]),
                o = std::to_string(fromWorker[1]);
    execl("/proc/self/exe", argv[0], "--busy-worker", b.c_str(), i.c_str(),
          o.c_str(), (char *)nullptr);
    _exit(127);
  }
  close(toWorker[0]);
  close(fromWorker[1]);
  FILE *fromHelper = fdopen(fromWorker[0], "r");
  size_t busyFreeBefore = 0, busyFreeAfter = 0, busyTotal = 0;
  unsigned long long spins = 0;
  std::string ready = readLine(fromHelper);
  if (std::sscanf(ready.c_str(), "ready %zu %zu", &busyFreeBefore, &busyTotal) != 2) {
    std::printf("FAIL: the helper on device %d: %s\n", busy, ready.c_str());
    return 1;
  }
  std::printf("device %d busy (helper process %d: spin kernels back to back, "
              "256 MiB of its own); device %d under test\n",
              busy, (int)worker, device);

  {
    cuda::Driver driver(device);
    if (!driver.ok()) {
      std::printf("FAIL: %s\n", driver.getError().c_str());
      return 1;
    }
    expect(!driver.primaryContextActive(busy),
           "no context of ours on device " + std::to_string(busy) +
               " after creating device " + std::to_string(device) + "'s");
    size_t freeBefore = 0, freeAfter = 0, total = 0;
    driver.memoryInfo(freeBefore, total);
    bench::Cases cases;
    if (!bench::addAllFamilies(driver, kernels, cases, /*outOfRange=*/false,
                               error)) {
      std::printf("FAIL: %s\n", error.c_str());
      return 1;
    }
    hard(driver.currentDevice() == device,
         "modules loaded in device " + std::to_string(device) +
             "'s context (cuCtxGetDevice after loading: " +
             std::to_string(driver.currentDevice()) + ")");
    int onDevice = 0, buffers = 0;
    for (auto &c : cases) {
      for (auto &input : c->inputs) {
        onDevice += driver.deviceOf(input.device) == device;
        ++buffers;
      }
      onDevice += driver.deviceOf(c->output) == device;
      ++buffers;
    }
    hard(onDevice == buffers, std::to_string(onDevice) + " of " +
                                  std::to_string(buffers) +
                                  " buffers on device " + std::to_string(device));
    cuda::Stream stream = driver.createStream();
    std::map<std::string, int> perFamily;
    int right = 0;
    for (int run = 0; run < 2; ++run) {
      for (auto &c : cases) {
        bench::queueUploads(driver, *c, stream);
        bench::queueRun(driver, *c, stream);
      }
      driver.synchronize(stream);
      if (!driver.ok()) {
        std::printf("FAIL: CUDA error: %s\n", driver.getError().c_str());
        return 1;
      }
      for (auto &c : cases) {
        std::string problem = c->verify(c->result);
        if (run == 0) {
          c->baseline.assign(c->result, c->result + c->outputBytes);
          ++perFamily[c->family];
        } else if (problem.empty() &&
                   std::memcmp(c->result, c->baseline.data(), c->outputBytes)) {
          problem = "the second run differs from the first";
        }
        if (!problem.empty())
          std::printf("FAIL %s %s: %s\n", c->family.c_str(), c->label.c_str(),
                      problem.c_str());
        right += run == 1 && problem.empty();
        failures += !problem.empty();
      }
    }
    std::printf("%s %d of %zu kernels right on device %d (%d conversions, %d "
                "dequantizations, %d matmuls; two runs each)\n",
                right == static_cast<int>(cases.size()) ? "ok" : "FAIL", right,
                cases.size(), device, perFamily["conversion"],
                perFamily["dequantization"], perFamily["matmul"]);
    hard(driver.currentDevice() == device,
         "kernels launched in device " + std::to_string(device) + "'s context");
    driver.destroyStream(stream);
    bench::release(driver, cases);
    driver.synchronize();
    driver.memoryInfo(freeAfter, total);
    std::printf("device %d free memory: %.1f MiB before, %.1f MiB after\n",
                device, freeBefore / 1048576.0, freeAfter / 1048576.0);
    expect(!driver.primaryContextActive(busy),
           "no context of ours on device " + std::to_string(busy) + " at the end");
    // Device `busy`'s free memory, taken while our context is still alive.
    dprintf(toWorker[1], "free\n");
    std::string answer = readLine(fromHelper);
    if (std::sscanf(answer.c_str(), "free %zu %llu", &busyFreeAfter, &spins) != 2) {
      std::printf("FAIL: the helper: %s\n", answer.c_str());
      return 1;
    }
    if (!driver.ok()) {
      std::printf("FAIL: CUDA error: %s\n", driver.getError().c_str());
      return 1;
    }
  }
  dprintf(toWorker[1], "stop\n");
  int status = 0;
  waitpid(worker, &status, 0);
  std::printf("device %d: %llu spin kernels of 5 ms ran meanwhile; free memory "
              "%.1f MiB before, %.1f MiB after\n",
              busy, spins, busyFreeBefore / 1048576.0, busyFreeAfter / 1048576.0);
  expect(busyFreeBefore == busyFreeAfter,
         "no allocation or context of ours on device " + std::to_string(busy) +
             " (its free memory unchanged)");
  hard(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "the helper on device " + std::to_string(busy) + " ran clean");
  std::printf("device-check: %d failed\n", failures);
  return failures ? 1 : 0;
}
