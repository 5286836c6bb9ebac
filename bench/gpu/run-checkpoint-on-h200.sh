#!/usr/bin/env bash
# On the H200: mx-convert --device cuda on a synthetic gpt-oss-20b checkpoint
# (issue 19), timed against cp of the same files from a warm page cache and
# against mx-convert on the machine's CPU cores, with peak memory; checks
# that the GPU's output is the CPU's byte for byte and that the round trip
# (on the GPU) gives the checkpoint back.
#
# mx-convert itself runs there: the GPU machine has no MLIR, so it is the
# statically linked build that make-static-mx-convert.sh made here
# (bench/gpu/mx-convert-static/mx-convert.xz, carried). It compiles the
# conversion kernels there, as it does anywhere (cubins where ptxas is
# found, else PTX for the driver). Through the device tool:
#   bench/gpu/make-static-mx-convert.sh                      # here
#   run: bash bench/gpu/run-checkpoint-on-h200.sh [LAYERS]   # there,
#        carry = [bench/gpu/mx-convert-static]
# LAYERS defaults to gpt-oss-20b's 24 (13 GB; three copies on disk at most,
# of the 64 GB there); VOCAB=0 leaves out the two embedding tables. Prints the figures, and "CHECKS PASSED" or why not.
set -euo pipefail
cd "$(dirname "$0")/../.."
layers=${1:-24}
dir=${CKPT_DIR:-/tmp/ckpt-bench}
bin=/tmp/mx-convert-static
root=$PWD
measure="python3 $root/bench/checkpoint/measure.py"
st="python3 $root/test/Tools/safetensors.py"
H2='#microscale.hopper_value<mx_axis = -2, mma_version = 3>'
HS='#microscale.hopper_scale<mx_axis = -2, num_warps = 8>'
CK='#microscale.strided<major_dim = -2>'

# (python's lzma: xz itself may not be installed there)
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  bench/gpu/mx-convert-static/mx-convert.xz "$bin"
chmod +x "$bin"
if ! "$bin" --help > /dev/null; then
  echo "the static mx-convert does not run here:"; ldd "$bin" || true; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv,noheader || true
echo "machine: $(nproc) cores, ptxas: $(command -v ptxas || echo none), $(df -h /tmp | tail -1 | awk '{print $4}') free in /tmp"

rm -rf "$dir" && mkdir -p "$dir"
$st gptoss "$dir/ckpt" --layers "$layers" --experts 32 --hidden 2880 \
  --intermediate 2880 --vocab "${VOCAB:-201088}" --shards 3 --random
bytes=$(cat "$dir"/ckpt/*.safetensors | wc -c)
echo "checkpoint: $layers layers, vocabulary ${VOCAB:-201088}, $bytes bytes in 3 shards"
cat "$dir"/ckpt/* > /dev/null # warm the page cache

failed=0
$measure "cp -r (warm page cache)" 2 --before "rm -rf $dir/copy" -- \
  cp -r "$dir/ckpt" "$dir/copy"
rm -rf "$dir/copy"
$measure "mx-convert --device cuda to hopper" 2 --before "rm -rf $dir/gpu" -- \
  "$bin" "$dir/ckpt" -o "$dir/gpu" --device cuda --to "$H2" --scales-to "$HS"
$measure "mx-convert --device host ($(nproc) cores) to hopper" 1 --before "rm -rf $dir/cpu" -- \
  "$bin" "$dir/ckpt" -o "$dir/cpu" --to "$H2" --scales-to "$HS"
for f in "$dir"/gpu/*; do
  if ! cmp -s "$f" "$dir/cpu/$(basename "$f")"; then
    echo "FAIL: $(basename "$f") differs between --device cuda and --device host"
    failed=1
  fi
done
[ $failed = 0 ] && echo "GPU output identical to the CPU's ($(ls "$dir/gpu" | wc -l) files)"
rm -rf "$dir/cpu"
# Where a GPU run's time goes: the per-tensor lines of --time (compile, and
# copy in + kernel + copy out) and the summary.
rm -rf "$dir/gpu"
"$bin" "$dir/ckpt" -o "$dir/gpu" --device cuda --to "$H2" --scales-to "$HS" \
  --time --progress 2> "$dir/time.txt"
python3 - "$dir/time.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
compile_ms = sum(float(m) for m in re.findall(r"compile ([0-9.]+) ms", text))
run_ms = [float(m) for m in re.findall(r"run on the GPU ([0-9.]+) ms", text)]
print(f"--time: {len(run_ms)} conversions, compile {compile_ms:.0f} ms in all, "
      f"GPU runs (copies in and out included) {sum(run_ms):.0f} ms in all")
print([l for l in text.splitlines() if "compile" in l and "compiled before" not in l][:4])
print(text.strip().splitlines()[-1])
PY
$measure "mx-convert --device cuda back" 1 --before "rm -rf $dir/back" -- \
  "$bin" "$dir/gpu" -o "$dir/back" --device cuda --to "$CK" --scales-to "$CK"
$st compare "$dir/ckpt" "$dir/back" || failed=1
rm -rf "$dir"
if [ $failed = 0 ]; then echo "CHECKS PASSED"; else echo "CHECKS FAILED"; exit 1; fi
