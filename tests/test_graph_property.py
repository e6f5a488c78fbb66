"""Property test: random graphs (chains of elementwise, matmul, norm and
reshaping ops over a [rows, width] activation) give the same answer at
level 3 as at level 0, and both agree with numpy, under every planner."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import peregrine_nb as pg

OPS = ["Add", "Mul", "Sub", "Relu", "Tanh", "Sigmoid", "MatMul", "MatMulBias", "Softmax", "LayerNorm",
       "GeluDecomposed", "ReshapeRoundTrip", "Transpose2"]


def build(ops, rows, width, seed):
    r = np.random.default_rng(seed)
    g = pg.Graph()
    g.add_input("x", (rows, width))
    cur, ref = "x", None
    steps = []
    for i, op in enumerate(ops):
        o = f"t{i}"
        if op in ("Add", "Mul", "Sub"):
            c = r.uniform(0.5, 1.5, width).astype(np.float32)
            g.add_initializer(f"c{i}", c)
            g.add_node(op, [cur, f"c{i}"], [o])
            steps.append((op, c))
        elif op in ("Relu", "Tanh", "Sigmoid", "Softmax"):
            g.add_node(op, [cur], [o])
            steps.append((op, None))
        elif op in ("MatMul", "MatMulBias"):
            w = (r.standard_normal((width, width)) / math.sqrt(width)).astype(np.float32)
            g.add_initializer(f"w{i}", w)
            if op == "MatMul":
                g.add_node("MatMul", [cur, f"w{i}"], [o])
                steps.append(("MatMul", (w, None)))
            else:
                b = r.standard_normal(width).astype(np.float32)
                g.add_initializer(f"b{i}", b)
                g.add_node("MatMul", [cur, f"w{i}"], [o + "m"])
                g.add_node("Add", [o + "m", f"b{i}"], [o])
                steps.append(("MatMul", (w, b)))
        elif op == "LayerNorm":
            gam = r.uniform(0.5, 1.5, width).astype(np.float32)
            g.add_initializer(f"g{i}", gam)
            g.add_initializer(f"e{i}", np.array(1e-5, np.float32))
            g.add_node("ReduceMean", [cur], [o + "mu"], axes=[-1])
            g.add_node("Sub", [cur, o + "mu"], [o + "d"])
            g.add_node("Mul", [o + "d", o + "d"], [o + "d2"])
            g.add_node("ReduceMean", [o + "d2"], [o + "v"], axes=[-1])
            g.add_node("Add", [o + "v", f"e{i}"], [o + "ve"])
            g.add_node("Sqrt", [o + "ve"], [o + "s"])
            g.add_node("Div", [o + "d", o + "s"], [o + "n"])
            g.add_node("Mul", [o + "n", f"g{i}"], [o])
            steps.append(("LayerNorm", gam))
        elif op == "GeluDecomposed":
            for k, v in (("s2", math.sqrt(2)), ("one", 1.0), ("half", 0.5)):
                g.add_initializer(f"{k}{i}", np.array(v, np.float32))
            g.add_node("Div", [cur, f"s2{i}"], [o + "a"])
            g.add_node("Erf", [o + "a"], [o + "b"])
            g.add_node("Add", [o + "b", f"one{i}"], [o + "c"])
            g.add_node("Mul", [cur, o + "c"], [o + "d"])
            g.add_node("Mul", [o + "d", f"half{i}"], [o])
            steps.append(("Gelu", None))
        elif op == "ReshapeRoundTrip":
            g.add_initializer(f"s{i}", np.array([rows * width], np.int64))
            g.add_initializer(f"u{i}", np.array([rows, width], np.int64))
            g.add_node("Reshape", [cur, f"s{i}"], [o + "f"])
            g.add_node("Reshape", [o + "f", f"u{i}"], [o])
            steps.append(("Id", None))
        elif op == "Transpose2":
            g.add_node("Transpose", [cur], [o + "t"], perm=[1, 0])
            g.add_node("Transpose", [o + "t"], [o], perm=[1, 0])
            steps.append(("Id", None))
        cur = o
    g.add_node("Identity", [cur], ["y"])
    g.add_output("y")
    return g, steps


def numpy_ref(x, steps):
    y = x.astype(np.float64)
    for op, p in steps:
        if op == "Add": y = y + p
        elif op == "Mul": y = y * p
        elif op == "Sub": y = y - p
        elif op == "Relu": y = np.maximum(y, 0)
        elif op == "Tanh": y = np.tanh(y)
        elif op == "Sigmoid": y = 1 / (1 + np.exp(-y))
        elif op == "Softmax":
            e = np.exp(y - y.max(-1, keepdims=True))
            y = e / e.sum(-1, keepdims=True)
        elif op == "MatMul":
            y = y @ p[0] + (p[1] if p[1] is not None else 0)
        elif op == "LayerNorm":
            mu = y.mean(-1, keepdims=True)
            y = (y - mu) / np.sqrt(((y - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * p
        elif op == "Gelu":
            y = 0.5 * y * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
    return y


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=7),
       rows=st.integers(1, 9), width=st.sampled_from([1, 3, 8, 17, 32]),
       seed=st.integers(0, 2 ** 16), planner=st.sampled_from(["greedy_by_size", "greedy_by_first_use", "naive"]))
def test_random_graphs_levels_agree(ops, rows, width, seed, planner):
    g, steps = build(ops, rows, width, seed)
    x = np.random.default_rng(seed + 1).standard_normal((rows, width)).astype(np.float32)
    y0 = pg.compile(g, level=0, planner=planner).run({"x": x})["y"]
    y3 = pg.compile(g, level=3, planner=planner).run({"x": x})["y"]
    ref = numpy_ref(x, steps)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(y0, ref, rtol=1e-3, atol=1e-3 * scale)
    np.testing.assert_allclose(y3, ref, rtol=1e-3, atol=1e-3 * scale)
    np.testing.assert_allclose(y3, y0, rtol=1e-3, atol=1e-3 * scale)
