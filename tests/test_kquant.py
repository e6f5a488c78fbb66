"""The k-quant (q4_K, q5_K, q6_K) and 16-bit float (f16, bf16) weight
kernels, plus q4_0 / q4_1 / q8_0 through the same entry points, against
two oracles computed here:

  - gguf.quants.dequantize (llama.cpp's own Python decoder, independent of
    the engine) of the same weight bytes, times the dequantised activations
    in float64: the engine's C reference dequantiser must agree with it
    element for element, and every variant of every qgemv / qgemm family
    (the C reference included) must agree with the float64 product within
    the fp32 bound: the integer part of a k-quant product is exact, so only
    the fp32 conversion, scaling and summation order differ, at most
    (blocks + 8) 2^-23 of S = the same sum of absolute values of the
    unsigned quants (q + 32 for q6_K) and the offsets;
  - a numpy transcription of ggml's quantize_row_q8_K_ref for the q8_K
    activation quantiser (byte-exact).

End to end: small llama GGUF files with q4_K, q5_K, q6_K, q8_0, f16 and bf16
matrices (and one mixing q4_K / q6_K as a Q4_K_M file does), written here
with the gguf package and random weights, load and give logits equal to
llama-cpp-python's on the same file within a tolerance stated in the test.
"""
import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels
from peregrine_nb._lib import ffi, lib
from peregrine_nb.errors import UnsupportedError
from peregrine_nb.gguf import dequantize as pg_dequantize

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as T, quants  # noqa: E402

RNG = np.random.default_rng(14)
TYPE_NUM = {"q4_0": 2, "q4_1": 3, "q8_0": 8, "q4_K": 12, "q5_K": 13, "q6_K": 14, "f16": 1,
            "bf16": 30}
GGUF_T = {"q4_0": T.Q4_0, "q4_1": T.Q4_1, "q8_0": T.Q8_0, "q4_K": T.Q4_K, "q5_K": T.Q5_K,
          "q6_K": T.Q6_K, "f16": T.F16, "bf16": T.BF16}
# elements per block, bytes per block
LAYOUT = {"q4_0": (32, 18), "q4_1": (32, 20), "q8_0": (32, 34), "q4_K": (256, 144),
          "q5_K": (256, 176), "q6_K": (256, 210), "f16": (1, 2), "bf16": (1, 2)}
ACT = {"q4_0": "q8_0", "q4_1": "q8_1", "q8_0": "q8_0", "q4_K": "q8_K", "q5_K": "q8_K",
       "q6_K": "q8_K", "f16": "f32", "bf16": "f32"}
ACT_NUM = {"q8_0": 8, "q8_1": 9, "q8_K": 15}
KQ = ("q4_K", "q5_K", "q6_K", "f16", "bf16")
ALL = ("q4_0", "q4_1", "q8_0") + KQ


def f16bytes(v):
    return np.asarray(v, np.float16).reshape(-1, 1).view(np.uint8)


def random_weights(wtype, N, K):
    """N rows of K of random bits with finite scales (uint8 (N, row bytes))."""
    blk, nbytes = LAYOUT[wtype]
    nb = N * K // blk
    if wtype in ("f16", "bf16"):
        w = (RNG.standard_normal(N * K) * 0.1).astype(np.float32)
        if wtype == "f16":
            return w.astype(np.float16).view(np.uint8).reshape(N, -1)
        return (w.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8).reshape(N, -1)
    raw = RNG.integers(0, 256, size=(nb, nbytes), dtype=np.uint8)
    d = (RNG.uniform(0.5, 1.0, nb) * 2.0 ** -RNG.integers(4, 10, nb)).astype(np.float16)
    d *= np.where(RNG.integers(0, 2, nb) == 1, 1, -1).astype(np.float16)
    if wtype == "q6_K":
        raw[:, 208:210] = f16bytes(d)
    else:
        raw[:, 0:2] = f16bytes(d)
        if wtype in ("q4_1", "q4_K", "q5_K"):
            raw[:, 2:4] = f16bytes(d[::-1])
    return raw.reshape(N, -1)


def quantize_q8_K_numpy(x):
    """ggml's quantize_row_q8_K_ref: max the value of largest magnitude,
    iscale = -127 / max (f32), q = min(127, nearest_int(iscale x)) (round
    half to even), d = 1 / iscale, bsums the sums of 16."""
    x = np.asarray(x, np.float32).reshape(-1, 256)
    out = np.zeros((x.shape[0], 292), np.uint8)
    for b, row in enumerate(x):
        i = int(np.argmax(np.abs(row)))       # first of the largest, as the C loop keeps it
        mx = row[i]
        if np.abs(mx) == 0:
            continue
        iscale = np.float32(-127.0) / mx
        q = np.minimum(127, np.rint(iscale * row)).astype(np.int8)
        out[b, 0:4] = np.frombuffer(np.float32(np.float32(1.0) / iscale).tobytes(), np.uint8)
        out[b, 4:260] = q.view(np.uint8)
        out[b, 260:292] = q.astype(np.int16).reshape(16, 16).sum(axis=1).astype(np.int16).view(np.uint8)
    return out.reshape(-1)


def quantize(x, atype, variant=-1):
    x = np.ascontiguousarray(x, np.float32)
    if atype == "f32":
        return x.view(np.uint8).copy()
    blk, nbytes = (256, 292) if atype == "q8_K" else (32, 34 if atype == "q8_0" else 36)
    out = np.zeros(x.size // blk * nbytes, np.uint8)
    rc = lib.pg_quantize_row_q8(variant, ACT_NUM[atype], x.size, ffi.cast("float *", x.ctypes.data),
                                ffi.cast("uint8_t *", out.ctypes.data))
    assert rc == 0, ffi.string(lib.pg_last_error()).decode()
    return out


def act_values(xq, atype, K):
    """The activations the products see, float64."""
    if atype == "f32":
        return xq.view(np.float32).astype(np.float64)[:K]
    if atype == "q8_K":
        b = xq.reshape(-1, 292)
        d = b[:, 0:4].copy().view(np.float32)[:, 0].astype(np.float64)
        return (b[:, 4:260].view(np.int8).astype(np.float64) * d[:, None]).reshape(-1)
    return pg_dequantize(atype, xq.tobytes(), K).astype(np.float64)


def abs_bound(wtype, W, xq, K):
    """S of the module docstring for each row of W, float64 (N,)."""
    N = W.shape[0]
    atype = ACT[wtype]
    if wtype in ("f16", "bf16"):
        w = gguf_deq(wtype, W, K)
        return np.abs(w) @ np.abs(act_values(xq, atype, K)), K
    if atype != "q8_K":
        blk, nbytes = LAYOUT[wtype]
        w = np.abs(gguf_deq(wtype, W, K))
        return w @ np.abs(act_values(xq, atype, K)) * 2 + 1e-30, K // 32
    # k-quants: the largest unsigned quant times |scale| times |x|, plus the offsets
    xb = xq.reshape(-1, 292)
    dx = np.abs(xb[:, 0:4].copy().view(np.float32)[:, 0].astype(np.float64))
    ax = np.abs(xb[:, 4:260].view(np.int8).astype(np.float64)).reshape(-1, 16, 16).sum(axis=2)
    S = np.zeros(N)
    Wb = W.reshape(N, K // 256, -1)
    qmax = {"q4_K": 15, "q5_K": 31, "q6_K": 95}[wtype]
    if wtype == "q6_K":
        d = np.abs(Wb[..., 208:210].copy().view(np.float16)[..., 0].astype(np.float64))
        sc = np.abs(Wb[..., 192:208].view(np.int8).astype(np.float64))
        S = (d * dx[None] * (sc * ax[None] * qmax).sum(axis=2)).sum(axis=1)
        return S, K // 256
    d = np.abs(Wb[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float64))
    dm = np.abs(Wb[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float64))
    ax32 = ax.reshape(-1, 8, 2).sum(axis=2)
    S = (d * dx[None] * 63 * qmax * ax32.sum(axis=1)[None] + dm * dx[None] * 63 * ax32.sum(axis=1)[None])
    return S.sum(axis=1), K // 256


def q4_1_offset_fix(W, xq, K):
    """q4_1 . q8_1 uses the stored s = f16(d sum q) of each activation block
    for the minimum's term, not d * sum q: the difference, float64 (N,)."""
    nb = K // 32
    xb = xq.reshape(nb, 36)
    d = xb[:, 0:2].copy().view(np.float16)[:, 0].astype(np.float64)
    s = xb[:, 2:4].copy().view(np.float16)[:, 0].astype(np.float64)
    qs = xb[:, 4:].view(np.int8).astype(np.float64).sum(axis=1)
    m = np.ascontiguousarray(W).reshape(W.shape[0], nb, 20)[..., 2:4].copy().view(np.float16)[..., 0]
    return m.astype(np.float64) @ (s - d * qs)


def gguf_deq(wtype, W, K):
    """gguf-py's dequantisation of the bytes (float64 (N, K))."""
    return quants.dequantize(np.ascontiguousarray(W), GGUF_T[wtype]).astype(np.float64).reshape(W.shape[0], K)


def qgemv(wtype, W, xq, K, variant=-1, threads=1, ldw=None):
    N = W.shape[0]
    y = np.full(N, np.nan, np.float32)
    rc = lib.pg_qgemv(variant, TYPE_NUM[wtype], N, K, ffi.cast("uint8_t *", W.ctypes.data),
                      W.strides[0] if ldw is None else ldw, ffi.cast("uint8_t *", xq.ctypes.data),
                      ffi.cast("float *", y.ctypes.data), threads)
    assert rc == 0, ffi.string(lib.pg_last_error()).decode()
    return y


def qgemm(wtype, W, Xq, K, variant=-1, threads=1):
    M, N = Xq.shape[0], W.shape[0]
    C = np.full((M, N), np.nan, np.float32)
    rc = lib.pg_qgemm(variant, TYPE_NUM[wtype], M, N, K, ffi.cast("uint8_t *", W.ctypes.data),
                      W.strides[0], ffi.cast("uint8_t *", Xq.ctypes.data), Xq.strides[0],
                      ffi.cast("float *", C.ctypes.data), N, threads)
    assert rc == 0, ffi.string(lib.pg_last_error()).decode()
    return C


# ---- the C reference dequantiser against gguf-py -------------------------------

@pytest.mark.parametrize("wtype", ALL)
def test_reference_dequantiser_matches_gguf(wtype):
    K = 512
    W = random_weights(wtype, 6, K)
    want = gguf_deq(wtype, W, K).astype(np.float32)
    got = pg_dequantize(wtype if wtype not in ("f16", "bf16") else wtype, W.tobytes(), W.shape[0] * K)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=2e-7, atol=1e-30)


# ---- q8_K ---------------------------------------------------------------------------

def test_quantize_q8_K_matches_ggml_formula():
    x = RNG.standard_normal(256 * 6).astype(np.float32)
    x[256:512] = 0                                    # a zero super-block
    x[512:768] = np.round(x[512:768] * 40) + 0.5      # ties
    x[600] = 127.0                                    # iscale = -1: x + 0.5 exactly
    x[768:1024] *= 1e-30
    x[1024:1280] *= 1e30
    want = quantize_q8_K_numpy(x)
    for v in kernels.runnable_variants("quantize_q8_K"):
        got = quantize(x, "q8_K", kernels.variant_index("quantize_q8_K", v))
        assert np.array_equal(got, want), v


# ---- products -------------------------------------------------------------------

SHAPES_K = [(1, 256), (3, 512), (4, 768), (9, 1280), (37, 2304), (70, 256)]
SHAPES_H = [(1, 32), (3, 64), (5, 96), (9, 160), (37, 576), (70, 1536)]


@pytest.mark.parametrize("wtype", ALL)
def test_qgemv_every_variant_against_gguf_dequantize(wtype):
    shapes = SHAPES_K if LAYOUT[wtype][0] == 256 else SHAPES_H
    for N, K in shapes:
        W = random_weights(wtype, N, K)
        if N % 3 == 0:                                # a padded row stride
            Wp = np.full((N, W.shape[1] + 20), 0xEE, np.uint8)
            Wp[:, : W.shape[1]] = W
            W = Wp[:, : W.shape[1]]
        x = RNG.standard_normal(K).astype(np.float32)
        xq = quantize(x, ACT[wtype])
        want = gguf_deq(wtype, np.ascontiguousarray(W), K) @ act_values(xq, ACT[wtype], K)
        if wtype == "q4_1":
            want += q4_1_offset_fix(W, xq, K)
        S, nb = abs_bound(wtype, np.ascontiguousarray(W), xq, K)
        tol = (nb + 8) * 2.0 ** -23 * S + 1e-30
        for v in kernels.runnable_variants("qgemv_" + wtype):
            y = qgemv(wtype, W, xq, K, kernels.variant_index("qgemv_" + wtype, v))
            err = np.abs(y.astype(np.float64) - want)
            assert np.all(err <= tol), (v, N, K, float((err / tol).max()))


@pytest.mark.parametrize("wtype", KQ)
def test_qgemm_every_variant_and_threads(wtype):
    K = 512 if LAYOUT[wtype][0] == 256 else 96
    M, N = 7, 45
    W = random_weights(wtype, N, K)
    X = RNG.standard_normal((M, K)).astype(np.float32)
    Xq = np.stack([quantize(X[m], ACT[wtype]) for m in range(M)])
    deq = gguf_deq(wtype, W, K)
    ref = None
    for v in kernels.runnable_variants("qgemm_" + wtype):
        C = qgemm(wtype, W, Xq, K, kernels.variant_index("qgemm_" + wtype, v))
        for m in range(M):
            want = deq @ act_values(Xq[m], ACT[wtype], K)
            S, nb = abs_bound(wtype, W, Xq[m], K)
            assert np.all(np.abs(C[m] - want) <= (nb + 8) * 2.0 ** -23 * S + 1e-30), (v, m)
        if ref is None:
            ref = C
    # dispatch on 2 threads and the decode form give the same rows bit for bit
    C2 = qgemm(wtype, W, Xq, K, -1, threads=2)
    gv = kernels.runnable_variants("qgemv_" + wtype)[0]
    for m in range(M):
        y = qgemv(wtype, W, Xq[m], K, kernels.variant_index("qgemv_" + wtype, gv))
        if kernels.runnable_variants("qgemm_" + wtype)[0].endswith(gv.split("_gemv_4row_")[-1]):
            assert np.array_equal(C2[m], y)


def test_qgemv_threads_large():
    K, N = 2048, 1024
    for wtype in ("q4_K", "q6_K", "f16"):
        W = random_weights(wtype, N, K)
        xq = quantize(RNG.standard_normal(K).astype(np.float32), ACT[wtype])
        assert np.array_equal(qgemv(wtype, W, xq, K, threads=1), qgemv(wtype, W, xq, K, threads=2))


def test_errors_name_the_type():
    W = np.zeros((2, 144), np.uint8)
    x = np.zeros(292, np.uint8)
    y = np.zeros(2, np.float32)
    rc = lib.pg_qgemv(-1, TYPE_NUM["q4_K"], 2, 128, ffi.cast("uint8_t *", W.ctypes.data), 144,
                      ffi.cast("uint8_t *", x.ctypes.data), ffi.cast("float *", y.ctypes.data), 1)
    assert rc != 0 and "multiple of 256" in ffi.string(lib.pg_last_error()).decode()
    rc = lib.pg_qgemv(-1, 10, 2, 256, ffi.cast("uint8_t *", W.ctypes.data), 144,   # q2_K
                      ffi.cast("uint8_t *", x.ctypes.data), ffi.cast("float *", y.ctypes.data), 1)
    assert rc != 0 and "q2_K" in ffi.string(lib.pg_last_error()).decode()


# ---- end to end: small llama files ------------------------------------------------

def _mg():
    """tests/llm/make_gguf_models.py (its vocabulary and weight writers)."""
    import sys
    from pathlib import Path
    d = str(Path(__file__).parent / "llm")
    if d not in sys.path:
        sys.path.insert(0, d)
    import make_gguf_models
    return make_gguf_models


def _write_llama(path, wtypes, E=256, F=512, L=2, H=4, KV=2, V=300, seed=0):
    """A llama GGUF with the byte vocabulary of tests/llm/make_gguf_models.py;
    wtypes maps a tensor role ("attn_q", ..., "output", "token_embd") to a type."""
    mg = _mg()
    rng = np.random.default_rng(seed)
    tokens, merges, ttypes = mg.make_vocab()
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("kquant-test")
    w.add_block_count(L)
    w.add_context_length(256)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(E // H)
    w.add_file_type(1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(ttypes)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|endoftext|>"))
    w.add_eos_token_id(tokens.index("<|endoftext|>"))
    V = len(tokens)

    def mat(name, rows, cols, role, std=0.05):
        t = wtypes.get(role, wtypes["default"])
        arr, raw = mg._matrix(rng, rows, cols, t.lower(), std)
        w.add_tensor(name, arr, raw_dtype=raw)

    def vec(name, n):
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32))
    mat("token_embd.weight", V, E, "token_embd", 0.5)
    vec("output_norm.weight", E)
    mat("output.weight", V, E, "output")
    HD = E // H
    for layer in range(L):
        p = f"blk.{layer}."
        vec(p + "attn_norm.weight", E)
        vec(p + "ffn_norm.weight", E)
        mat(p + "attn_q.weight", E, E, "attn_q")
        mat(p + "attn_k.weight", KV * HD, E, "attn_k")
        mat(p + "attn_v.weight", KV * HD, E, "attn_v")
        mat(p + "attn_output.weight", E, E, "attn_output")
        mat(p + "ffn_gate.weight", F, E, "ffn_gate")
        mat(p + "ffn_up.weight", F, E, "ffn_up")
        mat(p + "ffn_down.weight", E, F, "ffn_down")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


FILES = {
    "q4_K": {"default": "q4_K"},
    "q5_K": {"default": "q5_K"},
    "q6_K": {"default": "q6_K"},
    "q8_0": {"default": "q8_0"},
    "f16": {"default": "f16"},
    "bf16": {"default": "bf16"},
    # as llama.cpp's Q4_K_M: q6_K output, attn_v and ffn_down, q4_K elsewhere
    "q4_K_M": {"default": "q4_K", "output": "q6_K", "attn_v": "q6_K", "ffn_down": "q6_K"},
}


@pytest.fixture(scope="module")
def llama_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("kquant_gguf")
    return {k: _write_llama(d / f"llama_{k}.gguf", v, seed=i) for i, (k, v) in enumerate(FILES.items())}


@pytest.mark.parametrize("kind", list(FILES))
def test_llama_file_runs_and_matches_llama_cpp(llama_files, kind):
    """Logits after a 7-token prefill (the GEMM form) and one decode step
    (the GEMV form) equal llama-cpp-python's on the same 8 tokens within
    1e-4 max|logit| for the quantised files (both quantise the activations
    the same way, so only fp32 summation order differs; measured ~1e-6),
    and within 5e-3 (f16) / 2e-2 (bf16) max|logit| for the 16-bit float
    files, where llama.cpp rounds the activations to f16 / bf16 and this
    engine keeps fp32 (measured ~5e-4 / 3e-3).  Greedy tokens equal unless
    llama.cpp's top two are within the tolerance."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from peregrine_nb.models import load_llm
    path = str(llama_files[kind])
    m = load_llm(path, threads=1)
    ids = list(range(40, 48))
    m.eval(ids[:7])
    ours = np.asarray(m.eval(ids[7:]), np.float32)
    ref_model = llama_cpp.Llama(model_path=path, n_ctx=64, n_threads=1, logits_all=True,
                                verbose=False)
    ref_model.eval(ids)
    ref = np.asarray(ref_model.scores[len(ids) - 1], np.float32)[: ours.shape[-1]]
    rel = {"f16": 5e-3, "bf16": 2e-2}.get(kind, 1e-4)
    tol = rel * float(np.abs(ref).max()) + 1e-6
    assert np.abs(ours - ref).max() <= tol, float(np.abs(ours - ref).max())
    top2 = np.sort(ref)[-2:]
    if top2[1] - top2[0] > 2 * tol:
        assert int(np.argmax(ours)) == int(np.argmax(ref))
    # the decoder ran this file's types through their asm where the CPU has them
    wt = {"q4_K_M": "q4_K"}.get(kind, kind)
    assert m.bound_kernel("qgemv_" + wt) == kernels.runnable_variants("qgemv_" + wt)[0]


def test_unsupported_weight_type_names_the_tensor(tmp_path):
    from gguf import GGMLQuantizationType as Tq
    path = tmp_path / "q2k.gguf"
    # a q2_K tensor: random bytes with finite scales
    mg = _mg()
    orig = mg._matrix

    def matrix(rng, rows, cols, wtype, std):
        if wtype == "q2_k":
            raw = rng.integers(0, 256, size=(rows * cols // 256, 84), dtype=np.uint8)
            raw[:, 80:84] = np.frombuffer(np.float16([0.01, 0.01]).tobytes(), np.uint8)
            return raw.reshape(rows, -1), Tq.Q2_K
        return orig(rng, rows, cols, wtype, std)
    mg._matrix = matrix
    try:
        _write_llama(path, {"default": "q8_0", "ffn_up": "q2_k"}, L=1)
    finally:
        mg._matrix = orig
    with pytest.raises(UnsupportedError, match=r"blk\.0\.ffn_up\.weight is q2_K"):
        from peregrine_nb.models import load_llm
        load_llm(str(path))


def test_f16_kv_cache_same_logits_half_the_memory(llama_files):
    """kv_cache="f16" stores the cache as f16: the values were rounded to
    f16 in the f32 cache too, so prefill and decode logits are equal bit
    for bit.  The graph's persistent cache is half as large, and each of
    its two plans (decode, prefill) holds at most one layer's widened K and
    V more."""
    from peregrine_nb.models import load_llm
    path = str(llama_files["q4_K_M"])
    a = load_llm(path, threads=1, n_ctx=64)
    b = load_llm(path, threads=2, n_ctx=64, kv_cache="f16")
    ids = list(range(40, 60))
    assert np.array_equal(a.eval(ids[:13]), b.eval(ids[:13]))
    for t in ids[13:]:
        assert np.array_equal(a.eval([t]), b.eval([t]))
    ia, ib = a.info, b.info
    cache32 = 2 * ia.n_layer * 64 * ia.n_head_kv * ia.head_dim * 4
    for prefill in (False, True):
        sa, sb = a.model(prefill).memory_stats, b.model(prefill).memory_stats
        assert sb["persistent"] * 2 == sa["persistent"] == cache32
        assert sb["arena"] - sa["arena"] <= 2 * cache32 // ia.n_layer + 4096
    with pytest.raises(pg.errors.InvalidArgumentError):
        load_llm(path, kv_cache="q8")
