#!/usr/bin/env python3
"""Counts the SASS of the cubins make_sass_probes.py built (run where
cuobjdump is, e.g. the H200 machine: cuobjdump disassembles sm_100a and
sm_120a cubins without the GPU). Per probe: (instructions with the piece -
without it - constants) / COPIES, and the mix; per whole kernel: its static
instruction count.

  count_sass.py CUBIN_DIR [--cuobjdump CUOBJDUMP]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import count_dequant_sass as hopper  # noqa: E402


def instructions(cuobjdump, cubin):
    sass = subprocess.run([cuobjdump, "--dump-sass", cubin], check=True,
                          capture_output=True, text=True).stdout
    ops = []
    for m in hopper.INSTRUCTION.finditer(sass):
        op = m.group(2).split(".")[0]
        if op in ("NOP", "EXIT", "BRA"):
            continue
        text = (m.group(2) + " " + m.group(3).strip()).strip()
        ops.append("constant" if hopper.CONSTANT.match(text) else m.group(2))
    return ops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cubin_dir")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    args = parser.parse_args()
    for line in open(os.path.join(args.cubin_dir, "manifest.txt")):
        fields = line.rstrip("\n").split("\t")
        if fields[0] == "total":
            _, label, chip, cubin = fields
            ops = instructions(args.cuobjdump, os.path.join(args.cubin_dir, cubin))
            print("%-8s %-52s %5d SASS instructions (static, whole kernel)" % (chip, label, len(ops)))
            continue
        _, label, chip, per, with_cubin, without_cubin = fields
        ops1 = instructions(args.cuobjdump, os.path.join(args.cubin_dir, with_cubin))
        ops0 = instructions(args.cuobjdump, os.path.join(args.cubin_dir, without_cubin))
        mix = {}
        for op in ops1:
            mix[op] = mix.get(op, 0) + 1
        for op in ops0:
            mix[op] = mix.get(op, 0) - 1
        constants = mix.pop("constant", 0)
        count = (len(ops1) - len(ops0) - constants) / hopper.COPIES
        detail = ", ".join("%s %g" % (k, v / hopper.COPIES)
                           for k, v in sorted(mix.items(), key=lambda kv: -kv[1]) if v)
        print("%-8s %-52s %5.2f per %s  (%s; constants once: %d)"
              % (chip, label, count, per, detail, constants))


if __name__ == "__main__":
    main()
