// The weight-read pattern of the generated matmul in isolation: how fast
// can a grid read a K-major FP4 weight when each warp covers 16 (or 32)
// columns and each thread 16-byte pieces at a 4 KiB column stride? Bytes
// per column per chunk (64: one 16-byte load per thread per chunk; 128:
// two adjacent ones) and loads in flight per thread are the variables.
//   nvcc -O3 -arch=sm_90a weight-read-pattern.cu -o probe && ./probe
#include <cstdio>
#include <cuda_runtime.h>

template <int kColumns, int kBytesPerColumn, int kInFlight>
__global__ void readPattern(const uint4 *__restrict__ w, int kBytes, int split,
                            unsigned *sink) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, q = lane % 4;
  constexpr int kLoads = kBytesPerColumn / 64; // per column per chunk
  const int column0 = blockIdx.x * kColumns;
  const int range = kBytes / split;            // bytes per column per warp
  const int first = warp * range;
  unsigned acc = 0;
  for (int base = first; base < first + range;
       base += kBytesPerColumn * kInFlight) {
    uint4 v[kInFlight][kColumns / 8][kLoads];
#pragma unroll
    for (int f = 0; f < kInFlight; ++f)
#pragma unroll
      for (int c = 0; c < kColumns / 8; ++c)
#pragma unroll
        for (int l = 0; l < kLoads; ++l) {
          size_t byte = size_t(column0 + g + 8 * c) * kBytes + base +
                        f * kBytesPerColumn + l * 64 + q * 16;
          v[f][c][l] = __ldg(w + byte / 16);
        }
#pragma unroll
    for (int f = 0; f < kInFlight; ++f)
#pragma unroll
      for (int c = 0; c < kColumns / 8; ++c)
#pragma unroll
        for (int l = 0; l < kLoads; ++l)
          acc ^= v[f][c][l].x ^ v[f][c][l].y ^ v[f][c][l].z ^ v[f][c][l].w;
  }
  if (acc == 0x12345678)
    *sink = acc;
}

template <int C, int B, int F>
void run(const char *name, const uint4 *const *w, int n, int kBytes, int split,
         unsigned *sink) {
  dim3 grid(n / C), block(32 * split);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // Eight copies (256 MiB) in turn: the weight comes from device memory,
  // not from the 50 MB L2.
  for (int i = 0; i < 3; ++i)
    readPattern<C, B, F><<<grid, block>>>(w[i % 8], kBytes, split, sink);
  cudaEventRecord(a);
  const int reps = 20;
  for (int i = 0; i < reps; ++i)
    readPattern<C, B, F><<<grid, block>>>(w[i % 8], kBytes, split, sink);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  const double us = ms * 1e3 / reps;
  std::printf("%-34s split %2d: %7.2f us  %.2f TB/s\n", name, split, us,
              double(n) * kBytes / (us * 1e-6) / 1e12);
}

int main() {
  const int n = 8192, kBytes = 4096; // 8192 x 8192 FP4, K-major
  uint4 *w[8];
  unsigned *sink;
  for (auto &copy : w) {
    cudaMalloc(&copy, size_t(n) * kBytes);
    cudaMemset(copy, 1, size_t(n) * kBytes);
  }
  cudaMalloc(&sink, 4);
  // The device-to-device copy of the same bytes, for the floor.
  {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i)
      cudaMemcpy(w[(i + 1) % 8], w[i % 8], size_t(n) * kBytes,
                 cudaMemcpyDeviceToDevice);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    std::printf("copy of 32 MiB: %.2f us (read + write %.2f TB/s)\n",
                ms * 1e3 / 20, 2.0 * n * kBytes / (ms * 1e-3 / 20) / 1e12);
  }
  for (int split : {2, 4, 8, 16}) {
    run<16, 64, 1>("16 cols, 64 B/col, 1 in flight", w, n, kBytes, split, sink);
    run<16, 64, 4>("16 cols, 64 B/col, 4 in flight", w, n, kBytes, split, sink);
    run<16, 128, 2>("16 cols, 128 B/col, 2 in flight", w, n, kBytes, split, sink);
    run<16, 256, 1>("16 cols, 256 B/col, 1 in flight", w, n, kBytes, split, sink);
    run<32, 64, 2>("32 cols, 64 B/col, 2 in flight", w, n, kBytes, split, sink);
    run<32, 128, 1>("32 cols, 128 B/col, 1 in flight", w, n, kBytes, split, sink);
    run<32, 128, 2>("32 cols, 128 B/col, 2 in flight", w, n, kBytes, split, sink);
  }
  cudaError_t e = cudaGetLastError();
  std::printf("%s\n", cudaGetErrorString(e));
}
