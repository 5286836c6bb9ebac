// Bandwidth of streaming reads against bytes in flight on one GPU: every
// warp reads its own contiguous range with `unroll` 16-byte loads per lane
// in flight (ld.global.nc), at `warps` warps per SM; prints GB/s per
// configuration. The decode matmul's question: how many bytes in flight
// per SM does the H200 need, and does the load path cap it?
// An argument sets the bytes read per launch in MiB (default 1024): at a
// weight's size (32 MiB for 8192^2 FP4) the launch and its ramp count.
//   nvcc -O3 -arch=sm_90a inflight.cu -o inflight && ./inflight [MiB]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <int U>
__global__ void readAll(const uint4 *__restrict__ in, size_t perWarp,
                        unsigned *out) {
  const size_t warp = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  const uint4 *p = in + warp * perWarp + lane;
  unsigned acc = 0;
  for (size_t i = 0; i < perWarp; i += 32 * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      v[u] = __ldg(p + i + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678)
    *out = acc;
}

template <int U> float run(const uint4 *in, size_t bytes, int sms, int warpsPerSM,
                           unsigned *out) {
  const int threads = 256;
  const int blocks = sms * warpsPerSM * 32 / threads;
  const size_t warps = size_t(blocks) * threads / 32;
  size_t perWarp = bytes / 16 / warps / (32 * U) * (32 * U);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  readAll<U><<<blocks, threads>>>(in, perWarp, out);
  cudaEventRecord(a);
  for (int r = 0; r < 20; ++r)
    readAll<U><<<blocks, threads>>>(in + (r % 4) * (bytes / 16), perWarp, out);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  return perWarp * 16.0 * warps * 20 / (ms * 1e-3) / 1e9;
}

int main(int argc, char **argv) {
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t bytes = size_t(argc > 1 ? std::atoi(argv[1]) : 1024) << 20;
  uint4 *in;
  unsigned *out;
  // Four copies, rotated, so that a small input does not stay in L2.
  cudaMalloc(&in, 4 * bytes);
  cudaMalloc(&out, 4);
  cudaMemset(in, 1, 4 * bytes);
  std::printf("warps/SM, then GB/s at 1 2 4 8 16-byte loads in flight per lane "
              "(KiB in flight per SM)\n");
  for (int w : {8, 16, 24, 32, 48, 64}) {
    std::printf("%2d:", w);
    std::printf(" %6.0f (%3d)", run<1>(in, bytes, sms, w, out), w * 512 / 1024);
    std::printf(" %6.0f (%3d)", run<2>(in, bytes, sms, w, out), w * 1024 / 1024);
    std::printf(" %6.0f (%3d)", run<4>(in, bytes, sms, w, out), w * 2048 / 1024);
    std::printf(" %6.0f (%3d)", run<8>(in, bytes, sms, w, out), w * 4096 / 1024);
    std::printf("\n");
  }
  return 0;
}
