#!/usr/bin/env bash
# On the GPU machine: the staged kernel's tiles-per-block sweep on real
# shapes (make_kernels.py --real-sweep, generated here), then a Nsight
# Compute profile of the first case of each shape (memory throughput, DRAM
# bytes, stall reasons):
#   here:  python3 bench/gpu/make_kernels.py build/bin/mx-opt bench/gpu/kernels-sweep --real-sweep
#   there: bash bench/gpu/run-sweep-on-h200.sh   (carry bench/gpu/kernels-sweep)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${KERNELS:-bench/gpu/kernels-sweep}
out=${OUT:-/tmp}
g++ -O2 -std=c++17 -Iinclude bench/gpu/gpu-convert-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/*.cpp -ldl -o /tmp/gpu-convert-bench
if [ -z "${PROFILE_ONLY:-}" ]; then
  /tmp/gpu-convert-bench "$dir" > "$out/sweep.txt" 2>&1 || { tail -20 "$out/sweep.txt"; exit 1; }
fi
# Profile the cases named in PROFILE (manifest line numbers, 1-based);
# PROFILE_ONLY=1 skips the timing run.
if command -v ncu >/dev/null && [ -n "${PROFILE:-}" ]; then
  for line in $PROFILE; do
    one=/tmp/profile-$line
    rm -rf "$one"; mkdir -p "$one"
    sed -n "${line}p" "$dir/manifest.txt" > "$one/manifest.txt"
    cp "$dir/$(cut -d'|' -f2 "$one/manifest.txt")" "$one/"
    ncu --kernel-name regex:convert --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats \
      /tmp/gpu-convert-bench "$one" > "$out/ncu-$line.txt" 2>&1 || true
  done
fi
[ -n "${PROFILE_ONLY:-}" ] || grep -v '^#' "$out/sweep.txt" | tail -60
