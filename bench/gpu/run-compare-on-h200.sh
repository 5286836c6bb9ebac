#!/usr/bin/env bash
# On the GPU machine: two compilers' conversion and dequantization kernels
# timed in one run, so that a change to the generated code is measured
# against the code it replaces, not against an older table:
#   here:  python3 bench/gpu/make_kernels.py OLD_MX_OPT bench/gpu/kernels-old
#          python3 bench/gpu/make_kernels.py build/bin/mx-opt bench/gpu/kernels
#          bash bench/gpu/make_dequant_kernels.sh OLD_MX_OPT bench/gpu/kernels-dq-old
#          bash bench/gpu/make_dequant_kernels.sh build/bin/mx-opt bench/gpu/kernels-dq
#   there: bash bench/gpu/run-compare-on-h200.sh   (carry the four folders)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp}"
g++ -O2 -std=c++17 -Iinclude bench/gpu/gpu-convert-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/*.cpp -ldl -o /tmp/gpu-convert-bench
g++ -O2 -std=c++17 -Iinclude bench/gpu/dequant-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/*.cpp -ldl -o /tmp/dequant-bench
for side in old new; do
  suffix=$([ $side = old ] && echo -old || echo)
  echo "== conversions ($side)"
  /tmp/gpu-convert-bench "bench/gpu/kernels$suffix" | tee "$out/convert-$side.txt"
  echo "== dequantization ($side)"
  /tmp/dequant-bench "bench/gpu/kernels-dq$suffix" | tee "$out/dequant-$side.txt"
done
