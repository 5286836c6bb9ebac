#!/usr/bin/env bash
# Generates the bf16 x MXFP4 matmul kernels (mixed_matmul_storage through
# microscale-gpu-to-ptx) of the matmul benchmark as cubins (ptxas here):
# small correctness shapes and issue 8's benchmark shapes.
#   bench/gpu/make_matmul_kernels.sh MX_OPT OUT_DIR [sweep]
# With "sweep", the decode shapes instead, at every split-K and unroll.
set -euo pipefail
mx_opt="$1" out="$2" mode="${3:-}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
: > "$out/cases.txt"
emit() { # M K N [split unroll max-registers]
  local m=$1 k=$2 n=$3 split=${4:-0} unroll=${5:-0} regs=${6:-0}
  local name="mm_$1_$2_$3_s${split}_u${unroll}_r${regs}"
  local options="matmul-split-k=$split matmul-unroll=$unroll matmul-max-registers=$regs"
  local type="!microscale.qtensor<${k}x${n}, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>"
  local vbytes=$((k * n / 2)) sbytes=$((k / 32 * n))
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<${m}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<${m}x${n}xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<${m}x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<${m}x${n}xbf16>
  return
}
MLIR
  local pipeline="builtin.module(microscale-convert-storage-to-gpu{$options},microscale-gpu-to-ptx"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline{format=bin toolkit=${CUDA_HOME:-/usr/local/cuda}})" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.cubin" "$out/$name.cubin"
  # The block size the compiler chose (split K) is the kernel's .reqntid.
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline)" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  local threads grid
  threads=$(grep -oE '\.(req|max)ntid [0-9]+' "$out/microscale_kernels.ptx" | awk '{print $2}')
  grid=$(grep -oE 'blocks in \(%c[0-9]+' "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
  rm "$out/$name.lowered.mlir" "$out/$name.mlir" "$out/microscale_kernels.ptx"
  echo "$m $k $n $threads $name $grid" >> "$out/cases.txt"
}
if [ "$mode" = sweep ]; then
  emit 5 512 96 2 2 64  # a correctness shape: codes across 128
  for kn in "8192 8192" "14336 4096"; do
    for config in "0 2 0" "0 1 0" "0 1 64" "0 1 80" "0 2 80" "0 2 96" "16 1 64"; do
      emit 16 $kn $config
    done
  done
else
  # Correctness: M = 1, M not a multiple of 16, N not a multiple of 16.
  emit 1 256 64
  emit 5 512 96
  emit 33 1024 200
  emit 130 512 136
  for kn in "4096 4096" "8192 8192" "4096 14336" "14336 4096"; do
    for m in 1 16 64 256 4096; do
      emit $m $kn
    done
  done
fi
echo "kernels in $out"
