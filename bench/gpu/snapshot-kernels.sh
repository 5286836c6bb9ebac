#!/usr/bin/env bash
# Generates the PTX of every benchmark kernel (conversions: the benchmark set
# and every pair of layouts; the Hopper dequantization; the matmul) with one
# mx-opt, so that two compilers can be compared file by file:
#   bench/gpu/snapshot-kernels.sh MX_OPT OUT_DIR
#   diff -r OLD_DIR NEW_DIR   # byte-identical, or the kernels to re-measure
set -euo pipefail
mx_opt="$1" out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
python3 "$here/make_kernels.py" "$mx_opt" "$out/conv" > /dev/null
python3 "$here/make_kernels.py" "$mx_opt" "$out/allpairs" --all-pairs > /dev/null
bash "$here/make_dequant_kernels.sh" "$mx_opt" "$out/dq" > /dev/null
bash "$here/make_matmul_kernels.sh" "$mx_opt" "$out/mm" > /dev/null 2>&1
# Cubins embed nothing that differs between equal PTX, but keep only PTX.
find "$out" -name '*.cubin' -delete
echo "$(find "$out" -name '*.ptx' | wc -l) kernels in $out"
