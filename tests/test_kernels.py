"""The Python kernel API: every runnable variant against numpy, and bad input
refused with a clear error."""
import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape, dtype=np.float32)


def gemm_tol(a, b):
    # scales with K and the size of the products, as checkasm does
    return 1e-5 * (np.abs(a) @ np.abs(b)) + 1e-6


def test_variant_table_lists_a_reference_per_family():
    df = kernels.variants()
    assert list(df.columns) == ["family", "variant", "isa", "runnable", "active", "selected",
                                "self_check"]
    assert list(dict.fromkeys(df.family)) == kernels.families()
    for family, group in df.groupby("family"):
        assert group.iloc[-1].isa == "c", family
        assert group.runnable.iloc[-1]
        assert group.selected.sum() == 1, family
        # what dispatch selects has proved itself (or is checkasm's alone)
        assert group[group.selected].self_check.iloc[0] in ("passed", "checkasm only"), family


def test_families_are_the_kernel_tables():
    names = kernels.families()
    assert {"sgemm", "gemv", "vexp", "vadd", "softmax", "layernorm"} <= set(names)
    assert len(names) == len(set(names))
    assert not hasattr(kernels, "ops")  # renamed, no alias: "op" means a graph op
    sg = kernels.variants(family="sgemm")
    assert set(sg.family) == {"sgemm"} and sg.iloc[-1].isa == "c"
    assert list(kernels.variants("gemv").variant) == list(kernels.variants(family="gemv").variant)


@pytest.mark.parametrize("call", [
    lambda: kernels.variants("nonsense"),
    lambda: kernels.variants(family="nonsense"),
    lambda: kernels.runnable_variants("nonsense"),
    lambda: kernels.variant_index("nonsense", 0),
    lambda: kernels.benchmark("nonsense", [(16,)]),
])
def test_unknown_kernel_family_is_refused(call):
    with pytest.raises(pg.InvalidArgumentError, match="unknown kernel family 'nonsense'") as e:
        call()
    assert "sgemm" in str(e.value)


@pytest.mark.parametrize("variant", kernels.runnable_variants("sgemm"))
@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (7, 17, 33), (64, 129, 300), (128, 384, 384)])
@pytest.mark.parametrize("act", [None, "relu", "gelu"])
def test_sgemm_matches_numpy(variant, M, N, K, act):
    a, b, bias = rand(M, K), rand(K, N), rand(N)
    want = a @ b + bias
    if act == "relu":
        want = np.maximum(want, 0)
    elif act == "gelu":
        from math import erf, sqrt
        want = want * 0.5 * (1 + np.vectorize(erf)(want / sqrt(2)).astype(np.float32))
    got = kernels.sgemm(a, b, bias=bias, act=act, variant=variant)
    assert np.all(np.abs(got - want) <= gemm_tol(a, b) + 1e-5 * np.abs(want))


@pytest.mark.parametrize("threads", [1, 2])
def test_sgemm_packed_strided_threads(threads):
    big = rand(50, 80)
    a = big[:, 5:45]               # strided rows: lda = 80
    b = rand(40, 70)
    packed = kernels.pack(b)
    got = kernels.sgemm(a, packed, threads=threads)
    assert np.all(np.abs(got - a @ b) <= gemm_tol(a, b))


@pytest.mark.parametrize("variant", kernels.runnable_variants("gemv"))
@pytest.mark.parametrize("N,K", [(1, 1), (33, 17), (384, 384), (1000, 77)])
def test_gemv_matches_numpy(variant, N, K):
    x, b, bias = rand(K), rand(K, N), rand(N)
    got = kernels.gemv(x, b, bias=bias, variant=variant)
    assert np.allclose(got, x @ b + bias, rtol=1e-5, atol=1e-4 * np.sqrt(K))


def test_every_level_runs_sgemm_correctly():
    a, b = rand(9, 20), rand(20, 18)
    for level in pg.cpu_levels():
        with pg.cpu_mask(level):
            assert np.allclose(kernels.sgemm(a, b), a @ b, atol=1e-4)


def test_fma_peak_runs_at_every_level():
    # the loop follows the active mask (AVX-512, AVX2, NEON); below every
    # loop (c) it falls back to the narrowest the CPU runs, never an error
    from peregrine_nb._lib import lib
    for level in [lv for lv in ("c", "avx2", "avx512", "neon") if lv in pg.cpu_levels()]:
        with pg.cpu_mask(level):
            assert lib.pg_measure_fma_peak_gflops(1) > 0, level


def test_bad_inputs_raise_clear_errors():
    a, b = rand(4, 5), rand(5, 6)
    with pytest.raises(pg.DTypeError, match="float32"):
        kernels.sgemm(a.astype(np.float64), b)
    with pytest.raises(pg.ShapeError, match="inner dimensions"):
        kernels.sgemm(a, rand(4, 6))
    with pytest.raises(pg.InvalidArgumentError, match="contiguous"):
        kernels.sgemm(np.asfortranarray(rand(4, 5))[:, ::2], rand(3, 6))
    with pytest.raises(pg.ShapeError, match="bias"):
        kernels.sgemm(a, b, bias=rand(5))
    with pytest.raises(pg.InvalidArgumentError, match="no variant 'nope'"):
        kernels.sgemm(a, b, variant="nope")
    with pytest.raises(pg.InvalidArgumentError, match="act"):
        kernels.sgemm(a, b, act="swish")
    with pytest.raises(pg.ShapeError):
        kernels.gemv(rand(4), b)


def test_variant_this_cpu_cannot_run_is_refused():
    df = kernels.variants()
    # the two families this test can call (on an AVX-512 CPU without AMX
    # the first variant it cannot run is an AMX one of gemm_u8s8)
    missing = df[~df.runnable & df.family.isin(["sgemm", "gemv"])]
    if missing.empty:
        pytest.skip("this CPU runs every sgemm and gemv variant in the tables")
    row = missing.iloc[0]
    with pytest.raises(pg.UnsupportedError):
        if row.family == "sgemm":
            kernels.sgemm(rand(2, 2), rand(2, 2), variant=row.variant)
        else:
            kernels.gemv(rand(2), rand(2, 2), variant=row.variant)


def test_benchmark_returns_a_row_per_variant():
    df = kernels.benchmark("sgemm", [(16, 32, 16)], repeat=2, min_time=0.001)
    assert set(df.variant) == set(kernels.runnable_variants("sgemm"))
    assert set(df.family) == {"sgemm"}
    assert (df.gflops > 0).all()


def erf_np(x):
    from math import erf
    return np.vectorize(erf)(x.astype(np.float64))


UNARY_REF = {
    "exp": np.exp,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "gelu": lambda x: 0.5 * x * (1 + erf_np(x / np.sqrt(2))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
}


@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_unary_ops_every_variant(op):
    x = np.concatenate([rng.uniform(-20, 20, 1001), [0.0, -0.0, 1e-30, -87.0, 88.0]]).astype(np.float32)
    if op == "exp":
        x = np.clip(x, -80, 80)
    want = UNARY_REF[op](x.astype(np.float64))
    for v in kernels.runnable_variants(kernels.UNARY_OPS[op]):
        got = kernels.unary(op, x, variant=v)
        assert np.allclose(got, want, rtol=2e-6, atol=2e-6), (op, v)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary_ops_with_row_broadcast(op):
    a, b, row = rand(5, 37), rand(5, 37), rand(37)
    f = np.add if op == "add" else np.multiply
    for v in kernels.runnable_variants(kernels.BINARY_OPS[op]):
        assert np.array_equal(kernels.binary(op, a, b, variant=v), f(a, b))
        assert np.array_equal(kernels.binary(op, a, row, variant=v), f(a, row))


def test_row_ops_every_variant():
    x = rand(7, 385)
    g, beta, mask = rand(385), rand(385), np.where(rng.random(385) < 0.2, -np.inf, 0).astype(np.float32)
    z = 0.125 * x.astype(np.float64) + mask
    sm = np.exp(z - z.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    ln = (x - mu) / np.sqrt(var + 1e-5) * g + beta
    rms = x / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * g
    for v in kernels.runnable_variants("softmax"):
        assert np.allclose(kernels.softmax(x, 0.125, mask, variant=v), sm, rtol=1e-5, atol=1e-7)
    for v in kernels.runnable_variants("layernorm"):
        assert np.allclose(kernels.layernorm(x, g, beta, 1e-5, variant=v), ln, rtol=1e-4, atol=1e-5)
    for v in kernels.runnable_variants("rmsnorm"):
        assert np.allclose(kernels.rmsnorm(x, g, 1e-6, variant=v), rms, rtol=1e-4, atol=1e-5)


def test_row_ops_refuse_bad_input():
    with pytest.raises(pg.ShapeError, match="gamma"):
        kernels.layernorm(rand(3, 8), rand(7))
    with pytest.raises(pg.InvalidArgumentError, match="unknown unary"):
        kernels.unary("cosh", rand(4))
    with pytest.raises(pg.DTypeError):
        kernels.softmax(np.zeros((2, 2)))
