"""compile(precision="bf16" | "int8-dynamic"): the low-precision products
against fp32 - on a random graph (against numpy computed here) and on the
real all-MiniLM-L6-v2 (against our own fp32 embeddings, which test_minilm.py
checks against sentence-transformers) - the fallbacks under lower CPU masks,
rebinding, saving and loading, and refusals.  The kernels themselves are
proved against their C references by checkasm (gemm_u8s8, gemm_bf16)."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels

RNG = np.random.default_rng(20261203)


def cpu_has(*flags: str) -> bool:
    have = set(pg.cpu_info().flags)
    return all(f in have for f in flags)


HAS_BF16 = cpu_has("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512bf16")


def int8_levels() -> set[str]:
    """The ISA levels with an assembly gemm_u8s8 kernel (avx2's vpmaddubsw and vpmaddwd ones,
    AVX-VNNI, AVX-512 VNNI, AMX): the levels int8-dynamic binds to, read from
    the variant table itself."""
    df = kernels.variants("gemm_u8s8")
    return set(df.isa[df.isa != "c"])


# an int8 kernel this CPU runs (its flags, whatever the mask)
HAS_INT8 = bool(int8_levels() & set(pg.cpu_info().flags))


def mlp_graph(batch=2, seq=24, d=96, hidden=160, seed=1):
    """x -> FusedMatMul(+bias, ReLU) -> MatMul -> + x -> three projections
    (fused into QKVMatMul) summed: every product kind the pass packs, odd
    sizes off the panel width (160, 96)."""
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
    params = {"W1": w(d, hidden), "b1": (0.1 * rng.standard_normal(hidden)).astype(np.float32),
              "W2": w(hidden, d), "Wq": w(d, 64), "Wk": w(d, 64), "Wv": w(d, 64)}
    g = pg.Graph()
    g.add_input("x", (batch, seq, d))
    for k, v in params.items():
        g.add_initializer(k, v)
    g.add_node("MatMul", ["x", "W1"], ["h"])
    g.add_node("Add", ["h", "b1"], ["hb"])
    g.add_node("Relu", ["hb"], ["a"])
    g.add_node("MatMul", ["a", "W2"], ["o"])
    g.add_node("Add", ["o", "x"], ["r"])
    for p in "qkv":
        g.add_node("MatMul", ["r", f"W{p}"], [p])
    g.add_node("Add", ["q", "k"], ["qk"])
    g.add_node("Add", ["qk", "v"], ["y"])
    g.add_output("y")
    g.add_output("r")
    return g, params


def numpy_ref(params, x):
    h = np.maximum(x @ params["W1"] + params["b1"], 0)
    r = h @ params["W2"] + x
    return {"r": r, "y": r @ params["Wq"] + r @ params["Wk"] + r @ params["Wv"]}


def cos(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def mlp():
    g, params = mlp_graph()
    x = RNG.standard_normal((2, 24, 96)).astype(np.float32)
    return g, params, {"x": x}, numpy_ref(params, x)


# bound precision: what the CPU gives, the fallback where it lacks the kernel
EXPECT = {"fp32": "fp32", "bf16": "bf16" if HAS_BF16 else "fp32",
          "int8-dynamic": "int8-dynamic" if HAS_INT8 else "fp32"}
MIN_COS = {"fp32": 0.999999, "bf16": 0.9999, "int8-dynamic": 0.999}


@pytest.mark.parametrize("precision", ["fp32", "bf16", "int8-dynamic"])
def test_random_graph_against_numpy(mlp, precision):
    g, params, feeds, ref = mlp
    m = pg.compile(g, precision=precision)
    assert m.precision == EXPECT[precision]
    out = m.run(feeds)
    for name in ref:
        c = cos(out[name], ref[name])
        assert c >= MIN_COS[precision], (name, c)
    if EXPECT[precision] != "fp32":
        lowp = [k for k in m.kernels if k["precision"] != "fp32"]
        # every product: the FusedMatMul, the MatMul, the QKVMatMul
        assert {k["op_type"] for k in lowp} >= {"FusedMatMul", "QKVMatMul"}, m.kernels
        fam = "bf16_gemm" if precision == "bf16" else "u8s8_gemm"
        assert all(any(n.startswith(fam) for n in k["kernels"]) for k in lowp)
        # and the error is not zero: the products really ran in low precision
        assert np.abs(out["y"] - ref["y"]).max() > 1e-6


def test_compare_reports_per_output_error(mlp):
    g, _, feeds, _ = mlp
    m32 = pg.compile(g)
    mb = pg.compile(g, precision="bf16")
    df = mb.compare(m32, feeds)
    assert list(df.columns) == ["max_abs", "max_rel", "cosine", "rmse"]
    assert set(df.index) == {"y", "r"}
    got, want = mb.run(feeds), m32.run(feeds)
    for name in ("y", "r"):
        d = np.abs(got[name].astype(np.float64) - want[name])
        assert df.loc[name, "max_abs"] == pytest.approx(d.max())
        assert df.loc[name, "cosine"] == pytest.approx(cos(got[name], want[name]))
    self_cmp = m32.compare(m32, feeds)
    assert (self_cmp.max_abs == 0).all() and np.allclose(self_cmp.cosine, 1.0)


def test_int8_dynamic_equals_its_own_definition(mlp):
    """The int8 product is what the scheme says: per-row u8 activations,
    per-column symmetric s8 weights (in the range of the kernel bound) - recomputed here in numpy for the
    first product (the ReLU of the FusedMatMul is monotone, so compare its
    output through the residual graph's first step alone)."""
    if not HAS_INT8:
        pytest.skip("no int8 kernel here")
    rng = np.random.default_rng(5)
    K, N = 100, 70
    W = (rng.standard_normal((K, N)) / 10).astype(np.float32)
    x = rng.standard_normal((9, K)).astype(np.float32)
    g = pg.Graph()
    g.add_input("x", x.shape)
    g.add_initializer("W", W)
    g.add_node("MatMul", ["x", "W"], ["y"])
    g.add_output("y")
    m = pg.compile(g, precision="int8-dynamic")
    y = m.run({"x": x})["y"]
    # weights in [-127, 127], or [-64, 64] for AVX2's vpmaddubsw kernel (a
    # Gaussian weight rounds well to that range)
    q = 64 if any(k.endswith("_maddubs") for s in m.kernels for k in s["kernels"]) else 127
    assert_int8_product(y, x, W, q)


def assert_int8_product(y, x, W, q, qa=255):
    """y is x @ W by the int8-dynamic scheme with weights in [-q, q] and
    activations in [0, qa]."""
    sw = np.abs(W).max(0) / np.float32(q)
    wq = np.clip(np.rint(W / sw), -q, q)
    lo, hi = np.minimum(x.min(1), 0), np.maximum(x.max(1), 0)
    sa = ((hi - lo) / np.float32(qa)).astype(np.float32)
    inv = (np.float32(1) / sa).astype(np.float32)
    za = np.clip(np.rint(-lo * inv), 0, qa)
    xq = np.clip(np.rint(x * inv[:, None]) + za[:, None], 0, qa)
    want = ((xq - za[:, None]) @ wq) * (sa[:, None] * sw[None, :])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.skipif(not cpu_has("avx2"), reason="no AVX2 here")
def test_heavy_tailed_weights_keep_eight_bits_on_avx2():
    """Under the avx2 mask, int8-dynamic's best kernel (avx2_maddubs,
    vpmaddubsw) is exact while 2 a |b| fits int16: a Gaussian weight goes
    to [-64, 64] with 8-bit activations; one with a few large outliers
    (rounding error over 2% at that range, as MiniLM's FFN outputs) keeps
    [-127, 127], and its product's activations get [0, 127]; each product
    is its scheme's."""
    rng = np.random.default_rng(11)
    K, N = 96, 64
    Wn = (rng.standard_normal((K, N)) / 10).astype(np.float32)
    Wt = Wn.copy()
    Wt[rng.integers(0, K, 40), rng.integers(0, N, 40)] *= 30.0
    x = rng.standard_normal((7, K)).astype(np.float32)
    g = pg.Graph()
    g.add_input("x", x.shape)
    g.add_initializer("Wn", Wn)
    g.add_initializer("Wt", Wt)
    g.add_node("MatMul", ["x", "Wn"], ["yn"], name="normal")
    g.add_node("MatMul", ["x", "Wt"], ["yt"], name="tailed")
    g.add_output("yn")
    g.add_output("yt")
    with pg.cpu_mask("avx2"):
        m = pg.compile(g, precision="int8-dynamic")
        out = m.run({"x": x})
    kern = {s["node"]: [k for k in s["kernels"] if k.startswith("u8s8_gemm")] for s in m.kernels}
    assert kern == {"normal": ["u8s8_gemm_6x32_avx2_maddubs"],
                    "tailed": ["u8s8_gemm_6x32_avx2_maddubs"]}, kern
    assert_int8_product(out["yn"], x, Wn, 64)
    assert_int8_product(out["yt"], x, Wt, 127, qa=127)


LEVELS = ["c", "avx2", "avxvnni", "avx512", "avx512vnni", "avx512bf16", "amx"]


@pytest.mark.skipif(not (HAS_BF16 or HAS_INT8), reason="no low-precision kernel on this CPU")
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("precision", ["bf16", "int8-dynamic"])
def test_mask_walk_compile_and_rebind(mlp, level, precision):
    """Compiled under each lower level the model falls back to fp32 where
    the level lacks the kernel; a model compiled at the top and rebound
    under the lower mask keeps its packed weights and runs the family's C
    reference: both stay correct."""
    g, params, feeds, ref = mlp
    top = pg.compile(g, precision=precision)
    with pg.cpu_mask(level):
        m = pg.compile(g, precision=precision)
        flags = set(pg.cpu_info().active_flags)
        has = ("avx512bf16" in flags) if precision == "bf16" else bool(int8_levels() & flags)
        assert m.precision == (precision if has else "fp32"), (level, m.kernels)
        out = m.run(feeds)
        top.rebind()
        out_top = top.run(feeds)
        assert top.precision == EXPECT[precision]
        names = {n for k in top.kernels for n in k["kernels"]}
        if not has and EXPECT[precision] != "fp32":
            assert any(n.endswith("_c") and "gemm" in n for n in names), names
    for o in (out, out_top):
        for name in ref:
            assert cos(o[name], ref[name]) >= MIN_COS[precision], (level, name)


@pytest.mark.parametrize("precision", ["fp32", "bf16", "int8-dynamic"])
def test_save_and_load_keeps_the_packed_weights(mlp, tmp_path, precision):
    g, _, feeds, _ = mlp
    m = pg.compile(g, precision=precision)
    path = m.save(tmp_path / f"m_{precision}.pgm")
    assert pg.compiled_file_info(path)["precision"] == m.precision
    back = pg.load_compiled(path)
    assert back.precision == m.precision
    a, b = m.run(feeds), back.run(feeds)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


@pytest.mark.skipif(not HAS_INT8, reason="no int8 kernel here")
def test_a_file_understating_an_int8_weights_range_is_refused(tmp_path):
    """An int8 packed weight carries its max |b|, and the binder picks a
    kernel exact for it (avx2_maddubs: 64 with 8-bit activations): a file whose stored range is below
    its values' is refused at load, never computed on the narrow kernel."""
    K, N = 8, 32
    g = pg.Graph()
    g.add_input("x", (2, K))
    g.add_initializer("W", np.full((K, N), 0.5, np.float32))
    g.add_node("MatMul", ["x", "W"], ["y"])
    g.add_output("y")
    m = pg.compile(g, precision="int8-dynamic")
    assert m.precision == "int8-dynamic"
    q = 64 if any(k.endswith("_maddubs") for s in m.kernels for k in s["kernels"]) else 127
    m.save(tmp_path / "m.pgm")
    b = bytearray((tmp_path / "m.pgm").read_bytes())
    at = b.find(bytes([q]) * (K * 32))      # every weight at level q: the packed panel
    assert at >= 0
    at += K * 32 + 32 * 8                   # past the panel, the column sums and scales
    assert int.from_bytes(b[at:at + 4], "little") == q
    b[at:at + 4] = (1).to_bytes(4, "little")
    (tmp_path / "bad.pgm").write_bytes(bytes(b))
    with pytest.raises(pg.FormatError, match=rf"'W': an int8 packed weight whose stored range \|1\| "
                                             rf"is not its values' \|{q}\|"):
        pg.load_compiled(tmp_path / "bad.pgm")


def test_unknown_precision_is_refused(mlp):
    g = mlp[0]
    with pytest.raises(pg.InvalidArgumentError, match="precision 'fp16'"):
        pg.compile(g, precision="fp16")
    with pytest.raises(pg.InvalidArgumentError, match="precision"):
        pg.models.minilm(precision="int4")


def test_low_precision_families_are_in_the_tables():
    fams = kernels.families()
    for f in ("gemm_bf16", "cvt_bf16", "gemm_u8s8", "quantize_u8"):
        assert f in fams
        df = kernels.variants(f)
        assert df.iloc[-1].isa == "c"


# ---- the real MiniLM ---------------------------------------------------------

SENTENCES = [
    "This is an example sentence.",
    "Each sentence is converted into a 384-dimensional vector.",
    "short",
    "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun!",
    "Low precision arithmetic makes inference faster on CPUs with bf16 and VNNI.",
    "Peregrine falcons are the fastest animals on earth. " * 6,
]


@pytest.fixture(scope="module")
def minilm_fp32():
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    try:
        d = pg.models.find_minilm_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    return d, pg.models.minilm(model_dir=d).encode(SENTENCES)


@pytest.mark.parametrize("precision,min_cos", [("bf16", 0.999), ("int8-dynamic", 0.995)])
def test_minilm_embeddings_close_to_fp32(minilm_fp32, precision, min_cos):
    d, ref = minilm_fp32
    enc = pg.models.minilm(model_dir=d, precision=precision)
    got = enc.encode(SENTENCES)
    c = (got * ref).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1))
    print(f"MiniLM {precision}: min cosine {c.min():.6f}")
    assert c.min() >= min_cos, c
    m = next(iter(enc._compiled.values()))
    assert m.precision == EXPECT[precision]


# ---- the notebook viewer: speed against error ---------------------------------

def test_precision_tradeoff_widget(mlp):
    pytest.importorskip("ipywidgets")
    go = pytest.importorskip("plotly.graph_objects")
    from peregrine_nb.widgets import PrecisionTradeoff

    g, _, feeds, _ = mlp
    w = PrecisionTradeoff(g, feeds, repeat=2)
    assert repr(w) == "<PrecisionTradeoff fp32/bf16/int8-dynamic 0 results>"
    assert len(w.fig.data) == 0
    w.run_button.click()
    df = w.results
    assert set(df.precision) == {"fp32", "bf16", "int8-dynamic"} and set(df.output) == {"y", "r"}
    # the errors are the models' own compare() against fp32
    for p in ("bf16", "int8-dynamic"):
        cmp = w.models[p].compare(w.models["fp32"], feeds)
        got = df[df.precision == p].set_index("output")
        np.testing.assert_allclose(got.loc[["y", "r"], "cosine"], cmp.loc[["y", "r"], "cosine"])
        assert (got.bound == EXPECT[p]).all()
    assert (df[df.precision == "fp32"].max_abs == 0).all()
    assert len(w.fig.data) == 3 and "<table" in w.table.value
    assert isinstance(w.figure, go.Figure) and len(w.figure.data) == 3
    assert "plotly" in w._repr_mimebundle_()["text/html"]
