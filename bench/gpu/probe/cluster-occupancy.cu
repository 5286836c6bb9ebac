// For each kernel of a matmul kit (the cases.txt that make_matmul_kernels.sh
// writes), what the driver says about its launch: the blocks of it that one
// SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor) and, for the
// kernels whose blocks split K over a cluster (grid z > 1, the cluster size
// compiled in as .reqnctapercluster), the clusters that fit on the GPU at
// once (cuOccupancyMaxActiveClusters). With the grid, the waves it takes:
// the figure the chip model lacks for cluster sizes (docs/performance.md,
// "Light warps at staged rows; ...": splits of 3, 5, 6, 7 slower than 2, 4,
// 8 at 16 tokens).
//
//   nvcc -O2 -arch=sm_90a bench/gpu/probe/cluster-occupancy.cu -lcuda -o co
//   ./co bench/gpu/kernels-m16s
#include <cuda.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#define CHECK(call)                                                            \
  do {                                                                         \
    CUresult status = (call);                                                  \
    if (status != CUDA_SUCCESS) {                                              \
      const char *text = nullptr;                                              \
      cuGetErrorString(status, &text);                                         \
      std::fprintf(stderr, "%s: %s\n", #call, text ? text : "?");              \
      return false;                                                            \
    }                                                                          \
  } while (0)

struct Launch {
  std::string name, entry;
  unsigned threads = 0, gridX = 0, gridY = 0, gridZ = 0, sharedBytes = 0;
};

static bool report(const std::string &dir, const Launch &l) {
  CUmodule module;
  CUfunction function;
  CHECK(cuModuleLoad(&module, (dir + "/" + l.name + ".cubin").c_str()));
  CHECK(cuModuleGetFunction(&function, module, l.entry.c_str()));
  if (l.sharedBytes)
    CHECK(cuFuncSetAttribute(function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(l.sharedBytes)));
  int blocksPerSM = 0;
  CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocksPerSM, function, static_cast<int>(l.threads), l.sharedBytes));
  int clusters = -1;
  if (l.gridZ > 1) {
    // The cluster size is the kernel's own (.reqnctapercluster): the
    // configuration leaves it unspecified.
    CUlaunchConfig config = {};
    config.gridDimX = l.gridX;
    config.gridDimY = l.gridY;
    config.gridDimZ = l.gridZ;
    config.blockDimX = l.threads;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = l.sharedBytes;
    CHECK(cuOccupancyMaxActiveClusters(&clusters, function, &config));
  }
  const unsigned blocks = l.gridX * l.gridY * l.gridZ;
  std::printf("%s,%u,%u,%u,%u,%d,%d", l.name.c_str(), l.gridX, l.gridY,
              l.gridZ, l.threads, blocksPerSM, clusters);
  if (clusters > 0)
    std::printf(",%.2f\n", static_cast<double>(blocks) /
                               (static_cast<double>(clusters) * l.gridZ));
  else
    std::printf(",\n");
  CHECK(cuModuleUnload(module));
  return true;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s KIT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  CUdevice device;
  CUcontext context;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
      cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  std::ifstream cases(dir + "/cases.txt");
  if (!cases) {
    std::fprintf(stderr, "cannot read %s/cases.txt\n", dir.c_str());
    return 1;
  }
  std::printf("kernel,grid_x,grid_y,grid_z,threads,blocks_per_sm,"
              "active_clusters,cluster_waves\n");
  int failures = 0;
  std::string line;
  // The fields as matmul-bench reads them: m k n threads name gridX gridY
  // gridZ experts tokens [entry dynamic [layout [shared box]]].
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    Launch l;
    l.entry = "mixed_matmul_0";
    long m, k, n, experts, tokens;
    int dynamicRows = 0;
    std::string layout;
    if (!(fields >> m >> k >> n >> l.threads >> l.name >> l.gridX >>
          l.gridY >> l.gridZ >> experts >> tokens))
      continue;
    fields >> l.entry >> dynamicRows >> layout >> l.sharedBytes;
    if (!report(dir, l))
      ++failures;
  }
  return failures ? 1 : 0;
}
