#!/usr/bin/env bash
# On the GPU machine, carrying the directory make_mx_convert_checks.sh wrote
# (default bench/gpu/mx-convert-checks): runs every kernel mx-convert saved
# through cuda::runConversion and compares with mx-convert's host output.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="${1:-bench/gpu/mx-convert-checks}"
g++ -O2 -std=c++17 -Iinclude -Ibench/gpu bench/gpu/run-saved-kernel.cpp \
  lib/Runtime/CUDA/*.cpp -ldl -o /tmp/run-saved-kernel
failed=0
while read -r name; do
  /tmp/run-saved-kernel "$dir/$name" "$dir/$name.in" "$dir/$name.expected" || failed=$((failed + 1))
done < "$dir/cases.txt"
echo "$failed failed"
exit "$failed"
