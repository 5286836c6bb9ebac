#!/usr/bin/env python3
"""Writes the PTX of every gpu.binary in an MLIR file (from
`mx-opt --microscale-gpu-to-ptx`) to OUT_DIR/<binary name>.ptx.

  extract-ptx.py INPUT.mlir OUT_DIR
"""
import os
import re
import sys


def unescape(text):
    # MLIR prints non-printable bytes of string attributes as \XX (hex).
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        if raw[i] == ord("\\") and i + 2 < len(raw) + 1:
            pair = raw[i + 1 : i + 3].decode(errors="replace")
            if re.fullmatch(r"[0-9A-Fa-f]{2}", pair):
                out.append(int(pair, 16))
                i += 3
                continue
            if raw[i + 1] in (ord("\\"), ord('"')):
                out.append(raw[i + 1])
                i += 2
                continue
        out.append(raw[i])
        i += 1
    return out.decode()


def main():
    source, out_dir = sys.argv[1], sys.argv[2]
    text = open(source).read()
    os.makedirs(out_dir, exist_ok=True)
    found = 0
    for match in re.finditer(
        r'gpu\.binary @(\w+)\s.*?assembly = "((?:[^"\\]|\\.)*)"', text, re.S
    ):
        name, assembly = match.group(1), unescape(match.group(2))
        with open(os.path.join(out_dir, name + ".ptx"), "w") as f:
            f.write(assembly)
        found += 1
    if not found:
        sys.exit("extract-ptx.py: no gpu.binary with an assembly in " + source)


if __name__ == "__main__":
    main()
