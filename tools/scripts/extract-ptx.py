#!/usr/bin/env python3
"""Writes the kernels of every gpu.binary in an MLIR file (from
`mx-opt --microscale-gpu-to-ptx` or `--microscale-gpu-to-gfx950`) to OUT_DIR:
for NVIDIA targets <binary name>.ptx for format=isa (PTX text) and
<binary name>.cubin for format=bin; for AMD (#rocdl.target) <binary name>.s
(assembly) and <binary name>.hsaco (code object).

  extract-ptx.py INPUT.mlir OUT_DIR
"""
import os
import re
import sys


def unescape(text):
    """MLIR prints string attributes with non-printable bytes as \\XX (hex)
    and a backslash as two backslashes."""
    out = bytearray()
    raw = text.encode()
    i = 0
    while i < len(raw):
        if raw[i] == ord("\\"):
            pair = raw[i + 1 : i + 3].decode(errors="replace")
            if re.fullmatch(r"[0-9A-Fa-f]{2}", pair):
                out.append(int(pair, 16))
                i += 3
                continue
            if i + 1 < len(raw) and raw[i + 1] in (ord("\\"), ord('"')):
                out.append(raw[i + 1])
                i += 2
                continue
        out.append(raw[i])
        i += 1
    return bytes(out)


def main():
    source, out_dir = sys.argv[1], sys.argv[2]
    text = open(source).read()
    os.makedirs(out_dir, exist_ok=True)
    found = 0
    for match in re.finditer(
        r'gpu\.binary @(\w+)\s(.*?)(assembly|bin) = "((?:[^"\\]|\\.)*)"', text, re.S
    ):
        name, target, kind = match.group(1), match.group(2), match.group(3)
        payload = unescape(match.group(4))
        amd = "#rocdl.target" in target
        if kind == "assembly":
            suffix = ".s" if amd else ".ptx"
        else:
            suffix = ".hsaco" if amd else ".cubin"
        with open(os.path.join(out_dir, name + suffix), "wb") as f:
            f.write(payload)
        found += 1
    if not found:
        sys.exit("extract-ptx.py: no gpu.binary with an assembly or bin in " + source)


if __name__ == "__main__":
    main()
