#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (ASan + UBSan, clang-22) in their own
# build directory and runs each on its seed corpus for SECONDS (default 60).
#   scripts/run-fuzzers.sh [SECONDS]
#   MICROSCALE_FUZZ_BUILD_DIR  build directory (default: build-fuzz)
#   MICROSCALE_FUZZ_JOBS       ninja -j (default: ninja's)
#   MICROSCALE_FUZZ_SEED       libFuzzer's seed (default 1: CI's short runs
#                              start from the same inputs every time)
# New inputs go to a scratch corpus, not to fuzz/corpus (add a finding there
# by hand once it is fixed). A crash leaves its reproducer in
# $BUILD/fuzz-artifacts and makes the script exit non-zero; rerun it with
#   $BUILD/bin/<target> $BUILD/fuzz-artifacts/crash-...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
build="${MICROSCALE_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
targets=(safetensors-fuzzer type-parser-fuzzer request-fuzzer)

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMICROSCALE_ENABLE_UNITTESTS=OFF \
    -DMICROSCALE_FUZZ=ON -DMICROSCALE_SANITIZE="address;undefined" >/dev/null
fi
ninja -C "$build" ${MICROSCALE_FUZZ_JOBS:+-j "$MICROSCALE_FUZZ_JOBS"} "${targets[@]}" >&2

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for target in "${targets[@]}"; do
  seeds="$ROOT/fuzz/corpus/${target%-fuzzer}"
  scratch="$build/fuzz-corpus/${target%-fuzzer}"
  mkdir -p "$scratch"
  log="$build/fuzz-$target.log"
  # -rss_limit_mb: a leak or an unbounded allocation is a finding too.
  if "$build/bin/$target" "$scratch" "$seeds" \
      -dict="$ROOT/fuzz/microscale.dict" -max_total_time="$seconds" \
      -seed="${MICROSCALE_FUZZ_SEED:-1}" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" > "$log" 2>&1; then
    runs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" || echo "?")
    echo "$target: $runs executions in ${seconds}s, no crash"
  else
    status=1
    echo "$target: FAILED (see $log and $artifacts)"
    tail -n 40 "$log"
  fi
done
exit $status
