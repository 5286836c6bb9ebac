#!/usr/bin/env bash
# On the GPU machine: the generated bf16 x MXFP4 matmul (carry
# bench/gpu/kernels-mm, made by make_matmul_kernels.sh), checked against a
# float64 reference and timed, then cuBLAS BF16 (torch.matmul) on the same
# shapes in the same run, joined into one table.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp}"
g++ -O2 -std=c++17 -Iinclude bench/gpu/matmul-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -pthread -o /tmp/matmul-bench
# The read baseline: a kernel that only reads each case's weight.
nvcc -O3 -arch=sm_90a -cubin bench/gpu/read-floor.cu -o /tmp/read-floor.cubin
export MATMUL_BENCH_READ_CUBIN=/tmp/read-floor.cubin
# Also the graph of programmatic dependent launches and its check
# (docs/performance.md, "Programmatic dependent launch").
export MATMUL_BENCH_PDL=1
status=0
kernels="${KERNELS:-bench/gpu/kernels-mm}"
# A kernel that hangs (a collective op under divergence, say) must not eat
# the lease: 150 s is several times the whole run.
timeout 150 /tmp/matmul-bench "$kernels" > "$out/ours.csv" || status=$?
# Dense shapes only: cuBLAS has no ragged product to compare with.
awk '$9 == 0' "$kernels/cases.txt" | sort -u -k1,3 > /tmp/shapes.txt
python3 bench/gpu/cublas-matmul.py /tmp/shapes.txt > "$out/cublas.csv"
python3 - "$out/ours.csv" "$out/cublas.csv" <<'PY'
import csv, sys
ours_lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
print("".join(l for l in open(sys.argv[1]) if l.startswith("#")), end="")
ours = {r["kernel"]: r for r in csv.DictReader(ours_lines)}
cublas = {(r["m"], r["k"], r["n"]): r for r in csv.DictReader(open(sys.argv[2]))}
# "graph": our launches replayed from a CUDA graph, as cuBLAS is timed;
# "read": a kernel that only reads the same weight, in a graph too.
# "programmatic": the graph's launches overlapping the previous kernel's end.
print("| M | K | N | kernel | split K | ours (us) | ours, graph (us) | cuBLAS BF16 (us) | cuBLAS / ours | cuBLAS / ours, graph | decode floor (us) | floor / ours, graph | read, graph (us) | read / ours, graph | ours, programmatic (us) | cuBLAS / ours, programmatic | rel. error |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, r in ours.items():
    if r["experts"] != "0":
        continue
    key = (r["m"], r["k"], r["n"])
    c = float(cublas[key]["cublas_us"]); o = float(r["ours_us"]); f = float(r["floor_us"])
    gr = float(r.get("graph_us", -1))
    gcol = f"{gr:.1f} | " if gr > 0 else "- | "
    gratio = (f"{c / gr:.2f}x | {f:.1f} | {f / gr:.0%}" if gr > 0
              else f"- | {f:.1f} | -")
    rd = float(r.get("read_graph_us", -1))
    rcol = f"{rd:.1f} | {rd / gr:.0%}" if rd > 0 and gr > 0 else "- | -"
    pd = float(r.get("pdl_graph_us", -1))
    pcol = f"{pd:.2f} | {c / pd:.2f}x" if pd > 0 else "- | -"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {name} | {r['split_k']} | {o:.1f} | {gcol}{c:.1f} | {c / o:.2f}x | {gratio} | {rcol} | {pcol} | {r['rel_error']} |")
moe = [(n, r) for n, r in ours.items() if r["experts"] != "0"]
if moe:
    print()
    print("| ragged rows | K | N | experts | kernel | split K | ours (us) | ours, graph (us) | ours, programmatic (us) | weight bytes / time (TB/s) | floor (us) | floor / ours | rel. error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in moe:
        o = float(r["ours_us"]); f = float(r["floor_us"])
        gr = float(r.get("graph_us", -1))
        gcol = f"{gr:.1f}" if gr > 0 else "-"
        pd = float(r.get("pdl_graph_us", -1))
        pcol = f"{pd:.1f}" if pd > 0 else "-"
        print(f"| {r['m']} | {r['k']} | {r['n']} | {r['experts']} | {name} | {r['split_k']} | {o:.1f} | {gcol} | {pcol} | {r['weight_tb_s']} | {f:.1f} | {f / o:.0%} | {r['rel_error']} |")
# Programmatic launches right after a kernel that rewrites the activations
# must match the plain launch bit for bit (matmul-bench counts a mismatch
# as a failure too).
bad = [n for n, r in ours.items() if r.get("pdl_exact", "-1") == "0"]
print("programmatic launches: " + ("all exact" if not bad else "NOT exact: " + ", ".join(bad)))
PY
# SASS of the decode-shaped kernel, when this kernel set has it: the
# instruction mix of the whole kernel.
sass_cubin="$kernels/mm_16_8192_8192_e0_s0_u0_c0_w0_b0_a0_g0_r0.cubin"
if [ -f "$sass_cubin" ]; then
  cuobjdump --dump-sass "$sass_cubin" > "$out/mm_16_8192_8192.sass"
  echo "SASS opcodes, mm_16_8192_8192 (whole kernel):"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]+' "$out/mm_16_8192_8192.sass" \
    | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -16 | tr '\n' ' '
  echo
fi
# The same for the Hopper-layout kernels of the "hopper" kernel set.
for name in mm_hl_1_8192_8192_s0_c0 mm_hl_16_8192_8192_s0_c0; do
  [ -f "$kernels/$name.cubin" ] || continue
  cuobjdump --dump-sass "$kernels/$name.cubin" > "$out/$name.sass"
  echo "SASS opcodes, $name (whole kernel):"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]+' "$out/$name.sass" \
    | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -16 | tr '\n' ' '
  echo
done
exit $status
