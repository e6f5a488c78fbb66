"""Example graphs, built node by node the way ``torch.onnx.export`` writes
them, for the notebooks, the tour and the optimiser's tests.

>>> from peregrine_nb.examples import transformer_block
>>> import peregrine_nb as pg
>>> g = transformer_block(seq=8, hidden=32, heads=4)
>>> feeds = g.make_feeds()
>>> out = pg.compile(g, level=3).run(feeds)["out"]
>>> bool(abs(out - g.reference(feeds)["out"]).max() < 1e-3)
True

The block is a BERT encoder layer: self-attention (Q, K, V projections,
heads split by Reshape + Transpose with Shape -> Gather -> Unsqueeze ->
Concat shape chains, scores scaled by Div and masked by Add, Softmax, heads
merged back), output projection + residual + LayerNorm, and a feed-forward
of MatMul + erf-GELU + MatMul + residual + LayerNorm - every LayerNorm and
GELU in its decomposed exported form.  Compiled at level 2 or 3 the three
projections become one QKVMatMul, the bias adds and the GELU are MatMul
epilogues, the attention core and the head split/merge around it are one
FusedAttention (reading the heads with a stride, no transposes left) and
each LayerNorm one node.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .graph import Graph


class _Namer:
    def __init__(self, g: Graph, prefix: str) -> None:
        self.g, self.prefix, self.n = g, prefix, 0
        self.arrays: dict[str, np.ndarray] = {}   # role -> weight, for the reference

    def t(self, what: str) -> str:
        self.n += 1
        return f"{self.prefix}{what}_{self.n}"

    def const(self, what: str, value, role: str | None = None) -> str:
        name = self.t(what)
        self.g.add_initializer(name, np.asarray(value))
        if role:
            self.arrays[role] = np.asarray(value)
        return name

    def node(self, op: str, inputs, what: str | None = None, n_out: int = 1, **attrs):
        outs = [self.t(what or op.lower()) for _ in range(n_out)]
        self.g.add_node(op, list(inputs), outs, **attrs)
        return outs[0] if n_out == 1 else outs


def _shape_chain(nm: _Namer, x: str, keep: int, tail: list[int]) -> str:
    """Shape(x) -> Gather(i) -> Unsqueeze for the first `keep` dims, Concat
    with the constant tail: the int64 shape tensor torch exports for
    ``x.view(x.size(0), x.size(1), ...)``."""
    shp = nm.node("Shape", [x], "shape")
    parts = []
    for i in range(keep):
        idx = nm.const("idx", np.array(i, np.int64))
        d = nm.node("Gather", [shp, idx], "dim", axis=0)
        ax = nm.const("axes", np.array([0], np.int64))
        parts.append(nm.node("Unsqueeze", [d, ax], "dim1"))
    parts.append(nm.const("tail", np.array(tail, np.int64)))
    return nm.node("Concat", parts, "newshape", axis=0)


def _layernorm(nm: _Namer, x: str, hidden: int, rng, role: str, eps: float = 1e-12) -> str:
    """The decomposition torch exports for nn.LayerNorm (opset 13 axes)."""
    mean = nm.node("ReduceMean", [x], "mean", axes=[-1], keepdims=1)
    d = nm.node("Sub", [x, mean], "centered")
    p = nm.node("Pow", [d, nm.const("two", np.array(2.0, np.float32))], "sq")
    var = nm.node("ReduceMean", [p], "var", axes=[-1], keepdims=1)
    ve = nm.node("Add", [var, nm.const("eps", np.array(eps, np.float32))], "var_eps")
    s = nm.node("Sqrt", [ve], "std")
    n = nm.node("Div", [d, s], "normed")
    gamma = nm.const("gamma", (1.0 + 0.1 * rng.standard_normal(hidden)).astype(np.float32),
                     role + "_gamma")
    beta = nm.const("beta", (0.1 * rng.standard_normal(hidden)).astype(np.float32), role + "_beta")
    y = nm.node("Mul", [n, gamma], "scaled")
    return nm.node("Add", [y, beta], "ln")


def _gelu(nm: _Namer, x: str) -> str:
    """F.gelu as exported: x * (1 + erf(x / sqrt 2)) * 0.5, written Div, Erf,
    Add, Mul(x, .), Mul(., 0.5)."""
    d = nm.node("Div", [x, nm.const("sqrt2", np.array(math.sqrt(2.0), np.float32))], "gelu_div")
    e = nm.node("Erf", [d], "gelu_erf")
    a = nm.node("Add", [e, nm.const("one", np.array(1.0, np.float32))], "gelu_add")
    m = nm.node("Mul", [x, a], "gelu_mul")
    return nm.node("Mul", [m, nm.const("half", np.array(0.5, np.float32))], "gelu")


def _linear(nm: _Namer, x: str, k: int, n: int, rng, what: str) -> str:
    w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n)).astype(np.float32)
    y = nm.node("MatMul", [x, nm.const(what + "_w", w, what + "_w")], what + "_mm")
    return nm.node("Add", [y, nm.const(what + "_b", b, what + "_b")], what)


def transformer_block(seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int | None = None,
                      batch: int = 1, seed: int = 0, mask: bool = True) -> Graph:
    """A BERT encoder layer as ``torch.onnx.export`` writes it, with random
    weights.  Inputs ``x`` [batch, seq, hidden] (and, with ``mask``, an
    additive ``mask`` [batch, 1, 1, seq]); output ``out``.

    The returned graph also carries ``g.make_feeds(seed=1)`` (random inputs,
    the mask hiding the last quarter of the keys) and ``g.reference(feeds)``
    (the same layer in numpy, float64), for checking a compiled model."""
    if hidden % heads:
        raise ValueError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
    ffn = ffn or 4 * hidden
    dh = hidden // heads
    rng = np.random.default_rng(seed)
    g = Graph()
    nm = _Namer(g, "")
    g.add_input("x", (batch, seq, hidden))
    if mask:
        g.add_input("mask", (batch, 1, 1, seq))

    # self-attention: projections, heads split as [B, S, H, D] -> [B, H, S, D]
    heads4 = {}
    for which in ("q", "k", "v"):
        y = _linear(nm, "x", hidden, hidden, rng, which)
        shp = _shape_chain(nm, y, 2, [heads, dh])
        r = nm.node("Reshape", [y, shp], which + "_heads")
        heads4[which] = nm.node("Transpose", [r], which + "_t", perm=[0, 2, 1, 3])
    # key.transpose(-1, -2): a second Transpose (noop_elimination merges the two)
    kt = nm.node("Transpose", [heads4["k"]], "k_T", perm=[0, 1, 3, 2])
    scores = nm.node("MatMul", [heads4["q"], kt], "scores")
    scaled = nm.node("Div", [scores, nm.const("sqrt_dh", np.array(math.sqrt(dh), np.float32))],
                     "scores_scaled")
    if mask:
        scaled = nm.node("Add", [scaled, "mask"], "scores_masked")
    probs = nm.node("Softmax", [scaled], "probs", axis=-1)
    ctx = nm.node("MatMul", [probs, heads4["v"]], "context")
    ctx_t = nm.node("Transpose", [ctx], "context_t", perm=[0, 2, 1, 3])
    shp = _shape_chain(nm, ctx_t, 2, [hidden])
    merged = nm.node("Reshape", [ctx_t, shp], "context_merged")
    attn = _linear(nm, merged, hidden, hidden, rng, "attn_out")
    res1 = nm.node("Add", [attn, "x"], "residual1")
    ln1 = _layernorm(nm, res1, hidden, rng, "ln1")

    # feed-forward
    h = _linear(nm, ln1, hidden, ffn, rng, "ffn1")
    act = _gelu(nm, h)
    f2 = _linear(nm, act, ffn, hidden, rng, "ffn2")
    res2 = nm.node("Add", [f2, ln1], "residual2")
    ln2 = _layernorm(nm, res2, hidden, rng, "ln2")
    g.add_node("Identity", [ln2], ["out"], name="output")
    g.add_output("out")
    weights = nm.arrays

    def make_feeds(seed: int = 1) -> dict[str, np.ndarray]:
        r = np.random.default_rng(seed)
        feeds = {"x": r.standard_normal((batch, seq, hidden)).astype(np.float32)}
        if mask:
            m = np.zeros((batch, 1, 1, seq), np.float32)
            m[..., seq - seq // 4:] = -10000.0
            feeds["mask"] = m
        return feeds

    def reference(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"out": _reference(feeds, weights, heads, mask).astype(np.float32)}

    g.make_feeds = make_feeds            # type: ignore[attr-defined]
    g.reference = reference              # type: ignore[attr-defined]
    g.weights = weights                  # type: ignore[attr-defined]
    return g


def _reference(feeds, w, heads, mask) -> np.ndarray:
    x = feeds["x"].astype(np.float64)
    B, S, Hd = x.shape
    dh = Hd // heads

    def lin(t, k):
        return t @ w[k + "_w"].astype(np.float64) + w[k + "_b"]

    def ln(t, k):
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + 1e-12) * w[k + "_gamma"] + w[k + "_beta"]

    def split(t):
        return t.reshape(B, S, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(lin(x, "q")), split(lin(x, "k")), split(lin(x, "v"))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    if mask:
        s = s + feeds["mask"]
    s = np.exp(s - s.max(-1, keepdims=True))
    p = s / s.sum(-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, Hd)
    h1 = ln(lin(ctx, "attn_out") + x, "ln1")
    f = lin(h1, "ffn1")
    gelu = 0.5 * f * (1.0 + np.vectorize(math.erf)(f / math.sqrt(2.0)))
    return ln(lin(gelu, "ffn2") + h1, "ln2")
