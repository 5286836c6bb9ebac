#!/usr/bin/env python3
"""Paper roofline of the Blackwell matmul kernels on a B200, next to the
Hopper bf16 x MXFP4 kernel measured on the H200 (docs/performance.md).

  python3 bench/gpu/blackwell/roofline.py          # prints the markdown table

No GPU is involved: every B200 figure is arithmetic on the numbers below.

* B200: 8 TB/s HBM3e; dense FP4 tensor-core peak 9 PFLOP/s and dense
  BF16 2.25 PFLOP/s: NVIDIA's HGX B200 specifications list, per GPU, "FP4
  Tensor Core 18 PFLOPS" and "FP16/BF16 Tensor Core 4.5 PFLOPS", both
  footnoted "with sparsity"; dense is half of each. (The GB200 part is
  rated 20 / 5 sparse, 8 TB/s; the HGX part 7.7 TB/s: we take the 8 TB/s
  the issue names.) 148 SMs.
* roofline: max(bytes / bandwidth, 2 M N K / peak), bytes = what must
  cross HBM once: the FP4 weight and its scales, the activations (FP4 and
  scales for scaled_matmul, bf16 for mixed_matmul) and the bf16 result.
* "tcgen05 kernel as written": a latency model of
  TCGen05ScaledMatmulKernel.cpp, which copies with plain loads: each CTA
  has one chunk (one scale atom's K) of loads in flight at a time, so a
  chunk costs one loaded DRAM latency (the chip model's 700 ns for
  sm_100a) plus its issue (about 170 SASS per thread, 0.1 us), and a CTA's
  time is its chunks times that; the CTAs run in waves of the resident
  ones (148 SMs x CTAs per SM, the fewest that tensor memory (512 columns
  / the CTA's allocation), shared memory (228 KiB / two stages) and
  threads (2048 / 128) allow). The MMAs (about 70 ns per chunk of 128 x
  128 x 128 at the per-SM FP4 peak) hide under the copies. An estimate on
  paper, like the rest of the table.
* The second table: MXFP8 activations x the MXFP4 weight through
  kind::mxf8f6f4, which runs at the FP8 rate (dense 4.5 PFLOP/s: the same
  specifications' "FP8/FP6 Tensor Core 9 PFLOPS" with sparsity, halved;
  the FP4 weight is padded to the 8-bit container in shared memory, so it
  costs FP8 tensor-core time but only FP4 HBM bytes). Its kernel as
  written has 48-token tiles (two stages of 16 KiB padded weight and the
  48 x 128-byte token tile fit 48 KiB of static shared memory).
"""

BW = 8.0e12
FP4 = 9.0e15
BF16 = 2.25e15
FP8 = 4.5e15
SMS = 148
LATENCY = 700e-9  # chip model, sm_100a
ISSUE = 0.1e-6    # ~170 SASS per thread and chunk, 4 warps per scheduler set

# Hopper, measured (docs/performance.md): ours (mixed_matmul) and cuBLAS BF16,
# microseconds. 2880 shapes: issue 18's table (2026-12-01); 8192: issue 8's.
HOPPER = {
    (1, 2880, 5760): (9.8, 11.7), (16, 2880, 5760): (13.3, 11.9),
    (4096, 2880, 5760): (572.3, 194.9),
    (1, 2880, 2880): (6.7, 9.1), (16, 2880, 2880): (9.2, 9.4),
    (4096, 2880, 2880): (280.4, 110.4),
    (1, 8192, 8192): (17.5, 34.4), (16, 8192, 8192): (22.2, 33.2),
    (4096, 8192, 8192): (2250.3, 779.6),
}


def scaled_bytes(m, k, n, block):
    weight = k * n / 2 + k // block * n
    act = m * k / 2 + m * k // block
    return weight + act + m * n * 2


def mixed_bytes(m, k, n):
    return k * n / 2 + k // 32 * n + m * k * 2 + m * n * 2


def mxf8_bytes(m, k, n):
    return k * n / 2 + k // 32 * n + m * k + m * k // 32 + m * n * 2


def tcgen05_estimate(m, k, n, block, mxf8=False):
    tokens = min(48 if mxf8 else 128, (m + 15) // 16 * 16)
    chunk_k = 4 * block
    chunks = -(-k // chunk_k)
    ctas = -(-n // 128) * -(-m // tokens)
    columns = max(32, 1 << (tokens + 8 - 1).bit_length())
    row_bytes = chunk_k if mxf8 else chunk_k // 2
    stage = (128 + tokens) * row_bytes + 2 * 512
    per_sm = min(512 // columns, 228 * 1024 // (2 * stage), 2048 // 128)
    waves = -(-ctas // (SMS * per_sm))
    return waves * chunks * (LATENCY + ISSUE), ctas


def us(seconds):
    return "%.1f" % (seconds * 1e6) if seconds >= 1e-6 else "%.2f" % (seconds * 1e6)


def main():
    print("| M | K x N | MXFP4 x MXFP4: MB | B200 roofline (us) | bound | "
          "tcgen05 kernel as written (us, CTAs) | NVFP4 roofline (us) | "
          "bf16 x MXFP4 on B200: roofline (us) | H200 measured: ours / "
          "cuBLAS BF16 (us) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k, n in ((2880, 5760), (2880, 2880), (8192, 8192)):
        for m in (1, 16, 4096):
            flops = 2.0 * m * n * k
            b = scaled_bytes(m, k, n, 32)
            mem, comp = b / BW, flops / FP4
            roof = max(mem, comp)
            nv = max(scaled_bytes(m, k, n, 16) / BW, comp)
            mixed = max(mixed_bytes(m, k, n) / BW, flops / BF16)
            est, ctas = tcgen05_estimate(m, k, n, 32)
            ours, cublas = HOPPER[(m, k, n)]
            print("| %d | %d x %d | %.2f | %s | %s | %s (%d) | %s | %s | %s / %s |"
                  % (m, k, n, b / 1e6, us(roof),
                     "memory" if mem >= comp else "FP4 compute",
                     us(est), ctas, us(nv), us(mixed), ours, cublas))
    print()
    print("| M | K x N | MXFP8 x MXFP4: MB | B200 roofline (us) | bound | "
          "tcgen05 mxf8f6f4 kernel as written (us, CTAs) |")
    print("|---|---|---|---|---|---|")
    for k, n in ((2880, 5760), (2880, 2880), (8192, 8192)):
        for m in (1, 16, 4096):
            b = mxf8_bytes(m, k, n)
            mem, comp = b / BW, 2.0 * m * n * k / FP8
            est, ctas = tcgen05_estimate(m, k, n, 32, mxf8=True)
            print("| %d | %d x %d | %.2f | %s | %s | %s (%d) |"
                  % (m, k, n, b / 1e6, us(max(mem, comp)),
                     "memory" if mem >= comp else "FP8 compute", us(est), ctas))


if __name__ == "__main__":
    main()
