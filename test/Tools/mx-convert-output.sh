#!/usr/bin/env bash
# The parts of mx-convert-output.mlir that need a shell: background
# processes, signals, FIFOs, device nodes and file-size limits.
#   mx-convert-output.sh DIR
# Prints one line per check; mx-convert-output.mlir FileChecks them.
set -uo pipefail
dir="$1"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
head -c 8192 /dev/urandom > in.bin
convert() {
  mx-convert --type 2x64x128xf4E2M1FN \
    --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' "$@"
}
convert in.bin -o expected.bin || exit 1

# What is left in the directory besides the files named here.
leftovers() {
  ls -A | grep -v -x -e in.bin -e expected.bin -e in.fifo -e out.fifo \
    -e got.bin -e dev -e target "$@" | tr '\n' ' '
  echo
}

# A FIFO at OUT is written in place, not replaced by a regular file.
mkfifo out.fifo
timeout 20 cat out.fifo > got.bin &
reader=$!
timeout 20 mx-convert --type 2x64x128xf4E2M1FN \
  --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' \
  in.bin -o out.fifo
wait $reader
if [ -p out.fifo ] && cmp -s got.bin expected.bin; then
  echo "fifo: written in place"
else
  echo "fifo: REPLACED or wrong bytes"
fi
rm -f got.bin

# A device is written in place. Our own nodes, where we may create them
# (root), so that a tool that replaces them cannot harm the system's.
mkdir dev
if mknod dev/null c 1 3 2>/dev/null && mknod dev/full c 1 7 2>/dev/null; then
  null=dev/null full=dev/full
else
  null=/dev/null full=/dev/full
fi
convert in.bin -o "$null" && [ -c "$null" ] && echo "null: written in place"
# A full device: the file and the cause, no LLVM ERROR, no leftovers.
convert in.bin -o "$full" 2>&1 | sed "s|$full|FULL|"
status=${PIPESTATUS[0]}
echo "full: exit $status, left: $(leftovers)"

# A file-size limit: the write fails with EFBIG (SIGXFSZ is ignored) and the
# temporary is removed.
( ulimit -f 8; convert in.bin -o limited.bin 2>&1 )
status=$?
echo "ulimit: exit $status, left: $(leftovers)"

# SIGTERM and SIGINT while mx-convert runs (here: blocked opening a FIFO
# that no one writes) remove the temporary it created for OUT.
mkfifo in.fifo
set -m # background jobs keep SIGINT (a non-interactive shell ignores it)
for signal in TERM INT; do
  # Not through convert(): $! must be mx-convert's pid, not a subshell's.
  timeout -s KILL 30 mx-convert --type 2x64x128xf4E2M1FN \
    --to '#microscale.strided' in.fifo -o out.bin &
  pid=$!
  seen=no
  for _ in $(seq 200); do
    if compgen -G 'out.bin.mx-convert-*' > /dev/null; then seen=yes; break; fi
    sleep 0.05
  done
  kill -s $signal $pid
  wait $pid
  status=$?
  echo "SIG$signal: temporary seen: $seen, exit $status, left: $(leftovers)"
done

# TERM twice in a row (a supervisor signalling the process and its group):
# the second waits until the temporary is gone, it does not cut the
# removal short. Ten tries: the window was narrow.
left=""
for _ in $(seq 10); do
  timeout -s KILL 30 mx-convert --type 2x64x128xf4E2M1FN \
    --to '#microscale.strided' in.fifo -o out.bin &
  pid=$!
  for _ in $(seq 200); do
    compgen -G 'out.bin.mx-convert-*' > /dev/null && break
    sleep 0.05
  done
  kill -s TERM $pid
  kill -s TERM $pid 2> /dev/null
  wait $pid
  left="$left$(leftovers)"
  rm -f out.bin.mx-convert-*
done
echo "SIGTERM twice: left: $(echo $left)"
