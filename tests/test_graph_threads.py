"""Ops that split their rows / elements over the model's threads
(engine/exec/parallel.c): big enough to be split, they give the same bits
at 1, 2 and 3 threads, and match numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import peregrine_nb as pg

rng = np.random.default_rng(11)


def run_threads(build, feeds):
    outs = []
    for t in (1, 2, 3):
        g = build()
        outs.append(pg.compile(g, level=0, threads=t).run(feeds)["y"])
    for o in outs[1:]:
        assert np.array_equal(outs[0], o)
    return outs[0]


def one_node(op, shapes, inits=None, **attrs):
    def build():
        g = pg.Graph()
        names = []
        for n, s in shapes.items():
            g.add_input(n, s)
            names.append(n)
        for n, a in (inits or {}).items():
            g.add_initializer(n, a)
            names.append(n)
        g.add_node(op, names, ["y"], **attrs)
        g.add_output("y")
        return g
    return build


SHAPE = (8, 128, 384)   # MiniLM at batch 8: 393 K elements


def test_add_equal_shapes_and_row():
    a, b = rng.standard_normal(SHAPE).astype(np.float32), rng.standard_normal(SHAPE).astype(np.float32)
    y = run_threads(one_node("Add", {"a": SHAPE, "b": SHAPE}), {"a": a, "b": b})
    np.testing.assert_array_equal(y, a + b)
    row = rng.standard_normal(SHAPE[-1]).astype(np.float32)
    y = run_threads(one_node("Mul", {"a": SHAPE}, {"r": row}), {"a": a})
    np.testing.assert_array_equal(y, a * row)


def test_odd_length_add():
    n = (100003,)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(run_threads(one_node("Add", {"a": n, "b": n}), {"a": a, "b": b}), a + b)


def test_layernorm_rows():
    x = rng.standard_normal(SHAPE).astype(np.float32)
    g, b = rng.standard_normal(384).astype(np.float32), rng.standard_normal(384).astype(np.float32)
    y = run_threads(one_node("LayerNormalization", {"x": SHAPE}, {"g": g, "b": b}, epsilon=1e-12), {"x": x})
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    ref = (x64 - mu) / np.sqrt(x64.var(-1, keepdims=True) + 1e-12) * g + b
    np.testing.assert_allclose(y, ref, atol=1e-4)


def test_softmax_rows():
    x = rng.standard_normal((8, 12, 128, 128)).astype(np.float32)
    y = run_threads(one_node("Softmax", {"x": x.shape}, axis=-1), {"x": x})
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), atol=1e-6)


@pytest.mark.parametrize("op", ["Gelu", "Tanh", "Sigmoid"])
def test_unary_kernels(op):
    x = rng.standard_normal((3, 70001)).astype(np.float32)
    y = run_threads(one_node(op, {"x": x.shape}), {"x": x})
    ref = {"Gelu": lambda t: 0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2))),
           "Tanh": np.tanh, "Sigmoid": lambda t: 1 / (1 + np.exp(-t))}[op](x.astype(np.float64))
    np.testing.assert_allclose(y, ref, atol=1e-5)


@pytest.mark.parametrize("perm", [(0, 2, 1, 3), (0, 2, 3, 1), (3, 1, 0, 2)])
def test_transpose(perm):
    x = rng.standard_normal((8, 128, 12, 32)).astype(np.float32)
    y = run_threads(one_node("Transpose", {"x": x.shape}, perm=list(perm)), {"x": x})
    np.testing.assert_array_equal(y, x.transpose(perm))


@pytest.mark.parametrize("shape,perm", [((5, 17, 3, 33), (0, 2, 3, 1)), ((5, 17, 3, 33), (3, 2, 1, 0)),
                                        ((37, 70), (1, 0)), ((4, 19, 21), (2, 0, 1)),
                                        ((300, 257), (1, 0)), ((2, 3, 1, 40), (0, 3, 1, 2))])
def test_transpose_tiled_odd_shapes(shape, perm):
    """The tiled 2-D path (output's last dim gathered with a stride) on
    shapes that are not multiples of the tile."""
    x = rng.standard_normal(shape).astype(np.float32)
    y = run_threads(one_node("Transpose", {"x": x.shape}, perm=list(perm)), {"x": x})
    np.testing.assert_array_equal(y, x.transpose(perm))


@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_through_the_kernel(tb):
    """Gemm packs B (or B^T, transB=1) into the step's scratch and runs the
    SGEMM kernel; odd sizes cross the panel and tile edges."""
    a = rng.standard_normal((37, 70)).astype(np.float32)
    b = rng.standard_normal((53, 70) if tb else (70, 53)).astype(np.float32)
    c = rng.standard_normal(53).astype(np.float32)
    y = run_threads(one_node("Gemm", {"a": a.shape}, {"b": b, "c": c}, transB=tb), {"a": a})
    ref = a.astype(np.float64) @ (b.T if tb else b).astype(np.float64) + c
    np.testing.assert_allclose(y, ref, atol=1e-4, rtol=1e-5)
