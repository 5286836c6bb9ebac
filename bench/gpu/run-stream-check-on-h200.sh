#!/usr/bin/env bash
# On the GPU machine: conversions, the Hopper dequantization and the matmul
# on a non-blocking stream, ordered after a spin kernel and the copies of
# their inputs queued there, nothing on the legacy default stream
# (stream-check.cpp says how). Kernels: bench/gpu/make_check_kernels.sh.
#   bash bench/gpu/run-stream-check-on-h200.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
kernels="${KERNELS:-bench/gpu/kernels-check}"
build="${BUILD:-/tmp/microscale-checks}"
[ -x "$build/stream-check" ] || bash bench/gpu/build-checks.sh "$build"
"$build/stream-check" "$kernels" | tee "${OUT:-/tmp}/stream-check.txt"
