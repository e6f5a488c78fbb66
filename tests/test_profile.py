"""CompiledModel.profile: every step timed by the engine over the runs
asked for, the FLOPs of the convs and matrix products as the ops define
them (the GFLOP/s a layer ran at in its network), the totals and views
(top, by_op, text, HTML); graphs built here with fixed seeds."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb._lib import ffi, lib


def mlp(M=32, K=64, N=48):
    rng = np.random.default_rng(0)
    g = pg.Graph()
    g.add_input("x", (M, K))
    g.add_initializer("w1", rng.standard_normal((K, N)).astype(np.float32))
    g.add_initializer("w2", rng.standard_normal((N, 16)).astype(np.float32))
    g.add_node("MatMul", ["x", "w1"], ["h"])
    g.add_node("Sigmoid", ["h"], ["s"])
    g.add_node("MatMul", ["s", "w2"], ["y"])
    g.add_output("y")
    return g, np.random.default_rng(1).standard_normal((M, K)).astype(np.float32)


def convnet(N=1, C=32, H=12, M=48):
    """1x1 conv C -> C (so the layout pass blocks what follows), a 3x3 conv
    C -> M with a Relu, a 3x3 depthwise conv on the M channels."""
    rng = np.random.default_rng(2)
    g = pg.Graph()
    g.add_input("x", (N, C, H, H))
    g.add_initializer("w0", (rng.standard_normal((C, C, 1, 1)) * 0.2).astype(np.float32))
    g.add_initializer("w1", (rng.standard_normal((M, C, 3, 3)) * 0.1).astype(np.float32))
    g.add_initializer("b1", rng.standard_normal(M).astype(np.float32))
    g.add_initializer("w2", (rng.standard_normal((M, 1, 3, 3)) * 0.3).astype(np.float32))
    g.add_node("Conv", ["x", "w0"], ["c0"], kernel_shape=[1, 1])
    g.add_node("Conv", ["c0", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g.add_node("Relu", ["c1"], ["r1"])
    g.add_node("Conv", ["r1", "w2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=M)
    g.add_output("y")
    x = np.random.default_rng(3).standard_normal((N, C, H, H)).astype(np.float32)
    return g, x


@pytest.mark.parametrize("level", [0, 3])
def test_profile_times_every_step(level):
    g, x = mlp()
    m = pg.compile(g, level=level, threads=1)
    p = m.profile({"x": x}, runs=5)
    assert [r["node"] for r in p.rows] == [s["node"] for s in m.steps]
    assert p.runs == 5 and p.threads == 1
    assert all(r["ms"] >= 0 for r in p.rows) and p.step_ms > 0
    assert p.step_ms <= p.wall_ms * 1.5   # the steps are inside the run (means over the same runs)
    assert abs(sum(r["share"] for r in p.rows) - 1) < 1e-9
    first, last = p.rows[0], p.rows[-1]
    assert first["flops"] == 2 * 32 * 64 * 48 and first["gflops"] > 0
    assert last["flops"] == 2 * 32 * 48 * 16
    others = [r for r in p.rows if r["op_type"] not in ("MatMul", "FusedMatMul")]
    assert all(r["flops"] == 0 and r["gflops"] is None for r in others)


def test_profile_conv_flops_as_the_op_defines_them():
    """The same FLOPs at level 0 (plain Conv), and at level 3 (FusedConv,
    blocked where the CPU has the kernels: the packed weights no longer
    say the shape, the attributes do)."""
    N, C, H, M = 2, 32, 12, 48
    g, x = convnet(N, C, H, M)
    want = [2 * N * C * H * H * C, 2 * N * M * H * H * C * 9, 2 * N * M * H * H * 9]
    for level in (0, 3):
        m = pg.compile(g, level=level, threads=1)
        p = m.profile({"x": x}, runs=2)
        convs = [r for r in p.rows if r["op_type"] in ("Conv", "FusedConv")]
        assert [r["flops"] for r in convs] == want, (level, m.steps)
        y = m.run({"x": x})["y"]
        assert y.shape == (N, M, H, H)


def test_profile_leaves_profiling_off():
    """After profile() the runs are not timed: the counts stay as they were."""
    g, x = mlp()
    m = pg.compile(g, threads=1)
    m.profile({"x": x}, runs=3)
    m.run({"x": x})
    t = ffi.new("pg_step_time *")
    assert lib.pg_model_step_time(m._m, 0, t) == 0
    assert t.runs == 3


def test_profile_views():
    g, x = convnet()
    p = pg.compile(g, threads=1).profile({"x": x}, runs=3)
    assert p.top(1)[0]["ms"] == max(r["ms"] for r in p.rows)
    ops = p.by_op()
    assert abs(sum(a["share"] for a in ops) - 1) < 1e-9
    assert sum(a["steps"] for a in ops) == len(p.rows)
    text = p.text()
    assert text.splitlines()[0].split()[:3] == ["step", "op_type", "node"]
    assert len(text.splitlines()) == len(p.rows) + 2 and "mean of 3" in text
    assert len(p.text(2).splitlines()) == 4
    h = p._repr_html_()
    assert h.count("<tr>") == len(p.rows) + 1 and "GFLOP/s" in h


def test_profile_needs_a_run():
    g, x = mlp()
    with pytest.raises(pg.InvalidArgumentError, match="runs=0"):
        pg.compile(g).profile({"x": x}, runs=0)
