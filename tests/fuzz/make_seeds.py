"""Writes the fuzzers' seed corpora and the tokenizer target's vocabularies.

    python3 tests/fuzz/make_seeds.py          (from the repository root)

  tests/fuzz/vocab/tok_{smollm,gpt2,llama3}.gguf
        small byte-level BPE vocabularies (the 256 GPT-2 byte symbols,
        merges trained here on a little text, control / user-defined /
        unknown / byte / unused tokens), one per pre-tokenizer family; the
        tokenizer target (engine/fuzz/fuzz_tokenizer.c) loads them
  tests/fuzz/vocab/tok_spm.gguf
        a small SentencePiece vocabulary (scores, <0xNN> byte tokens)
  tests/fuzz/corpus/gguf/        tiny synthetic GGUF files (every metadata
                                 type, every tensor type, the vocabularies)
  tests/fuzz/corpus/tokenizer/   texts, each after a flags byte (see
                                 fuzz_tokenizer.c)
  tests/fuzz/corpus/graph/       byte-code programs, one or more per op of
                                 the engine's op table (graph_bytecode.py)
  tests/fuzz/corpus/onnx/        small models written with onnx.helper and
                                 a handful of ONNX backend test models

The output is deterministic; the files are committed.  Seeds are only
starting points: tests/run_fuzz.sh with FUZZ_MERGE=1 merges what a run
found back into the corpus directories.  Needs the engine (PEREGRINE_LIBRARY
for a build tree), numpy and onnx.
"""
from __future__ import annotations

import random
import re
import struct
import sys
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# ---------------------------------------------------------------------------
# GGUF writing
# ---------------------------------------------------------------------------

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
_PACK = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B",
         U64: "<Q", I64: "<q", F64: "<d"}
GGML = {"f32": (0, 1, 4), "f16": (1, 1, 2), "q4_0": (2, 32, 18), "q4_1": (3, 32, 20),
        "q5_0": (6, 32, 22), "q5_1": (7, 32, 24), "q8_0": (8, 32, 34), "q8_1": (9, 32, 36),
        "q2_K": (10, 256, 84), "q3_K": (11, 256, 110), "q4_K": (12, 256, 144),
        "q5_K": (13, 256, 176), "q6_K": (14, 256, 210), "q8_K": (15, 256, 292),
        "i8": (24, 1, 1), "i16": (25, 1, 2), "i32": (26, 1, 4), "i64": (27, 1, 8),
        "f64": (28, 1, 8), "bf16": (30, 1, 2)}


def _s(b: bytes | str) -> bytes:
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<Q", len(b)) + b


def _value(t: int, v) -> bytes:
    if t == STR:
        return _s(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(_value(et, x) for x in items)
    return struct.pack(_PACK[t], v)


def gguf(kvs, tensors=(), version: int = 3, alignment: int | None = None) -> bytes:
    """kvs: (key, type, value); tensors: (name, type name, dims, raw bytes)."""
    kvs = list(kvs)
    if alignment is not None:
        kvs.append(("general.alignment", U32, alignment))
    align = alignment or 32
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += _s(k) + struct.pack("<I", t) + _value(t, v)
    data, infos = b"", b""
    for name, tname, dims, raw in tensors:
        data += b"\0" * (-len(data) % align)
        infos += _s(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        infos += struct.pack("<IQ", GGML[tname][0], len(data))
        data += raw
    out += infos
    out += b"\0" * (-len(out) % align)
    return out + data


def tensor_bytes(tname: str, dims, rng: random.Random) -> bytes:
    _, block, nbytes = GGML[tname]
    n = int(np.prod(dims))
    if tname == "f32":
        return np.array([rng.uniform(-2, 2) for _ in range(n)], "<f4").tobytes()
    if tname == "f16":
        return np.array([rng.uniform(-2, 2) for _ in range(n)], "<f2").tobytes()
    if tname == "f64":
        return np.array([rng.uniform(-2, 2) for _ in range(n)], "<f8").tobytes()
    raw = bytearray(rng.getrandbits(8) for _ in range(n // block * nbytes))
    if block > 1:   # sane f16 scales at the start of each block (d, and m / s)
        for b in range(n // block):
            raw[b * nbytes:b * nbytes + 4] = np.array([0.01, 0.5], "<f2").tobytes()
    return bytes(raw)


# ---------------------------------------------------------------------------
# the BPE vocabularies
# ---------------------------------------------------------------------------

def byte_map() -> dict[int, str]:
    """GPT-2's bytes_to_unicode."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


TRAIN_TEXT = (
    "Hello world! The quick brown fox jumps over the lazy dog. the theory of the thing, "
    "they then thought that there was another one in the house. Hello hello, world of words; "
    "I'm sure you're right, we'll see what they've done. 1234567890 2024 3.14159 "
    "def main(): return print('hello') if x == 0 else None  # comment\n"
    "    indented line\n\ttabbed\n\nnew paragraph. caf\u00e9 na\u00efve r\u00e9sum\u00e9 "
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \u4e2d\u6587 \u043f\u0440\u0438\u0432\u0435\u0442 "
    "\U0001f600\U0001f680 <b>bold</b> {\"key\": [1, 2, 3]}"
)
SPECIALS = [   # (text, token type): 3 control, 4 user-defined, 2 unknown, 6 byte, 5 unused
    ("<|endoftext|>", 3), ("<|im_start|>", 3), ("<|im_end|>", 3), ("<tool>", 4),
    ("<tool_call>", 4), ("<unk>", 2), ("<0x41>", 6), ("<unused0>", 5), ("", 3),
    ("\xff<bad>", 3),
]


def train_merges(n_merges: int = 160) -> list[tuple[str, str]]:
    bm = byte_map()
    words = re.findall(r" ?[A-Za-z\u00c0-\u024f]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+", TRAIN_TEXT)
    seqs = Counter(tuple(bm[b] for b in w.encode()) for w in words)
    merges = []
    for _ in range(n_merges):
        pairs: Counter = Counter()
        for s, c in seqs.items():
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 1:
            break
        merges.append(best)
        new: Counter = Counter()
        for s, c in seqs.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    out.append(s[i] + s[i + 1])
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            new[tuple(out)] += c
        seqs = new
    return merges


def vocab_gguf(pre: str) -> bytes:
    bm = byte_map()
    tokens: list[bytes] = []
    types: list[int] = []
    for text, ty in SPECIALS[:3]:
        tokens.append(text.encode("latin-1") if text.startswith("\xff") else text.encode())
        types.append(ty)
    for b in range(256):
        tokens.append(bm[b].encode())
        types.append(1)
    merges = train_merges()
    seen = set(tokens)
    for a, b in merges:
        t = (a + b).encode()
        if t not in seen:
            seen.add(t)
            tokens.append(t)
            types.append(1)
    for text, ty in SPECIALS[3:]:
        tokens.append(text.encode("latin-1") if text.startswith("\xff") else text.encode())
        types.append(ty)
    kvs = [
        ("general.architecture", STR, "llama"),
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, pre),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, [f"{a} {b}" for a, b in merges])),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
    ]
    if pre == "llama-bpe":
        kvs.append(("tokenizer.ggml.add_bos_token", BOOL, 1))
    return gguf(kvs)


def spm_vocab_gguf() -> bytes:
    """A SentencePiece vocabulary (model "llama"): <unk> <s> </s>, the 256
    <0xNN> byte tokens, the characters of TRAIN_TEXT (U+2581 for the space) and
    pieces learnt from it by BPE, scored by merge order (some scores tied),
    a user-defined and an unused token; llama.cpp's defaults otherwise."""
    mark = "\u2581"
    text = (" " + TRAIN_TEXT).replace(" ", mark)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    scores = [0.0] * len(tokens)
    seqs = Counter(tuple(w) for w in re.findall(mark + "?[^" + mark + "]+|" + mark + "+", text))
    for i in range(120):
        pairs = Counter()
        for sq, c in seqs.items():
            for a, b in zip(sq, sq[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if a + b not in tokens:
            tokens.append(a + b)
            types.append(1)
            scores.append(-float(i - i % 2))
        new = Counter()
        for sq, c in seqs.items():
            out, j = [], 0
            while j < len(sq):
                if j + 1 < len(sq) and sq[j] == a and sq[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(sq[j])
                    j += 1
            new[tuple(out)] += c
        seqs = new
    for ch in sorted(set(text)):
        if ch not in tokens:
            tokens.append(ch)
            types.append(1)
            scores.append(-1000.0)
    tokens += ["<tool>", "<unused0>"]
    types += [4, 5]
    scores += [0.0, 0.0]
    return gguf([
        ("general.architecture", STR, "llama"),
        ("tokenizer.ggml.model", STR, "llama"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.scores", ARR, (F32, scores)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
    ])


VOCABS = {"tok_smollm.gguf": "smollm", "tok_gpt2.gguf": "gpt-2", "tok_llama3.gguf": "llama-bpe"}

# ---------------------------------------------------------------------------
# the corpora
# ---------------------------------------------------------------------------


def gguf_seeds() -> dict[str, bytes]:
    rng = random.Random(1)
    every_kv = [
        ("u8", U8, 250), ("i8", I8, -7), ("u16", U16, 65000), ("i16", I16, -1234),
        ("u32", U32, 4_000_000_000), ("i32", I32, -99), ("f32", F32, 0.25), ("bool", BOOL, 1),
        ("str", STR, "h\u00e9llo"), ("u64", U64, 2**40), ("i64", I64, -(2**40)), ("f64", F64, 1e-3),
        ("arr.i32", ARR, (I32, [1, -2, 3])), ("arr.str", ARR, (STR, ["ab", "", "c\u00e9"])),
        ("arr.f32", ARR, (F32, [0.5, -1.5])), ("arr.u8", ARR, (U8, [1, 2, 3, 4])),
        ("arr.f64", ARR, (F64, [2.5])), ("arr.bool", ARR, (BOOL, [1, 0])), ("arr.empty", ARR, (I64, [])),
        ("arr.u16", ARR, (U16, [7, 8])), ("arr.i16", ARR, (I16, [-7])), ("arr.u64", ARR, (U64, [2**63 + 1])),
        ("arr.i8", ARR, (I8, [-1])), ("arr.u32", ARR, (U32, [9])), ("arr.i64", ARR, (I64, [-9])),
    ]
    out = {
        "header_only.gguf": gguf([]),
        "v2_kv_only.gguf": gguf(every_kv, version=2),
        "every_kv_type.gguf": gguf(every_kv, [
            ("a.f32", "f32", [6], tensor_bytes("f32", [6], rng)),
            ("b.f16", "f16", [4, 2], tensor_bytes("f16", [4, 2], rng)),
            ("c.q8_0", "q8_0", [32], tensor_bytes("q8_0", [32], rng)),
        ]),
        "u64_above_int64.gguf": gguf([("u64.big", U64, 2**63 + 5), ("after", STR, "x")]),
        "nested_array.gguf": gguf([("arr.arr", ARR, (ARR, [(I32, [1])]))]),
        "alignment_64.gguf": gguf([("x", U32, 1)], [
            ("w", "f32", [2, 3, 2], tensor_bytes("f32", [2, 3, 2], rng)),
            ("v", "f16", [2, 1, 2, 2], tensor_bytes("f16", [2, 1, 2, 2], rng)),
        ], alignment=64),
        "alignment_1.gguf": gguf([], [("w", "i8", [3], bytes([1, 2, 3])),
                                      ("v", "i16", [2], bytes([1, 0, 2, 0]))], alignment=1),
        "empty_tensor.gguf": gguf([], [("z", "f32", [0, 4], b""), ("y", "q4_0", [32, 0], b"")]),
    }
    for tname in GGML:
        _, block, _ = GGML[tname]
        dims = [block if block > 1 else 4, 2]
        out[f"tensor_{tname}.gguf"] = gguf([("general.name", STR, tname)],
                                           [(f"t.{tname}", tname, dims, tensor_bytes(tname, dims, rng))])
    for name, pre in VOCABS.items():
        out[name] = vocab_gguf(pre)
    out["tok_spm.gguf"] = spm_vocab_gguf()
    return out


def tokenizer_seeds() -> dict[str, bytes]:
    texts = [
        b"Hello world!", b"The quick brown fox jumps over the lazy dog.",
        b"<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
        b"<tool_call><tool>{\"a\": 1}</tool_call><tool>", b"<unk> <0x41> <unused0> <|endoftext|>",
        b"1234567890 3.14159 2024-01-01", b"I'm you're they'll we've she'd IT'S 'S 'll",
        "caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u65e5\u672c\u8a9e \U0001f600\U0001f680".encode(),
        b"    indented\n\ttabbed\r\n\n\n   trailing   ", b"def main():\n    return x == 0  # c\n",
        b"\xff\xfe\xc3\x28\xe2\x82\xa1\xe2\x82 \xf0\x9f\x98 \xc0\x80 \xed\xa0\x80", b"\xff<bad> x",
        b"a" * 200, b" " * 100, b"123" * 30, b"",
    ]
    out = {}
    for i, t in enumerate(texts):
        for flags in (0, 1, 2, 3, 4 | 8, 3 | 4 | 8):   # 3: the SentencePiece vocabulary
            out[f"text{i:02d}_f{flags}.bin"] = bytes([flags]) + t
    return out


def quant_graph_seeds() -> dict:
    """One program per quantisation op.  The byte code has no names for
    QuantMatMul's k / n / zero (nor dims for a packed weight's bytes), so it
    starts from its refusal."""
    from graph_bytecode import Asm

    f32, u8, i8 = "float32", "uint8", "int8"
    return {
        "QuantizeLinear": Asm().input("t0", f32, (2, 3)).init("t1", f32, np.array(0.5)).init("t2", u8, np.array(3))
        .node("QuantizeLinear", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "DequantizeLinear": Asm().input("t0", i8, (2, 3)).init("t1", f32, [0.5, 0.25, 2.0]).init("t2", i8, [1, 0, -1])
        .node("DequantizeLinear", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "axis", 1).output("t3"),
        "DynamicQuantizeLinear": Asm().input("t0", f32, (2, 3))
        .node("DynamicQuantizeLinear", ["t0"], ["t1", "t2", "t3"], name="n1").output("t1").output("t2").output("t3"),
        "MatMulInteger": Asm().input("t0", u8, (2, 4)).init("t1", i8, np.ones((4, 3))).init("t2", u8, np.array(2))
        .node("MatMulInteger", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "QLinearMatMul": Asm().input("t0", u8, (2, 4)).init("t1", f32, np.array(0.5)).init("t2", u8, np.array(2))
        .init("t3", i8, np.ones((4, 3))).init("t4", f32, np.array(0.25)).init("t5", i8, np.array(0))
        .init("t6", f32, np.array(2.0)).init("t7", u8, np.array(1))
        .node("QLinearMatMul", ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"], ["t8"], name="n1").output("t8"),
        "ConvInteger": Asm().input("t0", u8, (1, 2, 4, 4)).init("t1", i8, np.ones((3, 2, 3, 3)))
        .init("t2", u8, np.array(1)).node("ConvInteger", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "QLinearConv": Asm().input("t0", u8, (1, 2, 4, 4)).init("t1", f32, np.array(0.5)).init("t2", u8, np.array(2))
        .init("t3", i8, np.ones((3, 2, 3, 3))).init("t4", f32, np.array(0.25)).init("t5", i8, np.array(0))
        .init("t6", f32, np.array(2.0)).init("t7", u8, np.array(1))
        .node("QLinearConv", ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"], ["t8"], name="n1").output("t8"),
        "QuantMatMul": Asm().input("t0", f32, (2, 4)).init("t1", i8, np.zeros(8))
        .node("QuantMatMul", ["t0", "", "", "t1"], ["t2"], name="n1").attr(None, "activation", "gelu").output("t2"),
    }


def cnn_graph_seeds() -> dict:
    """One program per CNN op (NCHW).  The byte code has no names for
    kernel_shape / strides / pads / blocksize, so the pools and the
    depth/space ops start from their refusal (a required attribute missing)."""
    from graph_bytecode import Asm

    f32 = "float32"

    def on(op, shape=(1, 2, 4, 4)):
        return Asm().input("t0", f32, shape).node(op, ["t0"], ["t1"], name="n1").output("t1")

    return {
        "Conv": Asm().input("t0", f32, (1, 2, 4, 4)).init("t1", f32, np.ones((3, 2, 3, 3)))
        .init("t2", f32, np.zeros(3)).node("Conv", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "ConvTranspose": Asm().input("t0", f32, (1, 2, 3, 3)).init("t1", f32, np.ones((2, 3, 2, 2)))
        .node("ConvTranspose", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "MaxPool": on("MaxPool"), "AveragePool": on("AveragePool"),
        "GlobalAveragePool": on("GlobalAveragePool", (1, 2, 3, 4)),
        "GlobalMaxPool": on("GlobalMaxPool", (2, 3, 1, 4)),
        "BatchNormalization": Asm().input("t0", f32, (1, 2, 3, 3)).init("t1", f32, np.ones(2))
        .init("t2", f32, np.zeros(2)).init("t3", f32, np.full(2, 0.5)).init("t4", f32, np.ones(2))
        .node("BatchNormalization", ["t0", "t1", "t2", "t3", "t4"], ["t5"], name="n1")
        .attr(None, "epsilon", 1e-5).output("t5"),
        "Resize": Asm().input("t0", f32, (1, 1, 2, 3)).init("t1", f32, [1.0, 1.0, 2.0, 0.5])
        .node("Resize", ["t0", "", "t1"], ["t2"], name="n1").output("t2"),
        "Upsample": Asm().input("t0", f32, (1, 1, 2, 2)).init("t1", f32, [1.0, 1.0, 2.0, 3.0])
        .node("Upsample", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "PRelu": Asm().input("t0", f32, (2, 3, 2)).init("t1", f32, [[0.25], [0.5], [-1.0]])
        .node("PRelu", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "DepthToSpace": on("DepthToSpace", (1, 4, 2, 3)), "SpaceToDepth": on("SpaceToDepth"),
        # the passes' own steps (conv_act_fusion, maxpool_fast), built directly
        "FusedConv": Asm().input("t0", f32, (1, 2, 4, 4)).init("t1", f32, np.ones((3, 2, 3, 3)))
        .init("t2", f32, np.zeros(3)).node("FusedConv", ["t0", "t1", "t2"], ["t3"], name="n1")
        .attr(None, "activation", "relu").output("t3"),
        "FastMaxPool": on("FastMaxPool"),
    }


def llm_graph_seeds() -> dict:
    """One program per op of the GGUF decoder's graph (engine/graph/infer_llm.c)
    and the NCHWc reorders.  Dims stop at 8, so weights are f32 (ggml type 0:
    one-element blocks) where they can be; wider tensors (q8 blocks of 32,
    16-wide heads) come from KVCache nodes, whose sizes are attributes."""
    from graph_bytecode import Asm

    f32, i32, u8 = "float32", "int32", "uint8"
    ctl = [2, 0, 0]   # rows, position, first logits row
    return {
        "GGUFEmbed": Asm().init("t0", i32, [1, 3]).init("t1", u8, np.arange(32).reshape(4, 8) % 9)
        .init("t2", i32, ctl).node("GGUFEmbed", ["t0", "t1", "t2"], ["t3"], name="n1")
        .attr(None, "wtype", 0).attr(None, "n_embd", 2).output("t3"),
        "GGUFQuantize": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 2)
        .attr(None, "width", 64).init("t1", i32, ctl)
        .node("GGUFQuantize", ["t0", "t1"], ["t2"], name="n2").attr(None, "act_type", 8).output("t2"),
        # K must be a multiple of 32 and init data stops at 8, so the wide
        # tensors come from KVCache nodes (their sizes are attributes): the f16
        # weight [2, 128 bytes] is a [4, 64] cache reshaped and cast
        "GGUFMatMul": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 2)
        .attr(None, "width", 64).node("KVCache", [], ["t1"], name="n2").attr(None, "positions", 4)
        .attr(None, "width", 64).attr(None, "layer", 1).init("t2", "int64", [2, -1])
        .node("Reshape", ["t1", "t2"], ["t3"], name="n3").node("Cast", ["t3"], ["t4"], name="n4")
        .attr(None, "to", 2).init("t5", i32, ctl)
        .node("GGUFMatMul", ["t0", "t4", "t5"], ["t6"], name="n5").attr(None, "wtype", 1)
        .attr(None, "K", 64).attr(None, "N", 2).attr(None, "tail", 0).output("t6"),
        "LLMRotary": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.full((3, 2), 0.5))
        .init("t2", f32, np.full((3, 2), 0.25)).init("t3", i32, ctl)
        .node("LLMRotary", ["t0", "t1", "t2", "t3"], ["t4"], name="n1").attr(None, "heads", 1)
        .attr(None, "head_dim", 4).attr(None, "n_rot", 4).attr(None, "neox", 1).output("t4"),
        "KVCache": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 4)
        .attr(None, "width", 8).attr(None, "layer", 0).output("t0"),
        "KVCacheWrite": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 4)
        .attr(None, "width", 2).input("t1", f32, (2, 2)).init("t2", i32, ctl)
        .node("KVCacheWrite", ["t0", "t1", "t2"], ["t3"], name="n2").output("t3"),
        # an f16 cache: written, then read back widened
        "KVCacheRead": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 4)
        .attr(None, "width", 2).attr(None, "f16", 1).input("t1", f32, (2, 2)).init("t2", i32, ctl)
        .node("KVCacheWrite", ["t0", "t1", "t2"], ["t3"], name="n2")
        .node("KVCacheRead", ["t3", "t2"], ["t4"], name="n3").output("t4"),
        "CachedAttention": Asm().node("KVCache", [], ["t0"], name="n1").attr(None, "positions", 2)
        .attr(None, "width", 16).node("KVCache", [], ["t1"], name="n2").attr(None, "positions", 4)
        .attr(None, "width", 16).node("KVCache", [], ["t2"], name="n3").attr(None, "positions", 4)
        .attr(None, "width", 16).attr(None, "layer", 1).init("t3", i32, ctl)
        .node("CachedAttention", ["t0", "t1", "t2", "t3"], ["t4"], name="n4").attr(None, "n_head", 1)
        .attr(None, "n_head_kv", 1).attr(None, "head_dim", 16).attr(None, "kq_scale", 0.25).output("t4"),
        "ReorderInput": Asm().input("t0", f32, (1, 3, 2, 2)).node("ReorderInput", ["t0"], ["t1"], name="n1")
        .attr(None, "nchwc", 16).output("t1"),
        "ReorderOutput": Asm().input("t0", f32, (1, 3, 2, 2)).node("ReorderInput", ["t0"], ["t1"], name="n1")
        .attr(None, "nchwc", 16).node("ReorderOutput", ["t1"], ["t2"], name="n2").attr(None, "nchwc", 16)
        .attr(None, "channels", 3).output("t2"),
        # the pools and depth/space ops with the attributes they need
        "MaxPool_k2": Asm().input("t0", f32, (1, 2, 4, 4)).node("MaxPool", ["t0"], ["t1"], name="n1")
        .attr(None, "kernel_shape", [2, 2]).attr(None, "strides", [2, 2]).output("t1"),
        "AveragePool_pads": Asm().input("t0", f32, (1, 2, 4, 4)).node("AveragePool", ["t0"], ["t1"], name="n1")
        .attr(None, "kernel_shape", [3, 3]).attr(None, "pads", [1, 1, 1, 1]).output("t1"),
        "DepthToSpace_b2": Asm().input("t0", f32, (1, 4, 2, 3)).node("DepthToSpace", ["t0"], ["t1"], name="n1")
        .attr(None, "blocksize", 2).output("t1"),
    }


def graph_seeds() -> dict[str, bytes]:
    from graph_bytecode import Asm, op_names

    f32 = "float32"
    out: dict[str, bytes] = {}

    def unary(op, dtype=f32, **attrs):
        a = Asm().input("t0", dtype, (2, 3)).node(op, ["t0"], ["t1"], name="n1")
        for k, v in attrs.items():
            a.attr(None, k, v)
        return a.output("t1")

    def binary(op, dtype=f32, out_dtype=None):
        return (Asm().input("t0", dtype, (2, 3)).input("t1", dtype, (1, 3))
                .node(op, ["t0", "t1"], ["t2"], name="n1").output("t2"))

    progs = {
        "MatMul": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones((4, 3)))
        .node("MatMul", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Gemm": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones((3, 4))).init("t2", f32, np.ones(3))
        .node("Gemm", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "transB", 1)
        .attr(None, "alpha", 0.5).attr(None, "beta", 1.0).output("t3"),
        "Where": Asm().input("t0", "bool", (2, 3)).input("t1", f32, (2, 3)).input("t2", f32, (3,))
        .node("Where", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "Cast": unary("Cast", to=7),
        "Not": unary("Not", dtype="bool"),
        "And": binary("And", "bool"), "Or": binary("Or", "bool"),
        "Gelu": unary("Gelu", approximate="tanh"),
        "Softmax": unary("Softmax", axis=-1),
        "Dropout": unary("Dropout"),
        "LayerNormalization": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones(4)).init("t2", f32, np.zeros(4))
        .node("LayerNormalization", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "axis", -1)
        .attr(None, "epsilon", 1e-5).output("t3"),
        "RMSNorm": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones(4))
        .node("RMSNorm", ["t0", "t1"], ["t3"], name="n1").attr(None, "epsilon", 1e-5).output("t3"),
        "ReduceMean": Asm().input("t0", f32, (2, 3, 4)).init("t1", "int64", [-1])
        .node("ReduceMean", ["t0", "t1"], ["t2"], name="n1").attr(None, "keepdims", 1).output("t2"),
        "ReduceSum": Asm().input("t0", f32, (2, 3, 4)).init("t1", "int64", [1])
        .node("ReduceSum", ["t0", "t1"], ["t2"], name="n1").attr(None, "keepdims", 0).output("t2"),
        "Transpose": unary("Transpose", perm=[1, 0]),
        "Reshape": Asm().input("t0", f32, (2, 3, 4)).init("t1", "int64", [6, -1])
        .node("Reshape", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Flatten": unary("Flatten", axis=1),
        "Squeeze": Asm().input("t0", f32, (2, 1, 3)).init("t1", "int64", [1])
        .node("Squeeze", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Unsqueeze": Asm().input("t0", f32, (2, 3)).init("t1", "int64", [0])
        .node("Unsqueeze", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Concat": Asm().input("t0", f32, (2, 3)).input("t1", f32, (2, 2))
        .node("Concat", ["t0", "t1"], ["t2"], name="n1").attr(None, "axis", 1).output("t2"),
        "Split": Asm().input("t0", f32, (2, 4)).init("t1", "int64", [1, 3])
        .node("Split", ["t0", "t1"], ["t2", "t3"], name="n1").attr(None, "axis", 1).output("t2").output("t3"),
        "Slice": Asm().input("t0", f32, (4, 3)).init("t1", "int64", [1]).init("t2", "int64", [3])
        .init("t3", "int64", [0]).init("t4", "int64", [1])
        .node("Slice", ["t0", "t1", "t2", "t3", "t4"], ["t5"], name="n1").output("t5"),
        "Gather": Asm().input("t0", f32, (4, 3)).init("t1", "int64", [[0, 3], [1, -1]])
        .node("Gather", ["t0", "t1"], ["t2"], name="n1").attr(None, "axis", 0).output("t2"),
        "Expand": Asm().input("t0", f32, (3, 1)).init("t1", "int64", [2, 3, 4])
        .node("Expand", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Shape": Asm().input("t0", f32, (2, 3)).node("Shape", ["t0"], ["t1"], name="n1")
        .attr(None, "start", 1).output("t1"),
        "Constant": Asm().node("Constant", [], ["t0"], name="n1")
        .attr(None, "value", np.array([[1.0, 2.0], [3.0, 0.5]], np.float32)).output("t0"),
        "ConstantOfShape": Asm().init("t0", "int64", [2, 3]).node("ConstantOfShape", ["t0"], ["t1"], name="n1")
        .attr(None, "value", np.array([2.0], np.float32)).output("t1"),
        "FusedMatMul": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones((4, 3))).init("t2", f32, np.ones(3))
        .node("FusedMatMul", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "activation", "gelu")
        .attr(None, "alpha", 2.0).output("t3"),
        "QKVMatMul": Asm().input("t0", f32, (2, 4)).init("t1", f32, np.ones((4, 6)))
        .node("QKVMatMul", ["t0", "t1"], ["t2", "t3", "t4"], name="n1").attr(None, "splits", [2, 2, 2])
        .output("t2").output("t3").output("t4"),
        "FusedAttention": Asm().input("t0", f32, (1, 2, 3, 4)).input("t1", f32, (1, 2, 3, 4))
        .input("t2", f32, (1, 2, 3, 4)).node("FusedAttention", ["t0", "t1", "t2"], ["t3"], name="n1")
        .attr(None, "causal", 1).attr(None, "scale", 0.5).output("t3"),
        "Rotary": Asm().input("t0", f32, (1, 2, 3, 4)).init("t1", f32, np.full((1, 1, 3, 4), 0.5))
        .init("t2", f32, np.full((1, 1, 3, 4), 0.25)).node("Rotary", ["t0", "t1", "t2"], ["t3"], name="n1")
        .output("t3"),
    }
    i64 = "int64"
    progs.update({
        "Max": Asm().input("t0", f32, (2, 3)).input("t1", f32, (3,)).input("t2", f32, (1, 1))
        .node("Max", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "Min": binary("Min"), "Mod": binary("Mod", i64),
        "Clip": Asm().input("t0", f32, (2, 3)).init("t1", f32, np.array(-0.5)).init("t2", f32, np.array(0.5))
        .node("Clip", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "LeakyRelu": unary("LeakyRelu", alpha=0.25), "HardSigmoid": unary("HardSigmoid", alpha=0.5, beta=0.5),
        "LogSoftmax": unary("LogSoftmax", axis=1), "IsNaN": unary("IsNaN"),
        "InstanceNormalization": Asm().input("t0", f32, (1, 2, 4)).init("t1", f32, np.ones(2)).init("t2", f32, np.zeros(2))
        .node("InstanceNormalization", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "epsilon", 1e-5).output("t3"),
        "GroupNormalization": Asm().input("t0", f32, (1, 4, 3)).init("t1", f32, np.ones(4)).init("t2", f32, np.zeros(4))
        .node("GroupNormalization", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "num_groups", 2)
        .attr(None, "epsilon", 1e-5).output("t3"),
        "GatherElements": Asm().input("t0", f32, (2, 3)).init("t1", i64, [[0, 2], [1, -1]])
        .node("GatherElements", ["t0", "t1"], ["t2"], name="n1").attr(None, "axis", 1).output("t2"),
        "GatherND": Asm().input("t0", f32, (2, 3)).init("t1", i64, [[0, 1], [1, 2]])
        .node("GatherND", ["t0", "t1"], ["t2"], name="n1").attr(None, "batch_dims", 0).output("t2"),
        "ScatterND": Asm().input("t0", f32, (4, 3)).init("t1", i64, [[1], [3]]).init("t2", f32, np.ones((2, 3)))
        .node("ScatterND", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "reduction", "add").output("t3"),
        "OneHot": Asm().input("t0", i64, (3,)).init("t1", i64, np.array(4)).init("t2", f32, [0.0, 1.0])
        .node("OneHot", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "axis", -1).output("t3"),
        "NonZero": Asm().init("t0", f32, [[1.0, 0.0], [0.0, 2.0]]).node("NonZero", ["t0"], ["t1"], name="n1").output("t1"),
        "TopK": Asm().input("t0", f32, (2, 5)).init("t1", i64, [2])
        .node("TopK", ["t0", "t1"], ["t2", "t3"], name="n1").attr(None, "largest", 1).attr(None, "sorted", 1)
        .output("t2").output("t3"),
        "ArgMax": unary("ArgMax", axis=1, keepdims=0), "ArgMin": unary("ArgMin", axis=0, select_last_index=1),
        "Range": Asm().init("t0", i64, np.array(0)).init("t1", i64, np.array(7)).init("t2", i64, np.array(2))
        .node("Range", ["t0", "t1", "t2"], ["t3"], name="n1").output("t3"),
        "CumSum": Asm().input("t0", f32, (2, 3)).init("t1", i64, np.array(1))
        .node("CumSum", ["t0", "t1"], ["t2"], name="n1").attr(None, "exclusive", 1).attr(None, "reverse", 1).output("t2"),
        "Size": unary("Size"),
        "Tile": Asm().input("t0", f32, (2, 3)).init("t1", i64, [2, 1]).node("Tile", ["t0", "t1"], ["t2"], name="n1").output("t2"),
        "Pad": Asm().input("t0", f32, (2, 3)).init("t1", i64, [1, 0, 0, 2]).init("t2", f32, np.array(0.5))
        .node("Pad", ["t0", "t1", "t2"], ["t3"], name="n1").attr(None, "mode", "constant").output("t3"),
        "Trilu": Asm().input("t0", f32, (3, 3)).init("t1", i64, np.array(1))
        .node("Trilu", ["t0", "t1"], ["t2"], name="n1").attr(None, "upper", 0).output("t2"),
        "Einsum": Asm().input("t0", f32, (2, 3)).input("t1", f32, (3, 4))
        .node("Einsum", ["t0", "t1"], ["t2"], name="n1").attr(None, "equation", "ij,jk->ik").output("t2"),
    })
    progs.update(cnn_graph_seeds())
    progs.update(llm_graph_seeds())
    progs.update(quant_graph_seeds())
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "LessOrEqual", "Greater",
               "GreaterOrEqual"]:
        progs[op] = binary(op)
    for op in ["Sqrt", "Reciprocal", "Erf", "Tanh", "Relu", "Sigmoid", "SiLU", "Neg", "Exp", "Log",
               "Abs", "Identity", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "HardSwish",
               "Softplus", "Mish"]:
        progs.setdefault(op, unary(op))
    for op in ["ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]:
        progs[op] = (Asm().input("t0", f32, (2, 3, 4)).init("t1", i64, [-1])
                     .node(op, ["t0", "t1"], ["t2"], name="n1").attr(None, "keepdims", 1).output("t2"))
    progs["Pad_reflect"] = (Asm().input("t0", f32, (3, 4)).init("t1", i64, [1, 2, 1, 2])
                            .node("Pad", ["t0", "t1"], ["t2"], name="n1").attr(None, "mode", "reflect").output("t2"))
    progs["Einsum_diag"] = (Asm().input("t0", f32, (3, 3)).node("Einsum", ["t0"], ["t1"], name="n1")
                            .attr(None, "equation", "ii->i").output("t1"))
    missing = set(op_names()) - {k.split("_")[0] if k.startswith(("Pad_", "Einsum_", "MaxPool_", "AveragePool_", "DepthToSpace_")) else k for k in progs}
    assert not missing, f"no seed program for {sorted(missing)}"
    for op, a in progs.items():
        out[f"op_{op}.bin"] = a.bytes()
    # patterns the level-3 passes rewrite, and other planners / threads
    out["fuse_matmul_add_relu.bin"] = (
        Asm(planner="naive").input("t0", f32, (2, 4)).init("t1", f32, np.ones((4, 3))).init("t2", f32, np.ones(3))
        .node("MatMul", ["t0", "t1"], ["t3"], name="n1").node("Add", ["t3", "t2"], ["t4"], name="n2")
        .node("Relu", ["t4"], ["t5"], name="n3").output("t5").bytes())
    x = Asm(planner="greedy_by_first_use", threads=2).input("t0", f32, (2, 4))
    x.init("t1", "int64", [-1]).init("t2", f32, np.full(1, 1e-5)).init("t3", f32, np.ones(4)).init("t4", f32, np.zeros(4))
    x.node("ReduceMean", ["t0", "t1"], ["t5"], name="n1").node("Sub", ["t0", "t5"], ["t6"], name="n2")
    x.node("Mul", ["t6", "t6"], ["t7"], name="n3").node("ReduceMean", ["t7", "t1"], ["t8"], name="n4")
    x.node("Add", ["t8", "t2"], ["t9"], name="n5").node("Sqrt", ["t9"], ["t10"], name="n6")
    x.node("Div", ["t6", "t10"], ["t11"], name="n7").node("Mul", ["t11", "t3"], ["t12"], name="n8")
    x.node("Add", ["t12", "t4"], ["t13"], name="n9").output("t13")
    out["fuse_layernorm.bin"] = x.bytes()
    out["fold_shape_chain.bin"] = (
        Asm(disable=None).input("t0", f32, (2, 3, 4)).node("Shape", ["t0"], ["t1"], name="n1")
        .init("t2", "int64", np.array(0)).node("Gather", ["t1", "t2"], ["t3"], name="n2")
        .init("t4", "int64", [0]).node("Unsqueeze", ["t3", "t4"], ["t5"], name="n3")
        .init("t6", "int64", [-1]).node("Concat", ["t5", "t6"], ["t7"], name="n4").attr(None, "axis", 0)
        .node("Reshape", ["t0", "t7"], ["t8"], name="n5").output("t8").bytes())
    out["errors_mixed.bin"] = (
        Asm().input("t0", "undefined", (2,)).input("t1", f32, (2, -1)).node("Conv", ["t0"], ["t2"], name="n1")
        .node("Relu", ["t9"], ["t3"], name="n1").attr("n5", "axis", 1).output("t3").output("t15").bytes())
    return out


def onnx_seeds() -> dict[str, bytes]:
    import warnings

    import onnx
    from onnx import TensorProto as T, helper, numpy_helper

    def model(nodes, inputs, outputs, inits=(), opset=17):
        g = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="seed")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m.SerializeToString()

    vi = helper.make_tensor_value_info
    arr = numpy_helper.from_array
    out = {
        "mlp.onnx": model(
            [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])],
            [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 3])],
            [arr(np.ones((4, 3), np.float32), "w"), arr(np.zeros(3, np.float32), "b")]),
        "layernorm_softmax.onnx": model(
            [helper.make_node("LayerNormalization", ["x", "s", "c"], ["n"], axis=-1, epsilon=1e-5),
             helper.make_node("Softmax", ["n"], ["y"], axis=-1)],
            [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 4])],
            [arr(np.ones(4, np.float32), "s"), arr(np.zeros(4, np.float32), "c")]),
        "reshape_transpose.onnx": model(
            [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
             helper.make_node("Gelu", ["t"], ["y"])],
            [vi("x", T.FLOAT, [2, 3, 2])], [vi("y", T.FLOAT, [6, 2])],
            [arr(np.array([2, 6], np.int64), "shape")], opset=20),
        "gather_embed.onnx": model(
            [helper.make_node("Gather", ["emb", "ids"], ["e"], axis=0),
             helper.make_node("ReduceMean", ["e"], ["y"], axes=[1], keepdims=1)],
            [vi("ids", T.INT64, [1, 3])], [vi("y", T.FLOAT, [1, 1, 4])],
            [arr(np.arange(20, dtype=np.float32).reshape(5, 4), "emb")], opset=13),
        "shape_chain.onnx": model(
            [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["f"], to=T.FLOAT),
             helper.make_node("Constant", [], ["c"], value=arr(np.array([2.0], np.float32))),
             helper.make_node("Mul", ["f", "c"], ["y"])],
            [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2])]),
        "where_compare.onnx": model(
            [helper.make_node("Less", ["a", "b"], ["m"]), helper.make_node("Where", ["m", "a", "b"], ["w"]),
             helper.make_node("Concat", ["w", "a"], ["y"], axis=0)],
            [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [4, 3])]),
        "split_slice.onnx": model(
            [helper.make_node("Split", ["x", "sp"], ["p", "q"], axis=1),
             helper.make_node("Slice", ["p", "st", "en"], ["s"]),
             helper.make_node("Unsqueeze", ["s", "ax"], ["y"]), helper.make_node("Sqrt", ["q"], ["z"])],
            [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [1, 1, 2]), vi("z", T.FLOAT, [2, 2])],
            [arr(np.array([2, 2], np.int64), "sp"), arr(np.array([0], np.int64), "st"),
             arr(np.array([1], np.int64), "en"), arr(np.array([0], np.int64), "ax")], opset=18),
        "dynamic_batch.onnx": model(
            [helper.make_node("Tanh", ["x"], ["y"])],
            [vi("x", T.FLOAT, ["batch", 3])], [vi("y", T.FLOAT, ["batch", 3])]),
        "unsupported_op.onnx": model(
            [helper.make_node("Conv", ["x", "w"], ["y"])],
            [vi("x", T.FLOAT, [1, 1, 3, 3])], [vi("y", T.FLOAT, [1, 1, 1, 1])],
            [arr(np.ones((1, 1, 3, 3), np.float32), "w")]),
    }
    # a handful of the ONNX backend test models (onnx.backend.test.case)
    warnings.filterwarnings("ignore")
    from onnx.backend.test.case import node as node_cases
    import peregrine_nb as pg

    wanted = ["test_gemm_default_vector_bias", "test_softmax_axis_1", "test_layer_normalization_2d_axis0",
              "test_gather_1", "test_transpose_all_permutations_3", "test_reshape_reordered_all_dims",
              "test_concat_3d_axis_negative_2", "test_slice_neg_steps", "test_expand_dim_changed",
              "test_reduce_sum_keepdims_example", "test_gelu_tanh_2", "test_split_variable_parts_2d_opset18",
              "test_constantofshape_int_zeros", "test_where_long_example", "test_pow_bcast_array",
              "test_erf", "test_flatten_negative_axis1", "test_squeeze_negative_axes",
              # the CNN ops
              "test_conv_with_strides_and_asymmetric_padding", "test_convtranspose_output_shape",
              "test_maxpool_2d_ceil", "test_averagepool_2d_pads_count_include_pad",
              "test_resize_upsample_scales_linear", "test_depthtospace_crd_mode_example"]
    cases = {c.name: c for c in node_cases.collect_testcases()}
    for name in wanted:
        c = cases.get(name)
        if c is None:
            continue
        m = onnx.ModelProto()
        m.CopyFrom(c.model)
        # inputs whose values decide shapes become initializers (the case's data)
        from peregrine_nb.onnx_import import value_inputs
        try:
            fixed = set(value_inputs(m))
        except pg.PeregrineError:
            fixed = set()
        names = [i.name for i in m.graph.input]
        for k, v in zip(names, c.data_sets[0][0] if c.data_sets else []):
            if k in fixed:
                m.graph.initializer.append(arr(np.asarray(v), k))
        keep = [i for i in m.graph.input if i.name not in fixed]
        del m.graph.input[:]
        m.graph.input.extend(keep)
        data = m.SerializeToString()
        try:
            pg.load_onnx(data)
        except pg.PeregrineError:
            pass   # still a good seed: the importer's refusals are paths too
        out[f"backend_{name[5:]}.onnx"] = data
    return out


def write(dir_: Path, files: dict[str, bytes]) -> None:
    dir_.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (dir_ / name).write_bytes(data)


def main() -> None:
    write(HERE / "vocab", {name: vocab_gguf(pre) for name, pre in VOCABS.items()})
    write(HERE / "vocab", {"tok_spm.gguf": spm_vocab_gguf()})
    write(HERE / "corpus" / "gguf", gguf_seeds())
    write(HERE / "corpus" / "tokenizer", tokenizer_seeds())
    write(HERE / "corpus" / "graph", graph_seeds())
    write(HERE / "corpus" / "onnx", onnx_seeds())
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    print(f"seeds written under {HERE} ({total} bytes in all)")


if __name__ == "__main__":
    main()
