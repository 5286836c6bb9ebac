// Read bandwidth of the decode matmul's weight pattern in the Hopper value
// image, without arithmetic: lane (g, q) of a warp reads 16 bytes of image
// row 4 t + g / 2 at byte 128 c + 64 (g % 2) + 16 q for each of its
// `tiles` 16-column tiles t and its chunks c (4 rows x 128 bytes per tile
// and chunk), `ahead` chunks in flight, warps splitting K as the kernel's
// split. Against a contiguous read of the same bytes. K = 8192, N = 8192.
//   nvcc -O3 -arch=sm_90a hopper-image-reads.cu -o probe && ./probe
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kK = 8192, kN = 8192;
constexpr int kRowBytes = 4 * (kK / 2); // image row: 4 x K/2 bytes

template <int Tiles, int Ahead>
__global__ void readImage(const char *__restrict__ image, int split,
                          unsigned *sink) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, q = lane % 4;
  const int chunks = kK / 64;
  const int first = warp * chunks / split, end = (warp + 1) * chunks / split;
  unsigned acc = 0;
  for (int c = first; c < end; c += Ahead) {
    uint4 v[Ahead][Tiles];
#pragma unroll
    for (int a = 0; a < Ahead; ++a)
#pragma unroll
      for (int t = 0; t < Tiles; ++t) {
        const int tile = blockIdx.x * Tiles + t;
        const int chunk = min(c + a, end - 1);
        const size_t byte = size_t(4 * tile + g / 2) * kRowBytes +
                            128 * chunk + 64 * (g % 2) + 16 * q;
        v[a][t] = __ldg(reinterpret_cast<const uint4 *>(image + byte));
      }
#pragma unroll
    for (int a = 0; a < Ahead; ++a)
#pragma unroll
      for (int t = 0; t < Tiles; ++t)
        acc ^= v[a][t].x ^ v[a][t].y ^ v[a][t].z ^ v[a][t].w;
  }
  if (acc == 0x12345678)
    *sink = acc;
}

template <int Tiles, int Ahead>
void run(const char *image, int split, unsigned *sink, size_t bytes) {
  const int blocks = kN / 16 / Tiles;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // 4 copies of the image rotated so that L2 does not hold the weight.
  const size_t imageBytes = size_t(kN / 4) * kRowBytes;
  readImage<Tiles, Ahead><<<blocks, 32 * split>>>(image, split, sink);
  cudaEventRecord(a);
  for (int r = 0; r < 20; ++r)
    readImage<Tiles, Ahead>
        <<<blocks, 32 * split>>>(image + (r % 4) * imageBytes, split, sink);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  std::printf("tiles %d ahead %d split %2d: %6.2f us, %5.0f GB/s\n", Tiles,
              Ahead, split, ms * 1e3 / 20, imageBytes * 20 / (ms * 1e-3) / 1e9);
}

int main() {
  const size_t imageBytes = size_t(kN / 4) * kRowBytes;
  char *image;
  unsigned *sink;
  cudaMalloc(&image, 4 * imageBytes);
  cudaMalloc(&sink, 4);
  cudaMemset(image, 1, 4 * imageBytes);
  for (int split : {4, 8, 16}) {
    run<2, 1>(image, split, sink, imageBytes);
    run<2, 2>(image, split, sink, imageBytes);
    run<2, 4>(image, split, sink, imageBytes);
    run<2, 8>(image, split, sink, imageBytes);
    run<1, 4>(image, split, sink, imageBytes);
  }
  return 0;
}
