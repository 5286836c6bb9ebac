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
  scaled_matmul_sass.py count OUT_DIR --sass-dir D --offline
                                               # anywhere: re-reads D/LABEL.sass
                                               # saved by a run above (checked
                                               # against the cubin's code),
                                               # skips kernels without one

`count` prints, per kernel, the static SASS count, the block-scaled MMAs in
it (sm_120a: OMMA; sm_100a: the UTC*MMA that tcgen05.mma becomes), and the
SASS of the K loop's body per K step of 64 (the loop between its label and
the backward branch, divided by the K steps it covers: its MMAs / the
activation tiles per warp; one tcgen05 MMA is one K step of the whole
CTA), with the body's mix and its address range. The K loop is the
innermost natural loop of the control-flow graph that holds an MMA and no
EXIT, other than ptxas's ELECT / BRA.U.ANY issue loops (see find_k_loop);
the mbarrier retry paths that ptxas places after EXIT and that branch
back into the kernel are not loops. The sm_100a K loop is what every
thread runs per chunk (its copies, the barrier, the mbarrier wait) plus thread 0's
tcgen05.cp / MMA / commit; it is counted per thread, not per warp.
kind::mxf8f6f4's MMAs are K = 32: its cases count 2 "tiles" so that a K
step is still 64 values.
"""
import argparse
import os
import re
import shutil
import struct
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
# cuobjdump's encoding words, two 64-bit words per sm_90+ instruction.
ENCODING = re.compile(r"/\*\s*0x([0-9a-f]{16})\s*\*/")


def is_nop(op):
    return op.split(".")[0] == "NOP"


def successors(ops, i):
    """Control-flow successors (indices into ops) of instruction i. A BRA is
    conditional when guarded (@P0, @!UP1; not @PT) or when it takes a
    predicate operand (BRA.U UP0, 0x1e0); EXIT likewise; RET and an
    unconditional BRA / EXIT end a path. CALL returns to the next
    instruction (the callees here are trap stubs)."""
    _, guard, op, args = ops[i]
    conditional = (guard is not None and guard.strip().lstrip("@!") != "PT") \
        or re.match(r"\s*!?U?P\d", args) is not None
    nxt = [i + 1] if i + 1 < len(ops) else []
    name = op.split(".")[0]
    if name == "BRA":
        target = re.search(r"0x([0-9a-f]+)", args)
        index = ops.index_of.get(int(target.group(1), 16)) if target else None
        out = [index] if index is not None else []
        return out + nxt if conditional else out
    if name in ("EXIT", "RET", "KILL"):
        return nxt if conditional else []
    return nxt


class Ops(list):
    pass


def natural_loops(ops):
    """Back edges (latch -> header, the header dominating the latch) of the
    control-flow graph from the first instruction, each with its natural
    loop (the set of instruction indices)."""
    n = len(ops)
    if not n:
        return []
    succ = [successors(ops, i) for i in range(n)]
    # Reverse postorder of what is reachable from the entry.
    order, seen, stack = [], {0}, [(0, iter(succ[0]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            order.append(node)
            stack.pop()
    order.reverse()
    rpo = {v: k for k, v in enumerate(order)}
    pred = {v: [] for v in order}
    for v in order:
        for s in succ[v]:
            pred[s].append(v)
    # Cooper, Harvey & Kennedy's iterative dominators.
    idom = {0: 0}
    changed = True
    while changed:
        changed = False
        for v in order[1:]:
            new = None
            for p in pred[v]:
                if p in idom:
                    if new is None:
                        new = p
                    else:
                        a, b = p, new
                        while a != b:
                            while rpo[a] > rpo[b]:
                                a = idom[a]
                            while rpo[b] > rpo[a]:
                                b = idom[b]
                        new = a
            if idom.get(v) != new:
                idom[v] = new
                changed = True

    def dominates(h, v):
        while v != h and v != 0:
            v = idom[v]
        return v == h

    loops = []
    for latch in order:
        for header in succ[latch]:
            if dominates(header, latch):
                body, work = {header, latch}, [latch]
                while work:
                    for p in pred[work.pop()]:
                        if p not in body:
                            body.add(p)
                            work.append(p)
                loops.append((header, latch, body))
    return loops


def is_issue_loop(ops, latch, body):
    """ptxas's ELECT / BRA.U.ANY loop around one instruction with uniform
    operands (a tcgen05 op or a bulk copy): it runs once per active lane
    and is not the K loop, even when what it wraps is an MMA."""
    if ops[latch][2].startswith("BRA.U.ANY"):
        return True
    names = [ops[i][2] for i in body]
    return (any(o.startswith("ELECT") for o in names)
            and sum(1 for o in names if o.startswith(("UTC", "UBLKCP"))) <= 1)


def find_k_loop(ops):
    """The K loop: the innermost loop of the control-flow graph (a natural
    loop: its header dominates the backward branch) that holds an MMA,
    holds no EXIT, and is not an ELECT issue loop. Its body is counted as
    the address range from the header to the backward branch, as laid out
    (the mbarrier waits' retry paths that ptxas places after the kernel's
    end belong to the natural loop but are not counted). Returns
    (counted SASS, header index, latch index, out-of-line SASS) or None."""
    best = None
    for header, latch, body in natural_loops(ops):
        if latch < header or is_issue_loop(ops, latch, body):
            continue
        span = range(header, latch + 1)
        if not any(is_mma(ops[i][2]) for i in span):
            continue
        if any(ops[i][2].split(".")[0] == "EXIT" for i in set(span) | body):
            continue
        size = sum(1 for i in span if not is_nop(ops[i][2]))
        if best is None or size < best[0]:
            outside = sum(1 for i in body
                          if not header <= i <= latch and not is_nop(ops[i][2]))
            best = (size, header, latch, outside)
    return best


def parse_ops(text):
    ops = Ops((int(m.group(1), 16), m.group(2), m.group(3), m.group(4))
              for m in LINE.finditer(text))
    ops.index_of = {a: i for i, (a, _, _, _) in enumerate(ops)}
    return ops


def sass_matches_cubin(sass, cubin_path):
    """Whether a saved disassembly's encodings are the cubin's code, i.e.
    the .sass is not stale. None when it cannot tell."""
    words = [int(w, 16) for w in ENCODING.findall(sass)]
    if not words or not os.path.exists(cubin_path):
        return None
    code = b"".join(struct.pack("<Q", w) for w in words)
    with open(cubin_path, "rb") as f:
        return code in f.read()


def count(out_dir, cuobjdump, sass_dir, offline=False):
    have_cuobjdump = not offline and (shutil.which(cuobjdump) or
                                      os.path.exists(cuobjdump))
    for line in open(os.path.join(out_dir, "manifest.txt")):
        label, tiles, cubin = line.rstrip("\n").split("\t")
        dumped = os.path.join(sass_dir or out_dir, label + ".sass")
        sass = None
        if sass_dir and os.path.exists(dumped):
            sass = open(dumped).read()
            if sass_matches_cubin(sass, os.path.join(out_dir, cubin)) is False:
                sass = None
                if not have_cuobjdump:
                    print("%-30s saved %s is not this cubin's code (stale) "
                          "and no cuobjdump: skipped" % (label, dumped))
                    continue
        if sass is None and not have_cuobjdump:
            print("%-30s no saved disassembly in %s and no cuobjdump: "
                  "skipped" % (label, sass_dir))
            continue
        if sass is None:
            sass = subprocess.run([cuobjdump, "--dump-sass",
                                   os.path.join(out_dir, cubin)],
                                  check=True, capture_output=True,
                                  text=True).stdout
            if sass_dir:
                with open(dumped, "w") as f:
                    f.write(sass)
        # Each function's addresses start at 0: one control-flow graph each.
        functions = [parse_ops(text)
                     for text in re.split(r"\n\s*Function : ", sass)]
        body = [op for ops in functions for _, _, op, _ in ops
                if not is_nop(op)]
        ommas = sum(1 for op in body if is_mma(op))
        print("%-30s %5d SASS static, %3d MMA" % (label, len(body), ommas))
        found = min(((loop, ops) for ops in functions
                     for loop in [find_k_loop(ops)] if loop),
                    key=lambda lo: lo[0][0], default=None)
        if found:
            (_, header, latch, outside), ops = found
            loop = [ops[i][2] for i in range(header, latch + 1)
                    if not is_nop(ops[i][2])]
            steps = sum(1 for o in loop if is_mma(o)) / int(tiles)
            mix = {}
            for o in loop:
                key = o.split(".")[0]
                mix[key] = mix.get(key, 0) + 1
            print("    K loop: %d SASS for %g K steps = %.1f per K step of 64; mix %s"
                  % (len(loop), steps, len(loop) / steps,
                     ", ".join("%s %d" % kv for kv in
                               sorted(mix.items(), key=lambda kv: -kv[1]))))
            print("    K loop at /*%04x*/ .. /*%04x*/ (%s back to the first)%s"
                  % (ops[header][0], ops[latch][0],
                     (ops[latch][1] or "") + ops[latch][2],
                     "; not counted: %d out-of-line SASS of its mbarrier "
                     "retry paths" % outside if outside else ""))
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
    c.add_argument("--offline", action="store_true",
                   help="never run cuobjdump: count only the kernels whose "
                        "LABEL.sass is in --sass-dir")
    args = parser.parse_args()
    if args.mode == "build":
        build(args.mx_opt, args.out_dir)
    else:
        count(args.out_dir, args.cuobjdump, args.sass_dir, args.offline)


if __name__ == "__main__":
    main()
