#!/usr/bin/env python3
"""Small safetensors helper for the mx-convert tests (standard library only).

  safetensors.py make OUT            a tiny MXFP4 checkpoint, random bytes
  safetensors.py weights OUT         bf16 and f32 Gaussian weights
  safetensors.py nonfinite OUT       an f32 tensor holding a NaN
  safetensors.py get FILE NAME OUT   write tensor NAME's raw bytes to OUT
  safetensors.py show FILE           print names, dtypes, shapes, metadata
  safetensors.py corrupt FILE MODE OUT   truncated | header | offsets
  safetensors.py hostile MODE OUT    nested | huge | overlap | pair | metadata
"""
import json
import random
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    return header, data[8 + size :]


def write(path, tensors, metadata=None):
    header, blob = {}, b""
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(blob), len(blob) + len(payload)],
        }
        blob += payload
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + blob)


def write_header(path, header, blob=b""):
    """A file with `header` as is (write() would compute the offsets)."""
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + blob)


def hostile(mode, path):
    """Files a careless reader accepts or crashes on."""
    if mode == "nested":
        # 80 KB of brackets: a recursive JSON parser overflows its stack.
        write_header(path, b"[" * 40000 + b"]" * 40000)
    elif mode == "huge":
        # 2^62 F32 elements in 0 bytes: 4 * 2^62 wraps to 0 in int64.
        write_header(path, {"w": {"dtype": "F32", "shape": [2**62],
                                  "data_offsets": [0, 0]}})
    elif mode == "overlap":
        write_header(path, {"a": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]},
                            "b": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}},
                     bytes(12))
    elif mode == "pair":
        # Scales for K/32 = 3 groups, values for 2.
        write(path, {"m_blocks": ("U8", [2, 64, 2, 16], bytes(2 * 64 * 2 * 16)),
                     "m_scales": ("U8", [2, 64, 3], bytes(2 * 64 * 3))})
    elif mode == "metadata":
        write_header(path, {"__metadata__": {"format": "pt", "step": 7},
                            "w": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}},
                     bytes(2))


def main():
    cmd = sys.argv[1]
    if cmd == "make":
        rng = random.Random(7)
        blocks = bytes(rng.randrange(256) for _ in range(2 * 64 * 2 * 16))
        scales = bytes(rng.randrange(256) for _ in range(2 * 64 * 2))
        write(
            sys.argv[2],
            {
                "block.0.mlp1_weight_blocks": ("U8", [2, 64, 2, 16], blocks),
                "block.0.mlp1_weight_scales": ("U8", [2, 64, 2], scales),
                "block.0.norm": ("F32", [3], struct.pack("<3f", 1, 2, 3)),
            },
            {"format": "pt"},
        )
    elif cmd == "weights":
        rng = random.Random(11)
        gauss = [rng.gauss(0, 1) for _ in range(8 * 64)]
        # bf16: the high half of the f32 bits (truncation is fine for a test).
        bf16 = b"".join(struct.pack("<f", v)[2:] for v in gauss)
        f32 = struct.pack("<240f", *[rng.gauss(0, 0.02) for _ in range(240)])
        write(
            sys.argv[2],
            {
                "layer.weight": ("BF16", [8, 64], bf16),
                "layer.bias": ("F32", [2, 3, 40], f32),
                "layer.index": ("I32", [2], struct.pack("<2i", 1, 2)),
            },
        )
    elif cmd == "nonfinite":
        write(sys.argv[2], {"w": ("F32", [2], struct.pack("<2f", 1, float("nan")))})
    elif cmd == "get":
        header, blob = read(sys.argv[2])
        begin, end = header[sys.argv[3]]["data_offsets"]
        open(sys.argv[4], "wb").write(blob[begin:end])
    elif cmd == "show":
        header, _ = read(sys.argv[2])
        for name in sorted(k for k in header if k != "__metadata__"):
            entry = header[name]
            print(name, entry["dtype"], entry["shape"])
        for key, value in sorted(header.get("__metadata__", {}).items()):
            print("metadata", key, "=", value)
    elif cmd == "hostile":
        hostile(sys.argv[2], sys.argv[3])
    elif cmd == "corrupt":
        data = bytearray(open(sys.argv[2], "rb").read())
        mode = sys.argv[3]
        if mode == "truncated":
            data = data[: len(data) - 100]
        elif mode == "header":
            data[9] = ord("{") if data[9] != ord("{") else ord("[")
            data[8] = ord("x")
        elif mode == "shortsize":
            data = data[:5]
        open(sys.argv[4], "wb").write(bytes(data))


if __name__ == "__main__":
    main()
