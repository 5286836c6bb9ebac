#!/usr/bin/env python3
"""SASS of the Blackwell scaled_matmul kernels on the gpt-oss shapes: sm_120a's
block-scaled mma.sync (BlackwellScaledMatmulKernel.cpp, MXFP4 kind::mxf4 and
NVFP4 kind::mxf4nvf4) and sm_100a's tcgen05.mma ... block_scale
(TCGen05ScaledMatmulKernel.cpp, the same kinds and kind::mxf8f6f4 for
MXFP8 activations x an MXFP4 weight), in two steps on two machines:

  scaled_matmul_sass.py build MX_OPT OUT_DIR   # here: mx-opt + ptxas (format=bin)
  scaled_matmul_sass.py count OUT_DIR [--cuobjdump CUOBJDUMP] [--sass-dir D]
                                               # where cuobjdump is (the H200
                                               # machine disassembles sm_100a
                                               # and sm_120a)

`count` prints, per kernel, the static SASS count, the block-scaled MMAs in
it (sm_120a: OMMA; sm_100a: the UTC*MMA that tcgen05.mma becomes), and the
SASS of the K loop's body per K step of 64 (the loop between its label and
the backward branch, divided by the K steps it covers: its MMAs / the
activation tiles per warp; one tcgen05 MMA is one K step of the whole
CTA), with the body's mix. The sm_100a K loop is what every thread runs
per chunk (its copies, the barrier, the mbarrier wait) plus thread 0's
tcgen05.cp / MMA / commit; it is counted per thread, not per warp.
kind::mxf8f6f4's MMAs are K = 32: its cases count 2 "tiles" so that a K
step is still 64 values.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import count_dequant_sass as hopper  # noqa: E402

# (label, format, M, K, N, weight layout, activation tiles per warp)
BLACKWELL = ("values = #microscale.blackwell_value, "
             "scales = #microscale.blackwell_scale")
STRIDED = "values = #microscale.strided<major_dim = 0>, scales = #microscale.blackwell_scale"
# (label, chip, format, M, K, N, weight layout, activation tiles per warp);
# format "A*W" for activations A times a weight W, else both the same.
CASES = [
    ("mxfp4-decode-m1-2880x5760", "sm_120a", "mxfp4", 1, 2880, 5760, BLACKWELL, 1),
    ("mxfp4-m16-2880x5760", "sm_120a", "mxfp4", 16, 2880, 5760, BLACKWELL, 2),
    ("mxfp4-m64-2880x5760", "sm_120a", "mxfp4", 64, 2880, 5760, BLACKWELL, 4),
    ("nvfp4-decode-m1-2880x5760", "sm_120a", "nvfp4", 1, 2880, 5760, STRIDED, 1),
    ("nvfp4-m64-2880x5760", "sm_120a", "nvfp4", 64, 2880, 5760, STRIDED, 4),
    # tcgen05: 16-token tiles at decode, 128 from M = 128 up.
    ("tcgen05-mxfp4-m1-2880x5760", "sm_100a", "mxfp4", 1, 2880, 5760, BLACKWELL, 1),
    ("tcgen05-mxfp4-m16-2880x5760", "sm_100a", "mxfp4", 16, 2880, 5760, BLACKWELL, 1),
    ("tcgen05-mxfp4-m4096-2880x5760", "sm_100a", "mxfp4", 4096, 2880, 5760, BLACKWELL, 1),
    ("tcgen05-mxfp4-m4096-8192x8192", "sm_100a", "mxfp4", 4096, 8192, 8192, BLACKWELL, 1),
    ("tcgen05-nvfp4-m1-2880x5760", "sm_100a", "nvfp4", 1, 2880, 5760, STRIDED, 1),
    ("tcgen05-nvfp4-m4096-2880x5760", "sm_100a", "nvfp4", 4096, 2880, 5760, STRIDED, 1),
    # kind::mxf8f6f4: 16-token tiles at decode, 48 from M = 48 up.
    ("tcgen05-mxf8f6f4-e4m3-m1-2880x5760", "sm_100a", "mxfp8_e4m3*mxfp4", 1, 2880, 5760, BLACKWELL, 2),
    ("tcgen05-mxf8f6f4-e4m3-m16-2880x5760", "sm_100a", "mxfp8_e4m3*mxfp4", 16, 2880, 5760, BLACKWELL, 2),
    ("tcgen05-mxf8f6f4-e4m3-m4096-2880x5760", "sm_100a", "mxfp8_e4m3*mxfp4", 4096, 2880, 5760, BLACKWELL, 2),
    ("tcgen05-mxf8f6f4-e5m2-m4096-8192x8192", "sm_100a", "mxfp8_e5m2*mxfp4", 4096, 8192, 8192, BLACKWELL, 2),
]


def is_mma(op):
    """The block-scaled MMA: OMMA (mma.sync, sm_120a) or the UTC*MMA of
    tcgen05.mma (sm_100a)."""
    return op.startswith("OMMA") or (op.startswith("UTC") and "MMA" in op)


def build(mx_opt, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    for label, chip, fmt, m, k, n, layout, tiles in CASES:
        afmt, wfmt = fmt.split("*") if "*" in fmt else (fmt, fmt)
        src = os.path.join(out_dir, label + ".mlir")
        with open(src, "w") as f:
            f.write(
                "func.func @mm(%%av: memref<?xi8>, %%as: memref<?xi8>, %%ag: f32, "
                "%%wv: memref<?xi8>, %%ws: memref<?xi8>, %%wg: f32, %%o: memref<?xbf16>) {\n"
                "  microscale.scaled_matmul_storage(%%av, %%as, %%ag) times (%%wv, %%ws, %%wg) into %%o\n"
                "    : !microscale.qtensor<%dx%d, %s, axis = 1>, "
                "!microscale.qtensor<%dx%d, %s, axis = 0, %s>, memref<?xi8>, "
                "memref<?xi8>, memref<?xi8>, memref<?xi8>, memref<?xbf16>\n"
                "  return\n}\n" % (m, k, afmt, k, n, wfmt, layout))
        lowered = subprocess.run(
            [mx_opt, src, "--microscale-gpu-to-ptx=chip=%s format=bin" % chip],
            check=True, capture_output=True, text=True).stdout
        lowered_path = os.path.join(out_dir, label + ".lowered.mlir")
        with open(lowered_path, "w") as f:
            f.write(lowered)
        kernel_dir = os.path.join(out_dir, label)
        subprocess.run([sys.executable,
                        os.path.join(HERE, "..", "..", "..", "tools", "scripts",
                                     "extract-ptx.py"), lowered_path, kernel_dir],
                       check=True)
        os.remove(lowered_path)
        cubin = os.path.join(label, "microscale_kernels.cubin")
        manifest.append("%s\t%d\t%s\n" % (label, tiles, cubin))
    with open(os.path.join(out_dir, "manifest.txt"), "w") as f:
        f.writelines(manifest)


# One SASS instruction with its address: /*0850*/  [@P0] OPCODE args ;
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def count(out_dir, cuobjdump, sass_dir):
    for line in open(os.path.join(out_dir, "manifest.txt")):
        label, tiles, cubin = line.rstrip("\n").split("\t")
        dumped = os.path.join(sass_dir or out_dir, label + ".sass")
        if sass_dir and os.path.exists(dumped):
            sass = open(dumped).read()
        else:
            sass = subprocess.run([cuobjdump, "--dump-sass",
                                   os.path.join(out_dir, cubin)],
                                  check=True, capture_output=True,
                                  text=True).stdout
            if sass_dir:
                with open(dumped, "w") as f:
                    f.write(sass)
        ops = [(int(m.group(1), 16), m.group(3), m.group(4))
               for m in LINE.finditer(sass)]
        body = [op for _, op, _ in ops if op.split(".")[0] != "NOP"]
        ommas = sum(1 for op in body if is_mma(op))
        # The K loop: the shortest backward branch (to a lower address)
        # over MMAs. Not BRA.U.ANY: ptxas wraps each tcgen05 instruction
        # of an elected thread in such a loop of its own. The mbarrier
        # waits' retry paths, placed after the kernel's end, branch back
        # into the K loop from further away.
        loop = None
        for address, op, args in ops:
            target = re.search(r"0x([0-9a-f]+)", args)
            if (op.startswith("BRA") and not op.startswith("BRA.U.ANY")
                    and target and int(target.group(1), 16) < address):
                inside = [o for a, o, _ in ops
                          if int(target.group(1), 16) <= a <= address
                          and o.split(".")[0] != "NOP"]
                if any(is_mma(o) for o in inside) and (
                        loop is None or len(inside) < len(loop)):
                    loop = inside
        print("%-30s %5d SASS static, %3d MMA" % (label, len(body), ommas))
        if loop:
            steps = sum(1 for o in loop if is_mma(o)) / int(tiles)
            mix = {}
            for o in loop:
                key = o.split(".")[0]
                mix[key] = mix.get(key, 0) + 1
            print("    K loop: %d SASS for %g K steps = %.1f per K step of 64; mix %s"
                  % (len(loop), steps, len(loop) / steps,
                     ", ".join("%s %d" % kv for kv in
                               sorted(mix.items(), key=lambda kv: -kv[1]))))
        else:
            print("    K loop: not found (fully unrolled?)")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("build")
    b.add_argument("mx_opt")
    b.add_argument("out_dir")
    c = sub.add_parser("count")
    c.add_argument("out_dir")
    c.add_argument("--cuobjdump", default="cuobjdump")
    c.add_argument("--sass-dir", default=None,
                   help="read LABEL.sass from here when present, else "
                        "disassemble and write it there")
    args = parser.parse_args()
    if args.mode == "build":
        build(args.mx_opt, args.out_dir)
    else:
        count(args.out_dir, args.cuobjdump, args.sass_dir)


if __name__ == "__main__":
    main()
