#!/usr/bin/env bash
# On the GPU machine: the conversion kernels of real models' shapes
# (bench/gpu/make_kernels.py --real-shapes, generated here), each timed
# against a device copy of the same bytes in the same run, the checked cases
# compared byte for byte with the C++ reference over a poisoned destination:
#   here:  python3 bench/gpu/make_kernels.py build/bin/mx-opt bench/gpu/kernels-real --real-shapes
#   there: bash bench/gpu/run-real-shapes-on-h200.sh   (carry bench/gpu/kernels-real)
set -euo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
g++ -O2 -std=c++17 -Iinclude bench/gpu/gpu-convert-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/*.cpp -ldl -o /tmp/gpu-convert-bench
/tmp/gpu-convert-bench bench/gpu/kernels-real | tee "${OUT:-/tmp}/real-shapes.txt"
