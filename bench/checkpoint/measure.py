#!/usr/bin/env python3
"""Runs a command REPS times and prints its best wall time and its peak
resident set (the largest over the runs), for the checkpoint benchmarks:

  measure.py LABEL REPS [--before 'shell command'] -- COMMAND...

--before runs (untimed) before each run, e.g. removing the last output.
Prints: LABEL: best S s (runs: S, S, ...), peak RSS N MB
"""
import resource
import subprocess
import sys
import time


def main():
    label, reps = sys.argv[1], int(sys.argv[2])
    rest = sys.argv[3:]
    before = None
    if rest[0] == "--before":
        before, rest = rest[1], rest[2:]
    assert rest[0] == "--"
    command = rest[1:]
    times, peak = [], 0
    for _ in range(reps):
        if before:
            subprocess.run(before, shell=True, check=True)
        start = time.perf_counter()
        result = subprocess.run(command)
        times.append(time.perf_counter() - start)
        if result.returncode:
            print(f"{label}: FAILED (exit {result.returncode})")
            sys.exit(1)
        # ru_maxrss of the children waited for so far: the largest of them.
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    runs = ", ".join(f"{t:.2f}" for t in times)
    print(f"{label}: best {min(times):.2f} s (runs: {runs}), peak RSS {peak / 1024:.0f} MB")


if __name__ == "__main__":
    main()
