#!/usr/bin/env python3
"""Small safetensors helper for the mx-convert tests (standard library only).

  safetensors.py make OUT            a tiny MXFP4 checkpoint, random bytes
  safetensors.py weights OUT         bf16 and f32 Gaussian weights
  safetensors.py nonfinite OUT       an f32 tensor holding a NaN
  safetensors.py get FILE NAME OUT   write tensor NAME's raw bytes to OUT
  safetensors.py show FILE           print names, dtypes, shapes, metadata
  safetensors.py corrupt FILE MODE OUT   truncated | header | offsets
  safetensors.py hostile MODE OUT    nested | huge | overlap | pair | metadata
  safetensors.py gptoss DIR [--layers L --experts E --hidden H
                 --intermediate I --vocab V --shards S --seed N --random]
                                     a sharded checkpoint with gpt-oss's
                                     tensor names (random bytes), S shards
                                     and model.safetensors.index.json
  safetensors.py compare A B         whether two checkpoints (files or
                                     directories) hold the same tensors:
                                     names, dtypes, shapes, bytes, metadata
  safetensors.py index DIR MODE      break DIR's index: missing | wrongshard
                                     | escape | noshard | unlisted
  safetensors.py checkindex DIR REF  DIR's index against its shards (total
                                     size) and REF's index (weight map)
"""
import argparse
import hashlib
import os
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


def gptoss_tensors(layers, experts, hidden, intermediate, vocab):
    """gpt-oss's tensors in checkpoint order: (name, dtype, shape). MoE
    weights are MXFP4 (blocks U8 [E, N, K/32, 16], scales U8 [E, N, K/32]),
    the rest bf16. Attention: 64 query heads, 8 key/value heads, head dim 64
    at full size; scaled with `hidden` below that."""
    heads, kv_heads, head_dim = (64, 8, 64) if hidden >= 2880 else (4, 1, hidden // 4)
    out = []
    if vocab:
        out.append(("model.embed_tokens.weight", "BF16", [vocab, hidden]))
    for i in range(layers):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", "BF16", [hidden]),
            (p + "self_attn.q_proj.weight", "BF16", [heads * head_dim, hidden]),
            (p + "self_attn.q_proj.bias", "BF16", [heads * head_dim]),
            (p + "self_attn.k_proj.weight", "BF16", [kv_heads * head_dim, hidden]),
            (p + "self_attn.k_proj.bias", "BF16", [kv_heads * head_dim]),
            (p + "self_attn.v_proj.weight", "BF16", [kv_heads * head_dim, hidden]),
            (p + "self_attn.v_proj.bias", "BF16", [kv_heads * head_dim]),
            (p + "self_attn.o_proj.weight", "BF16", [hidden, heads * head_dim]),
            (p + "self_attn.o_proj.bias", "BF16", [hidden]),
            (p + "self_attn.sinks", "BF16", [heads]),
            (p + "post_attention_layernorm.weight", "BF16", [hidden]),
            (p + "mlp.router.weight", "BF16", [experts, hidden]),
            (p + "mlp.router.bias", "BF16", [experts]),
            (p + "mlp.experts.gate_up_proj_blocks", "U8",
             [experts, 2 * intermediate, hidden // 32, 16]),
            (p + "mlp.experts.gate_up_proj_scales", "U8",
             [experts, 2 * intermediate, hidden // 32]),
            (p + "mlp.experts.gate_up_proj_bias", "BF16", [experts, 2 * intermediate]),
            (p + "mlp.experts.down_proj_blocks", "U8",
             [experts, hidden, intermediate // 32, 16]),
            (p + "mlp.experts.down_proj_scales", "U8",
             [experts, hidden, intermediate // 32]),
            (p + "mlp.experts.down_proj_bias", "BF16", [experts, hidden]),
        ]
    out.append(("model.norm.weight", "BF16", [hidden]))
    if vocab:
        out.append(("lm_head.weight", "BF16", [vocab, hidden]))
    return out


DTYPE_BYTES = {"U8": 1, "BF16": 2, "F32": 4}


def nbytes(dtype, shape):
    n = DTYPE_BYTES[dtype]
    for d in shape:
        n *= d
    return n


def gptoss(argv):
    """Writes the checkpoint tensor by tensor (gigabytes never sit in
    memory): S shards of about equal size, and the index."""
    ap = argparse.ArgumentParser(prog="safetensors.py gptoss")
    ap.add_argument("dir")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--experts", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--intermediate", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=256)
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--random", action="store_true",
                    help="os.urandom bytes (fast, not reproducible)")
    ap.add_argument("--bad-pair", action="store_true",
                    help="the last layer's down_proj_scales one group too long")
    a = ap.parse_args(argv)
    tensors = gptoss_tensors(a.layers, a.experts, a.hidden, a.intermediate, a.vocab)
    if a.bad_pair:
        name = f"model.layers.{a.layers - 1}.mlp.experts.down_proj_scales"
        tensors = [(n, d, s[:-1] + [s[-1] + 1] if n == name else s)
                   for n, d, s in tensors]
    total = sum(nbytes(d, s) for _, d, s in tensors)
    # Consecutive tensors, cut where the running size passes k/S of the total.
    shards, current, size = [], [], 0
    for t in tensors:
        current.append(t)
        size += nbytes(t[1], t[2])
        if size >= total * (len(shards) + 1) / a.shards and len(shards) < a.shards - 1:
            shards.append(current)
            current = []
    shards.append(current)
    shards = [s for s in shards if s]
    os.makedirs(a.dir, exist_ok=True)
    rng = random.Random(a.seed)
    weight_map = {}
    for i, shard in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {}, 0
        for tname, dtype, shape in shard:
            n = nbytes(dtype, shape)
            header[tname] = {"dtype": dtype, "shape": shape,
                             "data_offsets": [offset, offset + n]}
            offset += n
            weight_map[tname] = name
        header["__metadata__"] = {"format": "pt"}
        text = json.dumps(header).encode()
        text += b" " * ((8 - (8 + len(text)) % 8) % 8)
        with open(os.path.join(a.dir, name), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for tname, dtype, shape in shard:
                n = nbytes(dtype, shape)
                chunk = 1 << 26
                while n:
                    m = min(n, chunk)
                    f.write(os.urandom(m) if a.random else rng.randbytes(m))
                    n -= m
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(a.dir, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
    print(f"{len(tensors)} tensors, {total} bytes, {len(shards)} shards in {a.dir}")


def files_of(path):
    """name -> path of the .safetensors files of a checkpoint (a file or a
    directory)."""
    if os.path.isdir(path):
        return {f: os.path.join(path, f) for f in sorted(os.listdir(path))
                if f.endswith(".safetensors")}
    return {os.path.basename(path): path}


def digest(path):
    """name -> (dtype, shape, sha256 of the bytes), and the metadata."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        start = 8 + size
        out = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            begin, end = entry["data_offsets"]
            f.seek(start + begin)
            h, left = hashlib.sha256(), end - begin
            while left:
                chunk = f.read(min(left, 1 << 26))
                h.update(chunk)
                left -= len(chunk)
            out[name] = (entry["dtype"], entry["shape"], h.hexdigest())
    return out, header.get("__metadata__", {})


def compare(a, b):
    fa, fb = files_of(a), files_of(b)
    if sorted(fa) != sorted(fb):
        print("different files:", sorted(fa), sorted(fb))
        return 1
    bad = 0
    for name in fa:
        ta, ma = digest(fa[name])
        tb, mb = digest(fb[name])
        for t in sorted(set(ta) | set(tb)):
            if ta.get(t) != tb.get(t):
                print(f"{name}: tensor {t} differs: {ta.get(t, 'missing')[:2]} vs {tb.get(t, 'missing')[:2]}")
                bad += 1
        if ma != mb:
            print(f"{name}: metadata differs: {ma} vs {mb}")
            bad += 1
    count = sum(len(digest(p)[0]) for p in fa.values())
    print("identical" if not bad else f"{bad} differences",
          f"({len(fa)} files, {count} tensors)")
    return 1 if bad else 0


def break_index(directory, mode):
    path = os.path.join(directory, "model.safetensors.index.json")
    index = json.load(open(path))
    wm = index["weight_map"]
    first = sorted(wm)[0]
    shards = sorted(set(wm.values()))
    if mode == "missing":      # an entry naming a tensor no shard holds
        wm["model.layers.9.mlp.experts.down_proj_blocks"] = shards[0]
    elif mode == "wrongshard":  # a tensor mapped to the wrong shard
        for name, shard in sorted(wm.items()):
            if shard != shards[-1]:
                wm[name] = shards[-1]
                break
    elif mode == "escape":      # a shard name that leaves the directory
        wm[first] = "../" + wm[first]
    elif mode == "noshard":     # a shard that is not there
        os.remove(os.path.join(directory, shards[-1]))
    elif mode == "unlisted":    # a tensor the index does not list
        for name, shard in sorted(wm.items()):
            if shard == shards[0]:
                del wm[name]
                break
    json.dump(index, open(path, "w"), indent=2)


def check_index(directory, reference):
    index = json.load(open(os.path.join(directory, "model.safetensors.index.json")))
    ref = json.load(open(os.path.join(reference, "model.safetensors.index.json")))
    total = 0
    for path in files_of(directory).values():
        with open(path, "rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
        total += sum(e["data_offsets"][1] - e["data_offsets"][0]
                     for n, e in header.items() if n != "__metadata__")
    print("total_size", "matches the shards" if index["metadata"]["total_size"] == total
          else f"is {index['metadata']['total_size']}, the shards hold {total}")
    print("weight_map", "is the reference's" if index["weight_map"] == ref["weight_map"]
          else "differs from the reference's")


def main():
    cmd = sys.argv[1]
    if cmd == "checkindex":
        check_index(sys.argv[2], sys.argv[3])
        return
    if cmd == "gptoss":
        gptoss(sys.argv[2:])
        return
    if cmd == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if cmd == "index":
        break_index(sys.argv[2], sys.argv[3])
        return
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
