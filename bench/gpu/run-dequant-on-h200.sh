#!/usr/bin/env bash
# On the GPU machine: the generated Hopper dequantization, checked
# exhaustively and on padded shapes, and timed against the copy floor
# (carry bench/gpu/kernels-dq from make_dequant_kernels.sh); then the SASS
# data instructions of its decode and scale upcast (ptxas + cuobjdump).
set -euo pipefail
cd "$(dirname "$0")/../.."
g++ -O2 -std=c++17 -Iinclude bench/gpu/dequant-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -o /tmp/dequant-bench
/tmp/dequant-bench bench/gpu/kernels-dq | tee "${OUT:-/tmp}/dequant-bench.txt"
python3 bench/gpu/count_dequant_sass.py bench/gpu/kernels-dq | tee "${OUT:-/tmp}/dequant-sass.txt"
cuobjdump --dump-sass bench/gpu/kernels-dq/weight.cubin > "${OUT:-/tmp}/dequant.sass"
echo "SASS opcodes of the whole default kernel (4 tiles of 2 words per thread):"
grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]+' "${OUT:-/tmp}/dequant.sass" \
  | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -12
