#!/usr/bin/env bash
# mx-convert on a synthetic gpt-oss-20b-shaped checkpoint (issue 19): real
# tensor names and shapes (32 experts, hidden 2880, intermediate 2880:
# gate_up blocks [32, 5760, 90, 16], down [32, 2880, 90, 16]; attention and
# the rest bf16), random bytes, 3 shards and an index. Times a whole-
# checkpoint conversion to Hopper's layouts and back against `cp` of the
# same files from a warm page cache, records peak memory, and checks that
# the round trip gives the checkpoint back.
#
#   bench/checkpoint/run.sh [--layers L] [--vocab V] [--reps R] [--dir DIR]
#                           [--mx-convert PATH] [-- extra mx-convert flags]
#
# gpt-oss-20b has 24 layers and a vocabulary of 201088 (two 1.16 GB bf16
# tables): about 13 GB in all. --layers and --vocab scale it to what the
# machine's disk and time allow (each layer is 450 MB; three copies of the
# checkpoint are on disk at once).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
layers=4 vocab=201088 reps=3 dir=/tmp/mx-convert-bench
mx_convert="$root/build/bin/mx-convert"
while [ $# -gt 0 ]; do
  case "$1" in
    --layers) layers=$2; shift 2 ;;
    --vocab) vocab=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --mx-convert) mx_convert=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
extra=("$@")
H2='#microscale.hopper_value<mx_axis = -2, mma_version = 3>'
HS='#microscale.hopper_scale<mx_axis = -2, num_warps = 8>'
CK='#microscale.strided<major_dim = -2>'
measure="python3 $here/measure.py"
st="python3 $root/test/Tools/safetensors.py"

rm -rf "$dir" && mkdir -p "$dir"
$st gptoss "$dir/ckpt" --layers "$layers" --experts 32 --hidden 2880 \
  --intermediate 2880 --vocab "$vocab" --shards 3 --random
bytes=$(cat "$dir"/ckpt/*.safetensors | wc -c)
echo "checkpoint: $layers layers, vocabulary $vocab, $bytes bytes in 3 shards"
echo "machine: $(nproc) cores, $(uname -r)"
cat "$dir"/ckpt/* > /dev/null # warm the page cache

$measure "cp -r (warm page cache)" "$reps" --before "rm -rf $dir/copy" -- \
  cp -r "$dir/ckpt" "$dir/copy"
rm -rf "$dir/copy"
$measure "mx-convert to hopper" "$reps" --before "rm -rf $dir/hopper" -- \
  "$mx_convert" "$dir/ckpt" -o "$dir/hopper" --to "$H2" --scales-to "$HS" "${extra[@]}"
$measure "mx-convert back" "$reps" --before "rm -rf $dir/back" -- \
  "$mx_convert" "$dir/hopper" -o "$dir/back" --to "$CK" --scales-to "$CK" "${extra[@]}"
# One run with its summary (converted, copied, bytes, time) and where its
# time went (--time: each distinct conversion's compile, each tensor's run).
rm -rf "$dir/back"
"$mx_convert" "$dir/hopper" -o "$dir/back" --to "$CK" --scales-to "$CK" \
  --progress --time "${extra[@]}" 2> "$dir/time.txt"
python3 - "$dir/time.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
compiles = [float(m) for m in re.findall(r"compile ([0-9.]+) ms", text)]
runs = [float(m) for m in re.findall(r"(?:convert|run on the GPU) ([0-9.]+) ms", text)]
print(text.strip().splitlines()[-1])
print("  compiles (ms, in parallel):", ", ".join(f"{c:.0f}" for c in compiles),
      f"; conversions: {len(runs)} tensors, {sum(runs):.0f} ms in all")
PY
$st compare "$dir/ckpt" "$dir/back"
rm -rf "$dir"
