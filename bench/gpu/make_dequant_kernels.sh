#!/usr/bin/env bash
# Generates the Hopper dequantization kernels of the dequantization
# benchmark with our compiler: an exhaustive-check shape (every 16-bit
# pattern in both halves of a word, every E8M0 code) and the [16, 4096,
# 4096] weight, as cubins (ptxas here) for loading and disassembly there.
#   bench/gpu/make_dequant_kernels.sh MX_OPT OUT_DIR
set -euo pipefail
mx_opt="$1" out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
emit() { # name K N batch traversal fold
  local name=$1 k=$2 n=$3 e=$4 traversal=${5:-row-major} fold=${6:-false}
  local shape="${e}x${k}x${n}" type
  type="!microscale.qtensor<${shape}, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>"
  cat > "$out/$name.mlir" <<MLIR
func.func @dq(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : $type, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}
MLIR
  local pipeline="builtin.module(microscale-convert-storage-to-gpu{traversal=$traversal fold-scale-bias=$fold},microscale-gpu-to-ptx"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline{format=bin toolkit=${CUDA_HOME:-/usr/local/cuda}})" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.cubin" "$out/$name.cubin"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline)" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.ptx" "$out/$name.ptx"
  rm "$out/$name.lowered.mlir"
}
emit exhaustive 512 1024 1
emit weight 4096 4096 16
emit exhaustive-column-major 512 1024 1 column-major
emit weight-column-major 4096 4096 16 column-major
emit exhaustive-folded 512 1024 1 column-major true
emit weight-folded 4096 4096 16 column-major true
echo "kernels in $out"
