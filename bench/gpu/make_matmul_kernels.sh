#!/usr/bin/env bash
# Generates the bf16 x MXFP4 matmul kernels (mixed_matmul_storage through
# microscale-gpu-to-ptx) of the matmul benchmark as cubins (ptxas here):
# small correctness shapes, issue 8's benchmark shapes and its MoE case.
#   bench/gpu/make_matmul_kernels.sh MX_OPT OUT_DIR [sweep]
# With "hopper", the Hopper-layout kernels (decode and wgmma) beside the
# K-major one; with "wgmma", only the cases above 16 rows and the dynamic
# ones; with "wgmma-ab", the wgmma kernel's default plans on real shapes,
# dense and MoE (two compilers' folders timed in one call: an A/B); with "planner-ab", the default plans against those before the overlapped decode, from one compiler; with "overlap-sweep", the overlapped decode forced beyond the planner's choice; with "large-tile-sweep", 192- and 256-token tiles and three warpgroups above a few hundred rows; with "wave-sweep", token tiles and K splits at M = 1000 and 256; with "tile-ab", the planner's tiles above a few hundred rows against 128-token ones; with "dynamic-ab", rows known at run time above 256: every tile the host code chooses between, beside the static plan; with "hopper-cases", the Hopper-layout cases listed in HOPPER_CASES (KEEP_GOING=1: refused cases skipped); with "kmajor-cases", the K-major cases listed in KMAJOR_CASES; with "hopper-split-sweep", the cluster split of K at M = 64, 130 and 256 on eight shapes beside the planner's kernels; with "moe", the ragged (MoE) cases in the Hopper layouts ("decode": the decode kernel on real shapes, "decode-sweep" its tilings, "decode-depth" its chunks ahead; "moe-sweep": tilings of gpt-oss mlp1; "moe-dynamic": one compile with rows known at run time; "moe-decode": decode steps, registers capped or not; "weight-copies-ab": the weight's words in registers against in shared memory; "chunk-groups-ab": the chunk loop in groups of its stages against the rolled one; "moe-cases": the ragged cases listed in MOE_CASES). With "sweep", the decode shapes instead, at several tilings; with "check",
# only small shapes (for the GPU checks: run-sanitizers-on-h200.sh,
# stream-check); with "split-sweep", the gpt-oss decode shapes at several
# explicit splits of K (the planner's choice against its neighbours).
# cases.txt: m k n threads name gridX gridY gridZ experts tokens [entry
# dynamic] (entry and dynamic = 1 for the kernels of rows known at run time).
set -euo pipefail
mx_opt="$1" out="$2" mode="${3:-}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
: > "$out/cases.txt"
rm -f "$out/picks.txt"
# Compiles $out/NAME.mlir through microscale-gpu-to-ptx with the pass
# pipeline prefix PREFIX (e.g. "microscale-nvvm-set-tiling{...},"): the
# cubin as $out/NAME.cubin (ptxas here), the PTX as $out/NAME.ptx and the
# lowered module (PTX form, the launches) as $out/NAME.lowered.mlir.
#   compile_case NAME [PREFIX]
compile_case() {
  local name=$1 prefix=${2:-}
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="builtin.module(${prefix}microscale-gpu-to-ptx{format=bin toolkit=${CUDA_HOME:-/usr/local/cuda}})" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.cubin" "$out/$name.cubin"
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="builtin.module(${prefix}microscale-gpu-to-ptx)" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.ptx" "$out/$name.ptx"
}
# M K N [experts tokens [split unroll warp-columns warp-rows column-warps
#        activation-stages weight-stages max-registers chunk-k]]
# A ragged (MoE) case has M ragged rows: `tokens` activation rows, each
# routed to M / tokens experts, read through a gather, written through a
# scatter (a permutation, as matmul_ogs' scatter before its combine).
emit() {
  local m=$1 k=$2 n=$3 experts=${4:-0} tokens=${5:-$1}
  local split=${6:-0} unroll=${7:-0} cols=${8:-0} rows=${9:-0}
  local cwarps=${10:-0} stages=${11:-0} wstages=${12:-0} regs=${13:-0}
  local chunk=${14:-0}
  local name="mm_${m}_${k}_${n}_e${experts}_s${split}_u${unroll}_c${cols}_w${rows}_b${cwarps}_a${stages}_g${wstages}_r${regs}"
  [ "$chunk" = 0 ] || name="${name}_k${chunk}"
  local options="matmul-split-k=$split matmul-unroll=$unroll matmul-warp-columns=$cols matmul-warp-rows=$rows matmul-column-warps=$cwarps matmul-activation-stages=$stages matmul-weight-stages=$wstages matmul-max-registers=$regs matmul-chunk-k=$chunk"
  local batches=$(( experts > 0 ? experts : 1 ))
  local vbytes=$((batches * k * n / 2)) sbytes=$((batches * k / 32 * n))
  if [ "$experts" -gt 0 ]; then
    local type="!microscale.qtensor<${experts}x${k}x${n}, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>"
    cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<${tokens}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<${m}x${n}xbf16>, %off: memref<${experts}xi32>, %cnt: memref<${experts}xi32>, %gather: memref<${m}xi32>, %scatter: memref<${m}xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<${experts}xi32>, memref<${experts}xi32>) gather(%gather : memref<${m}xi32>) scatter(%scatter : memref<${m}xi32>) : memref<${tokens}x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<${m}x${n}xbf16>
  return
}
MLIR
  else
    local type="!microscale.qtensor<${k}x${n}, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>"
    cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<${m}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<${m}x${n}xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<${m}x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<${m}x${n}xbf16>
  return
}
MLIR
  fi
  local pipeline="builtin.module(microscale-nvvm-set-tiling{$options},microscale-gpu-to-ptx"
  if ! "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline{format=bin toolkit=${CUDA_HOME:-/usr/local/cuda}})" > "$out/$name.lowered.mlir" 2> "$out/$name.err"; then
    # A tiling the compiler refuses (a sweep may ask for one): its reason.
    echo "skipped $name: $(grep -m1 -oE 'error: .*' "$out/$name.err")" >&2
    rm -f "$out/$name.mlir" "$out/$name.lowered.mlir" "$out/$name.err"
    return 0
  fi
  rm -f "$out/$name.err"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  mv "$out/microscale_kernels.cubin" "$out/$name.cubin"
  # The block size the compiler chose (split K) is the kernel's .reqntid;
  # the grid is the launch's.
  "$mx_opt" "$out/$name.mlir" --pass-pipeline="$pipeline)" > "$out/$name.lowered.mlir"
  python3 "$here/../../tools/scripts/extract-ptx.py" "$out/$name.lowered.mlir" "$out"
  local threads grid
  threads=$(grep -oE '\.(req|max)ntid [0-9]+' "$out/microscale_kernels.ptx" | awk '{print $2}')
  grid=$(grep -oE 'blocks in \([^)]*\)' "$out/$name.lowered.mlir" |
         grep -oE '%c[0-9]+' | sed 's/%c//' | tr '\n' ' ')
  # The PTX stays beside the cubin (to read, and to compare compilers).
  mv "$out/microscale_kernels.ptx" "$out/$name.ptx"
  rm "$out/$name.lowered.mlir" "$out/$name.mlir"
  echo "$m $k $n $threads $name ${grid}$experts $tokens" >> "$out/cases.txt"
}
# Rows known at run time only: one cubin of the kernel variants for
# memref<?xKxbf16> activations, run at each M given, with the variant and
# grid the host code would choose (the variant from the limits 8, 32, 255
# on M; the grid's columns from the lowered launch of that variant; its
# rows ceil(M / rows per warp)).
emit_dynamic() {
  local k=$1 n=$2; shift 2
  local name="mm_dyn_${k}_${n}"
  local vbytes=$((k * n / 2)) sbytes=$((k / 32 * n))
  local type="!microscale.qtensor<${k}x${n}, mxfp4, axis = 0, values = #microscale.strided<major_dim = 0>>"
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<?x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<?x${n}xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<?x${n}xbf16>
  return
}
MLIR
  compile_case "$name"
  local m
  for m in "$@"; do
    local rows=8
    [ "$m" -gt 8 ] && rows=16
    [ "$m" -gt 32 ] && rows=32
    [ "$m" -gt 255 ] && rows=64
    local entry="mixed_matmul_0_rows$rows"
    local threads gridx
    threads=$(awk -v e="$entry" '$0 ~ "\\.entry " e "\\(" {f=1} f && /\.(req|max)ntid/ {print $2; exit}' "$out/$name.ptx" | tr -d ',')
    gridx=$(grep -oE "@${entry} blocks in \(%c[0-9]+" "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
    echo "$m $k $n $threads $name $gridx $(( (m + rows - 1) / rows )) 1 0 $m $entry 1" >> "$out/cases.txt"
  done
  rm -f "$out/$name.lowered.mlir" "$out/$name.mlir"
}
# The weight in the Hopper value and scale layouts (mma_version 3, scale
# num_warps 4): the Hopper-layout decode kernel. cases.txt gets the entry,
# dynamic = 0 and the layout ("hopper4": matmul-bench stores its weight
# through the reference library's Hopper layouts).
#   emit_hopper M K N [split warp-columns]
# The launch of kernel ENTRY in the lowered module FILE: its dynamic shared
# memory (bytes) and, with TMA copies, the activations' tensor-map box rows
# (the wgmma's N, from the kernel's PTX); "0 0" for neither.
#   launch_extras ENTRY LOWERED.mlir KERNELS.ptx
launch_extras() {
  local entry=$1 lowered=$2 ptx=$3 shared box=0
  shared=$(grep -oE "@${entry} blocks in .*dynamic_shared_memory_size %c[0-9]+" "$lowered" |
           head -1 | grep -oE '[0-9]+$')
  if [ -n "$shared" ] && grep -q "nvgpu.tma.create.descriptor" "$lowered"; then
    box=$(awk -v e="$entry" '$0 ~ "\\.entry " e "\\(" {f=1} f && /wgmma.mma_async/ {print; exit}' "$ptx" | grep -oE 'm64n[0-9]+' | sed 's/m64n//')
  fi
  echo "${shared:-0} ${box:-0}"
}
# The Hopper-layout weight of K x N (EXPERTS of them, 0: one, dense): sets
# `type` (its qtensor type) and `vbytes`, `sbytes` (the bytes of its value
# and scale images: N padded to 256 for the values and to 128 for the
# scales, 32 x num_warps; K/2 bytes padded to 64, K/32 blocks to 2).
#   local type vbytes sbytes; hopper_weight K N EXPERTS
hopper_weight() {
  local k=$1 n=$2 experts=$3
  local np=$(( (n + 255) / 256 * 256 )) ns=$(( (n + 127) / 128 * 128 ))
  local kb=$(( (k / 2 + 63) / 64 * 64 )) ks=$(( (k / 32 + 1) / 2 * 2 ))
  local batches=$(( experts > 0 ? experts : 1 ))
  local layouts="values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 4>"
  vbytes=$((batches * np * kb)) sbytes=$((batches * ns * ks))
  if [ "$experts" -gt 0 ]; then
    type="!microscale.qtensor<${experts}x${k}x${n}, mxfp4, axis = 1, $layouts>"
  else
    type="!microscale.qtensor<${k}x${n}, mxfp4, axis = 0, $layouts>"
  fi
}
emit_hopper() {
  local m=$1 k=$2 n=$3 split=${4:-0} cols=${5:-0} rows=${6:-0} cwarps=${7:-0}
  local stages=${8:-0} async=${9:-0} csplit=${10:-0} wstages=${11:-0}
  local extra=${12:-}
  local name="mm_hl_${m}_${k}_${n}_s${split}_c${cols}"
  [ "$rows$cwarps$stages" = 000 ] || name="${name}_w${rows}_b${cwarps}_a${stages}"
  [ "$async" = 1 ] && name="${name}_cp"
  [ "$async" = 2 ] && name="${name}_tma"
  [ "$csplit" = 0 ] || name="${name}_z${csplit}"
  [ "$wstages" = 0 ] || name="${name}_g${wstages}"
  # Further set-tiling options, named in the case's tag.
  local tag
  tag=$(echo "$extra" | sed -e 's/matmul-//g' -e 's/[^A-Za-z0-9]\+/_/g')
  [ -z "$tag" ] || name="${name}_${tag}"
  local options="matmul-split-k=$split matmul-warp-columns=$cols matmul-warp-rows=$rows matmul-column-warps=$cwarps matmul-activation-stages=$stages matmul-cluster-split-k=$csplit matmul-weight-stages=$wstages${extra:+ $extra}"
  [ "$async" = 1 ] && options="$options matmul-activation-copies=cp.async"
  [ "$async" = 2 ] && options="$options matmul-activation-copies=tma"
  local type vbytes sbytes
  hopper_weight "$k" "$n" 0
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<${m}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<${m}x${n}xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<${m}x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<${m}x${n}xbf16>
  return
}
MLIR
  compile_case "$name" "microscale-nvvm-set-tiling{$options},"
  local threads grid entry
  threads=$(grep -oE '\.(req|max)ntid [0-9]+' "$out/$name.ptx" | awk '{print $2}')
  grid=$(grep -oE 'blocks in \([^)]*\)' "$out/$name.lowered.mlir" |
         grep -oE '%c[0-9]+' | sed 's/%c//' | tr '\n' ' ')
  # The decode kernel (mma.sync) up to 64 rows, the wgmma kernel above.
  entry=$(grep -oE '\.entry [A-Za-z0-9_]+' "$out/$name.ptx" | awk '{print $2}')
  local extras
  extras=$(launch_extras "$entry" "$out/$name.lowered.mlir" "$out/$name.ptx")
  rm "$out/$name.lowered.mlir" "$out/$name.mlir"
  echo "$m $k $n $threads $name ${grid}0 $m $entry 0 hopper4 $extras" >> "$out/cases.txt"
}
# Rows known at run time with the Hopper-layout weight: one cubin of the
# six variants (mixed_matmul_hopper_0_rows1/7: the decode kernel;
# rows8/rows17/rows65/rows257: the wgmma kernel, each with its tiles), run at
# each M given with the kernel and grid the host code would choose (the wgmma grid's rows: ceil(M / T),
# T from the entry's wgmma shape).
#   emit_hopper_dynamic K N M...
emit_hopper_dynamic() {
  local k=$1 n=$2; shift 2
  local name="mm_hl_dyn_${k}_${n}"
  local type vbytes sbytes
  hopper_weight "$k" "$n" 0
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<?x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<?x${n}xbf16>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<?x${n}xbf16>
  return
}
MLIR
  compile_case "$name"
  local m
  for m in "$@"; do
    local rows=1
    [ "$m" -gt 1 ] && rows=7
    [ "$m" -gt 7 ] && rows=8
    [ "$m" -gt 16 ] && rows=17
    [ "$m" -gt 64 ] && rows=65
    [ "$m" -gt 256 ] && rows=257
    local entry="mixed_matmul_hopper_0_rows$rows" entries
    # The wgmma variants' host code chooses between the variant's tiles
    # (evened token tiles _tN, and above 256 rows _w1, _t256 and, on
    # narrow weights, _s2): the one it launches for M (host_pick, the
    # compiler's own choice), or with ALL_TILES=1 every one compiled (an
    # A/B of the choice); the pick goes to picks.txt either way.
    entries=$entry
    if [ "$rows" -gt 7 ]; then
      local pick
      pick=$(host_pick "$k" "$n" "$m" "${SM_COUNT:-132}")
      echo "$m $k $n $pick" >> "$out/picks.txt"
      if [ -n "${ALL_TILES:-}" ]; then
        entries=$(grep -oE "\.entry ${entry}(_w1|_s2|_t[0-9]+)?\(" "$out/$name.ptx" | sed -e 's/\.entry //' -e 's/($//')
      else
        entries=$pick
      fi
    fi
    for entry in $entries; do
    local threads gridx gridy=1 tokens
    threads=$(awk -v e="$entry" '$0 ~ "\\.entry " e "\\(" {f=1} f && /\.(req|max)ntid/ {print $2; exit}' "$out/$name.ptx" | tr -d ',')
    gridx=$(grep -oE "@${entry} blocks in \(%c[0-9]+" "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
    # The grid's z: the blocks of a cluster that split K (1 without).
    local gridz
    gridz=$(grep -oE "@${entry} blocks in \(%c[0-9]+, %[a-z0-9_]+, %c[0-9]+" "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
    if [ "$rows" -gt 8 ]; then
      tokens=$(awk -v e="$entry" '$0 ~ "\\.entry " e "\\(" {f=1} f && /wgmma.mma_async/ {print; exit}' "$out/$name.ptx" | grep -oE 'm64n[0-9]+' | sed 's/m64n//')
      gridy=$(( (m + tokens - 1) / tokens ))
    fi
    echo "$m $k $n $threads $name $gridx $gridy ${gridz:-1} 0 $m $entry 1 hopper4 $(launch_extras "$entry" "$out/$name.lowered.mlir" "$out/$name.ptx")" >> "$out/cases.txt"
    done
  done
  rm -f "$out/$name.lowered.mlir" "$out/$name.mlir"
}
# The kernel the host code of rows known at run time launches for M rows
# of K x N on SMS SMs: the compiler's own choice, folded (M static behind
# a memref.cast, canonicalized down to the one launch).
#   host_pick K N M SMS
host_pick() {
  local k=$1 n=$2 m=$3 sms=$4 type vbytes sbytes
  hopper_weight "$k" "$n" 0
  cat > "$out/pick.mlir" <<MLIR
func.func @mm(%sa: memref<${m}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %so: memref<${m}x${n}xbf16>) {
  %a = memref.cast %sa : memref<${m}x${k}xbf16> to memref<?x${k}xbf16>
  %o = memref.cast %so : memref<${m}x${n}xbf16> to memref<?x${n}xbf16>
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o : memref<?x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<?x${n}xbf16>
  return
}
MLIR
  "$mx_opt" "$out/pick.mlir" --pass-pipeline="builtin.module(microscale-nvvm-outline-kernels{sm-count=$sms},canonicalize)" |
    grep -oE 'launch_func +@microscale_kernels::@[a-z_0-9]+' | sed 's/.*:://; s/^@//'
  rm -f "$out/pick.mlir"
}
# The ragged (MoE) form with the expert weights in the Hopper layouts (rows
# through a gather, out through a scatter, as emit's ragged cases): by
# default the wgmma kernel, grid y the tile map's slots; with
# matmul-split-k the decode kernel, grid z the expert. OPTIONS: microscale-nvvm-set-tiling's
# options, space-separated (e.g. "matmul-split-k=4", "matmul-warp-rows=16
# matmul-max-registers=80").
#   emit_hopper_moe M K N EXPERTS TOKENS [OPTIONS]
emit_hopper_moe() {
  local m=$1 k=$2 n=$3 experts=$4 tokens=$5 options=${6:-}
  local tag
  tag=$(echo "$options" | sed -e 's/matmul-//g' -e 's/[^A-Za-z0-9]\+/_/g')
  local name="mm_hl_moe_${m}_${k}_${n}_e${experts}${tag:+_$tag}"
  local tiling="microscale-nvvm-set-tiling{$options},"
  local type vbytes sbytes
  hopper_weight "$k" "$n" "$experts"
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<${tokens}x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<${m}x${n}xbf16>, %off: memref<${experts}xi32>, %cnt: memref<${experts}xi32>, %gather: memref<${m}xi32>, %scatter: memref<${m}xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<${experts}xi32>, memref<${experts}xi32>) gather(%gather : memref<${m}xi32>) scatter(%scatter : memref<${m}xi32>) : memref<${tokens}x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<${m}x${n}xbf16>
  return
}
MLIR
  compile_case "$name" "$tiling"
  local threads grid entry
  threads=$(grep -oE '\.(req|max)ntid [0-9]+' "$out/$name.ptx" | awk '{print $2}')
  grid=$(grep -oE 'blocks in \([^)]*\)' "$out/$name.lowered.mlir" |
         grep -oE '%c[0-9]+' | sed 's/%c//' | tr '\n' ' ')
  entry=$(grep -oE '\.entry [A-Za-z0-9_]+' "$out/$name.ptx" | awk '{print $2}')
  rm "$out/$name.lowered.mlir" "$out/$name.mlir"
  echo "$m $k $n $threads $name ${grid}$experts $tokens $entry 0 hopper4" >> "$out/cases.txt"
}
# An A/B of set-tiling options: for each of OPTIONS..., every ragged case
# of MOE (";"-separated "M K N EXPERTS TOKENS") and every dense
# Hopper-layout case of DENSE (";"-separated "M K N", planner's tiling).
#   emit_options_ab MOE DENSE OPTIONS...
emit_options_ab() {
  local moe=$1 dense=$2 options c
  shift 2
  local -a moe_list dense_list
  IFS=';' read -r -a moe_list <<< "$moe"
  IFS=';' read -r -a dense_list <<< "$dense"
  for options in "$@"; do
    for c in "${moe_list[@]}"; do
      # shellcheck disable=SC2086
      emit_hopper_moe $c "$options"
    done
    for c in "${dense_list[@]}"; do
      # shellcheck disable=SC2086
      emit_hopper $c 0 0 0 0 0 0 0 0 "$options"
    done
  done
}
# The ragged form with rows known at run time (tokens, ragged rows and out
# rows `?`): one compile of the six wgmma variants, run at each TOKENS
# (top-k = RAGGED / TOKENS rows each) with the variant the host code
# picks (ceil(ragged rows / experts) against 4, 8, 16, 32, 64).
#   emit_hopper_moe_dynamic K N EXPERTS TOPK TOKENS...
emit_hopper_moe_dynamic() {
  local k=$1 n=$2 experts=$3 topk=$4; shift 4
  local name="mm_hl_moedyn_${k}_${n}_e${experts}"
  local type vbytes sbytes
  hopper_weight "$k" "$n" "$experts"
  cat > "$out/$name.mlir" <<MLIR
func.func @mm(%a: memref<?x${k}xbf16>, %v: memref<${vbytes}xi8>, %s: memref<${sbytes}xi8>, %g: f32, %o: memref<?x${n}xbf16>, %off: memref<${experts}xi32>, %cnt: memref<${experts}xi32>, %gather: memref<?xi32>, %scatter: memref<?xi32>) {
  microscale.mixed_matmul_storage %a times (%v, %s, %g) into %o experts(%off, %cnt : memref<${experts}xi32>, memref<${experts}xi32>) gather(%gather : memref<?xi32>) scatter(%scatter : memref<?xi32>) : memref<?x${k}xbf16>, $type, memref<${vbytes}xi8>, memref<${sbytes}xi8>, memref<?x${n}xbf16>
  return
}
MLIR
  compile_case "$name"
  local tokens
  for tokens in "$@"; do
    local m=$((tokens * topk))
    local mean=$(( (m + experts - 1) / experts )) variant=4 limit
    for limit in 64 32 16 8 4 1; do
      [ "$mean" -le "$limit" ] && variant=$limit
    done
    [ "$mean" -gt 64 ] && variant=128
    local entry="mixed_matmul_wgmma_0_mean$variant"
    # Grid y: the tile map's min(ragged rows, experts) slots, as the host
    # code computes them.
    local threads gridx gridz slots=$(( m < experts ? m : experts ))
    threads=$(awk -v e="$entry" '$0 ~ "\\.entry " e "\\(" {f=1} f && /\.(req|max)ntid/ {print $2; exit}' "$out/$name.ptx" | tr -d ',')
    gridx=$(grep -oE "@${entry} blocks in \(%c[0-9]+" "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
    gridz=$(grep -oE "@${entry} blocks in \(%c[0-9]+, %[a-z0-9_]+, %c[0-9]+" "$out/$name.lowered.mlir" | grep -oE '[0-9]+$')
    echo "$m $k $n $threads $name $gridx $slots ${gridz:-1} $experts $tokens $entry 1 hopper4" >> "$out/cases.txt"
  done
  rm -f "$out/$name.lowered.mlir" "$out/$name.mlir"
}
# MoE in the Hopper layouts beside the K-major kernel: a small correctness
# case (an empty expert, K = 512), gpt-oss mlp1 with 32 experts (128 tokens
# top-4), and splits of K beside the planner's. (128 experts: matmul-bench
# stores the Hopper images through the reference library on the host, 2.1
# billion codes, longer than the run's time limit.)
moe_cases() {
  emit_hopper_moe 40 512 96 8 10
  emit_hopper_moe 40 512 96 8 10 "matmul-split-k=2"
  emit_hopper_moe 40 512 96 8 10 "matmul-cluster-split-k=4"
  emit_hopper_moe 512 2880 5760 32 128
  emit_hopper_moe 512 2880 5760 32 128 "matmul-split-k=4"
  emit 512 2880 5760 32 128
  # gpt-oss-120b's mlp1: 128 experts, top-4 of 512 tokens (1.1 GB of
  # weights: one copy, read from device memory every launch).
  emit_hopper_moe 2048 2880 5760 128 512
  emit_hopper_moe 2048 2880 5760 128 512 "matmul-split-k=4"
  # mlp2 (N = 2880) and a shape of no tile multiple (K = 1504, N = 1000).
  emit_hopper_moe 512 2880 2880 32 128
  emit_hopper_moe 512 1504 1000 32 128
  emit_hopper_moe 512 1504 1000 32 128 "matmul-warp-columns=32"
  # One compile for every token count (rows known at run time): decode
  # steps of 1 and 16 tokens, 128 tokens (as the static case), a prefill
  # chunk of 1000.
  emit_hopper_moe_dynamic 2880 5760 32 4 1 16 128 1000
  emit_hopper_moe 4000 2880 5760 32 1000
}
# The wgmma kernel's MoE tilings beside the planner's (gpt-oss mlp1, 32
# experts; each MoE case costs the bench a few seconds of host set-up).
moe_sweep_cases() {
  # Decode steps: 1 token (4 experts with a row each) and 16 tokens top-4,
  # the cluster split of K beside the planner's.
  for z in 0 2 3 4 6 8; do
    emit_hopper_moe 4 2880 5760 32 1 "matmul-cluster-split-k=$z"
  done
  for z in 0 2 4; do
    emit_hopper_moe 64 2880 5760 32 16 "matmul-cluster-split-k=$z"
  done
  emit_hopper_moe 512 2880 5760 32 128
  for options in "matmul-warp-columns=16" "matmul-warp-rows=24" \
      "matmul-warp-rows=40" "matmul-weight-stages=2" "matmul-weight-stages=3" \
      "matmul-column-warps=8" "matmul-activation-stages=4" \
      "matmul-cluster-split-k=2" "matmul-max-registers=128"; do
    emit_hopper_moe 512 2880 5760 32 128 "$options"
  done
  # A prefill chunk: 1000 tokens top-4 (125 rows per expert, 128-token
  # tiles), the weight queue's depth and the token tile beside the planner's.
  emit_hopper_moe 4000 2880 5760 32 1000
  for options in "matmul-weight-stages=3" "matmul-weight-stages=4" \
      "matmul-weight-stages=6" "matmul-warp-rows=64" \
      "matmul-warp-rows=64 matmul-weight-stages=2" "matmul-column-warps=4"; do
    emit_hopper_moe 4000 2880 5760 32 1000 "$options"
  done
}
# The wgmma kernel's cases (the Hopper layout above 64 rows).
wgmma_cases() {
  # Above decode sizes: the wgmma kernel beside the K-major one; M = 100
  # and 1000 and K = 1504, N = 1000: not multiples of the token tile, the
  # 64-K chunk or the 64-column tile.
  emit_hopper 72 160 80
  emit_hopper 130 320 200 0 32 64 8 2
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    for m in 256 4096; do
      emit_hopper $m $kn
      emit $m $kn
    done
  done
  emit_hopper 100 2880 5760
  emit_hopper 1000 2880 5760
  # One compile for every M (rows known at run time), each M against the
  # static kernel of the same M where there is one.
  emit_hopper_dynamic 2880 5760 1 7 16 17 24 32 40 64 65 100 256 1000 4096
  # (The MoE cases are mode "moe": their host set-up would push this run
  # past matmul-bench's time limit.)
  # Where the decode kernel hands over to the wgmma kernel (above 16
  # rows): both at 32 and 64 rows (a split of K asks for the decode one).
  for m in 32 64; do
    emit_hopper $m 2880 5760
    emit_hopper $m 2880 5760 3
  done
  emit 1000 2880 5760
  # The wgmma tiling beside the planner's: tokens per tile, warps per
  # block, columns per warp (one or two 64-column tiles per warpgroup).
  for kn in "2880 5760" "8192 8192"; do
    for config in "0 0 64 4 0" "0 0 64 8 0" "0 0 128 4 0" "0 0 128 8 0" \
                  "0 0 128 12 0" "0 32 64 8 0" "0 32 128 4 0" "0 0 192 4 2"; do
      emit_hopper 4096 $kn $config
    done
  done
  for kn in "2880 5760" "2880 2880"; do
    for config in "0 0 32 4 0" "0 0 64 4 0" "0 0 128 4 0" "0 0 32 8 0" \
                  "0 0 64 8 0" "0 32 64 4 0"; do
      emit_hopper 256 $kn $config
    done
  done
}
# The wgmma kernel's activations by TMA (the default) against cp.async
# (the previous default), and the tiles dynamic shared memory allows
# (256 tokens, more stages).
tma_cases() {
  emit_hopper 72 160 80
  emit_hopper 130 320 200 0 32 64 8 2
  # The planner's choice (TMA from 128-token tiles up, 4 stages; cp.async
  # below) against the other copy, and at M = 4096 one warpgroup's
  # 256-token tiles.
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    emit_hopper 256 $kn
    emit_hopper 256 $kn 0 0 0 0 0 2
    emit_hopper 4096 $kn
    emit_hopper 4096 $kn 0 0 0 0 0 1
    emit_hopper 4096 $kn 0 0 256 4 0
  done
  emit_hopper 1000 2880 5760
  emit_hopper 1000 2880 5760 0 0 0 0 0 1
  emit_hopper_dynamic 2880 5760 100 256 1000 4096
}
# TMA against cp.async at the same stages on 64-token tiles (M = 256).
tma_stage_cases() {
  for kn in "2880 5760" "8192 8192"; do
    for stages in 3 5; do
      emit_hopper 256 $kn 0 0 64 4 $stages 1
      emit_hopper 256 $kn 0 0 64 4 $stages 2
    done
  done
}
# K split over the blocks of a cluster (the wgmma kernel between 17 and a
# few hundred rows): the planner's choice against no split (z1) and other
# splits, beside cuBLAS.
cluster_cases() {
  emit_hopper 72 160 80
  emit_hopper 72 608 80 0 0 0 0 0 0 3
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    for m in 32 64 100 256; do
      emit_hopper $m $kn
      emit_hopper $m $kn 0 0 0 0 0 0 1
    done
  done
  # The token tiles beside the planner's (1504 x 1000, M = 256: 32 tokens
  # without a split, the previous default; 32 split in two).
  emit_hopper 256 1504 1000 0 0 32 4 0 0 1
  emit_hopper 256 1504 1000 0 0 32 4 0 0 2
  emit_hopper 100 2880 5760 0 0 56 4 0 0 2
  emit_hopper 1000 2880 5760
  emit_hopper 4096 2880 5760
  emit_hopper_dynamic 2880 5760 24 64 100 256 1000
}
# The cluster split's neighbours of the planner's choice: more blocks per
# split, token tiles of 128 (TMA) or 104 (cp.async) at M = 100.
cluster_sweep_cases() {
  for kn in "2880 5760" "8192 8192"; do
    for z in 2 3 4 5 6; do
      emit_hopper 32 $kn 0 0 0 0 0 0 $z
      emit_hopper 64 $kn 0 0 0 0 0 0 $z
    done
    emit_hopper 100 $kn
    emit_hopper 100 $kn 0 0 128 4 0 0 2
    emit_hopper 100 $kn 0 0 128 4 0 0 3
    emit_hopper 100 $kn 0 0 104 4 0 2 3
    emit_hopper 100 $kn 0 0 104 4 0 1 2
    emit_hopper 256 $kn
    emit_hopper 256 $kn 0 0 128 4 0 0 3
    # One token tile of 256 (the weight decoded once), split 2 or 4.
    emit_hopper 256 $kn 0 0 256 4 0 0 2
    emit_hopper 256 $kn 0 0 256 4 0 0 4
  done
}
# The wgmma kernel's defaults on real shapes, dense and MoE, with small
# correctness shapes first: two compilers' folders of these cases, timed in
# one device call, are an A/B of a change to the kernel.
wgmma_ab_cases() {
  emit_hopper 72 160 80
  emit_hopper 130 416 120
  emit_hopper_moe 40 512 96 8 10
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    for m in 64 256 1000 4096; do
      emit_hopper $m $kn
    done
  done
  emit_hopper_moe 512 2880 5760 32 128
  emit_hopper_moe 2048 2880 5760 128 512
  emit_hopper_moe 512 2880 2880 32 128
  emit_hopper_moe 4000 2880 5760 32 1000
}
# The decode under the wgmmas beyond the planner's TMA tiles: TMA forced on
# the cp.async tiles, the overlap forced on cp.async, and on the MoE tiles
# (one 64-column tile per warpgroup, or registers capped at 3 blocks).
overlap_sweep_cases() {
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    for m in 64 256; do
      emit_hopper $m $kn
      emit_hopper $m $kn 0 0 0 0 0 2
      emit_hopper $m $kn 0 0 0 0 0 0 0 0 "matmul-decode-overlap=on"
    done
  done
  emit_hopper 1000 1504 1000
  emit_hopper 1000 1504 1000 0 0 0 0 0 2
  emit_hopper 1000 1504 1000 0 0 0 0 0 0 0 0 "matmul-decode-overlap=on"
  emit_hopper 1000 1504 1000 0 0 128 8 0 2
  for kn in "2880 5760" "2880 2880"; do
    emit_hopper_moe 512 $kn 32 128
    emit_hopper_moe 512 $kn 32 128 "matmul-decode-overlap=on"
    emit_hopper_moe 512 $kn 32 128 "matmul-decode-overlap=on matmul-warp-columns=16"
    emit_hopper_moe 512 $kn 32 128 "matmul-decode-overlap=on matmul-max-registers=168"
  done
  emit_hopper_moe 2048 2880 5760 128 512
  emit_hopper_moe 2048 2880 5760 128 512 "matmul-decode-overlap=on matmul-warp-columns=16"
  emit_hopper_moe 4000 2880 5760 32 1000
  emit_hopper_moe 4000 2880 5760 32 1000 "matmul-decode-overlap=on"
}
# The planner's plans (default) against the plans before the overlapped
# decode (tiling decode_overlap = off; cp.async on tiles under 128 tokens,
# as the planner chose them then), dense and MoE, from one compiler: the
# A/B of the decode under the wgmmas and of TMA on 64-token tiles.
planner_ab_cases() {
  emit_hopper 72 160 80
  emit_hopper 130 416 120
  emit_hopper_moe 40 512 96 8 10
  local kn m base
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000" "4096 14336"; do
    for m in 64 256 1000 4096; do
      emit_hopper $m $kn
      # The default's token tile, from its wgmma's N.
      local tokens
      tokens=$(grep -m1 -oE 'wgmma.mma_async[^ ]*m64n[0-9]+' "$out/mm_hl_${m}_${kn// /_}_s0_c0.ptx" | grep -oE 'n[0-9]+$' | tr -d n)
      base=0
      [ -n "$tokens" ] && [ "$tokens" -lt 128 ] && base=1
      emit_hopper $m $kn 0 0 0 0 0 $base 0 0 "matmul-decode-overlap=off"
    done
  done
  for args in "512 2880 5760 32 128" "2048 2880 5760 128 512" \
              "512 2880 2880 32 128" "4000 2880 5760 32 1000" \
              "4000 2880 2880 32 1000"; do
    emit_hopper_moe $args
    emit_hopper_moe $args "matmul-decode-overlap=off"
  done
}
# Larger blocks above a few hundred rows: 256- and 192-token tiles (the
# weight decoded once per 256 or 192 tokens, one block per SM) and three
# warpgroups of 128 tokens, against the planner's choice.
large_tile_sweep_cases() {
  local kn m
  for kn in "2880 5760" "2880 2880" "8192 8192" "4096 14336" "1504 1000"; do
    for m in 1000 4096; do
      emit_hopper $m $kn
      emit_hopper $m $kn 0 0 256 4
      emit_hopper $m $kn 0 0 256 8
      emit_hopper $m $kn 0 0 192 8
      emit_hopper $m $kn 0 0 128 12
    done
  done
}
# Token tiles against waves: at M = 1000 tiles of 64 to 128 tokens (one
# or two warpgroups), at M = 256 tiles of 64, 96 and 128 tokens with K
# split over 1 to 4 blocks of a cluster; the blocks a tile count gives
# against the SMs' slots for them (a last wave partly empty) is what
# these measure.
wave_sweep_cases() {
  local kn t z
  for kn in "2880 5760" "2880 2880" "8192 8192" "4096 14336" "1504 1000"; do
    emit_hopper 1000 $kn
    for t in 64 80 96 112 128; do
      emit_hopper 1000 $kn 0 0 $t 4
      emit_hopper 1000 $kn 0 0 $t 8
    done
    emit_hopper 256 $kn
    for t in 64 96 128; do
      for z in 1 2 3 4; do
        emit_hopper 256 $kn 0 0 $t 4 0 0 $z
      done
    done
  done
}
# The planner's tiles above a few hundred rows against 128-token tiles as
# it chose them before (warp_rows = 128 with its warpgroup rule), on the
# sweep's shapes and three it did not see (Qwen-style 5120 x 13824,
# DeepSeek-V3 expert 7168 x 2048, M = 3000).
tile_ab_cases() {
  local kn m
  for kn in "2880 5760" "2880 2880" "8192 8192" "4096 14336" "1504 1000" \
            "5120 13824" "7168 2048"; do
    for m in 1000 3000 4096; do
      emit_hopper $m $kn
      emit_hopper $m $kn 0 0 128
    done
  done
}
# Rows known at run time above 256: every tile the host code chooses
# between, at M from 300 to 4096, beside the static planner's kernel of the
# same M (ALL_TILES; picks.txt names the host code's choice).
# DAB_SHAPES ("K N" pairs, comma-separated) and DAB_ROWS replace the
# defaults (a second, unseen set).
dynamic_ab_cases() {
  local kn m rows=${DAB_ROWS:-300 700 1000 2000 3000 4096}
  local IFS_SAVE=$IFS
  IFS=, read -r -a shapes <<< "${DAB_SHAPES:-2880 5760,2880 2880,8192 8192,5120 13824,1504 1000}"
  IFS=$IFS_SAVE
  for kn in "${shapes[@]}"; do
    ALL_TILES=1 emit_hopper_dynamic $kn $rows
    for m in $rows; do
      emit_hopper $m $kn
    done
  done
}
# The split of K over a cluster beside the planner's, with the sums'
# reduce-scatter: M = 130 (72-token tiles) and 256 split 1-4, M = 64 split
# 2-8, and the planner's own kernels at M = 16, 64 and 256 (for cuBLAS in
# the same run), on eight shapes (docs/performance.md, "The split's sums").
hopper_split_sweep_cases() {
  local kn m z
  for kn in "2880 5760" "2880 2880" "8192 8192" "4096 14336" "14336 4096" \
            "7168 2048" "1504 1000" "5120 13824"; do
    for m in 130 256; do
      for z in 1 2 3 4; do
        emit_hopper $m $kn 0 0 0 0 0 0 $z
      done
    done
    for z in 2 3 4 6 8; do
      emit_hopper 64 $kn 0 0 0 0 0 0 $z
    done
    for m in 16 64 256; do
      emit_hopper $m $kn
    done
  done
}
# Small cases of every Hopper-layout kernel family, for the run under
# compute-sanitizer (bench/gpu/run-matmul-sanitizers-on-h200.sh): the decode
# kernel (one chunk; a half last chunk and a partial column tile), the wgmma
# kernel (odd M), the split of K over blocks and over a cluster (uneven
# ranges, the sums' reduce-scatter), rows known at run time (every variant
# the host code picks for these M, the split sibling above 256 rows
# included), and the ragged form (an empty expert; static and dynamic).
sanitize_cases() {
  emit_hopper 1 64 16
  emit_hopper 5 160 40
  emit_hopper 33 96 48
  emit_hopper 64 640 200 3
  emit_hopper 64 640 200 0 0 0 0 0 0 3
  emit_hopper 130 1504 1000
  emit_hopper 64 1504 1000
  emit_hopper 16 2048 768
  emit_hopper_dynamic 640 200 1 7 16 24 100 300
  emit_hopper_dynamic 2880 576 16 64 130 300
  emit_hopper_moe 40 512 96 8 10
  emit_hopper_moe 40 512 96 8 10 "matmul-split-k=2"
  emit_hopper_moe_dynamic 512 96 8 4 3 10
}
if [ "$mode" = cluster ]; then
  cluster_cases
elif [ "$mode" = sanitize ]; then
  sanitize_cases
elif [ "$mode" = hopper-split-sweep ]; then
  hopper_split_sweep_cases
elif [ "$mode" = dynamic-ab ]; then
  dynamic_ab_cases
elif [ "$mode" = wgmma-ab ]; then
  wgmma_ab_cases
elif [ "$mode" = tile-ab ]; then
  tile_ab_cases
elif [ "$mode" = wave-sweep ]; then
  wave_sweep_cases
elif [ "$mode" = large-tile-sweep ]; then
  large_tile_sweep_cases
elif [ "$mode" = planner-ab ]; then
  planner_ab_cases
elif [ "$mode" = overlap-sweep ]; then
  overlap_sweep_cases
elif [ "$mode" = cluster-sweep ]; then
  cluster_sweep_cases
elif [ "$mode" = tma ]; then
  tma_cases
elif [ "$mode" = tma-stages ]; then
  tma_stage_cases
elif [ "$mode" = wgmma ]; then
  wgmma_cases
elif [ "$mode" = moe ]; then
  moe_cases
elif [ "$mode" = moe-sweep ]; then
  moe_sweep_cases
elif [ "$mode" = hopper-cases ]; then
  # Ad hoc Hopper-layout cases: HOPPER_CASES holds emit_hopper's arguments
  # per case, cases separated by ";" (M K N [split warp-columns rows
  # column-warps stages async cluster-split weight-stages]).
  # With KEEP_GOING=1 a case the compiler refuses (a tiling past the
  # shared memory, say: sweeps ask for such) is reported on stderr and
  # skipped, each case compiled by its own run of this script.
  IFS=';' read -r -a hopper_cases <<< "${HOPPER_CASES:?HOPPER_CASES}"
  for c in "${hopper_cases[@]}"; do
    if [ -n "${KEEP_GOING:-}" ]; then
      one="$out/.one"
      rm -rf "$one"
      if HOPPER_CASES="$c" KEEP_GOING= bash "$here/make_matmul_kernels.sh" \
           "$mx_opt" "$one" hopper-cases > "$out/.one.log" 2>&1; then
        cp "$one"/*.cubin "$one"/*.ptx "$out/"
        cat "$one/cases.txt" >> "$out/cases.txt"
      else
        echo "skipped (refused): $c: $(grep -m1 'error:' "$out/.one.log" | sed 's/.*error: //')" >&2
      fi
      rm -rf "$one" "$out/.one.log"
    else
      # shellcheck disable=SC2086
      emit_hopper $c
    fi
  done
elif [ "$mode" = kmajor-cases ]; then
  # Ad hoc K-major cases: KMAJOR_CASES holds emit's arguments per case,
  # cases separated by ";" (M K N [experts tokens split ...]).
  IFS=';' read -r -a kmajor_cases <<< "${KMAJOR_CASES:?KMAJOR_CASES}"
  for c in "${kmajor_cases[@]}"; do
    # shellcheck disable=SC2086
    emit $c
  done
elif [ "$mode" = weight-copies-ab ]; then
  # The wgmma kernel's weight words queued in registers against copied
  # into shared memory with the activations (weight_copies = "shared"):
  # the ragged form and dense cp.async tiles, shapes whose N is not a
  # multiple of the block's columns among them.
  emit_options_ab "40 512 96 8 10;512 2880 5760 32 128;512 2880 2880 32 128;2048 2880 5760 128 512;512 1504 1000 32 128" \
    "32 2880 5760;48 2880 2880;32 8192 8192;40 1504 1000" \
    "matmul-weight-copies=registers" "matmul-weight-copies=shared"
elif [ "$mode" = chunk-groups-ab ]; then
  # The wgmma kernel's chunk loop in groups of its stages (tiling
  # chunk_groups: the copies' shared addresses each thread's own plus
  # immediates; the default on the dense form) against the rolled loop
  # (the ragged form's default), on every plan that stages the
  # weight's words in shared memory by default: the ragged form's 32- to
  # 64-token tiles and the dense form's tiles of 9 to 16 rows, shapes
  # whose N is not a multiple of the block's columns among them.
  emit_options_ab "512 2880 5760 32 128;512 2880 2880 32 128;2048 2880 5760 128 512;512 1504 1000 32 128;512 2048 1536 32 128" \
    "16 2880 5760;16 2880 2880;12 2880 5760;16 8192 8192;16 4096 14336;16 1504 1000" \
    "matmul-chunk-groups=false" "matmul-chunk-groups=true"
elif [ "$mode" = moe-cases ]; then
  # Ad hoc ragged cases: MOE_CASES holds emit_hopper_moe's arguments per
  # case, cases separated by ";" (M K N EXPERTS TOKENS [set-tiling options,
  # space-separated]).
  IFS=';' read -r -a moe_cases <<< "${MOE_CASES:?MOE_CASES}"
  for c in "${moe_cases[@]}"; do
    read -r m k n experts tokens options <<< "$c"
    emit_hopper_moe "$m" "$k" "$n" "$experts" "$tokens" "$options"
  done
elif [ "$mode" = moe-dynamic ]; then
  emit_hopper_moe_dynamic 2880 5760 32 4 1 2 16 128 1000
elif [ "$mode" = moe-decode ]; then
  # Decode steps of gpt-oss mlp1 (1 and 16 tokens top-4 of 32 experts, 8-
  # token tiles) at the planner's registers and capped at 128 (4 blocks of
  # 128 threads per SM), and the 128-token case.
  for options in "" "matmul-max-registers=128"; do
    emit_hopper_moe 4 2880 5760 32 1 "$options"
    emit_hopper_moe 64 2880 5760 32 16 "$options"
  done
  emit_hopper_moe 512 2880 5760 32 128
elif [ "$mode" = moe-decode-kernel ]; then
  # Decode steps of gpt-oss mlp1 (1, 2, 4 and 16 tokens top-4 of 32 experts) on
  # the planner's kernel and on the decode kernel (mma.sync, forced by a
  # split of K) at several splits.
  for tokens in 1 2 4 16; do
    emit_hopper_moe $((4 * tokens)) 2880 5760 32 $tokens
    for split in 2 4 8; do
      emit_hopper_moe $((4 * tokens)) 2880 5760 32 $tokens "matmul-split-k=$split"
    done
  done
elif [ "$mode" = decode ]; then
  # The decode kernel (mma.sync, Hopper layout) at decode sizes on real
  # shapes, the K-major kernel beside it: gpt-oss mlp1 / mlp2, 8192^2,
  # Llama-style 4096 x 14336 and back, and K = 1504, N = 1000 (no tile
  # multiple).
  for kn in "2880 5760" "2880 2880" "8192 8192" "4096 14336" "14336 4096" "1504 1000"; do
    for m in 1 4 16; do
      emit_hopper $m $kn
    done
    emit 1 $kn
  done
elif [ "$mode" = decode-sweep ]; then
  # The decode kernel's splits of K and columns per warp beside the
  # planner's choice (gpt-oss mlp1, 8192^2; M = 1 and 16).
  for kn in "2880 5760" "8192 8192"; do
    for m in 1 16; do
      emit_hopper $m $kn
      # (At 16 rows a warp's activation ring is 12 KiB: at most 4 warps
      # fit in the 48 KiB of static shared memory.)
      splits="2 3 4 6 8 12"
      [ "$m" = 16 ] && splits="2 3 4"
      for split in $splits; do
        for cols in 16 32; do
          emit_hopper $m $kn $split $cols
        done
      done
    done
  done
elif [ "$mode" = decode-depth ]; then
  # The decode kernel's chunks loaded ahead (weight_stages) at several
  # splits: M = 1 (the planner's depth: 2) and M = 16 (staged
  # activations; the planner's depth: 1).
  for kn in "2880 5760" "8192 8192" "4096 14336"; do
    emit_hopper 1 $kn
    for split in 0 4 6 8; do
      for depth in 2 3 4; do
        emit_hopper 1 $kn $split 0 0 0 0 0 0 $depth
      done
    done
  done
  for kn in "2880 5760" "2880 2880" "8192 8192" "14336 4096" "4096 14336" "1504 1000"; do
    emit_hopper 16 $kn
    for split in 0 2 3 4; do
      for depth in 2 3; do
        emit_hopper 16 $kn $split 0 0 0 0 0 0 $depth
      done
    done
  done
elif [ "$mode" = hopper ]; then
  # Correctness first: a half last chunk, partial column tiles, odd M, 8
  # row tiles, uneven split ranges.
  emit_hopper 1 64 16
  emit_hopper 5 160 40
  emit_hopper 33 96 48
  emit_hopper 64 640 200 3
  # The decode shapes beside the K-major kernel and cuBLAS (same run);
  # K = 1504, N = 1000: neither a multiple of the 64-K chunk nor of the
  # 16-column tile.
  for kn in "2880 5760" "2880 2880" "8192 8192" "1504 1000"; do
    for m in 1 16 64; do
      emit_hopper $m $kn
      emit $m $kn
    done
  done
  wgmma_cases
  # Beside the planner's choices: 32 columns per warp, and more warps.
  for kn in "2880 5760" "8192 8192"; do
    emit_hopper 1 $kn 0 32
    emit_hopper 1 $kn 8
    emit_hopper 16 $kn 0 32
  done
elif [ "$mode" = split-sweep ]; then
  for split in 2 3 4 5 6 8 12; do
    emit 1 2880 5760 0 1 $split
    emit 16 2880 5760 0 16 $split
    emit 1 2880 2880 0 1 $split
    emit 1 8192 8192 0 1 $split
  done
  # Beside the planner's choices: 4096 x 14336 (many column strips) and
  # 14336 x 4096 (many chunks) at M = 1; M = 16 with 16-column warps.
  for split in 1 2 4; do emit 1 4096 14336 0 1 $split; done
  for split in 4 8 9 12; do emit 1 14336 4096 0 1 $split; done
  for split in 0 4 6 8; do emit 16 2880 5760 0 16 $split 0 16; done
elif [ "$mode" = sweep ]; then
  emit 5 512 96 0 5 0 0 0 0 0 0 0 0 64  # a correctness shape, 64-wide chunks
  emit 40 512 96 8 10 0 0 0 32  # ragged, 32 rows per warp
  # split unroll warp-columns warp-rows column-warps activation-stages
  # weight-stages max-registers chunk-k
  for config in "0 0 0 0 0 0 0 0 0" "0 0 0 32 0 0 0 0 0" "0 0 16 32 0 0 0 0 0" \
                "0 0 16 32 4 0 0 0 0" "2 0 0 32 0 0 0 0 0"; do
    emit 512 4096 4096 32 128 $config
  done
elif [ "$mode" = check ]; then
  emit 1 256 64
  emit 5 512 96
  emit 33 1024 200
  emit 130 512 136
  emit 40 512 96 8 10
  emit 40 512 96 8 10 0 0 0 0 0 1 1  # activations unstaged
  emit 40 512 96 8 10 0 0 0 32       # 32 rows per warp
  emit 16 1024 256 0 16 0 0 0 0 0 1 1
else
  # Correctness: M = 1, M not a multiple of 8 or 16, N not a multiple of
  # 16 or 32, K not a multiple of 128; a small ragged product.
  emit 1 256 64
  emit 5 512 96
  emit 33 1024 200
  emit 130 512 136
  emit 3 320 40
  emit 40 512 96 8 10
  emit 40 512 96 8 10 0 0 0 0 0 1 1  # the same, activations unstaged
  emit 16 1024 256 0 16 0 0 0 0 0 1 1  # M = 16 unstaged, no weight ring
  emit 5 512 96 0 5 0 0 0 0 0 0 1  # no weight ring
  # K not a multiple of 128 (a partial last chunk), or below 128; uneven
  # K ranges of the split warps (23 chunks over 4 or 7 warps); staged and
  # ragged with a partial chunk.
  emit 3 96 16
  emit 5 160 96
  emit 7 2880 200
  emit 7 2880 200 0 7 7
  emit 33 2880 200
  emit 40 2880 96 8 10
  for kn in "4096 4096" "8192 8192" "4096 14336" "14336 4096"; do
    for m in 1 16 64 256 4096; do
      emit $m $kn
    done
  done
  # Rows known at run time: one compile, odd M across the four variants.
  emit_dynamic 2880 5760 1 3 16 17 33 64 255 256 1000
  emit 33 2880 5760  # the static kernel beside the dynamic one's M = 33
  # gpt-oss: K = 2880 (90 scale blocks), N = 5760 (mlp1) and 2880 (mlp2).
  for kn in "2880 5760" "2880 2880"; do
    for m in 1 16 64 256 4096; do
      emit $m $kn
    done
  done
  # The MoE case: 32 experts [32, 4096, 4096], top-4 of 128 tokens.
  emit 512 4096 4096 32 128
  # gpt-oss mlp1 MoE: 32 experts, top-4 of 128 tokens; 128 experts, top-4
  # of 512 tokens (K = 2880, N = 5760).
  emit 512 2880 5760 32 128
  emit 2048 2880 5760 128 512
fi
echo "kernels in $out"
