#!/usr/bin/env python3
"""VALU cost of the gfx950 NVFP4 B32 -> MXFP6 transcode, counted from the ISA.

Compiles one scaled_matmul per operand combination with
`mx-opt --microscale-gpu-to-gfx950`, takes each kernel's main loop (one
scaled MFMA 32x32x64 per iteration, in which every lane assembles one lhs and
one rhs block of 32 K values) and counts its instructions by kind. The
transcode's cost per 32-element block is the loop's VALU count minus that of
the MXFP6 x MXFP6 kernel (same loads and scale reads, no transcode), divided
by the number of transcoded operands.

  count-valu.py [--mx-opt PATH] [--keep DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "scripts"))
from importlib import import_module  # noqa: E402

extract = import_module("extract-ptx")

M, N, K = 64, 64, 8192
MXFP6_A = f"!microscale.qtensor<{M}x{K}, mxfp6_e2m3, axis = 1>"
NVFP4_A = f"!microscale.qtensor<{M}x{K}, nvfp4_b32, axis = 1>"
MXFP6_W = (f"!microscale.qtensor<{K}x{N}, mxfp6_e2m3, axis = 0, "
           "values = #microscale.strided<major_dim = 0>>")
NVFP4_W = (f"!microscale.qtensor<{K}x{N}, nvfp4_b32, axis = 0, "
           "values = #microscale.strided<major_dim = 0>>")

# (name, lhs, rhs, variant, transcoded operands per lane and step)
KERNELS = [
    ("a6w6", MXFP6_A, MXFP6_W, None, 0),
    ("w4a6_lut", MXFP6_A, NVFP4_W, "lut", 1),
    ("w4a6_hwcvt", MXFP6_A, NVFP4_W, "hwcvt", 1),
    ("w4a4_lut", NVFP4_A, NVFP4_W, "lut", 2),
    ("w4a4_hwcvt", NVFP4_A, NVFP4_W, "hwcvt", 2),
]


def storage_bytes(type_text, part):
    """Storage byte counts of the strided layouts used here."""
    shape = [int(x) for x in re.search(r"<(\d+)x(\d+)", type_text).groups()]
    elements = shape[0] * shape[1]
    if part == "values":
        return elements * (6 if "mxfp6" in type_text else 4) // 8
    return elements // 32


def module_text():
    functions = []
    for name, lhs, rhs, variant, _ in KERNELS:
        attrs = f" {{variant = #microscale.transcode_variant<{variant}>}}" if variant else ""
        lv, ls = storage_bytes(lhs, "values"), storage_bytes(lhs, "scales")
        rv, rs = storage_bytes(rhs, "values"), storage_bytes(rhs, "scales")
        types = (f"memref<{lv}xi8>, memref<{ls}xi8>, memref<{rv}xi8>, "
                 f"memref<{rs}xi8>, memref<{M * N}xf32>")
        functions.append(
            f"func.func @{name}(%lv: memref<{lv}xi8>, %ls: memref<{ls}xi8>, "
            f"%lg: f32, %rv: memref<{rv}xi8>, %rs: memref<{rs}xi8>, %rg: f32, "
            f"%out: memref<{M * N}xf32>) {{\n"
            f"  microscale.scaled_matmul_storage(%lv, %ls, %lg) times "
            f"(%rv, %rs, %rg) into %out{attrs} : {lhs}, {rhs}, {types}\n"
            f"  return\n}}\n")
    return "\n".join(functions)


def kernels(assembly):
    """name -> list of instruction lines, per kernel in the assembly."""
    result, name, body = {}, None, []
    for line in assembly.splitlines():
        label = re.match(r"^(\w+):", line)
        if label and not line.startswith(".L"):
            name, body = label.group(1), []
            result[name] = body
        elif name:
            body.append(line.strip())
            if line.startswith(".Lfunc_end"):
                name = None
    return result


def main_loop(body):
    """The instructions between a label and the branch back to it."""
    labels = {}
    for i, line in enumerate(body):
        label = re.match(r"^(\.LBB\w+):", line)
        if label:
            labels[label.group(1)] = i
        branch = re.match(r"^s_cbranch_\w+\s+(\.LBB\w+)", line)
        if branch and branch.group(1) in labels:
            return body[labels[branch.group(1)] + 1 : i + 1]
    sys.exit("count-valu.py: no loop found")


def classify(loop):
    counts = {"valu": 0, "mfma": 0, "perm": 0, "cvt_fp4": 0, "pk_mul": 0,
              "cvt_fp6": 0, "vmem": 0, "salu": 0}
    for line in loop:
        op = line.split()[0] if line and not line.startswith((";", ".")) else ""
        if op.startswith("v_mfma"):
            counts["mfma"] += 1
        elif op.startswith("v_"):
            counts["valu"] += 1
            counts["perm"] += op.startswith("v_perm_b32")
            counts["cvt_fp4"] += op.startswith("v_cvt_scalef32_pk_f16_fp4")
            counts["pk_mul"] += op.startswith("v_pk_mul_f16")
            counts["cvt_fp6"] += op.startswith("v_cvt_scalef32_pk32_fp6_f16")
        elif op.startswith(("global_", "buffer_")):
            counts["vmem"] += 1
        elif op.startswith("s_"):
            counts["salu"] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mx-opt", default="mx-opt")
    parser.add_argument("--keep", help="write the IR and assembly here")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "kernels.mlir")
    lowered = os.path.join(work, "kernels.gfx950.mlir")
    with open(source, "w") as f:
        f.write(module_text())
    subprocess.run([args.mx_opt, source, "--microscale-gpu-to-gfx950", "-o",
                    lowered], check=True)
    text = open(lowered).read()
    match = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', text, re.S)
    assembly = extract.unescape(match.group(1)).decode()
    with open(os.path.join(work, "kernels.s"), "w") as f:
        f.write(assembly)
    bodies = kernels(assembly)
    rows = []
    for index, (name, _, _, _, transcoded) in enumerate(KERNELS):
        rows.append((name, transcoded,
                     classify(main_loop(bodies[f"scaled_matmul_{index}"]))))
    # Normalise per scaled MFMA: the backend may unroll the loop.
    for _, _, c in rows:
        for key in list(c):
            if key != "mfma":
                c[key] = c[key] / c["mfma"]
    base = rows[0][2]["valu"]
    print(f"gfx950 scaled_matmul {M}x{N}x{K}: main-loop instructions per lane "
          "and scaled MFMA 32x32x64 (each lane assembles one lhs and one rhs "
          "block of 32 K values per MFMA); mfma = MFMAs in the loop body")
    print("kernel,transcoded_blocks,loop_valu,mfma,v_perm,cvt_pk_f16_fp4,"
          "pk_mul_f16,cvt_pk32_fp6,vmem,valu_per_transcoded_block")
    for name, transcoded, c in rows:
        per_block = (f"{(c['valu'] - base) / transcoded:.1f}" if transcoded
                     else "-")
        print(f"{name},{transcoded},{c['valu']:.1f},{c['mfma']},"
              f"{c['perm']:.1f},{c['cvt_fp4']:.1f},{c['pk_mul']:.1f},"
              f"{c['cvt_fp6']:.1f},{c['vmem']:.1f},{per_block}")


if __name__ == "__main__":
    main()
