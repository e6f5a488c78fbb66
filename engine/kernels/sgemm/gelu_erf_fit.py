"""Fit the rational erf used by the GELU epilogue of the sgemm microkernels.

erf(z) ~ z * P(z^2) / Q(z^2), P of degree 6, Q of degree 4 with Q(0) = 1,
on 0 <= z <= 3.925 (erf(3.925) rounds to 1.0f; the kernels clamp z there).
Fitted for least maximum relative error by linearised least squares with
Lawson reweighting, then checked in float32 with the same Horner order the
assembly uses.  Prints the coefficients (float32) and the errors:
  exact-arithmetic max relative error  ~5.3e-8
  float32-evaluated max relative error ~4.3e-7 (about 7 ulp)
Needs numpy and scipy.  Run: python3 gelu_erf_fit.py
"""
import numpy as np
from scipy.special import erf

CLAMP = 3.925


def fit(n_p=7, n_q=5, iters=100):
    x = np.linspace(1e-4, CLAMP, 20000)
    t = erf(x)
    s = x * x
    w = np.ones_like(x)
    for _ in range(iters):
        # x P(s) - t (Q(s) - 1) = t, relative: divide each row by t
        cols = [x * s**i for i in range(n_p)] + [-t * s**i for i in range(1, n_q)]
        a = np.stack(cols, 1) / t[:, None]
        sol, *_ = np.linalg.lstsq(a * w[:, None], w, rcond=None)
        p, q = sol[:n_p], np.concatenate([[1.0], sol[n_p:]])
        rel = (x * np.polyval(p[::-1], s) / np.polyval(q[::-1], s) - t) / t
        w = w * np.sqrt(np.abs(rel) + 1e-20)
        w /= w.max()
    return p, q, np.abs(rel).max()


def eval_f32(p, q, x):
    z = np.minimum(np.abs(x), np.float32(CLAMP)).astype(np.float32)
    s = z * z
    pp = np.float32(p[-1])
    for c in p[-2::-1]:
        pp = pp * s + np.float32(c)
    qq = np.float32(q[-1])
    for c in q[-2::-1]:
        qq = qq * s + np.float32(c)
    return z * pp / qq


if __name__ == "__main__":
    p, q, exact = fit()
    x = np.linspace(0, 6, 600001).astype(np.float32)[1:]
    got = eval_f32(p, q, x)
    ref = erf(x.astype(np.float64))
    print("exact max rel error %.3g, float32 max rel error %.3g"
          % (exact, (np.abs(got - ref) / ref).max()))
    for i, c in enumerate(p):
        print("p%d %.9e" % (i, np.float32(c)))
    for i, c in enumerate(q):
        print("q%d %.9e" % (i, np.float32(c)))
