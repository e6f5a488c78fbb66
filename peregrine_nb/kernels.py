"""The kernels, one kernel family at a time, on numpy arrays.

Every kernel family (sgemm, gemv, vexp, softmax, ...; not to be confused
with the graph ops MatMul, Add, ...) has one variant table in C (best first,
the C reference last); this module reads it, runs a family's kernel with a
chosen variant, and races variants.

>>> import numpy as np
>>> from peregrine_nb import kernels
>>> a = np.ones((4, 8), np.float32); b = np.ones((8, 3), np.float32)
>>> float(kernels.sgemm(a, b)[0, 0])
8.0
>>> "sgemm" in kernels.families()
True
>>> "sgemm" in set(kernels.variants().family)
True
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, Iterable, Sequence

import numpy as np

from ._lib import check, cstr, ffi, lib
from .errors import DTypeError, InvalidArgumentError, ShapeError

ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2}


# ---- the variant tables ----------------------------------------------------

def families() -> list[str]:
    """Names of every kernel family (each has a variant table)."""
    return [cstr(lib.pg_kernel_family_name(i)) for i in range(lib.pg_kernel_family_count())]


def _unknown_family(family: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"unknown kernel family '{family}' (known: {', '.join(families())})")


def variants(family: str | None = None):
    """A DataFrame of every variant (or of one kernel family's): family,
    variant, isa, runnable here, allowed by the mask (active), the one
    dispatch selects, and its self-check: "passed" / "failed" (a variant that
    disagreed with the C reference on its first use is never selected) /
    "not run" (not yet wanted in this process) / "checkasm only" (a family
    with no self-check, the quantised dot products, which have C variants
    alone so far)."""
    import pandas as pd

    rows = []
    info = ffi.new("pg_variant_info *")
    for i in range(lib.pg_kernel_family_count()):
        name = cstr(lib.pg_kernel_family_name(i))
        if family is not None and name != family:
            continue
        for j in range(lib.pg_variant_count(i)):
            check(lib.pg_variant_get_info(i, j, info))
            rows.append({
                "family": cstr(info.family),
                "variant": cstr(info.name),
                "isa": cstr(info.isa),
                "runnable": bool(info.runnable),
                "active": bool(info.active),
                "selected": bool(info.selected),
                "self_check": _SELF_CHECK[info.self_check],
            })
    if family is not None and not rows:
        raise _unknown_family(family)
    return pd.DataFrame(rows, columns=["family", "variant", "isa", "runnable", "active", "selected",
                                       "self_check"])


_SELF_CHECK = {1: "passed", -1: "failed", 0: "not run", 2: "checkasm only"}


def _family_index(family: str) -> int:
    i = lib.pg_kernel_family_find(family.encode())
    if i < 0:
        raise _unknown_family(family)
    return i


def variant_index(family: str, variant: str | int | None) -> int:
    """-1 (dispatch) for None, else the index of one of the kernel family's
    variants, given by name or index."""
    if variant is None:
        return -1
    i = _family_index(family)
    if isinstance(variant, (int, np.integer)):
        if not 0 <= variant < lib.pg_variant_count(i):
            raise InvalidArgumentError(f"{family} has no variant {variant}")
        return int(variant)
    j = lib.pg_variant_find(i, variant.encode())
    if j < 0:
        names = ", ".join(variants(family).variant)
        raise InvalidArgumentError(f"{family} has no variant '{variant}' (it has: {names})")
    return j


def runnable_variants(family: str) -> list[str]:
    """The kernel family's variants this CPU can run, best first."""
    df = variants(family)
    return list(df[df.runnable].variant)


# ---- argument checks -----------------------------------------------------------

def _f32(name: str, x, ndim: int | tuple[int, ...]) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise DTypeError(f"{name} must be a numpy array, not {type(x).__name__}")
    if x.dtype != np.float32:
        raise DTypeError(f"{name} must be float32, not {x.dtype}")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if x.ndim not in dims:
        raise ShapeError(f"{name} must have {' or '.join(map(str, dims))} dimensions, not {x.ndim} {x.shape}")
    if x.ndim and x.strides[-1] != 4 and x.shape[-1] > 1:
        raise InvalidArgumentError(f"{name} must have contiguous rows (its last stride is {x.strides[-1]} bytes)")
    if x.ndim == 2 and x.shape[0] > 1 and (x.strides[0] % 4 or x.strides[0] < 4 * x.shape[1]):
        raise InvalidArgumentError(f"{name} has an unsupported row stride of {x.strides[0]} bytes")
    return x


def _ld(x: np.ndarray) -> int:
    return x.strides[0] // 4 if x.shape[0] > 1 else max(x.shape[1], 1)


def _ptr(x: np.ndarray | None):
    # The address of the first element: strided rows (lda > K) are allowed,
    # and the caller's reference keeps the array alive during the call.
    return ffi.NULL if x is None else ffi.cast("float *", x.ctypes.data)


def _wptr(x: np.ndarray):
    if not x.flags.writeable:
        raise InvalidArgumentError("the output array is read-only")
    return ffi.cast("float *", x.ctypes.data)


def _threads(threads: int | None) -> int:
    if threads is None:
        return 0
    if threads < 1:
        raise InvalidArgumentError(f"threads must be >= 1, not {threads}")
    return int(threads)


# ---- SGEMM / GEMV ---------------------------------------------------------------

class PackedB:
    """B packed once into a microkernel's panel layout (what a compiled model
    keeps for each weight)."""

    def __init__(self, b: np.ndarray, variant: str | int | None = None):
        b = _f32("b", b, 2)
        self.K, self.N = b.shape
        out = ffi.new("pg_packed_b **")
        check(lib.pg_sgemm_pack(variant_index("sgemm", variant), self.K, self.N, _ptr(b), _ld(b), out))
        self._h = ffi.gc(out[0], lib.pg_packed_b_free)
        v = ffi.new("int *")
        check(lib.pg_packed_b_get_info(self._h, ffi.NULL, ffi.NULL, v))
        self.variant = list(variants("sgemm").variant)[v[0]]

    def __repr__(self) -> str:
        return f"PackedB(K={self.K}, N={self.N}, variant={self.variant!r})"


def pack(b: np.ndarray, variant: str | int | None = None) -> PackedB:
    """Pack a K x N weight for sgemm (once; reuse it for every call)."""
    return PackedB(b, variant)


def sgemm(a: np.ndarray, b: np.ndarray | PackedB, bias: np.ndarray | None = None,
          act: str | None = None, variant: str | int | None = None,
          threads: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """C = act(A @ B + bias) in fp32.  B may be a PackedB (then `variant` is
    the one it was packed for)."""
    a = _f32("a", a, 2)
    M, K = a.shape
    if isinstance(b, PackedB):
        if variant is not None:
            raise InvalidArgumentError("a PackedB already fixes the variant; pass variant= to pack()")
        N, KB = b.N, b.K
    else:
        b = _f32("b", b, 2)
        KB, N = b.shape
    if KB != K:
        raise ShapeError(f"a is {M}x{K} but b is {KB}x{N}: inner dimensions differ")
    if bias is not None:
        bias = _f32("bias", bias, 1)
        if bias.shape[0] != N:
            raise ShapeError(f"bias has {bias.shape[0]} elements, expected N = {N}")
    if act not in ACTIVATIONS:
        raise InvalidArgumentError(f"act must be one of {sorted(k for k in ACTIVATIONS if k)}, not {act!r}")
    c = np.empty((M, N), np.float32) if out is None else _f32("out", out, 2)
    if c.shape != (M, N):
        raise ShapeError(f"out is {c.shape}, expected {(M, N)}")
    if M == 0 or N == 0:
        return c
    if isinstance(b, PackedB):
        check(lib.pg_sgemm_packed(M, _ptr(a), _ld(a), b._h, _ptr(bias), ACTIVATIONS[act],
                                  _wptr(c), _ld(c), _threads(threads)))
    else:
        check(lib.pg_sgemm(variant_index("sgemm", variant), M, N, K, _ptr(a), _ld(a), _ptr(b),
                           _ld(b) if K > 1 else N, _ptr(bias), ACTIVATIONS[act], _wptr(c), _ld(c),
                           _threads(threads)))
    return c


def gemv(x: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None,
         variant: str | int | None = None) -> np.ndarray:
    """y = x @ B (+ bias) for a vector x (K) and B (K x N): the decode case."""
    x = _f32("x", x, 1)
    b = _f32("b", b, 2)
    K, N = b.shape
    if x.shape[0] != K:
        raise ShapeError(f"x has {x.shape[0]} elements but b is {K}x{N}")
    if bias is not None:
        bias = _f32("bias", bias, 1)
        if bias.shape[0] != N:
            raise ShapeError(f"bias has {bias.shape[0]} elements, expected N = {N}")
    y = np.empty(N, np.float32)
    check(lib.pg_gemv(variant_index("gemv", variant), N, K, _ptr(x), _ptr(b),
                      _ld(b) if K > 1 else N, _ptr(bias), _wptr(y)))
    return y


# ---- elementwise and row kernels ----------------------------------------------------

# The elementwise function names unary() / binary() take -> their kernel family.
UNARY_OPS = {"exp": "vexp", "sigmoid": "sigmoid", "silu": "silu", "tanh": "tanh",
             "gelu": "gelu_erf", "gelu_erf": "gelu_erf", "gelu_tanh": "gelu_tanh"}
BINARY_OPS = {"add": "vadd", "mul": "vmul"}


def unary(op: str, x: np.ndarray, variant: str | int | None = None) -> np.ndarray:
    """y = f(x) elementwise; op one of exp, sigmoid, silu, tanh, gelu (erf
    form), gelu_tanh."""
    if op not in UNARY_OPS:
        raise InvalidArgumentError(f"unknown unary op '{op}' (known: {', '.join(UNARY_OPS)})")
    x = _f32("x", x, (1, 2))
    if x.ndim == 2 and x.shape[0] > 1 and x.strides[0] != 4 * x.shape[1]:
        raise InvalidArgumentError("x must be contiguous")
    y = np.empty_like(x)
    family = UNARY_OPS[op]
    check(lib.pg_kernel_unary(family.encode(), variant_index(family, variant), x.size, _ptr(x), _wptr(y)))
    return y


def binary(op: str, a: np.ndarray, b: np.ndarray, variant: str | int | None = None) -> np.ndarray:
    """y = a (op) b for op add or mul; b is a tensor of a's shape or one row
    broadcast to every row of a (a bias, a scale)."""
    if op not in BINARY_OPS:
        raise InvalidArgumentError(f"unknown binary op '{op}' (known: {', '.join(BINARY_OPS)})")
    a = np.ascontiguousarray(_f32("a", a, (1, 2)))
    b = _f32("b", b, (1, 2))
    rows, cols = (1, a.shape[0]) if a.ndim == 1 else a.shape
    if b.shape == a.shape:
        b = np.ascontiguousarray(b)
        stride = cols
    elif b.shape[-1] == cols and (b.ndim == 1 or b.shape[0] == 1):
        stride = 0
    else:
        raise ShapeError(f"b {b.shape} neither matches a {a.shape} nor is one row of {cols}")
    y = np.empty_like(a)
    family = BINARY_OPS[op]
    check(lib.pg_kernel_binary(op.encode(), variant_index(family, variant), rows, cols,
                               _ptr(a), _ptr(b), stride, _wptr(y)))
    return y


def _rows(name: str, x: np.ndarray) -> tuple[np.ndarray, int, int]:
    x = _f32(name, x, (1, 2))
    if x.ndim == 1:
        x = x[None, :]
    return x, x.shape[0], x.shape[1]


def _row_param(name: str, v: np.ndarray | None, cols: int, required: bool = True):
    if v is None:
        if required:
            raise InvalidArgumentError(f"{name} is required")
        return None
    v = _f32(name, v, 1)
    if v.shape[0] != cols:
        raise ShapeError(f"{name} has {v.shape[0]} elements, expected {cols}")
    return v


def softmax(x: np.ndarray, scale: float = 1.0, mask: np.ndarray | None = None,
            variant: str | int | None = None) -> np.ndarray:
    """Row-wise softmax(scale * x + mask), max-subtracted; mask is one
    additive row broadcast to every row."""
    x2, rows, cols = _rows("x", x)
    mask = _row_param("mask", mask, cols, required=False)
    y = np.empty((rows, cols), np.float32)
    check(lib.pg_kernel_softmax(variant_index("softmax", variant), rows, cols, _ptr(x2), _ld(x2),
                                float(scale), _ptr(mask), _wptr(y), _ld(y)))
    return y.reshape(x.shape)


def layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None = None, eps: float = 1e-5,
              variant: str | int | None = None) -> np.ndarray:
    """Row-wise (x - mean) / sqrt(var + eps) * gamma + beta."""
    x2, rows, cols = _rows("x", x)
    gamma = _row_param("gamma", gamma, cols)
    beta = _row_param("beta", beta, cols, required=False)
    y = np.empty((rows, cols), np.float32)
    check(lib.pg_kernel_layernorm(variant_index("layernorm", variant), rows, cols, _ptr(x2), _ld(x2),
                                  _ptr(gamma), _ptr(beta), float(eps), _wptr(y), _ld(y)))
    return y.reshape(x.shape)


def rmsnorm(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5,
            variant: str | int | None = None) -> np.ndarray:
    """Row-wise x / sqrt(mean(x^2) + eps) * gamma."""
    x2, rows, cols = _rows("x", x)
    gamma = _row_param("gamma", gamma, cols)
    y = np.empty((rows, cols), np.float32)
    check(lib.pg_kernel_rmsnorm(variant_index("rmsnorm", variant), rows, cols, _ptr(x2), _ld(x2),
                                _ptr(gamma), float(eps), _wptr(y), _ld(y)))
    return y.reshape(x.shape)


# ---- yardsticks -------------------------------------------------------------------

def measure_peak(threads: int = 1) -> dict[str, float]:
    """The machine's measured fp32 FMA peak (GFLOP/s) and copy bandwidth (GB/s)."""
    fma = lib.pg_measure_fma_peak_gflops(threads)
    copy = lib.pg_measure_copy_gbps(256 << 20, threads)
    if fma < 0 or copy < 0:
        check(lib.pg_last_status())
    return {"fma_gflops": fma, "copy_gbps": copy}


# ---- racing variants --------------------------------------------------------------

# The kernel families benchmark() can run, with a default shape and what the numbers mean.
BENCH_SHAPES = {
    "sgemm": ("256x256x256, 128x384x384", "M x N x K"),
    "gemv": ("4096x4096, 384x384", "N x K"),
    "softmax": ("128x128, 512x512", "rows x cols"),
    "layernorm": ("128x384", "rows x cols"),
    "rmsnorm": ("128x576", "rows x cols"),
    **{t: ("65536", "n") for t in ("vexp", "sigmoid", "silu", "tanh", "gelu_erf", "gelu_tanh",
                                   "vadd", "vmul")},
}
BENCH_FAMILIES = tuple(BENCH_SHAPES)


def _median_seconds(fn: Callable[[], object], repeat: int, min_time: float) -> float:
    fn()  # warm up: page in, pack, fill caches
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(min_time / one))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def _case(family: str, shape: Sequence[int], variant: str, threads: int | None, rng):
    """A callable running one kernel of the family once on random data, with
    its flops and bytes."""
    if family == "sgemm":
        M, N, K = shape
        a = rng.standard_normal((M, K), dtype=np.float32)
        packed = pack(rng.standard_normal((K, N), dtype=np.float32), variant)
        c = np.empty((M, N), np.float32)
        return (lambda: sgemm(a, packed, threads=threads, out=c)), 2.0 * M * N * K, 4.0 * (M * K + K * N + M * N)
    if family == "gemv":
        N, K = shape
        x = rng.standard_normal(K, dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        return (lambda: gemv(x, b, variant=variant)), 2.0 * N * K, 4.0 * (K * N + K + N)
    if family in ("softmax", "layernorm", "rmsnorm"):
        rows, cols = shape
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        g = rng.standard_normal(cols, dtype=np.float32)
        run = {"softmax": lambda: softmax(x, variant=variant),
               "layernorm": lambda: layernorm(x, g, g, variant=variant),
               "rmsnorm": lambda: rmsnorm(x, g, variant=variant)}[family]
        return run, 5.0 * rows * cols, 8.0 * rows * cols
    unary_families = {t: name for name, t in UNARY_OPS.items()}
    if family in unary_families or family in BINARY_OPS.values():
        (n,) = shape
        x = rng.standard_normal(n, dtype=np.float32)
        if family in unary_families:
            return (lambda: unary(unary_families[family], x, variant=variant)), 1.0 * n, 8.0 * n
        name = {t: k for k, t in BINARY_OPS.items()}[family]
        return (lambda: binary(name, x, x, variant=variant)), 1.0 * n, 12.0 * n
    raise InvalidArgumentError(f"benchmark does not know how to run kernel family '{family}' "
                               f"(it runs: {', '.join(BENCH_FAMILIES)})")


def benchmark(family: str, shapes: Iterable[Sequence[int]], variants: Iterable[str] | None = None,
              threads: int | None = None, repeat: int = 5, min_time: float = 0.02,
              progress: Callable[[int, int], None] | None = None):
    """Race the variants of a kernel family on each shape (interleaved,
    median of `repeat` batches); returns a DataFrame, one row per (shape,
    variant): family, shape, variant, threads, seconds, GFLOP/s, GB/s,
    intensity and the speed-up over the C reference.  Shapes: sgemm (M, N,
    K); gemv (N, K); softmax and the norms (rows, cols); elementwise
    families such as vexp or vadd (n,)."""
    import pandas as pd

    names = list(variants) if variants is not None else runnable_variants(family)
    for n in names:
        variant_index(family, n)
    shapes = [tuple(int(d) for d in s) for s in shapes]
    rng = np.random.default_rng(0)
    rows = []
    total, done = len(shapes) * len(names), 0
    for shape in shapes:
        for name in names:
            fn, flops, nbytes = _case(family, shape, name, threads, rng)
            t = _median_seconds(fn, repeat, min_time)
            rows.append({"family": family, "shape": "x".join(map(str, shape)), "variant": name,
                         "threads": threads or lib.pg_get_num_threads(), "seconds": t,
                         "gflops": flops / t / 1e9, "gbps": nbytes / t / 1e9,
                         "intensity": flops / nbytes})
            done += 1
            if progress:
                progress(done, total)
    df = pd.DataFrame(rows)
    ref = df[df.variant.str.endswith("_c")].set_index("shape").seconds
    df["speedup_vs_c"] = [ref.get(s, np.nan) / t for s, t in zip(df["shape"], df["seconds"])]
    return df
