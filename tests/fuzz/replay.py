"""The fuzz targets' entry points through the Python API, one per target.

Each takes one input (the bytes of a corpus or crash file) and returns
normally when the engine handled it: success, or an exception of an
accepted class (peregrine_nb.errors.PeregrineError and its subclasses,
FileNotFoundError).  Anything else - another exception type, a failed
check (AssertionError), a crash of the process - is a bug.

  gguf       peregrine_nb.load_gguf on the bytes (a temporary file), every
             metadata value, every tensor info, small tensors expanded,
             a few rows of each, the tokenizer when the metadata has one
  tokenizer  the tokenizers of tests/fuzz/vocab on the text after a flags
             byte (as engine/fuzz/fuzz_tokenizer.c: bits 0-1 pick the
             vocabulary, 3 the SentencePiece one, bit 2 add_bos, bit 3
             parse_special)
  graph      the byte code of engine/fuzz/fuzz_graph.c (graph_bytecode.py)
  onnx       peregrine_nb.load_onnx on the bytes, then compile at levels 0
             and 3 and run on zero feeds

tests/test_fuzz_regressions.py runs every corpus and crash file through
these; tests/fuzz/fuzz_onnx.py fuzzes `onnx` with atheris.

    python3 tests/fuzz/replay.py TARGET FILE...    (exit 0: all handled)
"""
from __future__ import annotations

import math
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peregrine_nb as pg  # noqa: E402
from peregrine_nb.errors import PeregrineError  # noqa: E402

ACCEPTED = (PeregrineError, FileNotFoundError)


class KnownBug(AssertionError):
    """A check failed the way a bug of tests/fuzz/known_bugs.json makes it
    fail (its id first in the message).  A failure like any other, except
    that tests/fuzz/fuzz_onnx.py counts and goes past it when
    PG_FUZZ_IGNORE_KNOWN=1 (tests/run_fuzz.sh sets it), so a known open bug
    does not stop every fuzzing run."""

    def __init__(self, bug_id: str, message: str):
        super().__init__(f"{bug_id}: {message}")
        self.bug_id = bug_id
MAX_ELEMENTS = 65536
MAX_RUN_BYTES = 32 << 20
TARGETS = ("gguf", "tokenizer", "graph", "onnx")


# ---------------------------------------------------------------------------
# gguf
# ---------------------------------------------------------------------------

def _walk_gguf(f) -> None:
    try:   # a uint64 above INT64_MAX is a DTypeError (pg_gguf_get_int cannot give it)
        md = f.metadata
        for k in list(md)[:8]:
            f.get(k)
        f.summary()
        f._repr_html_()
    except ACCEPTED:
        pass
    repr(f)
    for t in f.tensors:
        assert 0 <= t.bytes <= f.file_size and t.offset + t.bytes <= f.file_size, t
        assert len(f.raw(t.name)) == t.bytes
        if t.n_elements <= MAX_ELEMENTS:
            try:
                a = f.tensor(t.name)
                assert a.shape == t.shape and a.dtype == np.float32
            except ACCEPTED:
                pass
        width = t.dims[0] if t.dims else 0
        if 0 < width <= MAX_ELEMENTS:
            rows = t.n_elements // width
            try:
                assert f.rows(t.name, 0, min(rows, 2)).shape == (min(rows, 2), width)
                if rows:
                    f.rows(t.name, rows - 1, 1)
            except ACCEPTED:
                pass
    try:
        tok = f.tokenizer
    except ACCEPTED:
        tok = None
    if tok is not None:
        for text in ("Hello, world! 123 <|im_start|>user\nhi<|im_end|>", "\xff abc \u65e5\u672c", ""):
            ids = tok.encode(text)
            tok.decode(ids, special=True)
            tok.decode(ids)
        for i in range(min(tok.vocab_size, 64)):
            tok.id_to_token(i)
            tok.token_to_piece(i, special=bool(i & 1))
            tok.token_type(i)
    try:
        f.apply_chat_template([{"role": "user", "content": "hi"}])
    except ACCEPTED:
        pass


def gguf(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "input.gguf"
        path.write_bytes(data)
        try:
            f = pg.load_gguf(path)
        except ACCEPTED:
            return
        _walk_gguf(f)
        del f


# ---------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _tokenizers():
    d = Path(os.environ.get("PG_FUZZ_VOCAB_DIR") or HERE / "vocab")
    files = [pg.load_gguf(d / n) for n in ("tok_smollm.gguf", "tok_gpt2.gguf", "tok_llama3.gguf",
                                            "tok_spm.gguf")]
    return files, [f.tokenizer for f in files]


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def tokenizer(data: bytes) -> None:
    if not data:
        return
    flags, text = data[0], bytes(data[1:])
    tok = _tokenizers()[1][flags & 3]
    spm = flags & 3 == 3   # SentencePiece: the first piece's space comes off in a decode
    add_bos, special = bool(flags >> 2 & 1), bool(flags >> 3 & 1)
    ids = tok.encode(text, add_bos=add_bos, special=special)
    assert all(0 <= i < tok.vocab_size for i in ids), ids
    assert not add_bos or ids[:1] == [tok.bos_id]
    assert not text or len(ids) > add_bos, "text gave no ids"
    dec = tok.decode_bytes(ids, special=True)
    pieces = b"".join(tok.token_to_piece(i, special=True) for i in ids)
    assert dec == (pieces[1:] if spm and pieces[:1] == b" " and
                   tok.token_to_piece(ids[0], special=True)[:1] == b" " else pieces)
    plain = all(tok.token_type(i) in (1, 6) for i in ids[int(add_bos):])
    if _valid_utf8(text) and (not spm or (plain and "\u2581".encode() not in text)):
        assert tok.decode_bytes(ids[1:] if add_bos else ids, special=True) == text, "round trip"
    tok.decode(ids)
    stream = tok.stream(special=True)
    streamed = "".join(stream.feed(i) for i in ids) + stream.flush()
    assert streamed == pieces.decode("utf-8", "replace")
    raw = [(text[2 * i] | text[2 * i + 1] << 8) % (tok.vocab_size + 2) - 1 for i in range(len(text) // 2)]
    bad = any(i < 0 or i >= tok.vocab_size for i in raw)
    for sp in (False, True):
        try:
            tok.decode_bytes(raw, special=sp)
            assert not bad, "an id out of range was decoded"
        except pg.InvalidArgumentError:
            assert bad
    for i in raw[:8]:
        try:
            tok.token_to_piece(i)
            tok.id_to_token(i)
        except pg.InvalidArgumentError:
            assert i < 0 or i >= tok.vocab_size


# ---------------------------------------------------------------------------
# graph
# ---------------------------------------------------------------------------

def graph(data: bytes) -> None:
    import graph_bytecode
    graph_bytecode.run(data)


# ---------------------------------------------------------------------------
# onnx
# ---------------------------------------------------------------------------

def _check_sizes(m) -> int:
    """Every input's and output's byte size as the engine states it equals
    the exact product of its dims; returns the largest."""
    from peregrine_nb._lib import ffi, lib
    from peregrine_nb.graph import numpy_dtype
    info = ffi.new("pg_tensor_info *")
    biggest = 0
    for get, count in ((lib.pg_model_input_info, lib.pg_model_input_count),
                       (lib.pg_model_output_info, lib.pg_model_output_count)):
        for i in range(count(m._m)):
            assert get(m._m, i, info) == 0
            dims = [int(info.dims[d]) for d in range(info.rank)]
            exact = math.prod(dims) * numpy_dtype(info.dtype).itemsize
            if exact != info.nbytes:
                raise KnownBug("engine-size-overflow", f"tensor {ffi.string(info.name)!r} of dims {dims}: "
                               f"the engine says {info.nbytes} bytes, it has {exact}")
            biggest = max(biggest, exact)
    return biggest


def onnx(data: bytes) -> None:
    try:
        g = pg.load_onnx(bytes(data))
    except ACCEPTED:
        return
    in_bytes = sum(math.prod(s) * np.dtype(d).itemsize for s, d in g.input_specs.values())
    if in_bytes > MAX_RUN_BYTES:
        return
    for level in (0, 3):
        try:
            m = pg.compile(g, level=level)
        except ACCEPTED:
            continue
        if _check_sizes(m) > MAX_RUN_BYTES or m.memory_stats["arena"] > MAX_RUN_BYTES:
            continue
        feeds = {k: np.zeros(s, d) for k, (s, d) in m.inputs.items()}
        try:
            out = m.run(feeds)
        except ACCEPTED:
            continue
        assert set(out) == set(m.outputs), (sorted(out), sorted(m.outputs))
        for k, a in out.items():
            assert a.shape == m.outputs[k][0], (k, a.shape, m.outputs[k][0])


ENTRY = {"gguf": gguf, "tokenizer": tokenizer, "graph": graph, "onnx": onnx}


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ENTRY:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for f in argv[1:]:
        ENTRY[argv[0]](Path(f).read_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
