#!/usr/bin/env python3
"""cuBLAS BF16 (torch.matmul) for the shapes in CASES: median of 50 after 5
warm-ups, CUDA events. Prints m,k,n,cublas_us."""
import sys

import torch


def main():
    cases = [tuple(int(x) for x in line.split()) for line in open(sys.argv[1])]
    print("m,k,n,cublas_us")
    for m, k, n in cases:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(5):
            torch.matmul(a, b)
        times = []
        for _ in range(50):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        times.sort()
        print(f"{m},{k},{n},{times[len(times) // 2]:.2f}")


if __name__ == "__main__":
    main()
