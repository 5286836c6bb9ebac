// On the GPU machine: the TMA box the sm_100a tcgen05 kernel copies each
// operand tile with (TCGen05ScaledMatmulKernel.cpp), run on the H200, which
// has the same cp.async.bulk.tensor: K-major rows (`pitch` bytes apart)
// seen as [16-byte units][rows][16 bytes] (dims {16, rows, units}, strides
// {pitch, 16}: not increasing), a box of 16 bytes x boxRows x boxUnits at
// (0, row0, unit0), which must land in shared memory at 16 (u boxRows + r)
// with zeros past the rows and past the units (K). Also the Hopper wgmma
// kernel's 2-D box in the 128-byte swizzle. Prints one line per case and
// "FAIL" on a mismatch.
//
//   nvcc -std=c++17 -arch=sm_90a -o /tmp/tma-box-check \
//     bench/gpu/probe/tma-box-check.cu -lcuda && /tmp/tma-box-check
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    auto status = (x);                                                         \
    if (status != 0) {                                                         \
      std::printf("FAIL: %s = %d (line %d)\n", #x, int(status), __LINE__);    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// One box into shared memory by thread 0 (mbarrier with the transaction
// count), then every byte copied out.
template <int Rank>
__global__ void copyBox(const CUtensorMap *map, int c0, int c1, int c2,
                        unsigned bytes, uint8_t *out) {
  extern __shared__ __align__(1024) uint8_t tile[];
  __shared__ __align__(8) uint64_t barrier;
  unsigned barrierAddress =
      static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  unsigned tileAddress = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrierAddress));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     barrierAddress),
                 "r"(bytes));
    if (Rank == 3)
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile."
                   "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                   "[%5];" ::"r"(tileAddress),
                   "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(barrierAddress)
                   : "memory");
    else
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                   "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
                       "r"(tileAddress),
                   "l"(map), "r"(c0), "r"(c1), "r"(barrierAddress)
                   : "memory");
  }
  asm volatile("{\n.reg .pred p;\nwait:\nmbarrier.try_wait.parity.shared::cta."
               "b64 p, [%0], 0;\n@!p bra wait;\n}" ::"r"(barrierAddress)
               : "memory");
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x)
    out[i] = tile[i];
}

static int failures = 0;

// The tcgen05 operand box: rows x pitch bytes, K bytes per row (16-byte
// units of it: kBytes / 16), box of boxRows x boxUnits at (row0, unit0).
static void checkRowsBox(int rows, int pitch, int kBytes, int boxRows,
                         int boxUnits, int row0, int unit0) {
  std::mt19937 rng(rows * 7 + pitch);
  std::vector<uint8_t> host(size_t(rows) * pitch);
  for (auto &b : host)
    b = static_cast<uint8_t>(rng());
  uint8_t *device, *out;
  CHECK(cudaMalloc(&device, host.size()));
  CHECK(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice));
  const unsigned bytes = 16u * boxRows * boxUnits;
  CHECK(cudaMalloc(&out, bytes));
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[3] = {16, cuuint64_t(rows), cuuint64_t(kBytes / 16)};
  const cuuint64_t strides[2] = {cuuint64_t(pitch), 16};
  const cuuint32_t box[3] = {16, cuuint32_t(boxRows), cuuint32_t(boxUnits)};
  const cuuint32_t elementStrides[3] = {1, 1, 1};
  CHECK(cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, device, dims, strides, box,
      elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CUtensorMap *deviceMap;
  CHECK(cudaMalloc(&deviceMap, sizeof(map)));
  CHECK(cudaMemcpy(deviceMap, &map, sizeof(map), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(out, 0xA5, bytes));
  copyBox<3><<<1, 128, bytes + 1024>>>(deviceMap, 0, row0, unit0, bytes, out);
  CHECK(cudaGetLastError());
  std::vector<uint8_t> got(bytes);
  CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int u = 0; u < boxUnits; ++u)
    for (int r = 0; r < boxRows; ++r)
      for (int b = 0; b < 16; ++b) {
        const int row = row0 + r, unit = unit0 + u;
        const uint8_t want = row < rows && unit < kBytes / 16
                                 ? host[size_t(row) * pitch + unit * 16 + b]
                                 : 0;
        wrong += got[16 * (u * boxRows + r) + b] != want;
      }
  std::printf("%s rows box: %d rows, pitch %d, K bytes %d, box %d x %d at "
              "(%d, %d): %d wrong bytes of %u\n",
              wrong ? "FAIL" : "ok", rows, pitch, kBytes, boxRows, boxUnits,
              row0, unit0, wrong, bytes);
  failures += wrong != 0;
  cudaFree(device);
  cudaFree(out);
  cudaFree(deviceMap);
}

// The wgmma activations' box: bf16 rows x k, box of boxRows x 64 at
// (k0, row0), 128-byte swizzle: 16-byte unit u of box row r at
// 16 (u ^ r % 8) of the row.
static void checkSwizzledBox(int rows, int k, int boxRows, int row0, int k0) {
  std::mt19937 rng(rows + k);
  std::vector<uint16_t> host(size_t(rows) * k);
  for (auto &x : host)
    x = static_cast<uint16_t>(rng());
  uint8_t *device, *out;
  CHECK(cudaMalloc(&device, host.size() * 2));
  CHECK(cudaMemcpy(device, host.data(), host.size() * 2,
                   cudaMemcpyHostToDevice));
  const unsigned bytes = 128u * boxRows;
  CHECK(cudaMalloc(&out, bytes));
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * 2};
  const cuuint32_t box[2] = {64, cuuint32_t(boxRows)};
  const cuuint32_t elementStrides[2] = {1, 1};
  CHECK(cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, device, dims, strides, box,
      elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CUtensorMap *deviceMap;
  CHECK(cudaMalloc(&deviceMap, sizeof(map)));
  CHECK(cudaMemcpy(deviceMap, &map, sizeof(map), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(out, 0xA5, bytes));
  copyBox<2><<<1, 128, bytes + 1024>>>(deviceMap, k0, row0, 0, bytes, out);
  CHECK(cudaGetLastError());
  std::vector<uint8_t> got(bytes);
  CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int r = 0; r < boxRows; ++r)
    for (int e = 0; e < 64; ++e) {
      const int row = row0 + r, kk = k0 + e;
      const uint16_t want =
          row < rows && kk < k ? host[size_t(row) * k + kk] : 0;
      const int unit = e / 8, at = 128 * r + 16 * (unit ^ (r % 8)) + 2 * (e % 8);
      wrong += (got[at] | got[at + 1] << 8) != want;
    }
  std::printf("%s swizzled box: %d x %d bf16, box %d x 64 at (%d, %d): %d "
              "wrong of %d\n",
              wrong ? "FAIL" : "ok", rows, k, boxRows, row0, k0, wrong,
              64 * boxRows);
  failures += wrong != 0;
  cudaFree(device);
  cudaFree(out);
  cudaFree(deviceMap);
}

int main() {
  CHECK(cudaFree(nullptr));
  // gpt-oss's weight in #microscale.blackwell_value (K = 2880: 1440 bytes
  // of rows 1536 apart), a whole box and the last, partial chunk (units 88,
  // 89 of 90, then past K); a partial weight tile (rows past N); the
  // decode token tile (16 rows, one token); NVFP4's 2-unit chunks.
  checkRowsBox(256, 1536, 1440, 128, 4, 0, 0);
  checkRowsBox(256, 1536, 1440, 128, 4, 128, 88);
  checkRowsBox(130, 64, 64, 128, 4, 128, 0);
  checkRowsBox(1, 1440, 1440, 16, 4, 0, 8);
  checkRowsBox(33, 64, 64, 48, 2, 0, 2);
  // The wgmma activations: a whole box, rows past M, a half last chunk.
  checkSwizzledBox(4096, 2880, 128, 128, 64);
  checkSwizzledBox(100, 160, 128, 0, 128);
  std::printf("%s\n", failures ? "FAIL" : "all boxes as the kernels lay them out");
  return failures != 0;
}
