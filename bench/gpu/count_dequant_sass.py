#!/usr/bin/env python3
"""Counts the SASS data instructions of the generated Hopper dequantization
per word of 8 values (decode alone, decode + scale) and per scale (the
E8M0 code -> bf16x2 scale upcast), on a machine with ptxas and cuobjdump.

The counts come from the PTX our compiler generated (make_dequant_kernels.sh
writes it next to the cubins), not from a hand-written copy:
  * decode sequences: the inline-asm blocks of the generated kernel, the
    folded one (no 2^126 multiply) and the exact one;
  * scale upcast: the instructions that compute each block's scale operand
    from the loaded code byte (a backward slice of the generated PTX).
Each piece is put into a microkernel that loads its inputs from global
memory and stores its outputs, 4 copies per kernel; the count is that
kernel's SASS minus the SASS of the same loads and stores without the
piece, divided by 4. So address arithmetic, loads and stores are not
counted, only the instructions that turn bits into values.

  count_dequant_sass.py KERNEL_DIR [--ptxas PTXAS] [--cuobjdump CUOBJDUMP]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

COPIES = 8

INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);", re.M)
# A constant put into a register (MOV of an immediate, or the HFMA2 / IMAD
# forms ptxas uses for it): done once per kernel and shared by every use, so
# it is reported apart from the per-value counts.
CONSTANT = re.compile(r"^(MOV(\.U32)?\s+R\d+, (0x[0-9a-f]+|-?\d+)\s*$"
                      r"|HFMA2\.MMA\s+R\d+, -RZ, RZ, "
                      r"|IMAD\.MOV\.U32\s+R\d+, RZ, RZ, (0x[0-9a-f]+|-?\d+)\s*$)")


def asm_blocks(ptx):
    """(start line, end line, text) of every inline-asm block."""
    lines = ptx.split("\n")
    blocks, start = [], None
    for i, line in enumerate(lines):
        if "// begin inline asm" in line:
            start = i
        elif "// end inline asm" in line and start is not None:
            blocks.append((start, i, "\n".join(lines[start + 1:i])))
            start = None
    return lines, blocks


def block_operands(text):
    """The word, the two scale operands and the four outputs of a decode
    block (its operands are already registers in the generated PTX)."""
    word = re.search(r"and\.b32 (%r\d+), (%r\d+), 0x81C081C0", text).group(2)
    muls = re.findall(r"mul\.rn\.bf16x2 (%r\d+), (%r\d+), (%r\d+);", text)
    scale_muls = [m for m in muls if m[2] != "bias"][-4:]
    outputs = [m[0] for m in scale_muls]
    even, odd = scale_muls[0][2], scale_muls[1][2]
    return word, even, odd, outputs, scale_muls


def rename(text, mapping):
    return re.sub(r"%(r|rs|p)\d+\b", lambda m: mapping.get(m.group(0), m.group(0)), text)


def kernel(body, regs=256):
    return """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 dst) {
.reg .b32 %%x<%d>;
.reg .b16 %%h<%d>;
.reg .pred %%q<%d>;
.reg .b64 %%a<4>;
ld.param.u64 %%a0, [src];
ld.param.u64 %%a1, [dst];
cvta.to.global.u64 %%a0, %%a0;
cvta.to.global.u64 %%a1, %%a1;
%s
ret;
}
""" % (regs, regs, regs, body)


def decode_kernel(block_text, drop_scale, with_piece):
    """COPIES decode blocks: each loads (word, even scale, odd scale) and
    stores its four bf16x2 results."""
    word, even, odd, outputs, scale_muls = block_operands(block_text)
    body = []
    for c in range(COPIES):
        w, e, o = "%%x%d" % (16 * c), "%%x%d" % (16 * c + 1), "%%x%d" % (16 * c + 2)
        pad = "%%x%d" % (16 * c + 3)
        outs = ["%%x%d" % (16 * c + 4 + i) for i in range(4)]
        body.append("ld.global.v4.u32 {%s, %s, %s, %s}, [%%a0+%d];" % (w, e, o, pad, 16 * c))
        if with_piece:
            text = block_text
            if drop_scale:
                for line in scale_muls:
                    text = text.replace("mul.rn.bf16x2 %s, %s, %s;" % line, "")
            mapping = {word: w, even: e, odd: o}
            mapping.update({r: outs[i] for i, r in enumerate(outputs)})
            body.append(rename(text, mapping))
            if drop_scale:
                # The scales stay live (stored below) so that only the
                # multiplies are left out.
                body.append("st.global.u32 [%%a1+%d], %s;" % (1024 + 8 * c, e))
                body.append("st.global.u32 [%%a1+%d], %s;" % (1028 + 8 * c, o))
        else:
            for i in range(4):
                body.append("mov.b32 %s, %s;" % (outs[i], [w, e, o, w][i]))
            if drop_scale:
                body.append("st.global.u32 [%%a1+%d], %s;" % (1024 + 8 * c, e))
                body.append("st.global.u32 [%%a1+%d], %s;" % (1028 + 8 * c, o))
        # Scalar stores: a vector store would need its registers
        # consecutive, and the moves that arranges would be counted.
        for i in range(4):
            body.append("st.global.u32 [%%a1+%d], %s;" % (16 * c + 4 * i, outs[i]))
    return kernel("\n".join(body))


def definitions(lines, end):
    """register -> (line index, line) of its last definition before `end`."""
    defs = {}
    for i in range(end):
        m = re.match(r"\s*(@!?%p\d+\s+)?([a-z][\w.]*)\s+(%\w+)\s*,", lines[i])
        if m and not m.group(2).startswith(("st.", "bra")):
            defs[m.group(3)] = (i, lines[i].strip())
    return defs


def upcast_slice(lines, block_start, register):
    """The generated instructions computing `register` from loaded bytes:
    (instructions in program order, the loaded registers)."""
    defs = definitions(lines, block_start)
    needed, seen, leaves = [register], set(), []
    while needed:
        r = needed.pop()
        if r in seen or r not in defs:
            continue
        seen.add(r)
        index, line = defs[r]
        if line.startswith("ld."):
            leaves.append((r, line))
            continue
        srcs = re.findall(r"%(?:rs?|p)\d+", line.split(",", 1)[1])
        needed += srcs
    slice_lines = sorted(defs[r] for r in seen if not defs[r][1].startswith("ld."))
    return [l for _, l in slice_lines], leaves


def upcast_kernel(slice_lines, leaves, result, with_piece):
    body = []
    for c in range(COPIES):
        mapping = {}
        next_b32, next_b16, next_p = 32 * c, 32 * c, 32 * c
        for r, line in leaves:
            if r.startswith("%rs"):
                mapping[r] = "%%h%d" % next_b16
                next_b16 += 1
                body.append("ld.global.u8 %s, [%%a0+%d];" % (mapping[r], 8 * c + len(mapping)))
            else:
                mapping[r] = "%%x%d" % next_b32
                next_b32 += 1
                body.append("ld.global.u8 %s, [%%a0+%d];" % (mapping[r], 8 * c + len(mapping)))
        out = "%%x%d" % (32 * c + 31)
        if with_piece:
            for line in slice_lines:
                for reg in re.findall(r"%(?:rs?|p)\d+", line):
                    if reg not in mapping:
                        if reg.startswith("%rs"):
                            mapping[reg] = "%%h%d" % next_b16
                            next_b16 += 1
                        elif reg.startswith("%p"):
                            mapping[reg] = "%%q%d" % next_p
                            next_p += 1
                        else:
                            mapping[reg] = "%%x%d" % next_b32
                            next_b32 += 1
                body.append(rename(line, mapping))
            body.append("mov.b32 %s, %s;" % (out, mapping[result]))
        else:
            leaf = mapping[leaves[0][0]]
            if leaf.startswith("%h"):
                body.append("cvt.u32.u16 %s, %s;" % (out, leaf))
            else:
                body.append("mov.b32 %s, %s;" % (out, leaf))
        body.append("st.global.u32 [%%a1+%d], %s;" % (4 * c, out))
    return kernel("\n".join(body))


def sass_count(ptx, tools, work, name):
    ptx_path = os.path.join(work, name + ".ptx")
    cubin = os.path.join(work, name + ".cubin")
    with open(ptx_path, "w") as f:
        f.write(ptx)
    subprocess.run([tools.ptxas, "-arch=sm_90a", "-O3", ptx_path, "-o", cubin], check=True)
    sass = subprocess.run([tools.cuobjdump, "--dump-sass", cubin], check=True,
                          capture_output=True, text=True).stdout
    counted = []
    for m in INSTRUCTION.finditer(sass):
        op = m.group(2).split(".")[0]
        if op in ("NOP", "EXIT", "BRA"):
            continue
        text = (m.group(2) + " " + m.group(3).strip()).strip()
        counted.append("constant" if CONSTANT.match(text) else op)
    return len(counted), counted


def difference(ptx_with, ptx_without, tools, work, name):
    n1, ops1 = sass_count(ptx_with, tools, work, name)
    n0, ops0 = sass_count(ptx_without, tools, work, name + "-baseline")
    mix = {}
    for op in ops1:
        mix[op] = mix.get(op, 0) + 1
    for op in ops0:
        mix[op] = mix.get(op, 0) - 1
    constants = mix.pop("constant", 0)
    mix = {k: v / COPIES for k, v in mix.items() if v}
    if constants:
        mix["+ constants once per kernel"] = constants
    return (n1 - n0 - constants) / COPIES, mix


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel_dir")
    parser.add_argument("--ptxas", default="ptxas")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    parser.add_argument("--kernel", default="weight",
                        help="generated kernel whose PTX is read (folded, with the exact fallback)")
    tools = parser.parse_args()
    ptx = open(os.path.join(tools.kernel_dir, tools.kernel + ".ptx")).read()
    lines, blocks = asm_blocks(ptx)
    folded = [b for b in blocks if "bias" not in b[2]]
    exact = [b for b in blocks if "bias" in b[2]]
    if not folded or not exact:
        sys.exit("count_dequant_sass.py: %s.ptx has no folded and exact decode blocks"
                 % tools.kernel)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        def measure(label, with_piece, without_piece, per):
            count, mix = difference(with_piece, without_piece, tools, work,
                                    re.sub(r"\W+", "-", label))
            rows.append((label, count, per, mix))

        measure("decode alone (exact: bias multiply, no scale)",
                decode_kernel(exact[0][2], True, True), decode_kernel(exact[0][2], True, False),
                "8 values")
        measure("decode + scale, folded (codes <= 128)",
                decode_kernel(folded[0][2], False, True), decode_kernel(folded[0][2], False, False),
                "8 values")
        measure("decode + scale, exact (bias, then scale)",
                decode_kernel(exact[0][2], False, True), decode_kernel(exact[0][2], False, False),
                "8 values")
        for label, block in (("scale upcast, folded: 2^(s-1) in both lanes", folded[0]),
                             ("scale upcast, exact: 2^(s-127), code 0 fixed", exact[0])):
            _, even, _, _, _ = block_operands(block[2])
            slice_lines, leaves = upcast_slice(lines, block[0], even)
            if len(leaves) != 1:
                sys.exit("count_dequant_sass.py: the scale operand %s does not come from one "
                         "loaded code (%d loads)" % (even, len(leaves)))
            measure(label, upcast_kernel(slice_lines, leaves, even, True),
                    upcast_kernel(slice_lines, leaves, even, False), "scale")
            rows[-1] = rows[-1] + (slice_lines,)
    print("SASS data instructions (sm_90a) of the generated %s kernel's pieces:" % tools.kernel)
    for row in rows:
        label, count, per, mix = row[:4]
        detail = ", ".join("%s %g" % (k, v) for k, v in sorted(mix.items(), key=lambda kv: -kv[1]))
        print("  %-48s %5.2f per %s  (%s)" % (label, count, per, detail))
        if len(row) > 4:
            print("      from the generated PTX: " + "; ".join(l.rstrip(";").replace("\t", " ") for l in row[4]))


if __name__ == "__main__":
    main()
