#!/usr/bin/env bash
# On the GPU machine: the generated bf16 x MXFP4 matmul (carry
# bench/gpu/kernels-mm, made by make_matmul_kernels.sh), checked against a
# float64 reference and timed, then cuBLAS BF16 (torch.matmul) on the same
# shapes in the same run, joined into one table.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp}"
g++ -O2 -std=c++17 -Iinclude bench/gpu/matmul-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -o /tmp/matmul-bench
status=0
/tmp/matmul-bench bench/gpu/kernels-mm > "$out/ours.csv" || status=$?
python3 bench/gpu/cublas-matmul.py bench/gpu/kernels-mm/cases.txt > "$out/cublas.csv"
python3 - "$out/ours.csv" "$out/cublas.csv" <<'PY'
import csv, sys
ours_lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
print("".join(l for l in open(sys.argv[1]) if l.startswith("#")), end="")
ours = {(r["m"], r["k"], r["n"]): r for r in csv.DictReader(ours_lines)}
cublas = {(r["m"], r["k"], r["n"]): r for r in csv.DictReader(open(sys.argv[2]))}
print("| M | K | N | ours (us) | cuBLAS BF16 (us) | cuBLAS / ours | decode floor (us) | floor / ours | rel. error |")
print("|---|---|---|---|---|---|---|---|---|")
for key, r in ours.items():
    c = float(cublas[key]["cublas_us"]); o = float(r["ours_us"]); f = float(r["floor_us"])
    print(f"| {key[0]} | {key[1]} | {key[2]} | {o:.1f} | {c:.1f} | {c / o:.2f}x | {f:.1f} | {f / o:.0%} | {r['rel_error']} |")
PY
exit $status
