"""QuantizeLinear per tensor, the form every activation of a QDQ graph takes,
against numpy's reading of the ONNX definition: y = saturate(rint(x / s) +
zp), rounding half to even, NaN to the zero point.

A uint8 output goes through the quantize_u8_span kernel wherever a range
of the tensor (one per thread task) is finite and within 2^22 steps, and
through the C loop elsewhere: the tensor below mixes both kinds of range,
half-integer quotients, and a scale that is not a power of two, at 1 and 2
threads and under the C-only mask."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

N = 1 << 18   # past the size at which the executor splits over threads


def reference(x, s, zp, dtype):
    lo, hi = (0, 255) if dtype == np.uint8 else (-128, 127)
    q = np.rint(np.where(np.isnan(x), 0, x / np.float32(s)).astype(np.float64)) + zp
    return np.clip(q, lo, hi).astype(dtype)


def model(s, zp, dtype):
    ot = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])],
        [helper.make_tensor_value_info("y", ot, [N])],
        [numpy_helper.from_array(np.array(s, np.float32), "s"),
         numpy_helper.from_array(np.array(zp, dtype), "z")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])


def inputs(s):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(N) * 40 * s).astype(np.float32)
    # quotients exactly half-way: x = (k + 0.5) * s where that is exact
    half = (np.arange(-300, 300) + np.float32(0.5)) * np.float32(s)
    x[1000:1600] = half
    # the last quarter: a NaN, infinities and values past 2^22 steps, which
    # keep their ranges on the C loop
    tail = 3 * N // 4
    x[tail + 5] = np.nan
    x[tail + 77] = np.inf
    x[tail + 78] = -np.inf
    x[tail + 1000:tail + 1010] = np.float32(3e7) * np.float32(s) * np.arange(1, 11)
    x[tail + 2000:tail + 2010] = -np.float32(3e7) * np.float32(s) * np.arange(1, 11)
    return x


@pytest.mark.parametrize("mask", [None, "c"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype,zp", [(np.uint8, 131), (np.uint8, 0), (np.int8, -3)])
def test_per_tensor_quantize_matches_the_definition(dtype, zp, threads, mask):
    s = 0.0371
    x = inputs(s)
    g = pg.load_onnx(model(s, zp, dtype))
    if mask:
        with pg.cpu_mask(mask):
            m = pg.compile(g, threads=threads)
            y = m.run({"x": x})["y"]
    else:
        m = pg.compile(g, threads=threads)
        y = m.run({"x": x})["y"]
    # the two kernels are bound at compile time, from the mask then in force
    (bound,) = [set(k["kernels"]) for k in m.kernels if k["op_type"] == "QuantizeLinear"]
    want = ("quant_u8_span_", "minmax_keys_")
    assert {v.rsplit("_", 1)[0] + "_" for v in bound} == set(want), bound
    assert mask != "c" or bound == {w + "c" for w in want}, bound
    ref = reference(x, s, zp, dtype)
    bad = np.flatnonzero(y != ref)
    assert bad.size == 0, (bad[:10], x[bad[:10]], y[bad[:10]], ref[bad[:10]])
