#!/usr/bin/env bash
# Sets everything up, then quantizes the bundled example with mx-opt: the
# canonicalizer folds quantize / convert_layout / dequantize through the C++
# reference, printing the packed bytes, the E8M0 scales and the values they
# decode to.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MICROSCALE_TARGETS=mx-opt source "$ROOT/scripts/setup.sh"
"$BUILD_DIR/bin/mx-opt" "$ROOT/examples/quantize-mxfp4.mlir" --canonicalize
