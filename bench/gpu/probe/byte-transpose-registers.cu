// Probe: a byte transpose [B, R, C] -> [B, C, R] (scales strided<-1> ->
// strided<-2>) with no shared memory. Each lane loads a 16 x 16 byte block
// (16-byte loads from 16 rows), transposes it in registers with byte
// permutes (8 per 4 x 4 block) and stores 16 rows of 16 bytes. Groups of
// KB lanes take consecutive 16-row blocks (transposeLaneGroups; KB = 2:
// each store instruction writes whole 32-byte sectors), or warps walk the
// tasks with the next one's loads in flight (transposePipelined). R and C
// multiples of 16 x KB and 16 x 32 / KB (the probe's limit). Timed against
// cudaMemcpy of the same bytes and checked against a host transpose.
//   nvcc -O3 -arch=sm_90a bench/gpu/probe/byte-transpose-registers.cu -o /tmp/btr
//   /tmp/btr B R C [lanes]   (lanes: only the lane-group kernels)
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <string>
#include <cuda_runtime.h>

__device__ __forceinline__ void transpose4(unsigned a, unsigned b, unsigned c,
                                           unsigned d, unsigned &o0,
                                           unsigned &o1, unsigned &o2,
                                           unsigned &o3) {
  unsigned x0 = __byte_perm(a, b, 0x5140), x1 = __byte_perm(a, b, 0x7362);
  unsigned y0 = __byte_perm(c, d, 0x5140), y1 = __byte_perm(c, d, 0x7362);
  o0 = __byte_perm(x0, y0, 0x5410);
  o1 = __byte_perm(x0, y0, 0x7632);
  o2 = __byte_perm(x1, y1, 0x5410);
  o3 = __byte_perm(x1, y1, 0x7632);
}

// Median over `reps` runs of `run` (ms, CUDA events).
template <typename Run> static float medianMs(Run run, int reps) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(e0);
    run();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Pipelined form: a grid of a few blocks per SM whose warps walk the tasks
// (32 rows x 16 lanes x 4 * WORDS columns) in grid-stride order, loading
// task t + 1 while task t is transposed and stored, so that reads and
// writes overlap even when the whole tensor is one wave of loads.
template <int WORDS> struct Task {
  uint32_t w[16][WORDS];
};

template <int WORDS>
__device__ __forceinline__ void loadTask(const uint8_t *__restrict__ src,
                                         long t, int lane, int R, int C,
                                         int nGroups, int kTiles,
                                         Task<WORDS> &x) {
  const int g = t % nGroups;
  const int kt = (t / nGroups) % kTiles;
  const long b = t / (long(nGroups) * kTiles);
  const int n0 = g * (64 * WORDS) + 4 * WORDS * (lane >> 1);
  const int k0 = kt * 32 + 16 * (lane & 1);
  const uint8_t *s = src + (b * R + k0) * long(C) + n0;
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    if (WORDS == 4) {
      uint4 v = __ldg(reinterpret_cast<const uint4 *>(s + long(r) * C));
      x.w[r][0] = v.x; x.w[r][1] = v.y; x.w[r][2 % WORDS] = v.z; x.w[r][3 % WORDS] = v.w;
    } else {
      uint2 v = __ldg(reinterpret_cast<const uint2 *>(s + long(r) * C));
      x.w[r][0] = v.x; x.w[r][1 % WORDS] = v.y;
    }
  }
}

template <int WORDS>
__device__ __forceinline__ void storeTask(uint8_t *__restrict__ dst, long t,
                                          int lane, int R, int C, int nGroups,
                                          int kTiles, const Task<WORDS> &x) {
  const int g = t % nGroups;
  const int kt = (t / nGroups) % kTiles;
  const long b = t / (long(nGroups) * kTiles);
  const int n0 = g * (64 * WORDS) + 4 * WORDS * (lane >> 1);
  const int k0 = kt * 32 + 16 * (lane & 1);
  uint8_t *d = dst + (b * C + n0) * long(R) + k0;
#pragma unroll
  for (int c = 0; c < WORDS; ++c) {
    unsigned o[4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q)
      transpose4(x.w[4 * q][c], x.w[4 * q + 1][c], x.w[4 * q + 2][c],
                 x.w[4 * q + 3][c], o[0][q], o[1][q], o[2][q], o[3][q]);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<uint4 *>(d + long(4 * c + j) * R) =
          make_uint4(o[j][0], o[j][1], o[j][2], o[j][3]);
  }
}

template <int WORDS>
__global__ void __launch_bounds__(256)
    transposePipelined(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                       int B, int R, int C) {
  const int lane = threadIdx.x & 31;
  const long warp = (blockIdx.x * long(blockDim.x) + threadIdx.x) >> 5;
  const long warps = (gridDim.x * long(blockDim.x)) >> 5;
  const int nGroups = C / (64 * WORDS);
  const int kTiles = R / 32;
  const long tasks = long(B) * kTiles * nGroups;
  Task<WORDS> a, b;
  long t = warp;
  if (t < tasks)
    loadTask(src, t, lane, R, C, nGroups, kTiles, a);
  while (t < tasks) {
    long u = t + warps;
    if (u < tasks)
      loadTask(src, u, lane, R, C, nGroups, kTiles, b);
    storeTask(dst, t, lane, R, C, nGroups, kTiles, a);
    if (u >= tasks)
      break;
    long v = u + warps;
    if (v < tasks)
      loadTask(src, v, lane, R, C, nGroups, kTiles, a);
    storeTask(dst, u, lane, R, C, nGroups, kTiles, b);
    t = v;
  }
}

// Runs `launch` once over a poisoned destination, compares with the host
// transpose of `h`, then times it (median of 50) against cudaMemcpy of the
// same bytes and prints one line.
template <typename Launch>
static void checkAndTime(const char *what, Launch launch, const uint8_t *dsrc,
                         uint8_t *ddst, uint8_t *dcopy,
                         const std::vector<uint8_t> &h, int B, int R, int C) {
  const size_t bytes = size_t(B) * R * C;
  cudaMemset(ddst, 0xA5, bytes);
  launch();
  cudaDeviceSynchronize();
  std::vector<uint8_t> got(bytes);
  cudaMemcpy(got.data(), ddst, bytes, cudaMemcpyDeviceToHost);
  long bad = 0;
  for (int bb = 0; bb < B; ++bb)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        bad += got[(size_t(bb) * C + c) * R + r] != h[(size_t(bb) * R + r) * C + c];
  const float ours = medianMs(launch, 50);
  const float copy = medianMs(
      [&] { cudaMemcpyAsync(dcopy, dsrc, bytes, cudaMemcpyDeviceToDevice); }, 50);
  printf("%d,%d,%d %s: ours %.4f ms copy %.4f ms ours/copy %.3f %s\n", B, R,
         C, what, ours, copy, ours / copy, bad ? "MISMATCH" : "exact");
}

template <int WORDS>
static void runPipelined(const uint8_t *dsrc, uint8_t *ddst, uint8_t *dcopy,
                         const std::vector<uint8_t> &h, int B, int R, int C,
                         int blocksPerSM) {
  if (R % 32 || C % (64 * WORDS)) {
    printf("%d,%d,%d pipelined words %d: shape not a multiple, skipped\n", B, R, C, WORDS);
    return;
  }
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int blocks = sms * blocksPerSM;
  char what[64];
  snprintf(what, sizeof what, "pipelined words %d blocks/SM %d", WORDS, blocksPerSM);
  checkAndTime(what, [&] { transposePipelined<WORDS><<<blocks, 256>>>(dsrc, ddst, B, R, C); },
               dsrc, ddst, dcopy, h, B, R, C);
}

// Lane groups: KB lanes take KB consecutive 16-row blocks of one 16-column
// block (KB = 2 is transposeRegisters' layout): a store instruction then
// writes 16 * KB contiguous bytes of each of 32 / KB destination rows, a
// load instruction 16 * 32 / KB contiguous bytes of each of KB rows.
template <int KB>
__global__ void __launch_bounds__(256)
    transposeLaneGroups(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                        int B, int R, int C) {
  constexpr int NB = 32 / KB;
  const int lane = threadIdx.x & 31;
  const long warp = (blockIdx.x * long(blockDim.x) + threadIdx.x) >> 5;
  const int nGroups = C / (16 * NB);
  const int kTiles = R / (16 * KB);
  const long tasks = long(B) * kTiles * nGroups;
  if (warp >= tasks)
    return;
  const int g = warp % nGroups;
  const int kt = (warp / nGroups) % kTiles;
  const long b = warp / (long(nGroups) * kTiles);
  const int n0 = g * 16 * NB + 16 * (lane / KB);
  const int k0 = kt * 16 * KB + 16 * (lane % KB);
  const uint8_t *s = src + (b * R + k0) * long(C) + n0;
  uint8_t *d = dst + (b * C + n0) * long(R) + k0;
  uint4 rows[16];
#pragma unroll
  for (int r = 0; r < 16; ++r)
    rows[r] = __ldg(reinterpret_cast<const uint4 *>(s + long(r) * C));
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    unsigned o[4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      auto word = [&](int r) {
        return c == 0 ? rows[r].x : c == 1 ? rows[r].y : c == 2 ? rows[r].z : rows[r].w;
      };
      transpose4(word(4 * q), word(4 * q + 1), word(4 * q + 2), word(4 * q + 3),
                 o[0][q], o[1][q], o[2][q], o[3][q]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<uint4 *>(d + long(4 * c + j) * R) =
          make_uint4(o[j][0], o[j][1], o[j][2], o[j][3]);
  }
}

template <int KB>
static void runLaneGroups(const uint8_t *dsrc, uint8_t *ddst, uint8_t *dcopy,
                          const std::vector<uint8_t> &h, int B, int R, int C) {
  constexpr int NB = 32 / KB;
  if (R % (16 * KB) || C % (16 * NB)) {
    printf("%d,%d,%d lane groups %d: shape not a multiple, skipped\n", B, R, C, KB);
    return;
  }
  const long tasks = long(B) * (R / (16 * KB)) * (C / (16 * NB));
  const int blocks = int((tasks * 32 + 255) / 256);
  char what[64];
  snprintf(what, sizeof what, "lane groups %d", KB);
  checkAndTime(what, [&] { transposeLaneGroups<KB><<<blocks, 256>>>(dsrc, ddst, B, R, C); },
               dsrc, ddst, dcopy, h, B, R, C);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s B R C [lanes]\n", argv[0]);
    return 2;
  }
  int B = atoi(argv[1]), R = atoi(argv[2]), C = atoi(argv[3]);
  size_t bytes = size_t(B) * R * C;
  std::vector<uint8_t> h(bytes);
  uint32_t x = 12345;
  for (auto &v : h) {
    x = x * 1664525u + 1013904223u;
    v = x >> 24;
  }
  uint8_t *dsrc, *ddst, *dcopy;
  cudaMalloc(&dsrc, bytes);
  cudaMalloc(&ddst, bytes);
  cudaMalloc(&dcopy, bytes);
  cudaMemcpy(dsrc, h.data(), bytes, cudaMemcpyHostToDevice);
  const char *mode = argc > 4 ? argv[4] : "all";
  if (std::string(mode) != "lanes")
    for (int bps : {1, 2, 4, 8}) {
      runPipelined<4>(dsrc, ddst, dcopy, h, B, R, C, bps);
      runPipelined<2>(dsrc, ddst, dcopy, h, B, R, C, bps);
    }
  for (int round = 0; round < 2; ++round) {
    runLaneGroups<2>(dsrc, ddst, dcopy, h, B, R, C);
    runLaneGroups<4>(dsrc, ddst, dcopy, h, B, R, C);
    runLaneGroups<8>(dsrc, ddst, dcopy, h, B, R, C);
  }
  return 0;
}
