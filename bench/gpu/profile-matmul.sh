#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on one generated matmul kernel per
# directory (each with a one-line cases.txt), the 4th launch of each.
#   bash bench/gpu/profile-matmul.sh DIR...
set -euo pipefail
cd "$(dirname "$0")/../.."
g++ -O2 -std=c++17 -Iinclude bench/gpu/matmul-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -pthread -o /tmp/matmul-bench
for dir in "$@"; do
  echo "== $(awk '{print $5}' "$dir/cases.txt")"
  ncu --clock-control none --kernel-name regex:mixed_matmul --launch-skip 3 \
      --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section SchedulerStats \
      --section LaunchStats /tmp/matmul-bench "$dir" 2>&1 |
    grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Warp Per|No Eligible|Warp Cycles Per Issued|Stall|Active Warps Per|Eligible Warps" | grep -v "^\s*$" | head -24
done
