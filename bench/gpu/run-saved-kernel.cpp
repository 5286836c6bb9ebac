//===- run-saved-kernel.cpp - Run a kernel that mx-convert compiled -------===//
//
// On the GPU machine (no MLIR there): runs a conversion kernel that
// `mx-convert --device cuda --cuda-save-kernel PREFIX` compiled, through the
// same MLIR-free runtime call mx-convert uses (cuda::runConversion), on IN,
// and compares the result with EXPECTED (mx-convert --device host's output
// for the same IN). Exit 0 when equal byte for byte.
//
//   g++ -O2 -std=c++17 -Iinclude bench/gpu/run-saved-kernel.cpp
//       lib/Runtime/CUDA/*.cpp -ldl -o run-saved-kernel
//   run-saved-kernel PREFIX IN EXPECTED
//
//===----------------------------------------------------------------------===//
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include "BenchSupport.h"

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace microscale;

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: run-saved-kernel PREFIX IN EXPECTED\n");
    return 2;
  }
  const std::string prefix = argv[1];
  cuda::ConversionKernel kernel;
  kernel.image = bench::readFile(prefix + ".image");
  std::istringstream launch(bench::readFile(prefix + ".launch"));
  int unitRange = 0;
  if (!(launch >> kernel.name >> kernel.grid >> kernel.block >> unitRange >>
        kernel.units >> kernel.sourceBytes >> kernel.destBytes) ||
      kernel.image.empty()) {
    std::fprintf(stderr, "%s: no kernel image or launch\n", prefix.c_str());
    return 2;
  }
  kernel.takesUnitRange = unitRange != 0;
  std::string in = bench::readFile(argv[2]), expected = bench::readFile(argv[3]);
  if (in.size() != kernel.sourceBytes || expected.size() != kernel.destBytes) {
    std::fprintf(stderr, "%s: IN has %zu bytes (kernel: %zu), EXPECTED %zu (%zu)\n",
                 prefix.c_str(), in.size(), kernel.sourceBytes, expected.size(),
                 kernel.destBytes);
    return 2;
  }
  cuda::Driver driver;
  std::string out(kernel.destBytes, '\xA5'), error;
  if (!cuda::runConversion(driver, kernel, in.data(), out.data(), error)) {
    std::printf("%s: %s\n", prefix.c_str(), error.c_str());
    return 1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i)
    bad += out[i] != expected[i];
  std::printf("%s: kernel %s, %u blocks of %u threads, %zu -> %zu bytes: %s\n",
              prefix.c_str(), kernel.name.c_str(), kernel.grid, kernel.block,
              kernel.sourceBytes, kernel.destBytes,
              bad ? ("FAIL " + std::to_string(bad) + " bytes differ").c_str()
                  : "equal to the host's output");
  return bad ? 1 : 0;
}
