#!/usr/bin/env bash
# Installs microscale from a build tree, builds the downstream example
# against the installed tree only, and runs it on weights.mlir.
#   examples/downstream/build-and-run.sh BUILD_DIR WORK_DIR
# docs/use-from-your-compiler.md shows these steps; test/Install runs this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
# Quiet steps, whose output is shown when they fail (else a test that pipes
# this script into FileCheck would only say that its input is empty).
quiet() {
  if ! "$@" > "$work/step.log" 2>&1; then
    echo "build-and-run.sh: failed: $*" >&2
    cat "$work/step.log" >&2
    exit 1
  fi
}
quiet cmake --install "$build" --prefix "$work/install"
quiet cmake -G Ninja -S "$here" -B "$work/build" \
  -DMicroscale_DIR="$work/install/lib/cmake/microscale" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld
quiet ninja -C "$work/build"
"$work/build/downstream-opt" "$here/weights.mlir"
