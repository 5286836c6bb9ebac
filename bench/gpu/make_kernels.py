#!/usr/bin/env python3
"""Generates the GPU conversion kernels of the benchmark with our compiler.

For each case it writes a function with one microscale.convert_storage, runs
`mx-opt --microscale-gpu-to-ptx{chip=...}`, extracts the PTX and records the
case in a manifest that bench/gpu/gpu-convert-bench.cpp reads on the GPU
machine (which has no MLIR).

  make_kernels.py MX_OPT OUT_DIR [--chip sm_90a]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "scripts"))
import importlib.util

spec = importlib.util.spec_from_file_location(
    "extract_ptx", os.path.join(HERE, "..", "..", "tools", "scripts", "extract-ptx.py"))
extract = importlib.util.module_from_spec(spec)
spec.loader.exec_module(extract)

# Layout specs (shared with the C++ side) -> MLIR attributes.
def attr(spec):
    parts = spec.split(":")
    kind = parts[0]
    if kind == "strided":
        return "#microscale.strided<major_dim = %s>" % parts[1]
    if kind == "hopper_value":
        return "#microscale.hopper_value<mx_axis = %s, mma_version = %s>" % (parts[1], parts[2])
    if kind == "hopper_scale":
        return "#microscale.hopper_scale<mx_axis = %s, num_warps = %s>" % (parts[1], parts[2])
    if kind == "blackwell_shuffled":
        return "#microscale.blackwell_shuffled_value<block_k = %s, block_n = %s>" % (parts[1], parts[2])
    return "#microscale." + kind


def required_axis(spec, rank):
    parts = spec.split(":")
    if parts[0] in ("hopper_value", "hopper_scale"):
        return rank + int(parts[1])
    if parts[0] in ("blackwell_value", "blackwell_shuffled", "blackwell_scale", "cdna4_scale"):
        return rank - 2
    return None


VALUES_K = ["hopper_value:-2:3", "hopper_value:-2:2", "blackwell_value",
            "blackwell_shuffled:128:256", "strided:-2"]
SCALES_K = ["hopper_scale:-2:8", "hopper_scale:-2:4", "blackwell_scale", "cdna4_scale"]


VALUES_ALL = ["strided:-1"] + VALUES_K + ["blackwell_shuffled:256:128"]
SCALES_ALL = ["strided:-1", "strided:-2"] + SCALES_K


def all_pairs():
    """Every ordered pair of weight layouts, values and scales (for the
    tests that assemble the PTX of every pair)."""
    last_axis = ["strided:-1", "hopper_value:-1:3", "hopper_value:-1:2"]
    def pairs(part, shape, layouts):
        return [(part, shape, a, b, True) for a in layouts for b in layouts]
    # Padded shapes, then unpadded ones: the staged kernel (shared-memory
    # tiles) where it applies.
    return (pairs("values", [2, 64, 258], VALUES_ALL)
            + pairs("scales", [2, 7, 200], SCALES_ALL)
            + pairs("values", [2, 34, 96], last_axis)
            + pairs("values", [2, 256, 512], VALUES_ALL)
            + pairs("scales", [2, 256, 512], SCALES_ALL)
            + pairs("values", [2, 256, 512], last_axis))


def cases():
    # (part, shape, from, to, check[, units per thread])
    out = []
    for shape in ([2, 64, 128], [130, 66], [2, 3, 66, 34]):
        for layout in VALUES_K:
            out.append(("values", shape, "strided:-1", layout, True))
            out.append(("values", shape, layout, "strided:-1", True))
    out.append(("values", [2, 64, 128], "hopper_value:-2:3", "blackwell_shuffled:128:256", True))
    out.append(("values", [130, 66], "blackwell_value", "hopper_value:-2:2", True))
    for shape in ([2, 34, 96], [130, 64]):
        for layout in ("hopper_value:-1:3", "hopper_value:-1:2"):
            out.append(("values", shape, "strided:-1", layout, True))
            out.append(("values", shape, layout, "strided:-1", True))
    for shape in ([2, 64, 128], [2, 7, 200]):
        for layout in SCALES_K:
            out.append(("scales", shape, "strided:-1", layout, True))
            out.append(("scales", shape, layout, "strided:-1", True))
    # The benchmark shapes: [16, 4096, 4096] FP4 (128 MiB) and its scales.
    big = [16, 4096, 4096]
    # Unpadded shapes that the staged kernel takes: every pair of value
    # layouts, and every value layout to and from the canonical form on a
    # second shape with pairs of non-canonical layouts.
    for a in VALUES_ALL:
        for b in VALUES_ALL:
            if a != b:
                out.append(("values", [2, 256, 512], a, b, True))
    for a in SCALES_ALL:
        for b in SCALES_ALL:
            if a != b:
                out.append(("scales", [2, 256, 512], a, b, True))
    for shape in ([3, 512, 256],):
        for layout in VALUES_K + ["blackwell_shuffled:256:128"]:
            out.append(("values", shape, "strided:-1", layout, True))
            out.append(("values", shape, layout, "strided:-1", True))
        out.append(("values", shape, "hopper_value:-2:3", "blackwell_shuffled:128:256", True))
        out.append(("values", shape, "blackwell_shuffled:128:256", "hopper_value:-2:2", True))
        out.append(("values", shape, "blackwell_value", "hopper_value:-2:3", True))
    for shape in ([2, 256, 512], [4, 512, 128]):
        for layout in ("hopper_value:-1:3", "hopper_value:-1:2"):
            out.append(("values", shape, "strided:-1", layout, True))
            out.append(("values", shape, layout, "strided:-1", True))
    # The generic per-unit kernel (stage-conversions=false, column-major)
    # on every checked case too: the staged kernel takes the unpadded value
    # conversions, the generic one all.
    out += [c[:5] + (4, "column-major", False) for c in list(out) if c[4]]
    for per_thread, traversal, staged, extra in (
            (4, "row-major", True, ""),
            (4, "row-major", True, "conversion-tiles-per-block=2"),
            (4, "row-major", True, "conversion-tiles-per-block=4"),
            (4, "row-major", False, ""),
            (1, "column-major", False, ""),
            (4, "column-major", False, "")):
        for a, b in (("strided:-1", "hopper_value:-2:3"), ("hopper_value:-2:3", "strided:-1"),
                     ("strided:-1", "hopper_value:-1:3"), ("hopper_value:-1:3", "strided:-1"),
                     ("strided:-1", "blackwell_shuffled:128:256"),
                     ("blackwell_shuffled:128:256", "strided:-1")):
            out.append(("values", big, a, b, False, per_thread, traversal, staged,
                        extra))
        for layout in ("hopper_scale:-2:8", "blackwell_scale"):
            for a, b in (("strided:-1", layout), (layout, "strided:-1")):
                out.append(("scales", [16, 128, 4096], a, b, False,
                            per_thread, traversal, staged, extra))
    return out


def unseen_shape_cases():
    """Shapes no issue names: a DeepSeek-V3-sized MoE expert (hidden 7168,
    expert width 2048) in both orientations, 8 experts of values (K = 7168
    and K = 2048) and 32 of scales (224 and 64 scale rows); the scales of
    Mixtral-8x7B's down projections (K = 14336: 448 rows, N = 4096) and of
    4 layers of Llama-3-70B's (K = 28672: 896 rows, N = 8192), whose tiles
    cut K into spans, and of 2 layers of Llama-3.1-405B's (K = 53248: 1664
    rows, N = 16384; 27 MB a layer, above the byte tile plan's 16 MiB per
    batch). Every ordered pair of the K-major value layouts and
    of the scale layouts, timed; the scale pairs also checked byte for byte
    on [2, 224, 600] (cut K, and an edge tile in N)."""
    layouts = ["strided:-1", "strided:-2", "hopper_value:-2:3", "blackwell_value",
               "blackwell_shuffled:128:256"]
    scales = ["strided:-1", "strided:-2", "hopper_scale:-2:8", "blackwell_scale"]
    out = []
    for shape in ([8, 7168, 2048], [8, 2048, 7168]):
        for a in layouts:
            for b in layouts:
                if a != b:
                    out.append(("values", shape, a, b, False))
    for shape in ([32, 224, 2048], [32, 64, 7168], [8, 448, 4096], [4, 896, 8192],
                  [2, 1664, 16384]):
        for a in scales:
            for b in scales:
                if a != b:
                    out.append(("scales", shape, a, b, False))
    for a in scales:
        for b in scales:
            if a != b:
                out.append(("scales", [2, 224, 600], a, b, True))
    return out


def real_shape_cases():
    """Real models' shapes, whose dims are not multiples of the layouts'
    tiles: gpt-oss (K = 2880, i.e. 90 scale blocks; N = 5760 and 2880; 32
    experts) and Qwen3-30B-A3B's expert down projection (K = 768, N = 2048,
    128 experts). Every ordered pair of the K-major value layouts and of the
    scale layouts, timed; a 2-expert gpt-oss shape checked byte for byte."""
    layouts = ["strided:-1", "strided:-2", "hopper_value:-2:3", "blackwell_value",
               "blackwell_shuffled:128:256"]
    scales = ["strided:-1", "strided:-2", "hopper_scale:-2:8", "blackwell_scale"]
    out = []
    pairs = [(a, b) for a in layouts for b in layouts if a != b]
    for a, b in pairs:
        out.append(("values", [2, 2880, 5760], a, b, True))
    for shape in ([32, 2880, 5760], [32, 2880, 2880], [128, 768, 2048]):
        for a, b in pairs:
            out.append(("values", shape, a, b, False))
    for shape in ([2, 90, 5760],):
        for a in scales:
            for b in scales:
                if a != b:
                    out.append(("scales", shape, a, b, True))
    for shape in ([32, 90, 5760], [32, 90, 2880], [128, 24, 2048]):
        for a in scales:
            for b in scales:
                if a != b:
                    out.append(("scales", shape, a, b, False))
    # The per-unit kernel on the checkpoint's own conversions, in the same
    # run: what these shapes took before the staged kernel covered them.
    for a, b in (("strided:-2", "hopper_value:-2:3"), ("hopper_value:-2:3", "strided:-2"),
                 ("strided:-2", "blackwell_shuffled:128:256"), ("strided:-2", "strided:-1")):
        out.append(("values", [32, 2880, 5760], a, b, False, 4, "column-major", False))
    return out


def real_sweep_cases():
    """The staged kernel's knobs on gpt-oss's unpadded value pairs and
    Qwen3's (for comparison): tiles converted one after the other per block
    (1, 2, 4, 8), to see what bytes in flight per block buy on rows of 1440
    and 2880 bytes."""
    out = []
    pairs = (("strided:-1", "strided:-2"), ("strided:-2", "hopper_value:-2:3"),
             ("hopper_value:-2:3", "blackwell_value"), ("blackwell_value", "strided:-2"),
             ("strided:-2", "blackwell_shuffled:128:256"))
    for shape in ([32, 2880, 5760], [128, 768, 2048]):
        for a, b in pairs:
            for tiles in (1, 2, 4, 8):
                out.append(("values", shape, a, b, False, 4, "row-major", True,
                            "conversion-tiles-per-block=%d" % tiles))
    for a, b in (("strided:-2", "hopper_scale:-2:8"), ("strided:-1", "blackwell_scale")):
        for tiles in (1, 2, 4, 8):
            out.append(("scales", [32, 90, 5760], a, b, False, 4, "row-major", True,
                        "conversion-tiles-per-block=%d" % tiles))
    return out


def scale_tile_cases():
    """The byte tile kernel on the scale shapes of real models, every pair
    checked on a 2-expert shape, timed on the full ones beside the same
    kernel with its gather on byte reads (byte-tile-word-gather=false), and
    its threads per block swept on gpt-oss's shape."""
    scales = ["strided:-1", "strided:-2", "hopper_scale:-2:8", "blackwell_scale"]
    pairs = [(a, b) for a in scales for b in scales if a != b]
    out = []
    for shape in ([2, 90, 5760], [2, 90, 320], [3, 24, 200]):
        for a, b in pairs:
            out.append(("scales", shape, a, b, True))
    for shape in ([32, 90, 5760], [32, 90, 2880], [128, 24, 2048], [64, 45, 4000]):
        for a, b in pairs:
            out.append(("scales", shape, a, b, False))
    for shape in ([32, 90, 5760], [32, 90, 2880]):
        for a, b in pairs:
            out.append(("scales", shape, a, b, False, 4, "row-major", True,
                        "byte-tile-word-gather=false"))
    for a, b in (("strided:-1", "strided:-2"), ("strided:-2", "hopper_scale:-2:8"),
                 ("hopper_scale:-2:8", "blackwell_scale")):
        for threads in (128, 512):
            out.append(("scales", [32, 90, 5760], a, b, False, 4, "row-major", True,
                        "block-size=%d" % threads))
    return out


def check_cases():
    """A small set for the checks (compute-sanitizer, streams, a second
    device): padded and unpadded shapes, staged and per-unit kernels."""
    out = [("values", [2, 64, 128], "strided:-1", "hopper_value:-2:3", True),
           ("values", [2, 64, 128], "hopper_value:-2:3", "strided:-1", True),
           ("values", [130, 66], "strided:-1", "blackwell_value", True),
           ("values", [2, 3, 66, 34], "blackwell_shuffled:128:256", "strided:-1", True),
           ("values", [2, 34, 96], "strided:-1", "hopper_value:-1:2", True),
           ("scales", [2, 7, 200], "strided:-1", "hopper_scale:-2:8", True),
           ("scales", [2, 64, 128], "blackwell_scale", "strided:-1", True),
           ("values", [2, 256, 512], "hopper_value:-2:3", "blackwell_shuffled:128:256", True),
           ("values", [2, 256, 512], "blackwell_value", "hopper_value:-2:2", True),
           ("scales", [2, 256, 512], "hopper_scale:-2:8", "cdna4_scale", True)]
    out += [c[:5] + (4, "column-major", False) for c in list(out)]
    out.append(("values", [2, 256, 512], "strided:-1", "hopper_value:-2:3", True,
                4, "row-major", True, "conversion-tiles-per-block=2"))
    out.append(("values", [2, 256, 512], "strided:-1", "hopper_value:-1:3", True,
                1, "column-major", False))
    return out


def mlir_for(part, shape, src, dst):
    rank = len(shape)
    axis = None
    for spec in (src, dst):
        a = required_axis(spec, rank)
        if a is not None:
            axis = a
    if axis is None:
        axis = rank - 2
    values_shape = list(shape)
    if part == "scales":
        values_shape[axis] *= 2
    dims = "x".join(str(d) for d in values_shape)
    fmt = "f4E2M1FN, f8E8M0FNU, block = 2"
    def qt(spec):
        if part == "values":
            return "!microscale.qtensor<%s, %s, axis = %d, values = %s>" % (dims, fmt, axis, attr(spec))
        return "!microscale.qtensor<%s, %s, axis = %d, scales = %s>" % (dims, fmt, axis, attr(spec))
    return ("func.func @convert(%%src: memref<?xi8>, %%dst: memref<?xi8>) {\n"
            "  microscale.convert_storage %s %%src, %%dst : %s -> %s, memref<?xi8>, memref<?xi8>\n"
            "  return\n}\n") % (part, qt(src), qt(dst))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mx_opt")
    parser.add_argument("out_dir")
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--format", default="isa", choices=["isa", "bin"],
                        help="PTX text (the driver compiles it at load) or "
                             "cubin (ptxas at build time)")
    parser.add_argument("--all-pairs", action="store_true",
                        help="every pair of layouts instead of the benchmark set")
    parser.add_argument("--real-shapes", action="store_true",
                        help="real models' shapes (gpt-oss, Qwen3-30B-A3B): "
                             "every pair of K-major layouts")
    parser.add_argument("--unseen-shapes", action="store_true",
                        help="shapes no issue names (a DeepSeek-V3-sized "
                             "MoE expert): every pair of K-major layouts")
    parser.add_argument("--real-sweep", action="store_true",
                        help="tiles per block on gpt-oss's and Qwen3's value pairs")
    parser.add_argument("--scale-tiles", action="store_true",
                        help="the byte tile kernel on real scale shapes, "
                             "against the kernels those took before")
    parser.add_argument("--match", default=None,
                        help="only the cases whose 'part shape from->to' "
                             "(e.g. 'values 32x2880x5760 hopper_value:-2:3->') "
                             "matches this regular expression")
    parser.add_argument("--tiling", default="",
                        help="more microscale-nvvm-set-tiling options for "
                             "every case (e.g. 'byte-tile-buffers=1')")
    parser.add_argument("--check-set", action="store_true",
                        help="the small set of the GPU checks "
                             "(run-sanitizers-on-h200.sh, stream-check)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = []
    chosen = (all_pairs() if args.all_pairs else
              real_shape_cases() if args.real_shapes else
              unseen_shape_cases() if args.unseen_shapes else
              real_sweep_cases() if args.real_sweep else
              scale_tile_cases() if args.scale_tiles else
              check_cases() if args.check_set else cases())
    if args.match:
        import re
        chosen = [c for c in chosen if re.search(
            args.match, "%s %s %s->%s" % (c[0], "x".join(map(str, c[1])), c[2], c[3]))]
    for index, case in enumerate(chosen):
        part, shape, src, dst, check = case[:5]
        per_thread = case[5] if len(case) > 5 else 4
        traversal = case[6] if len(case) > 6 else "row-major"
        staged = case[7] if len(case) > 7 else True
        extra = case[8] if len(case) > 8 else ""
        name = "case%03d" % index
        mlir = os.path.join(args.out_dir, name + ".mlir")
        with open(mlir, "w") as f:
            f.write(mlir_for(part, shape, src, dst))
        lowered = subprocess.run(
            [args.mx_opt, mlir, "--pass-pipeline=builtin.module("
             "microscale-nvvm-set-tiling{units-per-thread=%d traversal=%s "
             "stage-conversions=%d %s},"
             "microscale-gpu-to-ptx{chip=%s format=%s})"
             % (per_thread, traversal, staged, extra + " " + args.tiling,
                args.chip, args.format)],
            check=True, capture_output=True, text=True).stdout
        with open(os.path.join(args.out_dir, name + ".lowered.mlir"), "w") as f:
            f.write(lowered)
        # The launch's grid, as the compiler chose it (constants are named
        # by value: %c16 holds 16).
        import re
        grid = re.search(r"blocks in \(%c(\d+)", lowered)
        blocks = grid.group(1) if grid else "0"
        threads = re.search(r"threads in \(%c(\d+)", lowered)
        threads = threads.group(1) if threads else "256"
        # The staged kernel takes the two buffers; the per-unit one also
        # the unit range.
        launch = re.search(r"gpu\.launch_func .*? args\((.*)\)", lowered)
        kind = "staged" if launch and launch.group(1).count(" : ") == 2 else "per-unit"
        if kind == "staged" and re.search(r"_(source_chunks|dest_chunks|gather_patterns)\b", lowered):
            kind = "byte-tile"
        if kind != "per-unit" and extra:
            kind += " " + extra.replace("conversion-tiles-per-block=", "tiles=")
        extract.main.__globals__["sys"].argv = ["", os.path.join(args.out_dir, name + ".lowered.mlir"), args.out_dir]
        extract.main()
        suffix = ".ptx" if args.format == "isa" else ".cubin"
        os.replace(os.path.join(args.out_dir, "microscale_kernels" + suffix),
                   os.path.join(args.out_dir, name + suffix))
        os.remove(os.path.join(args.out_dir, name + ".lowered.mlir"))
        manifest.append("|".join([name, name + suffix, "convert_storage_0",
                                  "4" if part == "values" else "8",
                                  ",".join(map(str, shape)), src, dst,
                                  "1" if check else "0", str(per_thread),
                                  traversal, blocks, threads, kind]))
    with open(os.path.join(args.out_dir, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print("%d kernels in %s" % (len(manifest), args.out_dir))


if __name__ == "__main__":
    main()
