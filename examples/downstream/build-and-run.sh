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
cmake --install "$build" --prefix "$work/install" >/dev/null
cmake -G Ninja -S "$here" -B "$work/build" \
  -DMicroscale_DIR="$work/install/lib/cmake/microscale" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
ninja -C "$work/build" >/dev/null
"$work/build/downstream-opt" "$here/weights.mlir"
