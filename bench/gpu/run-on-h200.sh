#!/usr/bin/env bash
# On the GPU machine (no MLIR there): builds the MLIR-free benchmark and runs
# the kernels that bench/gpu/make_kernels.py generated here, e.g. through the
# device tool with carry = [bench/gpu/kernels]:
#   bash bench/gpu/run-on-h200.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
g++ -O2 -std=c++17 -Iinclude bench/gpu/gpu-convert-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -o /tmp/gpu-convert-bench
/tmp/gpu-convert-bench bench/gpu/kernels | tee "${OUT:-/tmp}/gpu-convert-bench.txt"
# The same kernels as cubins (when bench/gpu/kernels-bin was generated with
# --format bin): only the first call's latency should change.
if [ -d bench/gpu/kernels-bin ]; then
  /tmp/gpu-convert-bench bench/gpu/kernels-bin | tee "${OUT:-/tmp}/gpu-convert-bench-cubin.txt"
fi
