"""The quantised kernels on numpy arrays: activation quantisation, the
decode GEMV and the prefill GEMM on GGUF weight blocks (q4_0, q4_1, q8_0),
with any variant of their tables.

Weights are uint8 arrays of shape (N, row bytes) holding N rows of K / 32
blocks as a GGUF file stores them (a padded row stride is allowed: the
array's own stride is passed as ldw).  Activations are quantised per block
of 32 to the type the weights pair with (`act_type`: q8_1 for q4_1, q8_0
for the others).

>>> import numpy as np
>>> from peregrine_nb import qkernels
>>> w = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
>>> W = qkernels.quantize_weights(w, "q4_1")          # numpy, ggml's formula
>>> x = np.ones(64, np.float32)
>>> y = qkernels.qgemv(W, qkernels.quantize(x, "q8_1"), "q4_1")
>>> bool(np.allclose(y, w @ x, atol=0.5))
True
"""
from __future__ import annotations

import numpy as np

from ._lib import check, ffi, lib
from .errors import DTypeError, InvalidArgumentError, ShapeError
from .kernels import variant_index

TYPES = {"q4_0": 2, "q4_1": 3, "q8_0": 8, "q8_1": 9}
BLOCK_BYTES = {"q4_0": 18, "q4_1": 20, "q8_0": 34, "q8_1": 36}
WEIGHT_TYPES = ("q4_0", "q4_1", "q8_0")


def act_type(wtype: str) -> str:
    """The activation type weights of type wtype pair with."""
    _wtype(wtype)
    return "q8_1" if wtype == "q4_1" else "q8_0"


def _wtype(wtype: str) -> int:
    if wtype not in WEIGHT_TYPES:
        raise DTypeError(f"weight type must be one of {', '.join(WEIGHT_TYPES)}, not {wtype!r}")
    return TYPES[wtype]


def _threads(threads: int | None) -> int:
    if threads is None:
        return 0
    if threads < 1:
        raise InvalidArgumentError(f"threads must be >= 1, not {threads}")
    return int(threads)


def _blocks(name: str, a, ndim: int) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype != np.uint8:
        raise DTypeError(f"{name} must be a uint8 numpy array of packed blocks")
    if a.ndim == 1 and ndim == 2:
        a = a[None, :]
    if a.ndim != ndim:
        raise ShapeError(f"{name} must have {ndim} dimension(s), not {a.ndim}")
    if a.strides[-1] != 1:
        raise InvalidArgumentError(f"{name} must have contiguous rows")
    return a


def _u8(a: np.ndarray):
    return ffi.cast("uint8_t *", a.ctypes.data)


# ---- quantisation ---------------------------------------------------------------

def quantize(x, type: str = "q8_0", variant: str | int | None = None) -> np.ndarray:
    """float32 activations, 1-D (K,) or 2-D (M, K) with K a multiple of 32,
    to q8_0 / q8_1 blocks: uint8 of shape (K / 32 * block bytes,) or
    (M, ...), byte-exact with ggml's reference quantisers."""
    if type not in ("q8_0", "q8_1"):
        raise DTypeError(f"activations quantise to q8_0 or q8_1, not {type!r}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim not in (1, 2):
        raise ShapeError(f"x must be 1-D or 2-D, not {x.shape}")
    rows = x.reshape(-1, x.shape[-1]) if x.size or x.ndim == 2 else x.reshape(1, -1)
    K = rows.shape[1]
    if K % 32:
        raise ShapeError(f"K = {K} is not a multiple of 32 (the quantisation block)")
    out = np.zeros((rows.shape[0], K // 32 * BLOCK_BYTES[type]), dtype=np.uint8)
    v = variant_index("quantize_" + type, variant)
    for m in range(rows.shape[0]):
        check(lib.pg_quantize_row_q8(v, TYPES[type], K, ffi.cast("float *", rows[m].ctypes.data),
                                     _u8(out[m])))
    return out.reshape(-1) if x.ndim == 1 else out


def quantize_weights(w, type: str) -> np.ndarray:
    """float32 weights (N, K) to q4_0 / q4_1 / q8_0 rows, uint8 (N, K / 32 *
    block bytes), in numpy with ggml's reference formulas (quantize_row_*_ref):
    q4_0: d = max / -8 (max the value of largest magnitude), q = min(15,
    int(x / d + 8.5)); q4_1: d = (max - min) / 15, m = min, q = min(15,
    int((x - min) / d + 0.5)); q8_0: d = max|x| / 127, q = round(x / d).
    For building test matrices; a model's weights come from its GGUF file."""
    _wtype(type)
    w = np.asarray(w, dtype=np.float32)
    if w.ndim != 2 or w.shape[1] % 32:
        raise ShapeError(f"weights must be (N, K) with K a multiple of 32, not {w.shape}")
    N, K = w.shape
    b = w.reshape(N, K // 32, 32)
    out = np.zeros((N, K // 32, BLOCK_BYTES[type]), dtype=np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        if type == "q8_0":
            amax = np.abs(b).max(axis=2)
            d = (amax / np.float32(127)).astype(np.float32)
            idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
            v = (b * idv[..., None]).astype(np.float64)          # x / d in f32, as ggml
            q = (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int8)  # roundf
            out[..., 0:2] = d.astype(np.float16)[..., None].view(np.uint8)
            out[..., 2:] = q.view(np.uint8)
        elif type == "q4_0":
            i = np.abs(b).argmax(axis=2)
            mx = np.take_along_axis(b, i[..., None], axis=2)[..., 0]
            d = (mx / np.float32(-8)).astype(np.float32)
            idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
            q = np.minimum(15, (b * idv[..., None] + np.float32(8.5)).astype(np.int8)).astype(np.uint8)
            out[..., 0:2] = d.astype(np.float16)[..., None].view(np.uint8)
            out[..., 2:] = q[..., :16] | (q[..., 16:] << 4)
        else:
            mn, mx = b.min(axis=2), b.max(axis=2)
            d = ((mx - mn) / np.float32(15)).astype(np.float32)
            idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
            q = np.minimum(15, ((b - mn[..., None]) * idv[..., None] + np.float32(0.5)).astype(np.int8))
            q = q.astype(np.uint8)
            out[..., 0:2] = d.astype(np.float16)[..., None].view(np.uint8)
            out[..., 2:4] = mn.astype(np.float16)[..., None].view(np.uint8)
            out[..., 4:] = q[..., :16] | (q[..., 16:] << 4)
    return out.reshape(N, -1)


def dequantize(blocks, type: str, K: int | None = None) -> np.ndarray:
    """Packed rows (uint8 (N, bytes) or 1-D) of q4_0 / q4_1 / q8_0 / q8_1 to
    float32 (N, K) in numpy, by ggml's formulas (q8_1's sum is not used)."""
    if type not in TYPES:
        raise DTypeError(f"type must be one of {', '.join(TYPES)}, not {type!r}")
    a = np.asarray(blocks, dtype=np.uint8)
    one = a.ndim == 1
    a = a.reshape(1, -1) if one else a
    bb = BLOCK_BYTES[type]
    K = a.shape[1] // bb * 32 if K is None else K
    b = np.ascontiguousarray(a[:, : K // 32 * bb]).reshape(a.shape[0], K // 32, bb)
    d = b[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float32)
    if type in ("q8_0", "q8_1"):
        q = b[..., bb - 32:].view(np.int8).astype(np.float32)
        out = q * d[..., None]
    else:
        nib = b[..., bb - 16:]
        q = np.concatenate([nib & 15, nib >> 4], axis=2).astype(np.float32)
        if type == "q4_0":
            out = (q - 8) * d[..., None]
        else:
            m = b[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
            out = q * d[..., None] + m[..., None]
    out = out.reshape(a.shape[0], K).astype(np.float32)
    return out[0] if one else out


# ---- products -------------------------------------------------------------------

def _weights(W, wtype: str, K: int | None) -> tuple[np.ndarray, int, int]:
    W = _blocks("W", W, 2)
    wb = BLOCK_BYTES[wtype]
    if K is None:
        K = W.shape[1] // wb * 32
    if K % 32:
        raise ShapeError(f"K = {K} is not a multiple of 32 (the quantisation block)")
    if W.shape[1] < K // 32 * wb:
        raise ShapeError(f"W rows hold {W.shape[1]} bytes, fewer than K = {K} needs ({K // 32 * wb})")
    ldw = W.strides[0] if W.shape[0] > 1 else K // 32 * wb
    return W, K, ldw


def qgemv(W, x_q, wtype: str, K: int | None = None, variant: str | int | None = None,
          threads: int | None = None) -> np.ndarray:
    """y[n] = dot(W row n, x) (float32 (N,)): W uint8 (N, row bytes) of
    wtype blocks, x_q one row of quantised activations (`quantize(x,
    act_type(wtype))`).  K defaults to what W's rows hold."""
    t = _wtype(wtype)
    W, K, ldw = _weights(W, wtype, K)
    x = _blocks("x_q", x_q, 1)
    need = K // 32 * BLOCK_BYTES[act_type(wtype)]
    if x.shape[0] < need:
        raise ShapeError(f"x_q holds {x.shape[0]} bytes, fewer than K = {K} needs ({need})")
    y = np.empty(W.shape[0], dtype=np.float32)
    check(lib.pg_qgemv(variant_index("qgemv_" + wtype, variant), t, W.shape[0], K, _u8(W), ldw,
                       _u8(x), ffi.cast("float *", y.ctypes.data), _threads(threads)))
    return y


def qgemm(W, X_q, wtype: str, K: int | None = None, variant: str | int | None = None,
          threads: int | None = None) -> np.ndarray:
    """C[m, n] = dot(W row n, X row m) (float32 (M, N)): W as in qgemv, X_q
    uint8 (M, bytes) of quantised activation rows (`quantize(X, ...)`)."""
    t = _wtype(wtype)
    W, K, ldw = _weights(W, wtype, K)
    X = _blocks("X_q", X_q, 2)
    need = K // 32 * BLOCK_BYTES[act_type(wtype)]
    if X.shape[1] < need:
        raise ShapeError(f"X_q rows hold {X.shape[1]} bytes, fewer than K = {K} needs ({need})")
    M, N = X.shape[0], W.shape[0]
    ldx = X.strides[0] if M > 1 else need
    C = np.empty((M, N), dtype=np.float32)
    check(lib.pg_qgemm(variant_index("qgemm_" + wtype, variant), t, M, N, K, _u8(W), ldw, _u8(X),
                       ldx, ffi.cast("float *", C.ctypes.data), max(N, 1), _threads(threads)))
    return C


def matmul(W, x, wtype: str, variant: str | int | None = None,
           threads: int | None = None) -> np.ndarray:
    """x (K,) or (M, K) float32 times W^T: quantise x, then qgemv (1-D) or
    qgemm (2-D) - what a decoder does with a GGUF linear layer."""
    x = np.asarray(x, dtype=np.float32)
    xq = quantize(x, act_type(wtype))
    if x.ndim == 1:
        return qgemv(W, xq, wtype, x.shape[0], variant, threads)
    return qgemm(W, xq, wtype, x.shape[1], variant, threads)
