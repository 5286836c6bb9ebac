//===- kernel-check.cpp - Every kernel family once, checked ---------------===//
//
// Runs each kernel of a check set (make_check_kernels.sh: conversions
// per-unit and staged, padded shapes; the Hopper dequantization staged and
// per-word; the matmul, dense and ragged, with an empty expert and routing
// indices out of range) once, on a non-blocking stream, and checks its
// result (KernelChecks.h); then one conversion through
// cuda::runConversion on the same stream. Small shapes: it is what
// run-sanitizers-on-h200.sh runs under compute-sanitizer.
//
//   kernel-check [KERNELS]     (default bench/gpu/kernels-check)
//
//===----------------------------------------------------------------------===//
#include "KernelChecks.h"

#include <map>

using namespace microscale;

int main(int argc, char **argv) {
  const std::string kernels = argc > 1 ? argv[1] : "bench/gpu/kernels-check";
  cuda::Driver driver;
  if (!driver.ok()) {
    std::printf("SKIP: %s\n", driver.getError().c_str());
    return 0;
  }
  bench::Cases cases;
  std::string error;
  if (!bench::addAllFamilies(driver, kernels, cases, /*outOfRange=*/true, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  cuda::Stream stream = driver.createStream();
  int failures = 0;
  std::map<std::string, int> perFamily;
  for (auto &c : cases) {
    bench::queueUploads(driver, *c, stream);
    bench::queueRun(driver, *c, stream);
    driver.synchronize(stream);
    if (!driver.ok()) {
      std::printf("FAIL %s %s: CUDA error: %s\n", c->family.c_str(),
                  c->label.c_str(), driver.getError().c_str());
      return 1;
    }
    std::string problem = c->verify(c->result);
    failures += !problem.empty();
    ++perFamily[c->family];
    std::printf("%s %s %s%s%s\n", problem.empty() ? "ok" : "FAIL",
                c->family.c_str(), c->label.c_str(),
                problem.empty() ? "" : ": ", problem.c_str());
  }
  // The runtime's own entry point, stream-ordered allocation included.
  for (auto &c : cases) {
    if (c->family != "conversion")
      continue;
    std::vector<uint8_t> out(c->conversion.destBytes);
    bool ran = cuda::runConversion(driver, c->conversion,
                                   c->inputs[0].bytes.data(), out.data(),
                                   error, stream);
    bool exact = ran && out == c->expected;
    failures += !exact;
    std::printf("%s runConversion(stream) %s%s\n", exact ? "ok" : "FAIL",
                c->label.c_str(), ran ? "" : (": " + error).c_str());
    break;
  }
  driver.destroyStream(stream);
  bench::release(driver, cases);
  if (!driver.ok()) {
    std::printf("FAIL: CUDA error: %s\n", driver.getError().c_str());
    return 1;
  }
  std::printf("kernel-check: %d conversions, %d dequantizations, %d matmuls, "
              "runConversion; %d failed\n",
              perFamily["conversion"], perFamily["dequantization"],
              perFamily["matmul"], failures);
  return failures ? 1 : 0;
}
