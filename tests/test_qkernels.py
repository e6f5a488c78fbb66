"""The quantised kernels (peregrine_nb.qkernels) against a numpy
reimplementation of ggml's formulas, for every runnable variant and for
dispatch under every CPU level of the mask.

Two oracles:
  - the block formula on the same quantised activations, in float64: per
    block d_w d_x sum q_w q_x (+ m_w s_x for q4_1).  The kernels' integer
    part is exact, so they differ only by fp32 rounding of the scaled block
    sums and their order: at most (blocks + 8) 2^-23 of S = the same sum
    with absolute values;
  - the plain fp32 product W_deq . x with the unquantised x: the q8
    activation rounding moves each x_j by at most d/2 (d the f32 scale) plus
    127 d 2^-11 (d stored as f16), and q4_1's s = f16(d sum q) carries
    2^-11 relative, so |y - W_deq . x| <= sum_b (0.57 d_b sum_j |w_j| +
    2^-10 |m_b s_b|) + the fp32 bound.
"""
import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels, qkernels as qk

RNG = np.random.default_rng(7)
WTYPES = ["q4_0", "q4_1", "q8_0"]


def f16(a):
    return a.copy().view(np.float16).astype(np.float64)


def block_formula(W, Xq, wtype, K):
    """float64 (M, N) outputs and S (the same with absolute values)."""
    at = qk.act_type(wtype)
    nb = K // 32
    Wb = np.ascontiguousarray(W[:, : nb * qk.BLOCK_BYTES[wtype]]).reshape(W.shape[0], nb, -1)
    Xb = np.ascontiguousarray(Xq).reshape(Xq.shape[0], nb, -1)
    dw, dx = f16(Wb[..., 0:2])[..., 0], f16(Xb[..., 0:2])[..., 0]
    if wtype == "q8_0":
        qw = Wb[..., 2:].view(np.int8).astype(np.float64)
    else:
        nib = Wb[..., -16:]
        qw = np.concatenate([nib & 15, nib >> 4], axis=2).astype(np.float64)
        if wtype == "q4_0":
            qw -= 8
    qx = Xb[..., -32:].view(np.int8).astype(np.float64)
    isum = np.einsum("nbj,mbj->mnb", qw, qx)
    asum = np.einsum("nbj,mbj->mnb", np.abs(qw), np.abs(qx))
    dd = dx[:, None, :] * dw[None, :, :]
    y = (dd * isum).sum(axis=2)
    S = (np.abs(dd) * asum).sum(axis=2)
    if wtype == "q4_1":
        ms = f16(Xb[..., 2:4])[..., 0][:, None, :] * f16(Wb[..., 2:4])[..., 0][None, :, :]
        y += ms.sum(axis=2)
        S += np.abs(ms).sum(axis=2)
    return y, S


def make(wtype, M, N, K, pad=0):
    w = RNG.standard_normal((N, K)).astype(np.float32) * 0.05
    W = qk.quantize_weights(w, wtype)
    if pad:
        Wp = np.full((N, W.shape[1] + pad), 0xEE, np.uint8)
        Wp[:, : W.shape[1]] = W
        W = Wp[:, : W.shape[1]]           # a strided view: ldw > row bytes
    x = RNG.standard_normal((M, K)).astype(np.float32)
    return w, W, x


def variant_names(op):
    return kernels.runnable_variants(op)


@pytest.mark.parametrize("wtype", WTYPES)
@pytest.mark.parametrize("N,K", [(1, 32), (3, 64), (4, 96), (9, 160), (37, 576), (70, 1536)])
def test_qgemv_every_variant_matches_block_formula(wtype, N, K):
    _, W, x = make(wtype, 1, N, K, pad=N % 3 * 5)
    xq = qk.quantize(x[0], qk.act_type(wtype))
    want, S = block_formula(W, xq[None, :], wtype, K)
    tol = (K // 32 + 8) * 2.0**-23 * S[0] + 1e-30
    for v in variant_names("qgemv_" + wtype):
        got = qk.qgemv(W, xq, wtype, K, variant=v)
        assert np.all(np.abs(got - want[0]) <= tol), (v, np.max(np.abs(got - want[0]) / tol))


@pytest.mark.parametrize("wtype", WTYPES)
@pytest.mark.parametrize("M,N,K", [(1, 1, 32), (2, 5, 64), (5, 3, 96), (8, 9, 160), (13, 17, 576)])
def test_qgemm_every_variant_matches_block_formula(wtype, M, N, K):
    _, W, x = make(wtype, M, N, K, pad=3)
    Xq = qk.quantize(x, qk.act_type(wtype))
    want, S = block_formula(W, Xq, wtype, K)
    tol = (K // 32 + 8) * 2.0**-23 * S + 1e-30
    for v in variant_names("qgemm_" + wtype):
        got = qk.qgemm(W, Xq, wtype, K, variant=v)
        assert got.shape == (M, N)
        assert np.all(np.abs(got - want) <= tol), (v, np.max(np.abs(got - want) / tol))


@pytest.mark.parametrize("wtype", WTYPES)
def test_end_to_end_against_fp32_within_q8_rounding(wtype):
    N, K = 24, 576
    _, W, x = make(wtype, 3, N, K)
    wd = qk.dequantize(W, wtype, K).astype(np.float64)
    want = x.astype(np.float64) @ wd.T
    Xq = qk.quantize(x, qk.act_type(wtype))
    d = f16(np.ascontiguousarray(Xq).reshape(3, K // 32, -1)[..., 0:2])[..., 0]    # (M, blocks)
    wabs = np.abs(wd).reshape(N, K // 32, 32).sum(axis=2)                        # (N, blocks)
    bound = 0.6 * d @ wabs.T
    if wtype == "q4_1":
        Wb = np.ascontiguousarray(W).reshape(N, K // 32, -1)
        Xb = np.ascontiguousarray(Xq).reshape(3, K // 32, -1)
        bound += 2.0**-10 * np.abs(f16(Xb[..., 2:4])[..., 0]) @ np.abs(f16(Wb[..., 2:4])[..., 0]).T
    bound += 1e-5 * np.abs(x) @ np.abs(wd).T
    for got in (qk.qgemm(W, Xq, wtype, K), np.stack([qk.qgemv(W, Xq[m], wtype, K) for m in range(3)]),
                qk.matmul(W, x, wtype)):
        assert np.all(np.abs(got - want) <= bound)


@pytest.mark.parametrize("wtype", WTYPES)
def test_every_level_dispatches_correctly(wtype):
    M, N, K = 5, 11, 192
    _, W, x = make(wtype, M, N, K)
    at = qk.act_type(wtype)
    ref_q = qk.quantize(x, at, variant=len(kernels.variants("quantize_" + at)) - 1)
    want, S = block_formula(W, ref_q, wtype, K)
    tol = (K // 32 + 8) * 2.0**-23 * S + 1e-30
    for level in pg.cpu_levels():
        with pg.cpu_mask(level):
            Xq = qk.quantize(x, at)
            assert np.array_equal(Xq, ref_q), level
            assert np.all(np.abs(qk.qgemm(W, Xq, wtype, K) - want) <= tol), level
            assert np.all(np.abs(qk.qgemv(W, Xq[0], wtype, K) - want[0]) <= tol[0]), level


@pytest.mark.parametrize("at", ["q8_0", "q8_1"])
def test_quantize_every_variant_is_byte_exact(at):
    K = 256
    x = RNG.standard_normal((4, K)).astype(np.float32)
    x[1, :32] = 0                                              # d = 0
    x[2, :32] = RNG.integers(-127, 127, 32) + 0.5              # ties, with max 127 below
    x[2, 5] = 127
    x[3] *= 1e-6
    variants = variant_names("quantize_" + at)
    ref = qk.quantize(x, at, variant=variants[-1])
    for v in variants:
        assert np.array_equal(qk.quantize(x, at, variant=v), ref), v
    # the numpy decoding round-trips within half a step (not row 3: its
    # d ~ 3e-8 is below f16's smallest subnormal, as it would be in ggml)
    back = qk.dequantize(ref[:3], at, K)
    d = f16(ref[:3].reshape(3, K // 32, -1)[..., 0:2])[..., 0]
    assert np.all(np.abs(back - x[:3]).reshape(3, K // 32, 32) <= 0.6 * d[..., None])


def test_quantize_matches_the_gguf_module():
    from peregrine_nb import gguf

    x = RNG.standard_normal(320).astype(np.float32)
    for at in ("q8_0", "q8_1"):
        assert np.array_equal(qk.quantize(x, at), gguf.quantize_activations(at, x))


def test_threads_do_not_change_results():
    _, W, x = make("q4_1", 2, 1200, 576)
    Xq = qk.quantize(x, "q8_1")
    assert np.array_equal(qk.qgemv(W, Xq[0], "q4_1", threads=1), qk.qgemv(W, Xq[0], "q4_1", threads=2))
    assert np.array_equal(qk.qgemm(W, Xq, "q4_1", threads=1), qk.qgemm(W, Xq, "q4_1", threads=2))


def test_smollm2_weights():
    from peregrine_nb import gguf

    try:
        f = gguf.load_gguf(gguf.smollm2_path())
    except Exception as e:  # the model package is optional
        pytest.skip(f"SmolLM2 GGUF not available: {e}")
    t = {t.name: t for t in f.tensors}["blk.0.ffn_up.weight"]
    assert t.type == "q4_1"
    K, N = t.dims[0], t.dims[1]
    W = np.frombuffer(f.raw("blk.0.ffn_up.weight"), np.uint8).reshape(N, -1)[:256]
    x = RNG.standard_normal(K).astype(np.float32)
    xq = qk.quantize(x, "q8_1")
    want, S = block_formula(W, xq[None, :], "q4_1", K)
    got = qk.qgemv(W, xq, "q4_1")
    assert np.all(np.abs(got - want[0]) <= (K // 32 + 8) * 2.0**-23 * S[0])
    assert np.allclose(qk.dequantize(W, "q4_1"), f.tensor("blk.0.ffn_up.weight")[:256], atol=0)


def test_bad_arguments():
    W = qk.quantize_weights(np.ones((2, 64), np.float32), "q4_1")
    xq = qk.quantize(np.ones(64, np.float32), "q8_1")
    with pytest.raises(pg.ShapeError, match="multiple of 32"):
        qk.quantize(np.ones(48, np.float32))
    with pytest.raises(pg.ShapeError, match="multiple of 32"):
        qk.qgemv(W, xq, "q4_1", K=48)
    with pytest.raises(pg.DTypeError):
        qk.qgemv(W, xq, "q4_K")
    with pytest.raises(pg.DTypeError):
        qk.qgemv(W.astype(np.int8), xq, "q4_1")
    with pytest.raises(pg.ShapeError, match="fewer than"):
        qk.qgemv(W, xq[:36], "q4_1")
    with pytest.raises(pg.ShapeError, match="fewer than"):
        qk.qgemv(W[:, :30], xq, "q4_1", K=64)
    with pytest.raises(pg.InvalidArgumentError, match="no variant"):
        qk.qgemv(W, xq, "q4_1", variant="nope")
    with pytest.raises(pg.InvalidArgumentError):
        qk.qgemv(W, xq, "q4_1", threads=0)


def test_doctest_example():
    import doctest

    assert doctest.testmod(qk).failed == 0
