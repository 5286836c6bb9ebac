#!/usr/bin/env bash
# On the GPU machine: the Hopper-layout matmul kernels (decode, wgmma, the
# split of K over blocks and over a cluster with its reduce-scatter, rows
# known at run time, the ragged form), each launched once and checked
# against float64 by matmul-bench (MATMUL_BENCH_CHECK_ONLY), under
# compute-sanitizer memcheck, racecheck and synccheck. One summary line per
# tool; the full reports in $OUT/matmul-sanitizer-TOOL.txt. Make the
# kernels here first:
#   bash bench/gpu/make_matmul_kernels.sh build/bin/mx-opt bench/gpu/kernels-mm-san sanitize
# then through the device tool (carry bench/gpu/kernels-mm-san):
#   bash bench/gpu/run-matmul-sanitizers-on-h200.sh
# (KERNELS names another folder; SANITIZER_TIMEOUT, seconds per tool,
# default 150.)
set -uo pipefail
cd "$(dirname "$0")/../.."
kernels="${KERNELS:-bench/gpu/kernels-mm-san}"
out="${OUT:-/tmp}"
g++ -O2 -std=c++17 -Iinclude bench/gpu/matmul-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -pthread -o /tmp/matmul-bench || exit 1
export MATMUL_BENCH_CHECK_ONLY=1
compute-sanitizer --version | tail -1
status=0
/tmp/matmul-bench "$kernels" > "$out/matmul-check.txt" 2>&1 || status=1
cases=$(grep -cvE '^(#|m,)' "$out/matmul-check.txt")
echo "without a sanitizer: exit $status, $cases cases"
for tool in memcheck racecheck synccheck; do
  options=(--tool "$tool" --error-exitcode 99)
  [ "$tool" = memcheck ] && options+=(--leak-check full)
  start=$(date +%s.%N)
  timeout "${SANITIZER_TIMEOUT:-150}" compute-sanitizer "${options[@]}" \
    /tmp/matmul-bench "$kernels" > "$out/matmul-sanitizer-$tool.txt" 2>&1
  rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
  summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/matmul-sanitizer-$tool.txt" |
            tail -1 | sed 's/^=* *//')
  # Cases whose outputs failed the float64 check (rel_error >= 1e-2).
  bad=$(awk -F, '!/^(#|m,|=)/ && NF > 6 && !($6 < 1e-2)' \
        "$out/matmul-sanitizer-$tool.txt" | wc -l)
  done_cases=$(grep -cvE '^(#|m,|=)' "$out/matmul-sanitizer-$tool.txt")
  printf '%s: exit %s, %.0f s, %s lines, %s outside tolerance; %s\n' "$tool" \
    "$rc" "$seconds" "$done_cases" "$bad" "${summary:-no summary}"
  [ "$rc" = 0 ] || status=1
done
exit $status
