#!/usr/bin/env bash
# Builds the tree with AddressSanitizer and UndefinedBehaviorSanitizer in
# their own build directory and runs the whole test suite (check-microscale)
# under them. Every finding is fatal (-fno-sanitize-recover), so a test that
# trips one fails. About 25 minutes on 2 cores from a cold ccache.
#   scripts/run-sanitized-tests.sh
#   MICROSCALE_ASAN_BUILD_DIR  build directory (default: build-asan)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MICROSCALE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMICROSCALE_SANITIZE="address;undefined" >/dev/null
fi
# Reports with function names and lines. allow_user_poisoning=0: our
# instrumented code and Debian's uninstrumented LLVM/MLIR libraries share
# BumpPtrAllocator's inline functions, and an instrumented copy's poisoning
# that the uninstrumented copy never undoes reads as a use-after-poison
# (fuzz/SanitizerOptions.cpp says more). Heap errors are still found.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
ninja -C "$build" check-microscale
