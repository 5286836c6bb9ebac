#!/usr/bin/env bash
# On the GPU machine: the generated Hopper dequantization, checked
# exhaustively and timed (carry bench/gpu/kernels-dq), and its SASS
# instruction mix from cuobjdump.
set -euo pipefail
cd "$(dirname "$0")/../.."
g++ -O2 -std=c++17 -Iinclude bench/gpu/dequant-bench.cpp lib/Reference/*.cpp \
  lib/Runtime/CUDA/CudaDriver.cpp -ldl -o /tmp/dequant-bench
/tmp/dequant-bench bench/gpu/kernels-dq | tee "${OUT:-/tmp}/dequant-bench.txt"
cuobjdump --dump-sass bench/gpu/kernels-dq/weight.cubin > "${OUT:-/tmp}/dequant.sass"
cuobjdump --dump-sass bench/gpu/kernels-dq/weight-folded.cubin > "${OUT:-/tmp}/dequant-folded.sass"
echo "SASS opcodes of the whole kernel (one thread = one word = 8 values):"
grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]+' "${OUT:-/tmp}/dequant.sass" \
  | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn
