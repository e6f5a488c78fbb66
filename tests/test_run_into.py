"""pg_model_run_into: outputs computed straight into the caller's buffers
(CompiledModel.run returns them, no copy of the arena), or copied there when
the plan cannot give them a buffer of their own (a view of a feed, a part of
a shared buffer, a misaligned destination).  Every form gives the same
numbers as pg_model_run's model-owned outputs, and a returned array never
changes when the model runs again."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb._lib import ffi, lib
from peregrine_nb.errors import PeregrineError

rng = np.random.default_rng(11)
W = rng.standard_normal((64, 96)).astype(np.float32)
B = rng.standard_normal(96).astype(np.float32)
WQKV = rng.standard_normal((96, 3 * 32)).astype(np.float32)


def graph() -> pg.Graph:
    g = pg.Graph()
    g.add_input("x", [4, 64])
    g.add_initializer("W", W)
    g.add_initializer("B", B)
    g.add_initializer("Wqkv", WQKV)
    g.add_initializer("shape", np.array([64, 4], np.int64))
    g.add_node("MatMul", ["x", "W"], ["t"])
    g.add_node("Add", ["t", "B"], ["y1"])            # in place over t at level 3
    g.add_node("Relu", ["y1"], ["r"])
    g.add_node("Add", ["r", "y1"], ["y2"])           # y1 is read after it is an output
    g.add_node("Reshape", ["x", "shape"], ["xv"])    # a view of the feed
    g.add_node("MatMul", ["y2", "Wqkv"], ["qkv"])
    g.add_node("Split", ["qkv"], ["q", "k", "v"], axis=1, num_outputs=3)
    for o in ("y1", "y2", "xv", "q", "k", "v"):
        g.add_output(o)
    return g


def reference(x: np.ndarray) -> dict:
    y1 = x @ W + B
    y2 = np.maximum(y1, 0) + y1
    q, k, v = np.split(y2 @ WQKV, 3, axis=1)
    return {"y1": y1, "y2": y2, "xv": x.reshape(64, 4), "q": q, "k": k, "v": v}


def run_c(m: pg.CompiledModel, x: np.ndarray, into: bool, misalign: int = 0) -> dict:
    """One run through the C API: pg_model_run and the model-owned outputs,
    or pg_model_run_into with destinations offset by misalign bytes."""
    keep = ffi.new("char[]", b"x")      # owns the name while the call reads it
    names = ffi.new("const char *[]", [keep])
    data = ffi.new("const void *[]", [ffi.from_buffer(x)])
    ranks = ffi.new("int[]", [2])
    shp = ffi.new("int64_t[]", list(x.shape))
    shapes = ffi.new("const int64_t *[]", [shp])
    n = lib.pg_model_output_count(m._m)
    info = ffi.new("pg_tensor_info *")
    specs = []
    for i in range(n):
        assert lib.pg_model_output_info(m._m, i, info) == 0
        specs.append((ffi.string(info.name).decode(), tuple(info.dims[d] for d in range(info.rank)),
                      int(info.nbytes)))
    if not into:
        assert lib.pg_model_run(m._m, 1, names, data, ranks, shapes) == 0
        out = {}
        for i, (name, shape, nb) in enumerate(specs):
            assert lib.pg_model_output_info(m._m, i, info) == 0
            out[name] = np.frombuffer(ffi.buffer(info.data, nb), np.float32).reshape(shape).copy()
        return out
    raws = [np.zeros(nb + 128, np.uint8) for _, _, nb in specs]
    offs = [(-r.ctypes.data % 64) + misalign for r in raws]
    dst = ffi.new("void *[]", [ffi.cast("void *", r.ctypes.data + o) for r, o in zip(raws, offs)])
    assert lib.pg_model_run_into(m._m, 1, names, data, ranks, shapes, n, dst) == 0, keep
    return {name: r[o:o + nb].view(np.float32).reshape(shape)
            for (name, shape, nb), r, o in zip(specs, raws, offs)}


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("planner", ["greedy_by_size", "naive"])
def test_run_into_agrees_with_model_owned_outputs(level, planner):
    m = pg.compile(graph(), level=level, planner=planner)
    for _ in range(2):      # a run_into, then a plain run: the steps rebind both ways
        x = rng.standard_normal((4, 64)).astype(np.float32)
        want = reference(x)
        owned = run_c(m, x, into=False)
        direct = run_c(m, x, into=True)
        skewed = run_c(m, x, into=True, misalign=4)     # copied: not 64-byte aligned
        again = run_c(m, x, into=False)
        for k, w in want.items():
            np.testing.assert_allclose(owned[k], w, rtol=1e-4, atol=1e-4, err_msg=k)
            np.testing.assert_array_equal(direct[k], owned[k], err_msg=k)
            np.testing.assert_array_equal(skewed[k], owned[k], err_msg=k)
            np.testing.assert_array_equal(again[k], owned[k], err_msg=k)


@pytest.mark.parametrize("level", [0, 3])
def test_returned_arrays_are_the_callers(level):
    m = pg.compile(graph(), level=level)
    x1 = rng.standard_normal((4, 64)).astype(np.float32)
    x2 = rng.standard_normal((4, 64)).astype(np.float32)
    r1 = m.run({"x": x1})
    keep = {k: v.copy() for k, v in r1.items()}
    r2 = m.run({"x": x2})
    for k, w in reference(x2).items():
        np.testing.assert_allclose(r2[k], w, rtol=1e-4, atol=1e-4, err_msg=k)
        np.testing.assert_array_equal(r1[k], keep[k], err_msg=k)    # the next run left it alone
        assert r1[k].ctypes.data % 64 == 0 and r1[k].flags.writeable and r1[k].flags.c_contiguous
        assert not np.shares_memory(r1[k], r2[k])


def test_run_into_wrong_output_count_is_refused():
    m = pg.compile(graph(), level=3)
    x = np.zeros((4, 64), np.float32)
    name = ffi.new("char[]", b"x")
    names = ffi.new("const char *[]", [name])
    data = ffi.new("const void *[]", [ffi.from_buffer(x)])
    ranks = ffi.new("int[]", [2])
    shp = ffi.new("int64_t[]", [4, 64])
    shapes = ffi.new("const int64_t *[]", [shp])
    dst = ffi.new("void *[]", 2)
    st = lib.pg_model_run_into(m._m, 1, names, data, ranks, shapes, 2, dst)
    assert st != 0
    msg = ffi.string(lib.pg_last_error()).decode()
    assert "2 output buffers for a model with 6 outputs" in msg
    with pytest.raises(PeregrineError):
        from peregrine_nb._lib import check
        check(st)
