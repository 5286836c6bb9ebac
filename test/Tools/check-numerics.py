#!/usr/bin/env python3
"""Checks `mx-numerics --csv` output read from stdin.

Invariants on every row, and seed 002's section 4 target on the pooled
synthetic row "all": means within 1 percentage point of the seed's
(NVFP4 B32 10.955 %, NVFP4 B32 -> MXFP6 10.767 %, MXFP4 12.081 %).
"""
import csv
import sys

SEED = {"nvfp4_b32": 10.955, "nvfp4_b32_to_mxfp6_lut": 10.767, "mxfp4": 12.081}
rows = list(csv.DictReader(sys.stdin))
failures = []
by = {}
for row in rows:
    key = (row["distribution"], row["format"])
    by[key] = row
    mean, p50, p90, p99, top = (float(row[k]) for k in ("mean", "p50", "p90", "p99", "max"))
    if not (0 < p50 <= p90 <= p99 <= top and mean <= top):
        failures.append(f"{key}: quantiles out of order")
    transcoded = "_to_" in row["format"]
    if transcoded != (row["exact_blocks"] != ""):
        failures.append(f"{key}: exact_blocks only for transcoded rows")
for dist in {d for d, _ in by}:
    lut = by[(dist, "nvfp4_b32_to_mxfp6_lut")]
    hw = by[(dist, "nvfp4_b32_to_mxfp6_hwcvt")]
    if lut["exact_blocks"] != hw["exact_blocks"]:
        failures.append(f"{dist}: LUT and HWCVT disagree on exact blocks")
    # MXFP6 (3 mantissa bits per element) must beat every 4-bit format.
    if float(by[(dist, "mxfp6_e2m3")]["mean"]) >= float(by[(dist, "nvfp4")]["mean"]):
        failures.append(f"{dist}: mxfp6 is not more accurate than nvfp4")
if "--seed-target" in sys.argv:
    for fmt, target in SEED.items():
        mean = float(by[("all", fmt)]["mean"])
        if abs(mean - target) > 1.0:
            failures.append(f"all/{fmt}: mean {mean:.3f} % is not within 1 pp of {target} %")
    if not float(by[("all", "mxfp4")]["mean"]) > max(
        float(by[("all", f)]["mean"]) for f in ("nvfp4_b32", "nvfp4_b32_to_mxfp6_lut")
    ):
        failures.append("all: MXFP4 should be the least accurate of the three")
for failure in failures:
    print("FAIL:", failure)
print(f"checked {len(rows)} rows, {len(failures)} failures")
sys.exit(1 if failures else 0)
