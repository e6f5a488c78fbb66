"""Graphs the graph-compiler tests share: a BERT-style transformer block as
an ONNX exporter writes it (decomposed LayerNorm and erf-GELU, attention as
MatMul/Div/Add/Softmax/MatMul with Reshape/Transpose around it), and its
numpy reference."""
from __future__ import annotations

import math

import numpy as np

import peregrine_nb as pg


def transformer_weights(hidden=128, heads=4, ffn=512, seed=0):
    r = np.random.default_rng(seed)

    def w(*s, scale=None):
        scale = scale or 1 / math.sqrt(s[0])
        return (r.standard_normal(s) * scale).astype(np.float32)

    return {
        "wq": w(hidden, hidden), "bq": w(hidden, scale=0.1), "wk": w(hidden, hidden), "bk": w(hidden, scale=0.1),
        "wv": w(hidden, hidden), "bv": w(hidden, scale=0.1), "wo": w(hidden, hidden), "bo": w(hidden, scale=0.1),
        "g1": (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32), "be1": w(hidden, scale=0.1),
        "w1": w(hidden, ffn), "b1": w(ffn, scale=0.1), "w2": w(ffn, hidden), "b2": w(hidden, scale=0.1),
        "g2": (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32), "be2": w(hidden, scale=0.1),
        "heads": heads,
    }


def _layernorm(g: pg.Graph, x: str, gamma: str, beta: str, p: str) -> str:
    g.add_node("ReduceMean", [x], [p + "mean"], axes=[-1])
    g.add_node("Sub", [x, p + "mean"], [p + "d"])
    g.add_node("Pow", [p + "d", "two"], [p + "d2"])
    g.add_node("ReduceMean", [p + "d2"], [p + "var"], axes=[-1])
    g.add_node("Add", [p + "var", "eps"], [p + "ve"])
    g.add_node("Sqrt", [p + "ve"], [p + "std"])
    g.add_node("Div", [p + "d", p + "std"], [p + "n"])
    g.add_node("Mul", [p + "n", gamma], [p + "s"])
    g.add_node("Add", [p + "s", beta], [p + "out"])
    return p + "out"


def transformer_block(batch=1, seq=64, W=None, mask=True) -> pg.Graph:
    W = W or transformer_weights()
    hidden = W["wq"].shape[0]
    H = W["heads"]
    D = hidden // H
    g = pg.Graph()
    g.add_input("x", (batch, seq, hidden))
    if mask:
        g.add_input("mask", (batch, 1, 1, seq))
    for k, v in W.items():
        if k != "heads":
            g.add_initializer(k, v)
    g.add_initializer("two", np.array(2.0, np.float32))
    g.add_initializer("eps", np.array(1e-5, np.float32))
    g.add_initializer("sqrt_d", np.array(math.sqrt(D), np.float32))
    g.add_initializer("heads_shape", np.array([batch, seq, H, D], np.int64))
    g.add_initializer("merge_shape", np.array([batch, seq, hidden], np.int64))
    g.add_initializer("sqrt2", np.array(math.sqrt(2), np.float32))
    g.add_initializer("one", np.array(1.0, np.float32))
    g.add_initializer("half", np.array(0.5, np.float32))
    for n in "qkv":
        g.add_node("MatMul", ["x", "w" + n], [n + "_mm"])
        g.add_node("Add", [n + "_mm", "b" + n], [n + "_b"])
        g.add_node("Reshape", [n + "_b", "heads_shape"], [n + "_r"])
    g.add_node("Transpose", ["q_r"], ["q_t"], perm=[0, 2, 1, 3])
    g.add_node("Transpose", ["k_r"], ["k_t"], perm=[0, 2, 3, 1])
    g.add_node("Transpose", ["v_r"], ["v_t"], perm=[0, 2, 1, 3])
    g.add_node("MatMul", ["q_t", "k_t"], ["scores"])
    g.add_node("Div", ["scores", "sqrt_d"], ["scaled"])
    if mask:
        g.add_node("Add", ["scaled", "mask"], ["masked"])
    g.add_node("Softmax", ["masked" if mask else "scaled"], ["probs"], axis=-1)
    g.add_node("MatMul", ["probs", "v_t"], ["ctx"])
    g.add_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3])
    g.add_node("Reshape", ["ctx_t", "merge_shape"], ["ctx_m"])
    g.add_node("MatMul", ["ctx_m", "wo"], ["o_mm"])
    g.add_node("Add", ["o_mm", "bo"], ["o_b"])
    g.add_node("Add", ["o_b", "x"], ["res1"])
    ln1 = _layernorm(g, "res1", "g1", "be1", "ln1_")
    g.add_node("MatMul", [ln1, "w1"], ["f1_mm"])
    g.add_node("Add", ["f1_mm", "b1"], ["f1"])
    g.add_node("Div", ["f1", "sqrt2"], ["ge_d"])
    g.add_node("Erf", ["ge_d"], ["ge_e"])
    g.add_node("Add", ["ge_e", "one"], ["ge_a"])
    g.add_node("Mul", ["f1", "ge_a"], ["ge_m"])
    g.add_node("Mul", ["ge_m", "half"], ["gelu"])
    g.add_node("MatMul", ["gelu", "w2"], ["f2_mm"])
    g.add_node("Add", ["f2_mm", "b2"], ["f2"])
    g.add_node("Add", ["f2", ln1], ["res2"])
    out = _layernorm(g, "res2", "g2", "be2", "ln2_")
    g.add_node("Identity", [out], ["y"])
    g.add_output("y")
    return g


def transformer_ref(x, mask, W):
    from math import erf

    H = W["heads"]
    B, S, hid = x.shape
    D = hid // H
    x = x.astype(np.float64)

    def ln(t, gam, bet):
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + 1e-5) * gam + bet

    q = (x @ W["wq"] + W["bq"]).reshape(B, S, H, D).transpose(0, 2, 1, 3)
    k = (x @ W["wk"] + W["bk"]).reshape(B, S, H, D).transpose(0, 2, 3, 1)
    v = (x @ W["wv"] + W["bv"]).reshape(B, S, H, D).transpose(0, 2, 1, 3)
    s = q @ k / math.sqrt(D)
    if mask is not None:
        s = s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, hid)
    r1 = ln(ctx @ W["wo"] + W["bo"] + x, W["g1"], W["be1"])
    f1 = r1 @ W["w1"] + W["b1"]
    gelu = 0.5 * f1 * (1 + np.vectorize(erf)(f1 / math.sqrt(2)))
    return ln(gelu @ W["w2"] + W["b2"] + r1, W["g2"], W["be2"])
