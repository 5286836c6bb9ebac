// Read bandwidth of the 8192^2 Hopper value image when a copy engine, not
// the threads, streams it: each block owns `Tiles` 16-column tiles (4 image
// rows each) over all of K and pulls every row's next `Chunks` x 128 bytes
// (contiguous in the row) with cp.async.bulk into a ring of `Stages`
// shared-memory stages, completed on an mbarrier; the threads only read
// the stage back (what a decode would consume). Against
// hopper-image-reads.cu, where every lane loads its own 16 bytes: is the
// Hopper image's read pattern what caps the decode kernel, or the loads?
//   nvcc -O3 -arch=sm_90a hopper-image-bulk.cu -o probe && ./probe
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kK = 8192, kN = 8192;
constexpr int kRowBytes = 4 * (kK / 2);

__device__ inline uint32_t smem(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <int Tiles, int Chunks, int Stages>
__global__ void __launch_bounds__(128) readBulk(const char *__restrict__ image,
                                                 unsigned *sink) {
  constexpr int kRows = 4 * Tiles;
  constexpr int kStageBytes = kRows * Chunks * 128;
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) uint64_t full[Stages];
  const int rowsBase = blockIdx.x * kRows;
  constexpr int kSteps = (kRowBytes / 128) / Chunks;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  auto issue = [&](int step) {
    const int s = step % Stages;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem(&full[s])),
                 "r"(kStageBytes));
    for (int r = 0; r < kRows; ++r) {
      const char *src = image + size_t(rowsBase + r) * kRowBytes +
                        size_t(step) * Chunks * 128;
      char *dst = ring + s * kStageBytes + r * Chunks * 128;
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
          "[%0], [%1], %2, [%3];" ::"r"(smem(dst)),
          "l"(src), "r"(Chunks * 128), "r"(smem(&full[s]))
          : "memory");
    }
  };
  if (threadIdx.x == 0)
    for (int step = 0; step < Stages && step < kSteps; ++step)
      issue(step);
  unsigned acc = 0;
  for (int step = 0; step < kSteps; ++step) {
    const int s = step % Stages;
    const unsigned parity = (step / Stages) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, "
                   "[%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done)
                   : "r"(smem(&full[s])), "r"(parity));
    const uint4 *stage = reinterpret_cast<const uint4 *>(ring + s * kStageBytes);
    for (int i = threadIdx.x; i < kStageBytes / 16; i += blockDim.x) {
      uint4 v = stage[i];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    __syncthreads(); // every thread is done with stage s
    if (threadIdx.x == 0 && step + Stages < kSteps)
      issue(step + Stages);
  }
  if (acc == 0x12345678)
    *sink = acc;
}

template <int Tiles, int Chunks, int Stages>
void run(const char *image, unsigned *sink, size_t imageBytes) {
  constexpr int kStageBytes = 4 * Tiles * Chunks * 128;
  const int shared = Stages * kStageBytes;
  cudaFuncSetAttribute(readBulk<Tiles, Chunks, Stages>,
                       cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  const int blocks = kN / 16 / Tiles;
  int perSM = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSM, readBulk<Tiles, Chunks, Stages>, 128, shared);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  readBulk<Tiles, Chunks, Stages><<<blocks, 128, shared>>>(image, sink);
  cudaEventRecord(a);
  for (int r = 0; r < 20; ++r)
    readBulk<Tiles, Chunks, Stages><<<blocks, 128, shared>>>(
        image + (r % 4) * imageBytes, sink);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  cudaError_t e = cudaGetLastError();
  std::printf("tiles %d chunks %2d stages %d (%3d KiB, %d blocks/SM, %4d "
              "blocks): %6.2f us, %5.0f GB/s %s\n",
              Tiles, Chunks, Stages, shared / 1024, perSM, blocks,
              ms * 1e3 / 20, imageBytes * 20 / (ms * 1e-3) / 1e9,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
}

int main() {
  const size_t imageBytes = size_t(kN / 4) * kRowBytes;
  char *image;
  unsigned *sink;
  cudaMalloc(&image, 4 * imageBytes);
  cudaMalloc(&sink, 4);
  cudaMemset(image, 1, 4 * imageBytes);
  run<1, 8, 4>(image, sink, imageBytes);
  run<1, 16, 4>(image, sink, imageBytes);
  run<2, 8, 4>(image, sink, imageBytes);
  run<2, 8, 8>(image, sink, imageBytes);
  run<2, 16, 4>(image, sink, imageBytes);
  run<2, 32, 2>(image, sink, imageBytes);
  run<4, 8, 4>(image, sink, imageBytes);
  run<4, 16, 3>(image, sink, imageBytes);
  return 0;
}
