#!/usr/bin/env bash
# Installs what the build needs (Debian 12 packages), configures and builds.
# Sourced by run-example.sh and run-tests.sh; safe to run again: it installs
# only what is missing and rebuilds only what changed.
#   MICROSCALE_BUILD_DIR  build directory (default: build)
#   MICROSCALE_TARGETS    ninja targets to build (default: all)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${MICROSCALE_BUILD_DIR:-$ROOT/build}"

PACKAGES=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
          libclang-rt-22-dev
          ninja-build ccache cmake libgtest-dev libzstd-dev zlib1g-dev
          libxml2-dev libedit-dev libcurl4-openssl-dev libffi-dev python3)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "microscale: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
# shellcheck disable=SC2086
ninja -C "$BUILD_DIR" ${MICROSCALE_TARGETS:-} >&2
