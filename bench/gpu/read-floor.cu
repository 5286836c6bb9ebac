// The weight-read baseline of matmul-bench: one kernel that reads a
// weight's values and scales once (16-byte loads, 32 warps per SM, four
// loads in flight per lane) and does nothing else, timed like the matmul
// on the same buffers. At weight sizes (8-35 MB) the launch, the ramp and
// the tail cost about 3 us on the H200, so this, not the bytes over the
// copy bandwidth of 256 MiB, is what any kernel can reach
// (docs/performance.md). Built on the GPU machine by
// run-matmul-on-h200.sh:
//   nvcc -O3 -arch=sm_90a -cubin bench/gpu/read-floor.cu -o read-floor.cubin
#include <cstdint>

__device__ inline unsigned foldPart(const uint4 *__restrict__ p, size_t n,
                                    size_t first, size_t stride) {
  unsigned acc = 0;
  size_t i = first;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = __ldg(p + i), b = __ldg(p + i + stride),
          c = __ldg(p + i + 2 * stride), d = __ldg(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^
           c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    uint4 a = __ldg(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  return acc;
}

// `values` and `scales`: 16-byte units; a trailing part of fewer than 16
// bytes is not read (at most 15 bytes of a weight).
extern "C" __global__ void read_floor(const uint4 *__restrict__ values,
                                      uint64_t valueUnits,
                                      const uint4 *__restrict__ scales,
                                      uint64_t scaleUnits, unsigned *sink) {
  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  unsigned acc = foldPart(values, valueUnits, thread, threads) ^
                 foldPart(scales, scaleUnits, thread, threads);
  if (acc == 0x9E3779B9u)
    *sink = acc;
}
