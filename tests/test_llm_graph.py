"""The GGUF decoder as a compiled Peregrine graph (issue #14): ``LLM(path)``
builds the decoder's graph from the file (GGUFEmbed, GGUFQuantize,
GGUFMatMul, LLMRotary, KVCache / KVCacheWrite, CachedAttention and the
ordinary RMSNorm, Add, Mul, SiLU, Gelu, Tanh), compiles it at the decode
shape (1 row) and the prefill shape (max_batch rows), and keeps the KV cache
as the plans' persistent buffer.

Peer: llama-cpp-python on the same file (test_llm_archs.py's tolerances; that
file checks every architecture x weight type, this one the graph's
structure, plan, kernels and state).  Files: tests/llm/make_gguf_models.py
(tiny, random weights, fixed seeds).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import peregrine_nb
from peregrine_nb import InvalidArgumentError
from peregrine_nb._lib import lib

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("make_gguf_models", HERE / "llm" / "make_gguf_models.py")
mk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mk)

pytest.importorskip("gguf")

@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf_graph")


def model_file(model_dir, arch, wtype):
    p = mk.path_for(model_dir, arch, wtype)
    if not p.exists():
        mk.write_model(model_dir, arch, wtype)
    return p


def load(path, **kw):
    kw.setdefault("max_batch", 8)
    return peregrine_nb.models.load_llm(path, threads=1, n_ctx=64, **kw)


def ids_for(llm, n=13, seed=0):
    return [int(i) for i in np.random.default_rng(seed).integers(0, llm.n_vocab, n)]


def test_graph_generate_and_reset(model_dir):
    path = model_file(model_dir, "llama", "q8_0")
    g = load(path)
    prompt = "The quick brown fox"
    first = list(g.generate_ids(prompt, max_new_tokens=8))
    g.reset()
    assert list(g.generate_ids(prompt, max_new_tokens=8)) == first
    g.reset()
    ids = ids_for(g, 5)
    first = g.eval(ids)
    g.reset()
    assert np.array_equal(g.eval(ids), first)   # the cache is the same state after a reset


def test_graph_no_allocation_per_token(model_dir):
    g = load(model_file(model_dir, "qwen2", "q4_k"))
    g.eval(ids_for(g, 6))
    tok = ids_for(g, 1, seed=1)
    g.eval(tok)
    before = lib.pg_alloc_count()
    for _ in range(4):
        g.eval(tok)
    assert lib.pg_alloc_count() == before


def test_graph_structure_plan_and_passes(model_dir):
    path = model_file(model_dir, "gemma2", "q4_k")
    g = load(path)
    hp = mk.ARCHS["gemma2"]
    L, kv_dim = hp["L"], hp["KV"] * hp["HD"]
    for prefill, rows in ((False, 1), (True, 8)):
        m = g.model(prefill=prefill)
        ops = m.op_types
        assert ops.count("GGUFMatMul") == 7 * L + 1
        assert ops.count("CachedAttention") == L and ops.count("KVCacheWrite") == 2 * L
        assert ops.count("KVCache") == 2 * L and "RMSNorm" in ops and "GGUFEmbed" in ops
        assert m.inputs["ids"][0] == (rows,) and m.inputs["ctl"][0] == (3,)
        plan = m.memory_plan
        pers = plan[plan.kind == "persistent"]
        assert len(pers) == 2 * L
        assert (pers.bytes == 64 * kv_dim * 4).all()
        assert m.memory_stats["persistent"] == 2 * L * 64 * kv_dim * 4
        # the cache is outside the arena, at distinct offsets of the persistent block
        assert sorted(pers.offset) == [i * 64 * kv_dim * 4 for i in range(2 * L)]
        written = plan[plan.tensor.str.endswith("_cache_written")]
        assert (written.kind == "view").all() and len(written) == 2 * L
        # every product is bound to a variant of its weight type's table
        for s in m.steps:
            if s["op_type"] == "GGUFMatMul":
                assert "kernel=q" in s["detail"], s
            if s["op_type"] == "RMSNorm":
                assert "kernel=f32_rmsnorm_ggml" in s["detail"], s
            if s["op_type"] == "LLMRotary":
                assert "kernel=f32_rope_ggml" in s["detail"], s
            if s["op_type"] == "KVCacheWrite":
                assert "kernel=f32_round_f16" in s["detail"], s
            if s["op_type"] == "CachedAttention":
                assert "kernel=f32_round_f16" in s["detail"] and "attn_kq_ggml" in s["detail"], s
        log = m.passes
        assert log and log[0]["name"] == "input"
    with pytest.raises(InvalidArgumentError):
        g.model().run({"ids": np.zeros(1, np.int32), "ctl": np.array([1, 0, 0], np.int32)})


def test_graph_viewers(model_dir):
    pytest.importorskip("ipywidgets")
    pytest.importorskip("plotly")
    from peregrine_nb.widgets import FusionStepper, MemoryViewer

    g = load(model_file(model_dir, "llama", "q4_k"))
    m = g.model()
    viewer = MemoryViewer(m)
    assert "persistent" in repr(viewer) and "KV cache" in viewer._side_html()
    FusionStepper(m)


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_graph_f16_kv_cache(model_dir, arch):
    """kv_cache="f16" in the graph: the cache is float16 persistent buffers
    (half the bytes), written through cvt_f32_f16 and widened for attention
    by KVCacheRead; the logits equal the f32 cache's (the cache holds f16
    values either way) bit for bit, prefill and decode."""
    path = model_file(model_dir, arch, "q4_k")
    ref, g = load(path), load(path, kv_cache="f16")
    L, kv_dim = mk.ARCHS[arch]["L"], mk.ARCHS[arch]["KV"] * mk.ARCHS[arch]["HD"]
    m = g.model()
    assert m.op_types.count("KVCacheRead") == 2 * L
    plan = m.memory_plan
    pers = plan[plan.kind == "persistent"]
    assert len(pers) == 2 * L and (pers.bytes == 64 * kv_dim * 2).all()
    ids = ids_for(ref)
    a, b = ref.eval(ids, logits_all=True), g.eval(ids, logits_all=True)
    assert np.array_equal(a, b)
    for _ in range(3):
        tok = int(a[-1].argmax())
        a, b = ref.eval([tok])[None], g.eval([tok])[None]
        assert np.array_equal(a, b)


def test_graph_refusals(model_dir):
    path = model_file(model_dir, "llama", "q8_0")
    g = load(path)
    with pytest.raises(peregrine_nb.ShapeError):
        g.eval(list(range(70)))   # past the context of 64


llama_cpp = None
try:
    import llama_cpp  # noqa: F811
except ImportError:
    pass


@pytest.mark.skipif(llama_cpp is None, reason="llama-cpp-python is not installed")
@pytest.mark.parametrize("arch", list(mk.ARCHS))
def test_graph_vs_llama_cpp(model_dir, arch):
    path = model_file(model_dir, arch, "q4_k")
    g = load(path)
    ref = llama_cpp.Llama(model_path=str(path), n_ctx=64, n_threads=1, n_threads_batch=1,
                          logits_all=True, verbose=False)
    ids = ids_for(g)
    ref.eval(ids)
    want = np.asarray(ref.scores[:len(ids)], dtype=np.float32)
    got = g.eval(ids, logits_all=True)
    rng = float(want.max() - want.min())
    err = np.abs(want - got)
    # test_llm_archs.py's tolerances (5% max / 1% mean of the logit range)
    assert err.max() <= 0.05 * rng and err.mean() <= 0.01 * rng
