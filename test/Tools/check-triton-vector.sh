#!/usr/bin/env bash
# check-triton-vector.sh NAME TYPE LAYOUT VECTOR_DIR TMP
# Converts NAME.in.bin (canonical) to LAYOUT with mx-convert and compares with
# Triton's NAME.out.bin byte for byte, then converts Triton's bytes back and
# compares with NAME.in.bin.
set -euo pipefail
name="$1" type="$2" layout="$3" dir="$4" tmp="$5"
mkdir -p "$tmp"
mx-convert --type "$type" --to "$layout" "$dir/$name.in.bin" -o "$tmp/$name.out"
cmp "$tmp/$name.out" "$dir/$name.out.bin"
mx-convert --type "$type" --from "$layout" --to '#microscale.strided' \
  "$dir/$name.out.bin" -o "$tmp/$name.back"
cmp "$tmp/$name.back" "$dir/$name.in.bin"
