#!/usr/bin/env bash
# Here (MLIR): mx-convert compiles conversions for --device cuda (saving each
# kernel with --cuda-save-kernel; the run itself fails here without a GPU)
# and converts the same random inputs on the host. There (the H200):
# run-mx-convert-checks.sh runs each saved kernel through the runtime call
# mx-convert uses and compares with the host's output.
#   bench/gpu/make_mx_convert_checks.sh MX_CONVERT OUT_DIR
set -euo pipefail
mx_convert="$1" out="$2"
mkdir -p "$out"
: > "$out/cases.txt"
check() { # name type from to
  local name=$1 type=$2 from=$3 to=$4
  local elements bytes
  elements=$(( $(echo "$type" | sed -E 's/x[a-zA-Z][a-zA-Z0-9]*$//' | tr 'x' '*') ))
  case "$type" in
    *f4E2M1FN) bytes=$((elements / 2)) ;;
    *) bytes=$elements ;;
  esac
  # Input: random bytes in the source layout, from a canonical tensor.
  head -c "$bytes" /dev/urandom > "$out/$name.canonical"
  "$mx_convert" --type "$type" --to "$from" "$out/$name.canonical" -o "$out/$name.in"
  "$mx_convert" --type "$type" --from "$from" --to "$to" "$out/$name.in" -o "$out/$name.expected"
  "$mx_convert" --device cuda --cuda-save-kernel "$out/$name" --type "$type" \
    --from "$from" --to "$to" "$out/$name.in" -o "$out/$name.gpu" 2> "$out/$name.err" || true
  test -s "$out/$name.image"
  rm -f "$out/$name.canonical"
  echo "$name" >> "$out/cases.txt"
}
H2='#microscale.hopper_value<mx_axis = -2, mma_version = 3>'
H1='#microscale.hopper_value<mx_axis = -1, mma_version = 3>'
BS='#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>'
S='#microscale.strided'
check hopper-swizzle 4x1024x1024xf4E2M1FN "$S" "$H2"
check hopper-unswizzle 4x1024x1024xf4E2M1FN "$H2" "$S"
check hopper-mx1-swizzle 4x1024x1024xf4E2M1FN "$S" "$H1"
check blackwell-swizzle 4x1024x1024xf4E2M1FN "$S" "$BS"
check hopper-to-blackwell 4x1024x1024xf4E2M1FN "$H2" "$BS"
check padded 3x130x66xf4E2M1FN "$S" "$H2"
check hopper-scales 2x32x1024xf8E8M0FNU "$S" '#microscale.hopper_scale<mx_axis = -2, num_warps = 8>'
check blackwell-scales 2x32x1024xf8E8M0FNU "$S" '#microscale.blackwell_scale'
echo "$(wc -l < "$out/cases.txt") cases in $out"
