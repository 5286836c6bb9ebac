#!/usr/bin/env python3
"""cuBLAS BF16 (torch.matmul, bf16 [M, K] x [K, N]) for the shapes in CASES,
timed like matmul-bench.cpp: a CUDA graph of back-to-back products rotating
up to 16 weight copies (so the weight comes from device memory, not L2),
replayed between CUDA events; the median over 15 replays of the time per
product. Prints m,k,n,cublas_us."""
import sys

import torch


def main():
    cases = [tuple(int(x) for x in line.split()[:3]) for line in open(sys.argv[1])]
    print("m,k,n,cublas_us")
    for m, k, n in cases:
        copies = max(1, min(16, (256 << 20) // (k * n * 2)))
        per_graph = max(copies, 20)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        bs = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        for b in bs:  # warm up: handles, heuristics, workspaces
            torch.matmul(a, b, out=out)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(per_graph):
                torch.matmul(a, bs[i % copies], out=out)
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(15):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / per_graph)
        times.sort()
        print(f"{m},{k},{n},{times[len(times) // 2]:.2f}")
        del bs, graph


if __name__ == "__main__":
    main()
