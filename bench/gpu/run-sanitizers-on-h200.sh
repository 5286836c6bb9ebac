#!/usr/bin/env bash
# On the GPU machine: every kernel family of the check set (conversions
# per-unit and staged, padded shapes; the Hopper dequantization staged and
# per-word; the matmul, dense and ragged with an empty expert and routing
# indices out of range), run once each by kernel-check, under
# compute-sanitizer memcheck (leak check on), racecheck and synccheck. One
# summary line per tool; the full reports in $OUT/sanitizer-TOOL.txt. Make
# the kernels here first (bench/gpu/make_check_kernels.sh build/bin/mx-opt),
# then through the device tool:
#   bash bench/gpu/run-sanitizers-on-h200.sh
# (SANITIZER_TOOLS="memcheck racecheck synccheck initcheck" adds initcheck;
# SANITIZER_TIMEOUT, seconds per tool, default 150.)
set -uo pipefail
cd "$(dirname "$0")/../.."
kernels="${KERNELS:-bench/gpu/kernels-check}"
build="${BUILD:-/tmp/microscale-checks}"
out="${OUT:-/tmp}"
[ -x "$build/kernel-check" ] || bash bench/gpu/build-checks.sh "$build" || exit 1
compute-sanitizer --version | tail -1
status=0
"$build/kernel-check" "$kernels" > "$out/kernel-check.txt" 2>&1 || status=1
echo "without a sanitizer: $(tail -1 "$out/kernel-check.txt")"
for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
  options=(--tool "$tool" --error-exitcode 99)
  [ "$tool" = memcheck ] && options+=(--leak-check full)
  start=$(date +%s.%N)
  timeout "${SANITIZER_TIMEOUT:-150}" compute-sanitizer "${options[@]}" \
    "$build/kernel-check" "$kernels" > "$out/sanitizer-$tool.txt" 2>&1
  rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
  summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/sanitizer-$tool.txt" |
            tail -1 | sed 's/^=* *//')
  ok=$(grep -cE '^ok ' "$out/sanitizer-$tool.txt")
  failed=$(grep -cE '^FAIL' "$out/sanitizer-$tool.txt")
  printf '%s: exit %s, %.0f s, %s checks ok, %s failed; %s\n' "$tool" "$rc" \
    "$seconds" "$ok" "$failed" "${summary:-no summary}"
  [ "$rc" = 0 ] || status=1
done
exit $status
