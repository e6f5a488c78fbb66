"""fit_eltwise.py - fits the polynomial coefficients of the AVX2/NEON
transcendental kernels (vexp, sigmoid, silu, tanh, gelu_*, softmax) and
prints them as the .float lines the assembly files carry.

Method: weighted least squares on many Chebyshev nodes (close to minimax),
done in double, then coefficients rounded to float and the error of the
float-rounded polynomial re-measured in double on a dense grid.  Run:
    python3 tools/fit_eltwise.py
Needs numpy only.  The numbers it prints are pasted into the .S files; the
errors of the complete kernels are then measured by checkasm."""
import math

import numpy as np

F = np.float32


def cheb_nodes(a, b, m=4000):
    k = np.arange(m)
    return (a + b) / 2 + (b - a) / 2 * np.cos((2 * k + 1) * np.pi / (2 * m))


def lsq(basis, target, weight):
    A = basis * weight[:, None]
    c, *_ = np.linalg.lstsq(A, target * weight, rcond=None)
    return c


def horner(cs, t):
    acc = np.zeros_like(t) + cs[-1]
    for c in cs[-2::-1]:
        acc = acc * t + c
    return acc


def fmt(name, cs):
    print(f"    {name}: " + ", ".join(f"{float(F(c)):.9g}" for c in cs))


def fit_exp():
    # e^r = 1 + r (c1 + c2 r + ... + c6 r^5) on [-ln2/2, ln2/2], relative error
    h = math.log(2) / 2 * 1.0001
    r = cheb_nodes(-h, h)
    target = np.expm1(r) / r
    basis = np.stack([r ** k for k in range(6)], axis=1)
    c = lsq(basis, target, r / np.exp(r))
    cf = [F(x) for x in c]
    rr = np.linspace(-h, h, 200001)
    p = 1 + rr * horner(np.array(cf, dtype=np.float64), rr)
    print("exp: e^r = 1 + r*(c1 + ... + c6 r^5), max rel err of the float-coefficient"
          f" polynomial in exact arithmetic: {np.max(np.abs(p / np.exp(rr) - 1)):.3g}")
    fmt("c1..c6", cf)


def fit_tanh(thr=0.625, deg=6):
    # tanh(x) = x + x^3 P(x^2), |x| < thr, relative error
    s = cheb_nodes(1e-12, thr * thr)
    x = np.sqrt(s)
    target = (np.tanh(x) / x - 1) / s
    basis = np.stack([s ** k for k in range(deg)], axis=1)
    c = lsq(basis, target, s * x / np.tanh(x))
    cf = [F(v) for v in c]
    xx = np.linspace(1e-6, thr, 200001)
    p = xx + xx ** 3 * horner(np.array(cf, dtype=np.float64), xx * xx)
    print(f"tanh small (|x| < {thr}): x + x^3 P(x^2), max rel err"
          f" {np.max(np.abs(p / np.tanh(xx) - 1)):.3g}")
    fmt("P0..", cf)


def fit_erf(n=8, width=0.5, deg=7):
    # erf(z) on [k w, (k + 1) w), k = 0..n-1, each a polynomial in t = z - k w
    # (exact in float), absolute error (GELU needs erf only to an absolute
    # 2^-25).  n = 8, w = 1/2, degree 7: the NEON kernel (tbl over 8
    # entries); n = 4, w = 1, degree 9: the AVX2 one, whose four entries fit
    # one 128-bit lane, picked by vpermilps (cheap) instead of vpermps over
    # eight (half of the kernel's time on Zen 3).
    from math import erf
    verf = np.vectorize(erf)
    tables = [[] for _ in range(deg + 1)]
    worst = 0
    for k in range(n):
        a = k * width
        t = cheb_nodes(0, width)
        c = lsq(np.stack([t ** j for j in range(deg + 1)], axis=1), verf(a + t), np.ones_like(t))
        cf = [F(v) for v in c]
        tt = np.linspace(0, width, 20001)
        worst = max(worst, np.max(np.abs(horner(np.array(cf, dtype=np.float64), tt) - verf(a + tt))))
        for j in range(deg + 1):
            tables[j].append(cf[j])
    print(f"erf piecewise, {n} x [k {width:g}, (k + 1) {width:g}), degree {deg} in t = z - k {width:g}:"
          f" max abs err {worst:.3g}")
    for j in range(deg + 1):
        fmt(f"c{j}[0..{n - 1}]", tables[j])


if __name__ == "__main__":
    fit_exp()
    fit_tanh()
    fit_erf()
    fit_erf(n=4, width=1.0, deg=9)
