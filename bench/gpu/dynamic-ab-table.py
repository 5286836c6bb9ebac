#!/usr/bin/env python3
"""The table of a dynamic-ab run (make_matmul_kernels.sh ... dynamic-ab):
per shape and M, the host code's pick (picks.txt), what it picked before
the evened token tiles (rungs), every tile of the variant, and the static
planner's kernel of the same M; graph microseconds from matmul-bench's CSV.
  python3 bench/gpu/dynamic-ab-table.py KERNELS_DIR BENCH_CSV [SMS]"""
import csv, math, re, sys

folder, bench = sys.argv[1], sys.argv[2]
sms = int(sys.argv[3]) if len(sys.argv) > 3 else 132
rows = [l for l in open(bench) if not l.startswith("#") and "," in l]
times = {}
for r in csv.DictReader(rows):
    # Kernels of rows known at run time are named FILE:ENTRY:mM.
    kernel = r["kernel"].split(":")[1] if ":" in r["kernel"] else r["kernel"]
    key = (int(r["m"]), int(r["k"]), int(r["n"]), kernel)
    times[key] = float(r.get("graph_us") or r["ours_us"])
picks = {}
for line in open(f"{folder}/picks.txt"):
    m, k, n, entry = line.split()
    picks[(int(m), int(k), int(n))] = entry


def before(m, n, pick):
    """The kernel the host code launched before the rungs (and the split
    sibling): the variant's
    planned tile, above 256 rows the base rule's (chooseLargeTile where
    M's tiles even out to 120 or less)."""
    base = re.sub(r"_t(?!256)\d+$|_s2$", "", pick)
    if base == pick or not base.endswith("rows257"):
        return base
    pairs = math.ceil(n / 128) * math.ceil(m / 128)
    return base if pairs >= sms else base + "_w1"


print("| K x N | M | pick | pick (us) | before | before (us) | before / pick "
      "| best tile (us) | static plan (us) |")
print("|---|---|---|---|---|---|---|---|---|")
ratios = []
for (m, k, n), pick in picks.items():
    dyn = {e: t for (mm, kk, nn, e), t in times.items()
           if (mm, kk, nn) == (m, k, n) and e.startswith("mixed_matmul_hopper")}
    static = [t for (mm, kk, nn, e), t in times.items()
              if (mm, kk, nn) == (m, k, n) and not e.startswith("mixed_matmul_hopper")]
    old = before(m, n, pick)
    if pick not in dyn or old not in dyn:
        continue
    ratio = dyn[old] / dyn[pick]
    ratios.append(ratio)
    best = min(dyn, key=dyn.get)
    short = lambda e: e.replace("mixed_matmul_hopper_0_", "")
    fixed = f"{static[0]:.2f}" if static else "-"
    print(f"| {k} x {n} | {m} | {short(pick)} | {dyn[pick]:.2f} | {short(old)} "
          f"| {dyn[old]:.2f} | {ratio:.2f}x | {short(best)} {dyn[best]:.2f} "
          f"| {fixed} |")
if ratios:
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\nbefore / pick: geomean {geo:.3f}x, {min(ratios):.2f}-{max(ratios):.2f}x over {len(ratios)} cases")
