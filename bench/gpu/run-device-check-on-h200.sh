#!/usr/bin/env bash
# On the GPU machine: conversions, the Hopper dequantization and the matmul
# on device 1 while device 0 is busy (device-check.cpp says what it checks);
# with one GPU, "skipped: 1 GPU", then the same steps on device 0 as a dry
# run (the device-0 checks printed, not required). Kernels:
# bench/gpu/make_check_kernels.sh.
#   bash bench/gpu/run-device-check-on-h200.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
kernels="${KERNELS:-bench/gpu/kernels-check}"
build="${BUILD:-/tmp/microscale-checks}"
[ -x "$build/device-check" ] || bash bench/gpu/build-checks.sh "$build"
"$build/device-check" "$kernels" | tee "${OUT:-/tmp}/device-check.txt"
if grep -q 'skipped: 1 GPU' "${OUT:-/tmp}/device-check.txt"; then
  echo "-- dry run on one GPU (device 0 under test and busy):"
  "$build/device-check" "$kernels" --device 0 --busy 0 |
    tee "${OUT:-/tmp}/device-check-dry.txt"
fi
