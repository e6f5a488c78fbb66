"""FusedAttention through the kernels (engine/exec/ops_attention.c) against
numpy in float64: sequence lengths around the query tile and the SGEMM
panel widths, masks of every broadcast form (float, bool, causal), K given
as [Sk, D] or [D, Sk], Sq != Sk, and the same bits at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg

rng = np.random.default_rng(7)


def attention_model(shapes, attrs, threads):
    g = pg.Graph()
    names = []
    for name, (shape, dt) in shapes.items():
        g.add_input(name, shape, dt)
        names.append(name)
    g.add_node("FusedAttention", names, ["o"], name="attn", **attrs)
    g.add_output("o")
    return pg.compile(g, level=0, threads=threads)


def reference(q, k, v, mask, scale, causal, kt):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    kk = k if kt else k.swapaxes(-1, -2)
    s = scale * (q @ kk)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        sq, sk = s.shape[-2:]
        s = s + np.triu(np.full((sq, sk), -np.inf), sk - sq + 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def run(B, H, Sq, Sk, D, Dv=None, mask_shape=None, mask_bool=False, causal=0, kt=0,
        scale=None, threads=1):
    Dv = Dv or D
    q = rng.standard_normal((B, H, Sq, D)).astype(np.float32)
    k = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
    v = rng.standard_normal((B, H, Sk, Dv)).astype(np.float32)
    feeds = {"q": q, "k": np.ascontiguousarray(k.swapaxes(-1, -2)) if kt else k, "v": v}
    mask = None
    if mask_shape is not None:
        if mask_bool:
            mask = rng.random(mask_shape) > 0.3
            mask[..., 0] = True   # every row keeps a key
        else:
            # -1e4 (BERT's) swamps the scores' low bits in float32 when the
            # whole row gets it, so a mask broadcast along the keys uses -6
            drop = -6.0 if mask_shape[-1] == 1 else -1e4
            mask = np.where(rng.random(mask_shape) > 0.25, 0.0, drop).astype(np.float32)
        feeds["m"] = mask
    attrs = {"k_transposed": kt, "causal": causal}
    if scale is not None:
        attrs["scale"] = scale
    m = attention_model({n: (a.shape, a.dtype) for n, a in feeds.items()}, attrs, threads)
    y = m.run(feeds)["o"]
    ref = reference(q, feeds["k"], v, mask, scale if scale is not None else 1 / np.sqrt(D), causal, kt)
    return y, ref, m, feeds


@pytest.mark.parametrize("S", [1, 5, 16, 31, 64, 65, 100, 128, 130, 257])
def test_seq_lengths_vs_numpy(S):
    y, ref, _, _ = run(1, 2, S, S, 32, mask_shape=(1, 1, 1, S))
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("kt", [0, 1])
@pytest.mark.parametrize("Sk, D, Dv, mask_shape, causal", [(37, 16, 16, None, 0), (128, 64, 64, (2, 1, 1, 128), 0),
                                                        (9, 17, 5, (2, 3, 1, 9), 1), (1, 8, 8, None, 0)])
def test_one_query_row(kt, Sk, D, Dv, mask_shape, causal):
    """Sq = 1 (a decode step over a KV cache) runs as matrix-vector products
    on K and V in place: the same as numpy, at 1 and 2 threads."""
    for threads in (1, 2):
        y, ref, _, _ = run(2, 3, 1, Sk, D, Dv, mask_shape=mask_shape, causal=causal, kt=kt,
                           threads=threads)
        np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("D,Dv", [(8, 8), (17, 5), (64, 64), (40, 24)])
def test_head_dims(D, Dv):
    y, ref, _, _ = run(2, 3, 45, 45, D, Dv)
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("kt", [0, 1])
@pytest.mark.parametrize("causal", [0, 1])
def test_sq_differs_from_sk(kt, causal):
    y, ref, _, _ = run(2, 2, 19, 70, 16, kt=kt, causal=causal, scale=0.3)
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("mask_shape", [(2, 1, 1, 50), (1, 1, 50, 50), (2, 3, 50, 50), (50,),
                                        (2, 1, 50, 1), (1, 3, 1, 50)])
@pytest.mark.parametrize("mask_bool", [False, True])
def test_mask_broadcasts(mask_shape, mask_bool):
    if mask_bool and mask_shape[-1] == 1:
        pytest.skip("a bool mask broadcast along the keys would mask whole rows")
    y, ref, _, _ = run(2, 3, 50, 50, 16, mask_shape=mask_shape, mask_bool=mask_bool)
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


def test_causal_with_mask_and_kt():
    y, ref, _, _ = run(2, 4, 77, 77, 32, mask_shape=(2, 1, 1, 77), causal=1, kt=1)
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("Sk", [7, 8, 9, 16, 17, 40])
def test_dead_tails_of_every_length(Sk):
    """A float mask whose rows end in keys at float32's minimum (the torch
    exporters' causal and padding form) has those keys skipped by the
    softmax (live_keys, eight a step then one): row i ends in i % (Sk + 1)
    such keys, and row 1 has a live key amid them.  Every row equals
    numpy's."""
    Sq, D = 3 * (Sk + 1), 8
    q = rng.standard_normal((1, 1, Sq, D)).astype(np.float32)
    k = rng.standard_normal((1, 1, Sk, D)).astype(np.float32)
    v = rng.standard_normal((1, 1, Sk, D)).astype(np.float32)
    lo = np.finfo(np.float32).min
    mask = np.zeros((1, 1, Sq, Sk), np.float32)
    for i in range(Sq):
        dead = i % (Sk + 1)
        mask[0, 0, i, Sk - dead:] = lo
    mask[0, 0, 1, :] = lo
    mask[0, 0, 1, 0] = 0.0
    mask[0, 0, 1, Sk // 2] = 0.0        # a live key with dead ones on either side
    m = attention_model({"q": (q.shape, np.float32), "k": (k.shape, np.float32),
                         "v": (v.shape, np.float32), "m": (mask.shape, np.float32)}, {}, 1)
    y = m.run({"q": q, "k": k, "v": v, "m": mask})["o"]
    ref = reference(q, k, v, mask, 1 / np.sqrt(D), 0, 0)
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


def test_fully_masked_row_is_nan():
    q = np.ones((1, 1, 3, 4), np.float32)
    mask = np.zeros((1, 1, 3, 6), np.float32)
    mask[0, 0, 1, :] = -np.inf
    m = attention_model({"q": (q.shape, np.float32), "k": ((1, 1, 6, 4), np.float32),
                         "v": ((1, 1, 6, 4), np.float32), "m": (mask.shape, np.float32)}, {}, 1)
    y = m.run({"q": q, "k": np.ones((1, 1, 6, 4), np.float32), "v": np.ones((1, 1, 6, 4), np.float32),
               "m": mask})["o"]
    assert np.isnan(y[0, 0, 1]).all()
    np.testing.assert_allclose(y[0, 0, [0, 2]], 1.0, rtol=1e-6)


@pytest.mark.parametrize("B,H", [(1, 1), (1, 3), (2, 12), (8, 12)])
def test_threads_give_equal_results(B, H):
    """Every (batch, head) pair is computed by one thread with the same
    tiles whichever it is: 1 and 2 threads agree bit for bit."""
    outs = []
    for t in (1, 2):
        rng_state = rng.bit_generator.state
        y, ref, _, _ = run(B, H, 67, 67, 32, mask_shape=(B, 1, 1, 67), causal=0, threads=t)
        rng.bit_generator.state = rng_state
        outs.append(y)
        np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)
    rng.bit_generator.state = rng_state
    run(B, H, 67, 67, 32, mask_shape=(B, 1, 1, 67))   # move the stream on
    assert np.array_equal(outs[0], outs[1])


def test_scratch_is_planned_per_thread():
    """The plan reserves the attention's scratch for the model's thread
    count: a 2-thread model's scratch row is about twice the 1-thread one."""
    sizes = []
    for t in (1, 2):
        _, _, m, _ = run(1, 4, 128, 128, 32, threads=t)
        plan = m.memory_plan
        sizes.append(int(plan[plan.alias_of == "(scratch)"].bytes.sum()))
    assert 1.9 * sizes[0] <= sizes[1] <= 2.1 * sizes[0]


def test_bert_layer_threads_agree():
    """A transformer block compiled at level 3 (fused attention, QKV,
    epilogues) gives the same output at 1 and 2 threads and matches numpy."""
    from peregrine_nb.examples import transformer_block
    g = transformer_block(seq=77, hidden=96, heads=4, ffn=192, batch=3)
    feeds = g.make_feeds()
    ref = g.reference(feeds)["out"]
    ys = [pg.compile(g, level=3, threads=t).run(feeds)["out"] for t in (1, 2)]
    assert "FusedAttention" in pg.compile(g, level=3).op_types
    for y in ys:
        np.testing.assert_allclose(y, ref, atol=2e-4)
    np.testing.assert_allclose(ys[0], ys[1], atol=1e-5)


@pytest.mark.parametrize("level", ["avx2", "c"])
def test_every_kernel_width(level):
    """The tiles follow the selected SGEMM variant's MR x NR (AVX-512 12x32,
    AVX2 6x16, the C reference 4x8, NEON 8x12): the same answers under each."""
    from peregrine_nb.cpu import cpu_levels, cpu_mask
    if level not in cpu_levels():
        pytest.skip(f"no {level} level on this machine")
    with cpu_mask(level):
        for S, D, kt in [(37, 16, 0), (70, 32, 1), (33, 24, 0)]:
            y, ref, _, _ = run(2, 3, S, S, D, mask_shape=(2, 1, 1, S), kt=kt, threads=2)
            np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


def test_mask_change_between_compile_and_run():
    """Scratch is planned for the widest SGEMM variant: a model compiled
    under the C level still runs (and agrees) after the mask is lifted."""
    from peregrine_nb.cpu import cpu_mask
    B, H, S, D = 2, 3, 70, 32
    q, k, v = (rng.standard_normal((B, H, S, D)).astype(np.float32) for _ in range(3))
    with cpu_mask("c"):
        m = attention_model({"q": (q.shape, np.float32), "k": (k.shape, np.float32),
                             "v": (v.shape, np.float32)}, {}, 2)
    y = m.run({"q": q, "k": k, "v": v})["o"]
    np.testing.assert_allclose(y, reference(q, k, v, None, 1 / np.sqrt(D), 0, 0), atol=2e-5, rtol=1e-4)


# ---- qkv_layout="bshd": Q, K, V and O as [B, S, H*D] rows ---------------------

def run_bshd(B, H, Sq, Sk, D, Dv=None, mask_shape=None, mask_bool=False, causal=0, threads=1):
    """FusedAttention over unsplit rows (head h = columns h*D..) against the
    head-layout reference of the same numbers."""
    Dv = Dv or D
    q = rng.standard_normal((B, Sq, H * D)).astype(np.float32)
    k = rng.standard_normal((B, Sk, H * D)).astype(np.float32)
    v = rng.standard_normal((B, Sk, H * Dv)).astype(np.float32)
    feeds = {"q": q, "k": k, "v": v}
    mask = None
    if mask_shape is not None:
        if mask_bool:
            mask = rng.random(mask_shape) > 0.3
            mask[..., 0] = True
        else:
            mask = np.where(rng.random(mask_shape) > 0.25, 0.0, -1e4).astype(np.float32)
        feeds["m"] = mask
    attrs = {"qkv_layout": "bshd", "num_heads": H, "causal": causal}
    m = attention_model({n: (a.shape, a.dtype) for n, a in feeds.items()}, attrs, threads)
    y = m.run(feeds)["o"]
    heads = lambda a, d: a.reshape(a.shape[0], a.shape[1], H, d).transpose(0, 2, 1, 3)  # noqa: E731
    ref = reference(heads(q, D), heads(k, D), heads(v, Dv), mask, 1 / np.sqrt(D), causal, 0)
    ref = ref.transpose(0, 2, 1, 3).reshape(B, Sq, H * Dv)
    assert y.shape == (B, Sq, H * Dv)
    return y, ref


@pytest.mark.parametrize("B,H,S,D", [(1, 1, 5, 8), (1, 2, 31, 16), (2, 3, 65, 32), (1, 12, 128, 32),
                                     (2, 4, 130, 17), (3, 6, 64, 64)])
def test_bshd_vs_numpy(B, H, S, D):
    y, ref = run_bshd(B, H, S, S, D, mask_shape=(B, 1, 1, S))
    np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("mask_shape,mask_bool,causal", [
    (None, False, 0), ((2, 1, 1, 70), True, 0), ((2, 3, 19, 70), False, 0), ((2, 1, 19, 1), False, 0),
    ((2, 1, 1, 70), False, 1), (None, False, 1)])
def test_bshd_masks_and_sq_differs(mask_shape, mask_bool, causal):
    y, ref = run_bshd(2, 3, 19, 70, 16, Dv=24, mask_shape=mask_shape, mask_bool=mask_bool, causal=causal)
    np.testing.assert_allclose(y, ref, atol=2e-4, rtol=1e-4)


@pytest.mark.parametrize("B,H", [(1, 3), (2, 12)])
def test_bshd_threads_bit_equal(B, H):
    state = rng.bit_generator.state
    y1, ref = run_bshd(B, H, 67, 67, 32, mask_shape=(B, 1, 1, 67), threads=1)
    rng.bit_generator.state = state
    y2, _ = run_bshd(B, H, 67, 67, 32, mask_shape=(B, 1, 1, 67), threads=2)
    np.testing.assert_allclose(y1, ref, atol=2e-5, rtol=1e-4)
    assert np.array_equal(y1, y2)


@pytest.mark.parametrize("level", ["avx2", "c"])
def test_bshd_every_kernel_width(level):
    from peregrine_nb.cpu import cpu_levels, cpu_mask
    if level not in cpu_levels():
        pytest.skip(f"no {level} level on this machine")
    with cpu_mask(level):
        for S, D in [(37, 16), (70, 32), (33, 24)]:
            y, ref = run_bshd(2, 3, S, S, D, mask_shape=(2, 1, 1, S), threads=2)
            np.testing.assert_allclose(y, ref, atol=2e-5, rtol=1e-4)


def test_bshd_bad_attributes_are_errors():
    shapes = {"q": ((1, 4, 10), np.float32), "k": ((1, 4, 10), np.float32), "v": ((1, 4, 10), np.float32)}
    for attrs, words in [({"qkv_layout": "bshd", "num_heads": 3}, "multiple"),
                         ({"qkv_layout": "bshd"}, "num_heads"),
                         ({"qkv_layout": "bshd", "num_heads": 2, "k_transposed": 1}, "k_transposed"),
                         ({"qkv_layout": "hbsd", "num_heads": 2}, "qkv_layout")]:
        with pytest.raises(pg.PeregrineError, match=words):
            attention_model(shapes, attrs, 1)


def _split_attention_graph(B, H, S, D, merge=True, mask=True):
    """Projections' rows -> Reshape + Transpose per head split -> attention
    -> Transpose + Reshape back, as BERT exports write it."""
    g = pg.Graph()
    for n in "qkv":
        g.add_input("x" + n, (B, S, H * D))
    g.add_initializer("shp4", np.array([B, S, H, D], np.int64))
    shp4 = "shp4"
    for n, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        g.add_node("Reshape", ["x" + n, shp4], [n + "_r"])
        g.add_node("Transpose", [n + "_r"], [n + "_h"], perm=perm)
    g.add_node("MatMul", ["q_h", "k_h"], ["s"])
    g.add_initializer("sd", np.float32(np.sqrt(D)))
    g.add_node("Div", ["s", "sd"], ["ss"])
    last = "ss"
    if mask:
        g.add_input("mask", (B, 1, 1, S))
        g.add_node("Add", ["ss", "mask"], ["sm"])
        last = "sm"
    g.add_node("Softmax", [last], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "v_h"], ["o"])
    if merge:
        g.add_node("Transpose", ["o"], ["o_t"], perm=[0, 2, 1, 3])
        g.add_initializer("shp3", np.array([B, S, H * D], np.int64))
        g.add_node("Reshape", ["o_t", "shp3"], ["y"])
        g.add_output("y")
    else:
        g.add_output("o")
    return g


@pytest.mark.parametrize("B,H,S,D,threads", [(1, 2, 9, 8, 1), (2, 4, 33, 16, 2), (1, 12, 128, 32, 2),
                                             (3, 3, 70, 24, 1)])
def test_bshd_fused_from_head_split_graph(B, H, S, D, threads):
    g = _split_attention_graph(B, H, S, D)
    feeds = {n: rng.standard_normal((B, S, H * D)).astype(np.float32) for n in ("xq", "xk", "xv")}
    mk = np.zeros((B, 1, 1, S), np.float32)
    mk[..., S // 2:] = -1e4
    feeds["mask"] = mk
    m = pg.compile(g, level=2, threads=threads)
    assert m.op_types == ["FusedAttention"], m.op_types
    y = m.run(feeds)["y"]
    y0 = pg.compile(g, level=0).run(feeds)["y"]
    np.testing.assert_allclose(y, y0, atol=2e-5, rtol=1e-4)


def test_partial_head_split_keeps_head_layout():
    """Without the merge after it, the split is not absorbed either: the
    head layout stays (one qkv_layout per node, all four or none)."""
    B, H, S, D = 1, 2, 12, 8
    g = _split_attention_graph(B, H, S, D, merge=False, mask=False)
    m = pg.compile(g, level=2)
    assert m.op_types.count("Transpose") == 3 and "FusedAttention" in m.op_types
    feeds = {n: rng.standard_normal((B, S, H * D)).astype(np.float32) for n in ("xq", "xk", "xv")}
    np.testing.assert_allclose(m.run(feeds)["o"], pg.compile(g, level=0).run(feeds)["o"], atol=2e-5, rtol=1e-4)
