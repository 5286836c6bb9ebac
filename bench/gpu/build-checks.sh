#!/usr/bin/env bash
# Builds the GPU checks (kernel-check, stream-check, device-check; plain C++,
# no MLIR, no CUDA headers: the runtime dlopen()s libcuda) into BUILD
# (default /tmp/microscale-checks), the shared objects compiled in parallel.
#   bench/gpu/build-checks.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-/tmp/microscale-checks}"
mkdir -p "$build"
flags=(-O2 -std=c++17 -Wall -Iinclude)
sources=(lib/Reference/*.cpp lib/Runtime/CUDA/CudaDriver.cpp lib/Runtime/CUDA/ConversionKernel.cpp)
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'g++ "$@" -c {} -o "'"$build"'/$(basename {} .cpp).o"' _ "${flags[@]}"
printf '%s\n' kernel-check stream-check device-check | xargs -P 3 -I{} \
  g++ "${flags[@]}" bench/gpu/{}.cpp "$build"/*.o -ldl -o "$build/{}"
echo "built kernel-check stream-check device-check in $build"
