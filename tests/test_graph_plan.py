"""The graph compiler end to end: a transformer block at every level and
with every planner, the memory plan's properties, zero allocations per run,
and clear errors for malformed graphs and feeds."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb._lib import lib

from graph_models import transformer_block, transformer_ref, transformer_weights

PLANNERS = ["greedy_by_size", "greedy_by_first_use", "naive"]
rng = np.random.default_rng(7)


def feeds(batch=1, seq=64, hidden=128):
    x = rng.standard_normal((batch, seq, hidden)).astype(np.float32)
    mask = np.zeros((batch, 1, 1, seq), np.float32)
    mask[..., seq - 5:] = -1e4
    return {"x": x, "mask": mask}


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_transformer_block_matches_numpy(level):
    W = transformer_weights()
    g = transformer_block(W=W)
    m = pg.compile(g, level=level)
    f = feeds()
    y = m.run(f)["y"]
    np.testing.assert_allclose(y, transformer_ref(f["x"], f["mask"], W), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("planner", PLANNERS)
def test_planners_agree_and_check_themselves(planner):
    W = transformer_weights()
    g = transformer_block(W=W)
    f = feeds()
    ref = pg.compile(g, level=0, planner="naive").run(f)["y"]
    for level in (0, 3):
        m = pg.compile(g, level=level, planner=planner)   # compile runs the overlap self-check
        np.testing.assert_allclose(m.run(f)["y"], ref, rtol=2e-3, atol=2e-3)
        st = m.memory_stats
        assert st["lower_bound"] <= st["arena"] <= st["naive"]
        if planner == "naive":
            assert st["arena"] == st["naive"]


def _overlaps(plan):
    """Independent re-check of the plan table: arena rows live at the same
    step must not share bytes unless one is a view / in-place alias."""
    rows = plan[plan.kind.isin(["arena", "inplace", "view"])].to_dict("records")
    byname = {r["tensor"]: r for r in rows}

    def root(r):
        while r["alias_of"] in byname and r["kind"] in ("view", "inplace"):
            r = byname[r["alias_of"]]
        return r["tensor"]

    bad = []
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if a["offset"] < 0 or b["offset"] < 0 or root(a) == root(b):
                continue
            if a["first"] <= b["last"] and b["first"] <= a["last"]:
                if a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]:
                    # an in-place output takes over its input's bytes at that step
                    if {a["tensor"], b["tensor"]} & {a.get("alias_of"), b.get("alias_of")}:
                        continue
                    bad.append((a["tensor"], b["tensor"]))
    return bad


@pytest.mark.parametrize("planner", PLANNERS)
def test_plan_table_has_no_overlaps(planner):
    m = pg.compile(transformer_block(), level=0, planner=planner)
    plan = m.memory_plan
    assert list(plan.columns[:5]) == ["tensor", "bytes", "offset", "first", "last"]
    assert (plan.offset[plan.kind != "input"] % 64 == 0).all()
    assert not _overlaps(plan)


def test_views_and_inplace_are_used():
    m = pg.compile(transformer_block(), level=0)
    plan = m.memory_plan.set_index("tensor")
    assert plan.loc["q_r", "kind"] == "view"          # Reshape shares its source
    assert plan.loc["ge_e", "kind"] == "inplace"      # Erf over a dying input
    assert "Reshape" in m.op_types


@pytest.mark.parametrize("level", [0, 3])
def test_arena_within_5_percent_of_lower_bound(level):
    m = pg.compile(transformer_block(seq=128), level=level, planner="greedy_by_size")
    st = m.memory_stats
    assert st["arena"] <= 1.05 * st["lower_bound"], st
    naive = pg.compile(transformer_block(seq=128), level=level, planner="naive").memory_stats
    assert st["arena"] < naive["arena"]


@pytest.mark.parametrize("level", [0, 3])
def test_run_allocates_nothing(level):
    m = pg.compile(transformer_block(), level=level)
    f = feeds()
    m.run(f)   # warm: thread pool, lazily built tables
    before = lib.pg_alloc_count()
    for _ in range(3):
        m.run(f)
    assert lib.pg_alloc_count() == before


def test_report_and_rendering():
    g = transformer_block()
    assert "MatMul" in str(g) and "<pre" in g._repr_html_()
    m = pg.compile(g, level=3)
    rep = m.report()
    assert "arena" in rep and "lower bound" in rep
    assert len(m.steps) == m.memory_stats["steps"]
    assert "<pre" in m._repr_html_()


# ---- errors ------------------------------------------------------------------

def test_cycle_is_reported():
    g = pg.Graph()
    g.add_input("x", (2,))
    g.add_node("Add", ["x", "b"], ["a"], name="first")
    g.add_node("Relu", ["a"], ["b"], name="second")
    g.add_output("b")
    with pytest.raises(pg.GraphError, match="cycle"):
        pg.compile(g)


def test_dangling_input_names_node():
    g = pg.Graph()
    g.add_input("x", (2,))
    g.add_node("Add", ["x", "nowhere"], ["y"], name="adder")
    g.add_output("y")
    with pytest.raises(pg.GraphError, match="adder.*nowhere.*dangling"):
        pg.compile(g)


def test_unknown_op():
    g = pg.Graph()
    g.add_input("x", (2,))
    g.add_node("Frobnicate", ["x"], ["y"], name="fro")
    g.add_output("y")
    with pytest.raises(pg.GraphError, match="fro.*Frobnicate"):
        pg.compile(g)


def test_shape_and_dtype_mismatch():
    g = pg.Graph()
    g.add_input("x", (2, 3))
    g.add_initializer("w", np.ones((4, 5), np.float32))
    g.add_node("MatMul", ["x", "w"], ["y"], name="mm")
    g.add_output("y")
    with pytest.raises(pg.ShapeError, match="'mm'.*inner dimensions 3 and 4"):
        pg.compile(g)
    g = pg.Graph()
    g.add_input("x", (2, 3))
    g.add_input("i", (2, 3), np.int64)
    g.add_node("Add", ["x", "i"], ["y"], name="mixed")
    g.add_output("y")
    with pytest.raises(pg.DTypeError, match="mixed"):
        pg.compile(g)
    g = pg.Graph()
    g.add_input("x", (2, 3))
    g.add_input("z", (4,))
    g.add_node("Add", ["x", "z"], ["y"], name="bc")
    g.add_output("y")
    with pytest.raises(pg.ShapeError, match="bc.*broadcast"):
        pg.compile(g)


def test_bad_feed():
    g = pg.Graph()
    g.add_input("x", (2, 3))
    g.add_node("Relu", ["x"], ["y"])
    g.add_output("y")
    m = pg.compile(g)
    with pytest.raises(pg.ShapeError, match=r"'x'.*\[3,2\].*\[2,3\]"):
        m.run({"x": np.zeros((3, 2), np.float32)})
    with pytest.raises(KeyError):
        m.run({})
    # the model still runs after a rejected feed
    np.testing.assert_array_equal(m.run({"x": -np.ones((2, 3), np.float32)})["y"], np.zeros((2, 3)))


def test_bad_options():
    g = pg.Graph()
    g.add_input("x", (2,))
    g.add_node("Relu", ["x"], ["y"])
    g.add_output("y")
    with pytest.raises(pg.InvalidArgumentError, match="planner"):
        pg.compile(g, planner="best")
    with pytest.raises(pg.InvalidArgumentError):
        pg.compile(g, level=7)


@pytest.mark.parametrize("level", [0, 3])
def test_view_of_a_feed(level):
    """A Reshape of a graph input lives in the caller's feed buffer, which
    moves from run to run: the executor must rebind it every run."""
    g = pg.Graph()
    g.add_input("x", (2, 6))
    g.add_initializer("s", np.array([3, 4], np.int64))
    g.add_initializer("w", np.eye(4, dtype=np.float32))
    g.add_node("Reshape", ["x", "s"], ["r"])
    g.add_node("MatMul", ["r", "w"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=level)
    for k in range(3):
        x = np.arange(12, dtype=np.float32).reshape(2, 6) * (k + 1)
        np.testing.assert_allclose(m.run({"x": x})["y"], x.reshape(3, 4))
