#!/usr/bin/env bash
# Sets everything up, builds, and runs the whole test suite (lit + FileCheck
# tests and the GoogleTest unit tests, all through lit). Exits non-zero when
# any test fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
log="$(mktemp)"
status=0
ninja -C "$BUILD_DIR" check-microscale 2>&1 | tee "$log" || status=$?
passed=$(grep -oP '^\s*Passed\s*:\s*\K[0-9]+' "$log" | tail -1 || true)
failed=$(grep -oP '^\s*Failed\s*:\s*\K[0-9]+' "$log" | tail -1 || true)
skipped=$(grep -oP '^\s*(Unsupported|Skipped)\s*:\s*\K[0-9]+' "$log" | paste -sd+ | bc 2>/dev/null || true)
rm -f "$log"
echo "tests: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
if [ "$status" -ne 0 ] || [ "${passed:-0}" -eq 0 ]; then
  exit 1
fi
