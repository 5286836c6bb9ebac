#!/usr/bin/env python3
"""Builds, on a machine with ptxas (no GPU, no disassembler needed), the
cubins that count_sass.py disassembles on a machine with cuobjdump: the SASS
instructions per 8 values of the two MXFP4 -> bf16 decodes for sm_100a and
sm_120a (and sm_90a for the Hopper decode, as the known point):

  * native: the Blackwell dequantization kernel's decode
    (BlackwellDequantizeKernel.cpp: cvt.rn.f16x2.e2m1x2, f16 -> bf16 by a
    shift, cvt.rn.bf16x2.ue8m0x2 for the scales);
  * bit trick: seed 000's Hopper decode (HopperDequantizeKernel.cpp) compiled
    for the same chip.

As bench/gpu/count_dequant_sass.py does for sm_90a, the pieces are lifted
from the PTX our compiler generates (the inline-asm blocks), put COPIES
times into a microkernel that loads their inputs and stores their outputs,
and compiled with and without the piece: the difference / COPIES is the
piece's count, without addresses, loads and stores. Also the whole
generated kernels, for their static totals.

  make_sass_probes.py MX_OPT OUT_DIR [--ptxas PTXAS]
writes OUT_DIR/*.cubin and OUT_DIR/manifest.txt
  (label chip per with.cubin without.cubin | total label chip kernel.cubin)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import count_dequant_sass as hopper  # noqa: E402

COPIES = hopper.COPIES
CHIPS = {"sm_100a": "8.6", "sm_120a": "8.7", "sm_90a": "8.0"}

HOPPER_TYPE = ("!microscale.qtensor<512x1024, mxfp4, axis = 0, values = "
               "#microscale.hopper_value<mx_axis = -2, mma_version = 3>, "
               "scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>")
NATIVE_TYPE = ("!microscale.qtensor<1024x512, mxfp4, axis = 0, values = "
               "#microscale.blackwell_value, scales = #microscale.blackwell_scale>")


def generate(mx_opt, qtype, chip, fmt, work):
    src = os.path.join(work, "k.mlir")
    with open(src, "w") as f:
        f.write("func.func @dq(%%v: memref<?xi8>, %%s: memref<?xi8>, %%o: memref<?xbf16>) {\n"
                "  microscale.dequantize_storage %%v, %%s into %%o : %s, memref<?xi8>, "
                "memref<?xi8>, memref<?xbf16>\n  return\n}\n" % qtype)
    lowered = os.path.join(work, "k.lowered.mlir")
    toolkit = " toolkit=/usr/local/cuda" if fmt == "bin" else ""
    with open(lowered, "w") as f:
        subprocess.run([mx_opt, src, "--microscale-gpu-to-ptx=chip=%s format=%s%s"
                        % (chip, fmt, toolkit)], check=True, stdout=f)
    out = os.path.join(work, "extracted")
    subprocess.run([sys.executable, os.path.join(HERE, "../../../tools/scripts/extract-ptx.py"),
                    lowered, out], check=True)
    path = os.path.join(out, "microscale_kernels." + ("ptx" if fmt == "isa" else "cubin"))
    return open(path, "rb").read()


def retarget(ptx, chip):
    return (ptx.replace(".version 8.0", ".version " + CHIPS[chip])
               .replace(".target sm_90a", ".target " + chip))


def native_blocks(ptx):
    """(folded decode, exact decode, folded scale, exact scale) asm blocks."""
    _, blocks = hopper.asm_blocks(ptx)
    decode = [b for b in blocks if "e2m1x2" in b[2]]
    scale = [b for b in blocks if "ue8m0x2" in b[2]]
    pick = lambda bs, exact: next(b for b in bs if ("bias" in b[2]) == exact)
    return (pick(decode, False), pick(decode, True),
            next(b for b in scale if "mul.rn" in b[2]),
            next(b for b in scale if "mul.rn" not in b[2]))


def native_decode_kernel(text, chip, with_piece):
    """COPIES native decodes: each loads (word, scale pair) and stores its
    four bf16x2 results."""
    m = re.search(r"mov\.b32 \{b0, b1, b2, b3\}, (%r\d+);", text)
    word = m.group(1)
    outs = re.findall(r"or\.b32 (%r\d+), t, h;", text)
    scale = re.findall(r"mul\.rn\.bf16x2 %r\d+, %r\d+, (%r\d+);", text)[-1]
    body = []
    for c in range(COPIES):
        w, s = "%%x%d" % (16 * c), "%%x%d" % (16 * c + 1)
        o = ["%%x%d" % (16 * c + 4 + i) for i in range(4)]
        body.append("ld.global.v2.u32 {%s, %s}, [%%a0+%d];" % (w, s, 8 * c))
        if with_piece:
            mapping = {word: w, scale: s}
            mapping.update({r: o[i] for i, r in enumerate(outs)})
            body.append(hopper.rename(text, mapping))
        else:
            for i in range(4):
                body.append("mov.b32 %s, %s;" % (o[i], [w, s, w, s][i]))
        for i in range(4):
            body.append("st.global.u32 [%%a1+%d], %s;" % (16 * c + 4 * i, o[i]))
    return retarget(hopper.kernel("\n".join(body)), chip)


def native_scale_kernel(text, chip, with_piece):
    """COPIES scale-pair upcasts: two codes (one b16) -> two bf16x2."""
    m = re.search(r"cvt\.rn\.bf16x2\.ue8m0x2 p, (%rs\d+);", text)
    codes = m.group(1)
    outs = re.findall(r"prmt\.b32 (%r\d+), p", text)
    body = []
    for c in range(COPIES):
        h = "%%h%d" % c
        o = ["%%x%d" % (16 * c + i) for i in range(2)]
        body.append("ld.global.u16 %s, [%%a0+%d];" % (h, 2 * c))
        if with_piece:
            mapping = {codes: h, outs[0]: o[0], outs[1]: o[1]}
            body.append(hopper.rename(text, mapping))
        else:
            body.append("cvt.u32.u16 %s, %s;" % (o[0], h))
            body.append("mov.b32 %s, %s;" % (o[1], o[0]))
        for i in range(2):
            body.append("st.global.u32 [%%a1+%d], %s;" % (8 * c + 4 * i, o[i]))
    return retarget(hopper.kernel("\n".join(body)), chip)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mx_opt")
    parser.add_argument("out_dir")
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = []

    def assemble(name, ptx, chip):
        path = os.path.join(args.out_dir, name)
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(ptx)
        subprocess.run([args.ptxas, "-arch=" + chip, "-O3", f.name, "-o", path], check=True)
        os.unlink(f.name)
        return name

    def probe(label, chip, per, with_ptx, without_ptx):
        base = re.sub(r"\W+", "-", label).strip("-") + "." + chip
        manifest.append("probe\t%s\t%s\t%s\t%s\t%s" % (
            label, chip, per, assemble(base + ".cubin", with_ptx, chip),
            assemble(base + ".base.cubin", without_ptx, chip)))

    with tempfile.TemporaryDirectory() as work:
        for chip in ("sm_100a", "sm_120a", "sm_90a"):
            hptx = generate(args.mx_opt, HOPPER_TYPE, chip, "isa", work).decode()
            lines, blocks = hopper.asm_blocks(hptx)
            folded = [b for b in blocks if "bias" not in b[2]][0]
            exact = [b for b in blocks if "bias" in b[2]][0]
            for label, block, drop in (
                    ("bit trick: decode + scale, folded", folded, False),
                    ("bit trick: decode + scale, exact", exact, False)):
                probe(label, chip, "8 values",
                      retarget(hopper.decode_kernel(block[2], drop, True), chip),
                      retarget(hopper.decode_kernel(block[2], drop, False), chip))
            _, even, _, _, _ = hopper.block_operands(folded[2])
            slice_lines, leaves = hopper.upcast_slice(lines, folded[0], even)
            probe("bit trick: scale upcast, folded", chip, "scale",
                  retarget(hopper.upcast_kernel(slice_lines, leaves, even, True), chip),
                  retarget(hopper.upcast_kernel(slice_lines, leaves, even, False), chip))
            with open(os.path.join(args.out_dir, "hopper.%s.cubin" % chip), "wb") as f:
                f.write(generate(args.mx_opt, HOPPER_TYPE, chip, "bin", work))
            manifest.append("total\tHopper-layout kernel (bit trick)\t%s\thopper.%s.cubin"
                            % (chip, chip))
            if chip == "sm_90a":
                continue
            nptx = generate(args.mx_opt, NATIVE_TYPE, chip, "isa", work).decode()
            nfold, nexact, sfold, sexact = native_blocks(nptx)
            probe("native: decode + scale, folded", chip, "8 values",
                  native_decode_kernel(nfold[2], chip, True),
                  native_decode_kernel(nfold[2], chip, False))
            probe("native: decode + scale, exact", chip, "8 values",
                  native_decode_kernel(nexact[2], chip, True),
                  native_decode_kernel(nexact[2], chip, False))
            probe("native: scale pair upcast, folded (2 scales)", chip, "2 scales",
                  native_scale_kernel(sfold[2], chip, True),
                  native_scale_kernel(sfold[2], chip, False))
            probe("native: scale pair upcast, exact (2 scales)", chip, "2 scales",
                  native_scale_kernel(sexact[2], chip, True),
                  native_scale_kernel(sexact[2], chip, False))
            with open(os.path.join(args.out_dir, "native.%s.cubin" % chip), "wb") as f:
                f.write(generate(args.mx_opt, NATIVE_TYPE, chip, "bin", work))
            manifest.append("total\tBlackwell-layout kernel (native)\t%s\tnative.%s.cubin"
                            % (chip, chip))
    with open(os.path.join(args.out_dir, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print("%d entries in %s" % (len(manifest), args.out_dir))


if __name__ == "__main__":
    main()
