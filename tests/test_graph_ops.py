"""Every op of the graph compiler, built in Python, against numpy - at
level 0 (the graph as built) and level 3 (after the passes)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import peregrine_nb as pg

rng = np.random.default_rng(1234)
LEVELS = [0, 3]


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def run1(op, feeds, inits=None, attrs=None, n_out=1, level=0, extra_out=None):
    """One node graph: feeds are inputs, inits initializers; returns outputs."""
    g = pg.Graph()
    names = []
    for k, v in feeds.items():
        if v is None:
            names.append("")
            continue
        g.add_input(k, v.shape, v.dtype)
        names.append(k)
    for k, v in (inits or {}).items():
        g.add_initializer(k, v)
        names.append(k)
    outs = [f"y{i}" for i in range(n_out)]
    g.add_node(op, names, outs, **(attrs or {}))
    for o in outs:
        g.add_output(o)
    m = pg.compile(g, level=level)
    res = m.run({k: v for k, v in feeds.items() if v is not None})
    return [res[o] for o in outs]


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("op,fn", [
    ("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide),
])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), ())])
def test_binary_broadcast(op, fn, sa, sb, level):
    a, b = f32(*sa), f32(*sb, lo=0.5, hi=2.0)
    (y,) = run1(op, {"a": a, "b": b}, level=level)
    close(y, fn(a, b))


@pytest.mark.parametrize("dt", [np.int64, np.int32])
def test_binary_int(dt):
    a = rng.integers(-50, 50, (3, 4)).astype(dt)
    b = rng.integers(1, 9, (4,)).astype(dt)
    for op, fn in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)]:
        (y,) = run1(op, {"a": a, "b": b})
        assert y.dtype == dt
        np.testing.assert_array_equal(y, fn(a, b))
    (y,) = run1("Equal", {"a": a, "b": b})
    np.testing.assert_array_equal(y, a == b)


def test_pow_and_compare():
    a, b = f32(3, 4, lo=0.1, hi=3.0), f32(3, 4, lo=0.0, hi=3.0)
    close(run1("Pow", {"a": a}, {"b": np.float32(2.0).reshape(())})[0], a ** 2)
    close(run1("Pow", {"a": a, "b": b})[0], np.power(a, b), 1e-4)
    np.testing.assert_array_equal(run1("Equal", {"a": a, "b": a.copy()})[0], np.ones((3, 4), bool))
    np.testing.assert_array_equal(run1("Less", {"a": a, "b": b})[0], a < b)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("op,fn", [
    ("Sqrt", lambda x: np.sqrt(np.abs(x))), ("Reciprocal", lambda x: 1 / x),
    ("Erf", lambda x: np.vectorize(math.erf)(x)), ("Tanh", np.tanh),
    ("Relu", lambda x: np.maximum(x, 0)), ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("SiLU", lambda x: x / (1 + np.exp(-x))), ("Neg", np.negative), ("Exp", np.exp),
    ("Gelu", lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    ("Identity", lambda x: x),
])
def test_unary(op, fn, level):
    x = f32(3, 37)
    if op in ("Sqrt",):
        x = np.abs(x)
    if op == "Reciprocal":
        x = x + np.sign(x) * 0.5
    (y,) = run1(op, {"x": x}, level=level)
    close(y, fn(x.astype(np.float64)), 2e-5)


def test_gelu_tanh():
    x = f32(64)
    (y,) = run1("Gelu", {"x": x}, attrs={"approximate": "tanh"})
    ref = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    close(y, ref, 2e-5)


def test_cast_where_expand():
    x = f32(2, 3) * 10
    (y,) = run1("Cast", {"x": x}, attrs={"to": 7})
    np.testing.assert_array_equal(y, x.astype(np.int64))
    c = rng.random((2, 3)) > 0.5
    a, b = f32(2, 3), f32(3)
    (y,) = run1("Where", {"c": c, "a": a, "b": b})
    close(y, np.where(c, a, b))
    (y,) = run1("Expand", {"x": f32(3, 1)}, {"s": np.array([2, 3, 4], np.int64)})
    assert y.shape == (2, 3, 4)



# ONNX leaves a float out of the integer's range undefined; the engine
# defines it: truncate to int64 saturating (NaN to 0), then wrap to the
# narrower type as integers do (numpy's wrap for in-range int64 values).
@pytest.mark.parametrize("to,dt", [(2, np.uint8), (3, np.int8), (6, np.int32), (7, np.int64), (9, np.bool_)])
def test_cast_out_of_range_floats_are_defined(to, dt):
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 300.7, -1.5, 127.9, -129.2], np.float32)
    (y,) = run1("Cast", {"x": x}, attrs={"to": to})
    if dt is np.bool_:
        np.testing.assert_array_equal(y, x != 0)
        return
    i64 = np.array([0, 2**63 - 1, -2**63, 2**63 - 1, -2**63, 300, -1, 127, -129], np.int64)
    np.testing.assert_array_equal(y, i64.astype(dt))
    # integers wrap to the narrower type
    w = np.array([-1, 256, 2**40 + 5, -2**31 - 1], np.int64)
    (y,) = run1("Cast", {"x": w}, attrs={"to": to})
    np.testing.assert_array_equal(y, w.astype(dt))


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.int8, np.uint8])
def test_integer_arithmetic_wraps_and_division_is_defined(dt):
    """Add / Sub / Mul wrap as numpy's integers do; x / 0 is 0 and a signed
    x / -1 the wrapped negation (the minimum / -1 traps in hardware: it must
    not reach the CPU's divide)."""
    info = np.iinfo(dt)
    signed = info.min < 0
    a = np.array([info.max, info.min, info.min, 7, -7 if signed else 200, info.max, 5], dt)
    b = np.array([1, -1 if signed else 3, 0, 0, 2, info.max, -1 if signed else 255], dt)
    with np.errstate(over="ignore"):
        for op, fn in (("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)):
            (y,) = run1(op, {"a": a, "b": b})
            np.testing.assert_array_equal(y, fn(a, b), err_msg=op)
    (y,) = run1("Div", {"a": a, "b": b})

    def div(x, d):   # C's truncating division, wrapped to the type
        q = 0 if d == 0 else (abs(x) // abs(d)) * (1 if (x < 0) == (d < 0) else -1)
        return (q - info.min) % (1 << info.bits) + info.min
    want = np.array([div(int(x), int(d)) for x, d in zip(a, b)], dt)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dt", [np.int64, np.int32])
def test_integer_neg_and_abs_wrap_at_the_minimum(dt):
    x = np.array([np.iinfo(dt).min, -3, 0, 5], dt)
    for op, fn in (("Neg", np.negative), ("Abs", np.abs)):
        (y,) = run1(op, {"x": x})
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(y, fn(x))

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(axis, level):
    x = f32(4, 5, 6) * 3
    (y,) = run1("Softmax", {"x": x}, attrs={"axis": axis}, level=level)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    close(y, e / e.sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("level", LEVELS)
def test_layernorm_rmsnorm(level):
    x, gam, bet = f32(3, 4, 32), f32(32), f32(32)
    (y,) = run1("LayerNormalization", {"x": x}, {"g": gam, "b": bet}, {"epsilon": 1e-5}, level=level)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(y, (x - mu) / np.sqrt(var + 1e-5) * gam + bet, 1e-4)
    (y,) = run1("RMSNorm", {"x": x}, {"g": gam}, {"epsilon": 1e-6}, level=level)
    close(y, x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * gam, 1e-4)


def test_reduce():
    x = f32(2, 3, 4)
    (y,) = run1("ReduceMean", {"x": x}, attrs={"axes": [-1]})
    close(y, x.mean(-1, keepdims=True))
    (y,) = run1("ReduceSum", {"x": x}, attrs={"axes": [0, 2], "keepdims": 0})
    close(y, x.sum((0, 2)), 1e-4)
    (y,) = run1("ReduceMean", {"x": x}, {"axes": np.array([1], np.int64)})
    close(y, x.mean(1, keepdims=True))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((2, 5, 7), (7, 19)), ((2, 3, 5, 7), (2, 3, 7, 4)),
                                   ((2, 3, 5, 7), (7, 4)), ((7,), (7, 3)), ((4, 7), (7,)),
                                   ((1, 33, 64), (64, 40)),
                                   # rows of A 4 KiB apart (one L1 set): copied to a padded stride
                                   ((2, 20, 1024), (1024, 80)), ((30, 2048), (2048, 70))])
def test_matmul(sa, sb, level):
    a, b = f32(*sa), f32(*sb)
    (y,) = run1("MatMul", {"a": a}, {"b": b}, level=level)
    close(y, a @ b, 1e-4)
    (y,) = run1("MatMul", {"a": a, "b": b}, level=level)
    close(y, a @ b, 1e-4)


@pytest.mark.parametrize("ta,tb", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_gemm(ta, tb):
    a, b, c = f32(7, 5), f32(5, 9), f32(9)
    A = a.T.copy() if ta else a
    B = b.T.copy() if tb else b
    (y,) = run1("Gemm", {"a": A}, {"b": B, "c": c}, {"transA": ta, "transB": tb, "alpha": 0.5, "beta": 2.0})
    close(y, 0.5 * a @ b + 2 * c, 1e-4)
    (y,) = run1("Gemm", {"a": A}, {"b": B, "c": c}, {"transA": ta, "transB": tb})
    close(y, a @ b + c, 1e-4)


@pytest.mark.parametrize("ta", [0, 1])
def test_gemm_with_rows_of_a_one_l1_set_apart(ta):
    """K = 1024 floats: A's rows alias in L1 and the product copies A to a
    padded stride in its scratch, after Gemm's own transposed copy of A."""
    a, b, c = f32(40, 1024), f32(1024, 96), f32(96)
    A = a.T.copy() if ta else a
    for level in LEVELS:
        (y,) = run1("Gemm", {"a": A}, {"b": b, "c": c}, {"transA": ta}, level=level)
        close(y, a @ b + c, 1e-4)
        (y,) = run1("Gemm", {"a": A, "b": b}, {"c": c}, {"transA": ta}, level=level)
        close(y, a @ b + c, 1e-4)


def test_data_movement():
    x = f32(2, 3, 4)
    (y,) = run1("Transpose", {"x": x}, attrs={"perm": [2, 0, 1]})
    close(y, x.transpose(2, 0, 1))
    (y,) = run1("Transpose", {"x": x})
    close(y, x.transpose())
    (y,) = run1("Reshape", {"x": x}, {"s": np.array([0, -1], np.int64)})
    close(y, x.reshape(2, 12))
    (y,) = run1("Flatten", {"x": x}, attrs={"axis": 2})
    close(y, x.reshape(6, 4))
    (y,) = run1("Unsqueeze", {"x": x}, {"a": np.array([0, 4], np.int64)})
    assert y.shape == (1, 2, 3, 4, 1)
    (y,) = run1("Squeeze", {"x": f32(1, 3, 1)}, {"a": np.array([0], np.int64)})
    assert y.shape == (3, 1)
    a, b = f32(2, 3), f32(2, 5)
    (y,) = run1("Concat", {"a": a, "b": b}, attrs={"axis": 1})
    close(y, np.concatenate([a, b], 1))
    ys = run1("Split", {"x": f32(6, 4)}, {"s": np.array([1, 2, 3], np.int64)}, n_out=3)
    assert [t.shape for t in ys] == [(1, 4), (2, 4), (3, 4)]
    ys = run1("Split", {"x": x}, attrs={"axis": 2}, n_out=2)
    close(ys[1], x[:, :, 2:])


@pytest.mark.parametrize("level", LEVELS)
def test_slice_steps_at_the_int64_limits(level):
    """A step of INT64_MAX or INT64_MIN takes one element (the count's
    arithmetic must not overflow: it did, as x + step - 1 and -step)."""
    x = f32(5, 6)
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    for st, s, e, want in ((big, 1, 6, x[:, 1::big]), (small, 4, -100, x[:, 4::small]),
                           (small, big, small, x[:, big:small:small])):
        (y,) = run1("Slice", {"x": x}, {"s": np.array([s], np.int64), "e": np.array([e], np.int64),
                                        "a": np.array([1], np.int64), "st": np.array([st], np.int64)},
                    level=level)
        close(y, want)


def test_split_sizes_that_overflow_are_refused():
    with pytest.raises(pg.ShapeError, match="split sizes"):
        run1("Split", {"x": f32(6, 4)}, {"s": np.array([2**62, 2**62, -2**63 + 6], np.int64)}, n_out=3)


def test_slice_gather():
    x = f32(5, 6, 7)
    (y,) = run1("Slice", {"x": x}, {"s": np.array([1, -3], np.int64), "e": np.array([4, 100], np.int64),
                                    "a": np.array([0, 2], np.int64), "st": np.array([2, 1], np.int64)})
    close(y, x[1:4:2, :, -3:])
    (y,) = run1("Slice", {"x": x}, {"s": np.array([-1], np.int64), "e": np.array([-100], np.int64),
                                    "a": np.array([1], np.int64), "st": np.array([-2], np.int64)})
    close(y, x[:, ::-2])
    idx = np.array([[0, 4], [2, -1]], np.int64)
    (y,) = run1("Gather", {"x": x}, {"i": idx}, {"axis": 0})
    close(y, np.take(x, idx % 5, axis=0))
    emb = f32(10, 8)
    g = pg.Graph()
    g.add_initializer("e", emb)
    g.add_input("i", (1, 3), np.int64)
    g.add_node("Gather", ["e", "i"], ["y"])
    g.add_output("y")
    y = pg.compile(g).run({"i": np.array([[1, 2, 9]], np.int64)})["y"]
    close(y, emb[[[1, 2, 9]]])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dt", [np.float32, np.int64, np.bool_])
def test_slice_and_expand_match_numpy_at_random(dt, threads):
    """Slice (any axes, negative and long steps) and Expand (broadcasts at
    any dims, new leading dims) copy rows of their output, merging the dims
    that are contiguous in the input: against numpy over random shapes of
    rank 1-5, element sizes 8, 4 and 1, and big enough for the rows to be
    shared out among threads."""
    r = np.random.default_rng(7)
    for case in range(40):
        shape = tuple(int(d) for d in r.integers(1, 6, r.integers(1, 6)))
        if case % 8 == 0:   # one large case in eight: rows split over threads
            shape = (64, 8, 96)
        x = r.integers(-50, 50, shape).astype(dt)
        axes = sorted(r.choice(len(shape), r.integers(1, len(shape) + 1), replace=False))
        starts, ends, steps, index = [], [], [], [slice(None)] * len(shape)
        for a in axes:
            n = shape[a]
            st = int(r.choice([-3, -2, -1, 1, 1, 2, 3]))
            s, e = int(r.integers(-n - 1, n + 2)), int(r.integers(-n - 1, n + 2))
            starts.append(s), ends.append(e), steps.append(st)
            index[a] = slice(s, e, st)
        want = x[tuple(index)]
        g = pg.Graph()
        g.add_input("x", x.shape, x.dtype)
        for k, v in (("s", starts), ("e", ends), ("a", axes), ("st", steps)):
            g.add_initializer(k, np.array(v, np.int64))
        g.add_node("Slice", ["x", "s", "e", "a", "st"], ["y"])
        g.add_output("y")
        y = pg.compile(g, level=0, threads=threads).run({"x": x})["y"]
        assert y.shape == want.shape, (shape, index)
        np.testing.assert_array_equal(y, want, err_msg=f"{shape} {index}")

        src = tuple(d if r.random() < 0.5 else 1 for d in shape)
        lead = tuple(int(d) for d in r.integers(1, 4, r.integers(0, 2)))
        xe = r.integers(-50, 50, src).astype(dt)
        to = lead + shape
        (ye,) = run1("Expand", {"x": xe}, {"s": np.array(to, np.int64)})
        np.testing.assert_array_equal(ye, np.broadcast_to(xe, to), err_msg=f"{src} -> {to}")


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.int64])
def test_transpose_planes_match_numpy_at_every_level(dt):
    """A Transpose that moves the innermost dim runs plane by plane: the
    transpose kernel's whole tiles (16, 8, 4 or 1 elements a side by level)
    and the edges past them in C.  Sizes around every tile edge, 4- and
    8-byte elements (the latter in C only), under each CPU level."""
    r = np.random.default_rng(11)
    cases = [((1, 3136 // 49, 128), (0, 2, 1)), ((2, 37, 19), (0, 2, 1)), ((16, 33), (1, 0)),
             ((3, 17, 8, 5), (0, 3, 1, 2)), ((1, 7, 9, 48), (0, 3, 1, 2)), ((2, 4, 31, 16), (0, 3, 2, 1))]
    for level in pg.cpu_levels():
        with pg.cpu_mask(level):
            for shape, perm in cases:
                x = r.integers(-1000, 1000, shape).astype(dt)
                g = pg.Graph()
                g.add_input("x", shape, dt)
                g.add_node("Transpose", ["x"], ["y"], perm=list(perm))
                g.add_output("y")
                for threads in (1, 2):
                    y = pg.compile(g, level=0, threads=threads).run({"x": x})["y"]
                    np.testing.assert_array_equal(y, x.transpose(perm), err_msg=f"{level} {shape} {perm}")


def test_shape_chain_and_constants():
    """Shape -> Gather -> Concat -> Reshape, as exported graphs compute shapes."""
    x = f32(2, 3, 8)
    g = pg.Graph()
    g.add_input("x", x.shape)
    g.add_node("Shape", ["x"], ["s"])
    g.add_node("Constant", [], ["i0"], value=np.array([0, 1], np.int64))
    g.add_node("Gather", ["s", "i0"], ["bs"])
    g.add_node("Constant", [], ["tail"], value=np.array([2, 4], np.int64))
    g.add_node("Concat", ["bs", "tail"], ["newshape"], axis=0)
    g.add_node("Reshape", ["x", "newshape"], ["y"])
    g.add_node("ConstantOfShape", ["s"], ["ones"], value=np.array([1.0], np.float32))
    g.add_node("Add", ["x", "ones"], ["z"])
    g.add_output("y")
    g.add_output("z")
    g.add_output("s")
    for level in LEVELS:
        r = pg.compile(g, level=level).run({"x": x})
        close(r["y"], x.reshape(2, 3, 2, 4))
        close(r["z"], x + 1)
        np.testing.assert_array_equal(r["s"], [2, 3, 8])


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("kt", [0, 1])
def test_fused_attention(kt, causal):
    B, H, S, D = 2, 3, 37, 16
    q, k, v = f32(B, H, S, D), f32(B, H, S, D), f32(B, H, S, D)
    mask = np.where(rng.random((B, 1, 1, S)) > 0.2, 0, -1e4).astype(np.float32)
    (y,) = run1("FusedAttention", {"q": q, "k": k.transpose(0, 1, 3, 2).copy() if kt else k, "v": v, "m": mask},
                attrs={"k_transposed": kt, "causal": causal, "scale": 0.25})
    s = 0.25 * q @ k.transpose(0, 1, 3, 2) + mask
    if causal:
        s = s + np.triu(np.full((S, S), -np.inf, np.float32), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    close(y, (p / p.sum(-1, keepdims=True)) @ v, 1e-4)


def test_fused_matmul_and_qkv():
    x, w, b = f32(2, 5, 16), f32(16, 24), f32(24)
    for act, fn in [("none", lambda t: t), ("relu", lambda t: np.maximum(t, 0)),
                    ("gelu", lambda t: 0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2)))),
                    ("silu", lambda t: t / (1 + np.exp(-t)))]:
        (y,) = run1("FusedMatMul", {"x": x}, {"w": w, "b": b}, {"activation": act})
        close(y, fn((x @ w + b).astype(np.float64)), 1e-4)
    ys = run1("QKVMatMul", {"x": x}, {"w": w, "b": b}, {"splits": [8, 8, 8]}, n_out=3)
    ref = x @ w + b
    for i in range(3):
        close(ys[i], ref[..., 8 * i:8 * i + 8], 1e-4)
