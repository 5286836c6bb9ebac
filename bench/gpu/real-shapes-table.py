#!/usr/bin/env python3
"""Turns the output of bench/gpu/run-real-shapes-on-h200.sh into one matrix
per shape: rows are the source layout, columns the destination, cells the
kernel's time over a device copy of the same bytes (measured in the same
run), with 'u' for the per-unit kernel.

  real-shapes-table.py real-shapes.txt
"""
import collections
import sys

cells = collections.OrderedDict()
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split("|")]
    if len(f) < 14 or not f[1][4:].isdigit():
        continue
    src, dst = [x.strip() for x in f[2].split("->")]
    shape, kind, traversal, ratio = f[3], f[5], f[7], f[11]
    if kind == "per-unit" and traversal == "column-major":
        shape += " (per-unit kernel, before)"
    cells.setdefault(shape, {})[(src, dst)] = (float(ratio), kind)

for shape, table in cells.items():
    layouts = []
    for src, dst in table:
        for x in (src, dst):
            if x not in layouts:
                layouts.append(x)
    print("\n`[%s]`, ours / copy (u: per-unit kernel)\n" % shape.replace("x", ", "))
    print("| from \\ to | " + " | ".join(layouts) + " |")
    print("|---" * (len(layouts) + 1) + "|")
    for src in layouts:
        row = []
        for dst in layouts:
            if (src, dst) in table:
                ratio, kind = table[(src, dst)]
                row.append("%.2f%s" % (ratio, " u" if kind == "per-unit" else ""))
            else:
                row.append("")
        print("| %s | %s |" % (src, " | ".join(row)))
