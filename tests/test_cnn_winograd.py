"""Winograd F(2x2, 3x3) for blocked 3x3 stride-1 convs (the conv_winograd
pass, engine/exec/conv_winograd.c, the wino_in_f23 / wino_out_f23 kernels):
it takes the convs it should and leaves the others, and agrees with ONNX
Runtime within 1e-4 relative error - odd and even planes (a last tile that
overhangs the output by a row or a column), pads 0 and 1, channel counts
that are not whole blocks, every epilogue, the residual Add + Relu folded
in, batch 2, 1 and 2 threads (the filter groups shared out when a plane
has fewer chunks than threads) - on graphs built here with random weights
and fixed seeds."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from peregrine_nb import kernels as pg_kernels  # noqa: E402
from test_cnn_passes import TOL, blocked_here, build, compiled, model_bytes, ort_run, rel_err  # noqa: E402


def winograd_here():
    """Whether conv_winograd marks convs on this CPU (the transforms in asm)."""
    df = pg_kernels.variants("wino_in_f23")
    return blocked_here() and bool(((df["isa"] != "c") & df["selected"]).any())


needs_winograd = pytest.mark.skipif(not winograd_here(), reason="no Winograd transform asm on this CPU")


def wino_steps(m):
    """The FusedConv steps that run as Winograd (their transform kernels bound)."""
    return [k for k in m.kernels if any(name.startswith("f32_wino_in") for name in (k["kernels"] or []))]


# (x shape, layers): a 1x1 conv first, so the 3x3 convs read a blocked input
CHAINS = {
    "odd_pads": ((2, 24, 9, 13), [("conv", 24, 1, 1, 0, 1, 1, True), ("conv", 40, 3, 1, 1, 1, 1, True), ("relu",),
                                  ("conv", 20, 3, 1, 0, 1, 1, True), ("clip", 0.0, 6.0),
                                  ("conv", 16, 3, 1, 1, 1, 1, False)]),
    "even": ((1, 32, 12, 12), [("conv", 32, 1, 1, 0, 1, 1, True), ("conv", 48, 3, 1, 1, 1, 1, True), ("relu",)]),
    "wide": ((1, 16, 5, 60), [("conv", 16, 1, 1, 0, 1, 1, True), ("conv", 17, 3, 1, 1, 1, 1, True)]),
}


@needs_winograd
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_winograd_against_ort(name, threads):
    shape, layers = CHAINS[name]
    model, _ = build(shape, layers, seed=len(name))
    x = np.random.default_rng(threads).standard_normal(shape).astype(np.float32)
    ref = ort_run(model, x)
    n3 = sum(1 for layer in layers if layer[0] == "conv" and layer[2] == 3)
    _, m = compiled(model, x, 3, threads)
    assert len(wino_steps(m)) == n3, m.kernels
    got = m.run({"x": x})
    assert rel_err(list(got.values())[0], ref) <= TOL
    _, off = compiled(model, x, 3, threads, disable=("conv_winograd",))
    assert not wino_steps(off)
    assert rel_err(list(off.run({"x": x}).values())[0], ref) <= TOL


def basic_block(N, C, H, W, seed):
    """x -> 1x1 (blocked) -> 3x3 + Relu -> 3x3, + the 1x1's output, Relu:
    ResNet's basic block, whose second conv takes the Add and the Relu."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def conv(src, dst, k, p):
        wn, bn = dst + "_w", dst + "_b"
        inits.append(numpy_helper.from_array((rng.standard_normal((C, C, k, k)) / np.sqrt(C * k * k)).astype(
            np.float32), wn))
        inits.append(numpy_helper.from_array((rng.standard_normal(C) * 0.1).astype(np.float32), bn))
        nodes.append(helper.make_node("Conv", [src, wn, bn], [dst], kernel_shape=[k, k], pads=[p] * 4))

    conv("x", "c0", 1, 0)
    conv("c0", "c1", 3, 1)
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    conv("r1", "c2", 3, 1)
    nodes.append(helper.make_node("Add", ["c2", "c0"], ["a"]))
    nodes.append(helper.make_node("Relu", ["a"], ["y"]))
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, C, H, W])], inits)
    return model_bytes(graph)


@needs_winograd
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("N,C,H,W", [(2, 32, 10, 10), (2, 40, 7, 7), (1, 128, 2, 70)])
def test_winograd_residual_block(N, C, H, W, threads):
    """The skip tensor added in the output transform; one 2x70 image of 128
    channels (one row of 35 tiles) at 2 threads is one chunk - fewer tasks
    than threads - so its 8 filter blocks are shared out too (two groups,
    one a task)."""
    model = basic_block(N, C, H, W, seed=C + H)
    x = np.random.default_rng(C).standard_normal((N, C, H, W)).astype(np.float32)
    ref = ort_run(model, x)
    _, m = compiled(model, x, 3, threads)
    assert "Add" not in m.op_types and "Relu" not in m.op_types, m.op_types
    assert len(wino_steps(m)) == 2, m.kernels
    assert rel_err(list(m.run({"x": x}).values())[0], ref) <= TOL


@needs_winograd
def test_winograd_leaves_other_convs():
    """Strided, dilated, grouped, 5x5, few-channel and pad-2 convs keep the
    direct form."""
    layers = [("conv", 24, 1, 1, 0, 1, 1, True), ("conv", 24, 3, 2, 1, 1, 1, True),
              ("conv", 24, 3, 1, 2, 1, 2, True), ("conv", 24, 3, 1, 1, 24, 1, True),
              ("conv", 24, 5, 1, 2, 1, 1, True), ("conv", 24, 3, 1, 2, 1, 1, True), ("conv", 8, 1, 1, 0, 1, 1, True),
              ("conv", 8, 3, 1, 1, 1, 1, True)]
    model, _ = build((1, 8, 23, 23), layers, seed=5)
    x = np.random.default_rng(5).standard_normal((1, 8, 23, 23)).astype(np.float32)
    _, m = compiled(model, x, 3)
    assert not wino_steps(m), m.kernels
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL


@needs_winograd
@pytest.mark.parametrize("N,expect", [(1, 0), (2, 2)])
def test_winograd_needs_enough_tiles(N, expect):
    """A 7x7 plane is 16 tiles an image: at batch 1 (below MIN_WINO_TILES,
    32) its convs stay direct, from batch 2 they run as Winograd."""
    model = basic_block(N, 64, 7, 7, seed=3)
    x = np.random.default_rng(N).standard_normal((N, 64, 7, 7)).astype(np.float32)
    _, m = compiled(model, x, 3)
    assert len(wino_steps(m)) == expect, m.kernels
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL
