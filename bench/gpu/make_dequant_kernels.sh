#!/usr/bin/env bash
# Generates the Hopper dequantization kernels of the dequantization
# benchmark with our compiler, as cubins (ptxas here) and PTX for loading
# and disassembly on the GPU machine, plus manifest.txt: one line per kernel,
#   name batch rows cols mx_axis check grid block
# (check: exhaustive = every 16-bit pattern in both halves of a word and
# every E8M0 code; random = random codes and scales, every scale code;
# time = timed only; grid and block as the compiler chose them).
#   bench/gpu/make_dequant_kernels.sh MX_OPT OUT_DIR [check]
# With "check", only the small checked shapes (for the GPU checks:
# run-sanitizers-on-h200.sh, stream-check).
set -euo pipefail
mx_opt="$1" out="$2" mode="${3:-}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
: > "$out/manifest.txt"
emit() { # name batch rows cols mx_axis check pass-options
  local name=$1 e=$2 rows=$3 cols=$4 mx=$5 check=$6 options=$7
  local type axis=$((mx == -2 ? 1 : 2))
  type="!microscale.qtensor<${e}x${rows}x${cols}, mxfp4, axis = $axis, values = #microscale.hopper_value<mx_axis = $mx, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = $mx, num_warps = 8>>"
  cat > "$out/$name.mlir" <<MLIR
func.func @dq(%v: memref<?xi8>, %s: memref<?xi8>, %o: memref<?xbf16>) {
  microscale.dequantize_storage %v, %s into %o : $type, memref<?xi8>, memref<?xi8>, memref<?xbf16>
  return
}
MLIR
  local pipeline="builtin.module(microscale-nvvm-set-tiling{$options},microscale-gpu-to-ptx"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline{format=bin toolkit=${CUDA_HOME:-/usr/local/cuda}})" > "$out/$name.lowered.mlir"
  # The launch as the compiler chose it (constants are named by value).
  local grid block
  grid=$(grep -oE 'blocks in \(%c[0-9]+' "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
  block=$(grep -oE 'threads in \(%c[0-9]+' "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.cubin" "$out/$name.cubin"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline)" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.ptx" "$out/$name.ptx"
  rm "$out/$name.lowered.mlir"
  echo "$name $e $rows $cols $mx $check $grid $block" >> "$out/manifest.txt"
}
default=""   # staged, folded with the exact fallback, 4 tiles per block
exact="fold-scale-bias=false"
perword="stage-dequantize=false traversal=column-major"
perword_exact="stage-dequantize=false traversal=column-major fold-scale-bias=false"
if [ "$mode" = check ]; then
  emit exhaustive 1 512 1024 -2 exhaustive "$default"
  emit exhaustive-mx1 1 1024 512 -1 exhaustive "$default"
  emit exhaustive-perword 1 512 1024 -2 exhaustive "$perword"
  emit padded 2 96 200 -2 random "$default"
  emit padded-odd 1 64 66 -2 random "$default"
  emit padded-mx1-exact 3 66 160 -1 random "$exact"
  emit padded-t1 2 96 200 -2 random "dequantize-tiles-per-block=1"
  emit padded-perword 2 96 200 -2 random "$perword"
  echo "kernels in $out"
  exit 0
fi
# Exhaustive: 65536 words, each mx_axis, each variant.
emit exhaustive 1 512 1024 -2 exhaustive "$default"
emit exhaustive-exact 1 512 1024 -2 exhaustive "$exact"
emit exhaustive-mx1 1 1024 512 -1 exhaustive "$default"
emit exhaustive-mx1-exact 1 1024 512 -1 exhaustive "$exact"
emit exhaustive-perword 1 512 1024 -2 exhaustive "$perword"
emit exhaustive-perword-exact 1 512 1024 -2 exhaustive "$perword_exact"
# Padded shapes on random data (every scale code): partial tiles on both
# axes, two and three batches; rows of 66 bf16, not a multiple of 16 bytes
# (element stores); one tile per block.
emit padded 2 96 200 -2 random "$default"
emit padded-exact 2 96 200 -2 random "$exact"
emit padded-odd 1 64 66 -2 random "$default"
emit padded-mx1 2 200 96 -1 random "$default"
emit padded-mx1-exact 3 66 160 -1 random "$exact"
emit padded-t1 2 96 200 -2 random "dequantize-tiles-per-block=1"
# The [16, 4096, 4096] weight, every variant in the same run: the default,
# exact, each mx_axis; 1, 2 and 8 tiles per block; tiles in the image's
# order; the per-word kernel.
emit weight 16 4096 4096 -2 time "$default"
emit weight-exact 16 4096 4096 -2 time "$exact"
emit weight-mx1 16 4096 4096 -1 time "$default"
emit weight-mx1-exact 16 4096 4096 -1 time "$exact"
for t in 1 2 8; do
  emit weight-t$t 16 4096 4096 -2 time "dequantize-tiles-per-block=$t"
done
emit weight-image-order 16 4096 4096 -2 time "dequantize-tile-order=image"
emit weight-perword 16 4096 4096 -2 time "$perword"
emit weight-perword-exact 16 4096 4096 -2 time "$perword_exact"
echo "kernels in $out"
