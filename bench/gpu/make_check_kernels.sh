#!/usr/bin/env bash
# Generates the small kernel set of the GPU checks (kernel-check under
# compute-sanitizer, stream-check, device-check) with our compiler:
#   OUT/conv  conversions, per-unit and staged, padded and unpadded shapes
#             (make_kernels.py --check-set)
#   OUT/dq    the Hopper dequantization, staged and per-word, exhaustive and
#             padded (make_dequant_kernels.sh ... check)
#   OUT/mm    the matmul, dense and ragged (an empty expert), small shapes
#             (make_matmul_kernels.sh ... check)
# About 1.3 MiB; carry it to the GPU machine (bench/gpu/kernels-check is not
# ignored, so it travels with the working tree).
#   bench/gpu/make_check_kernels.sh MX_OPT [OUT]   (default bench/gpu/kernels-check)
set -euo pipefail
mx_opt="$1"
here="$(cd "$(dirname "$0")" && pwd)"
out="${2:-$here/kernels-check}"
python3 "$here/make_kernels.py" "$mx_opt" "$out/conv" --check-set
rm -f "$out"/conv/*.mlir
bash "$here/make_dequant_kernels.sh" "$mx_opt" "$out/dq" check
rm -f "$out"/dq/*.mlir
bash "$here/make_matmul_kernels.sh" "$mx_opt" "$out/mm" check
