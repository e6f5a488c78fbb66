"""The CNN passes and Conv's fast paths (engine/passes/fuse_conv.c,
engine/exec/conv_fast.c, conv_nchwc.c): BatchNormalization folded into the
Conv, Conv + Relu / Clip / HardSwish / SiLU fused into FusedConv, the step
bound to the SGEMM or dwconv kernels, the nchwc_layout re-lay (NCHW16c on
the conv_nchwc kernels, reorders only at the blocked region's edges), and
every result against ONNX Runtime (and level 3 against level 0) within 1e-4
relative error, on small graphs built here with random weights and fixed
seeds."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import peregrine_nb as pg  # noqa: E402
from peregrine_nb import kernels as pg_kernels  # noqa: E402
from peregrine_nb.onnx_import import OnnxModel  # noqa: E402

TOL = 1e-4


def out_hw(h, k, s, p, d=1):
    return (h + 2 * p - d * (k - 1) - 1) // s + 1


def model_bytes(graph):
    """The serialised opset-17 model of graph (IR version 8, which ORT reads)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def build(x_shape, layers, seed=0):
    """A chain of layers on input x: ("conv", M, k, s, p, group, dil, bias),
    ("bn",), ("relu",), ("clip", lo, hi), ("hardswish",), ("silu",) (Sigmoid
    and Mul), ("add_skip",) (adds the chain's input of the last conv)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cur, shape, i = "x", list(x_shape), 0

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32), name))
        return name

    for layer in layers:
        i += 1
        kind, out = layer[0], f"t{i}"
        if kind == "conv":
            _, M, k, s, p, g, d, bias = layer
            C = shape[1]
            ins = [cur, const(f"w{i}", rng.standard_normal((M, C // g, k, k)) * (1.5 / np.sqrt(C // g * k * k)))]
            if bias:
                ins.append(const(f"b{i}", rng.standard_normal(M) * 0.1))
            nodes.append(helper.make_node("Conv", ins, [out], kernel_shape=[k, k], strides=[s, s],
                                          pads=[p] * 4, group=g, dilations=[d, d]))
            shape = [shape[0], M, out_hw(shape[2], k, s, p, d), out_hw(shape[3], k, s, p, d)]
        elif kind == "bn":
            C = shape[1]
            nodes.append(helper.make_node(
                "BatchNormalization",
                [cur, const(f"sc{i}", rng.uniform(0.5, 1.5, C)), const(f"be{i}", rng.standard_normal(C) * 0.1),
                 const(f"mu{i}", rng.standard_normal(C) * 0.1), const(f"va{i}", rng.uniform(0.5, 1.5, C))],
                [out], epsilon=1e-5))
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [cur], [out]))
        elif kind == "clip":
            nodes.append(helper.make_node("Clip", [cur, const(f"lo{i}", layer[1]), const(f"hi{i}", layer[2])], [out]))
        elif kind == "hardswish":
            nodes.append(helper.make_node("HardSwish", [cur], [out]))
        elif kind == "silu":
            nodes.append(helper.make_node("Sigmoid", [cur], [f"sg{i}"]))
            nodes.append(helper.make_node("Mul", [cur, f"sg{i}"], [out]))
        else:
            raise ValueError(kind)
        cur = out
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                              [helper.make_tensor_value_info(cur, TensorProto.FLOAT, shape)], inits)
    return model_bytes(graph), cur


def ort_run(model, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def rel_err(got, ref):
    return float(np.max(np.abs(got - ref)) / (np.max(np.abs(ref)) + 1e-12))


def compiled(model, x, level, threads=1, disable=()):
    m = OnnxModel(model, level=level, threads=threads, disable=disable)
    return m, m.compiled({"x": x.shape})


def blocked_here():
    """Whether nchwc_layout re-lays on this CPU (a conv_nchwc asm kernel)."""
    df = pg_kernels.variants("conv_nchwc")
    return bool(((df["isa"] != "c") & df["selected"]).any())


# -- the passes fire ----------------------------------------------------------

FUSION_CASES = {
    "conv_bn_relu": [("conv", 16, 3, 1, 1, 1, 1, False), ("bn",), ("relu",)],
    "conv_bias_bn_relu6": [("conv", 24, 3, 2, 1, 1, 1, True), ("bn",), ("clip", 0.0, 6.0)],
    "dw_bn_relu6": [("conv", 8, 3, 1, 1, 8, 1, False), ("bn",), ("clip", 0.0, 6.0)],
    "dw5_bn_hardswish": [("conv", 8, 5, 2, 2, 8, 1, False), ("bn",), ("hardswish",)],
    "conv1x1_bn_silu": [("conv", 20, 1, 1, 0, 1, 1, False), ("bn",), ("silu",)],
    "conv_clip_narrow": [("conv", 12, 3, 1, 1, 1, 1, True), ("clip", -0.3, 0.2)],
    "mbv2_block": [("conv", 48, 1, 1, 0, 1, 1, False), ("bn",), ("clip", 0.0, 6.0),
                   ("conv", 48, 3, 2, 1, 48, 1, False), ("bn",), ("clip", 0.0, 6.0),
                   ("conv", 16, 1, 1, 0, 1, 1, False), ("bn",)],
}


@pytest.mark.parametrize("name", sorted(FUSION_CASES))
def test_fusions_fire_and_agree(name):
    layers = FUSION_CASES[name]
    model, out = build((2, 8, 15, 13), layers, seed=len(name))
    x = np.random.default_rng(1).standard_normal((2, 8, 15, 13)).astype(np.float32)
    ref = ort_run(model, x)
    _, m0 = compiled(model, x, 0)
    _, m3 = compiled(model, x, 3, disable=("nchwc_layout",))
    _, mb = compiled(model, x, 3)
    ops0, ops3 = m0.op_types, m3.op_types
    n_conv = sum(1 for la in layers if la[0] == "conv")
    n_act = sum(1 for la in layers if la[0] in ("relu", "clip", "hardswish", "silu"))
    assert ops0.count("Conv") == n_conv and ops0.count("BatchNormalization") == ops0.count("BatchNormalization")
    assert "BatchNormalization" not in ops3, ops3
    assert ops3.count("FusedConv") == n_act, ops3
    assert ops3.count("FusedConv") + ops3.count("Conv") == n_conv, ops3
    for op in ("Relu", "Clip", "HardSwish", "Sigmoid", "Mul"):
        assert op not in ops3, ops3
    # every conv step runs on a kernel of a variant table
    bound = [k for k in m3.kernels if k["op_type"] in ("Conv", "FusedConv")]
    assert len(bound) == n_conv
    for k in bound:
        assert any(n.startswith(("f32_gemm", "f32_dwconv")) for n in k["kernels"]), k
    y0 = m0.run({"x": x})[out]
    y3 = m3.run({"x": x})[out]
    assert rel_err(y0, ref) <= TOL
    assert rel_err(y3, ref) <= TOL
    assert rel_err(y3, y0) <= TOL
    # re-laid: the convs on conv_nchwc (depthwise: dwconv on the blocks)
    # except the hardswish / silu ones, which stay NCHW
    yb = mb.run({"x": x})[out]
    assert rel_err(yb, ref) <= TOL
    if blocked_here():
        kb = [k for k in mb.kernels if k["op_type"] in ("Conv", "FusedConv")]
        n_blocked = sum(1 for k in kb if any(n.startswith("f32_conv_nchwc") for n in k["kernels"]))
        n_other = sum(1 for la in layers if la[0] in ("hardswish", "silu"))
        assert n_blocked + sum(1 for k in kb if any("dwconv" in n for n in k["kernels"])) >= n_conv - n_other


def test_passes_can_be_disabled():
    model, out = build((1, 8, 9, 9), FUSION_CASES["conv_bn_relu"])
    x = np.random.default_rng(2).standard_normal((1, 8, 9, 9)).astype(np.float32)
    m = OnnxModel(model, level=3, disable=("conv_bn_fold", "conv_act_fusion", "nchwc_layout")).compiled(
        {"x": x.shape})
    assert "BatchNormalization" in m.op_types and "Relu" in m.op_types and "FusedConv" not in m.op_types
    assert rel_err(m.run({"x": x})[out], ort_run(model, x)) <= TOL


def test_fold_skips_a_conv_read_twice():
    """A Conv output read by the BN and by something else is not folded."""
    model, out = build((1, 4, 7, 7), [("conv", 6, 3, 1, 1, 1, 1, True), ("bn",)])
    g = onnx.load_from_string(model)
    g.graph.node.append(helper.make_node("Add", ["t1", out], ["sum"]))
    del g.graph.output[:]
    g.graph.output.append(helper.make_tensor_value_info("sum", TensorProto.FLOAT, [1, 6, 7, 7]))
    b = g.SerializeToString()
    x = np.random.default_rng(3).standard_normal((1, 4, 7, 7)).astype(np.float32)
    m = OnnxModel(b, level=3).compiled({"x": x.shape})
    assert "BatchNormalization" in m.op_types
    assert rel_err(m.run({"x": x})["sum"], ort_run(b, x)) <= TOL


# -- the kernels on every geometry --------------------------------------------

# (C, H, W, M, k, stride, pad, group, dilation)
GEOMETRIES = [
    (3, 17, 19, 8, 3, 1, 1, 1, 1),      # the stem: 3 input channels
    (16, 15, 13, 33, 3, 2, 1, 1, 1),    # odd M (partial M tile), stride 2
    (32, 14, 14, 64, 1, 1, 0, 1, 1),    # 1x1: the input rows as panels
    (16, 20, 20, 32, 1, 2, 0, 1, 1),    # 1x1 stride 2: gathered
    (3, 30, 30, 16, 7, 2, 3, 1, 1),     # ResNet's 7x7 stem
    (3, 31, 29, 8, 7, 2, 3, 1, 1),      # the stem on odd sizes (even/odd column split)
    (8, 13, 15, 8, 3, 2, 2, 1, 2),      # stride 2 with dilation 2
    (8, 12, 12, 12, 3, 1, 2, 1, 2),     # dilation 2
    (64, 7, 7, 100, 3, 1, 1, 1, 1),     # 49 pixels: panels past the end
    (24, 9, 11, 24, 3, 1, 1, 24, 1),    # depthwise 3x3
    (21, 13, 17, 21, 3, 2, 1, 21, 1),   # depthwise, stride 2, odd channels
    (18, 12, 10, 18, 5, 1, 2, 18, 1),   # depthwise 5x5
    (18, 12, 10, 18, 5, 2, 2, 18, 1),   # depthwise 5x5 stride 2
    (8, 10, 10, 8, 3, 1, 0, 8, 1),      # depthwise, no pad
    (8, 11, 11, 8, 3, 1, 2, 8, 2),      # depthwise, dilation 2
    (16, 40, 37, 16, 3, 1, 1, 16, 1),   # depthwise, 37 lanes (two groups + tail)
    (8, 9, 9, 16, 3, 1, 1, 2, 1),       # grouped (not depthwise): SGEMM per group
    (12, 10, 11, 24, 1, 1, 0, 4, 1),    # grouped 1x1 (ResNeXt): the input rows as panels
    (24, 13, 12, 24, 7, 1, 3, 24, 1),   # depthwise 7x7 (ConvNeXt): the dwconv7x7 kernels
    (10, 15, 14, 10, 7, 2, 3, 10, 1),   # depthwise 7x7, stride 2
    (8, 12, 11, 8, 9, 1, 4, 8, 1),      # depthwise 9x9: SGEMM per group, one filter each
    (6, 9, 8, 12, 3, 1, 1, 6, 1),       # depthwise with two filters a channel
    (16, 8, 9, 32, 3, 2, 2, 8, 2),      # grouped, stride 2, dilation 2
]


@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: "C%d_%dx%d_M%d_k%d_s%d_p%d_g%d_d%d" % g)
@pytest.mark.parametrize("act", [None, "relu", "clip", "hardswish", "silu"])
def test_conv_kernels_against_ort(geo, act):
    C, H, W, M, k, s, p, g, d = geo
    layers = [("conv", M, k, s, p, g, d, True)]
    if act == "clip":
        layers.append(("clip", 0.0, 6.0))
    elif act:
        layers.append((act,))
    model, out = build((2, C, H, W), layers, seed=sum(geo))
    x = np.random.default_rng(4).standard_normal((2, C, H, W)).astype(np.float32)
    ref = ort_run(model, x)
    for threads in (1, 2):
        _, m = compiled(model, x, 3, threads)
        assert rel_err(m.run({"x": x})[out], ref) <= TOL, threads
        # every geometry has a kernel form (grouped ones SGEMM per group):
        # none is left to the reference loop
        convs = [kk for kk in m.kernels if kk["op_type"] in ("Conv", "FusedConv")]
        assert convs and all(kk["kernels"] for kk in convs), convs


def test_fused_conv_refuses_unknown_activation():
    g = pg.Graph()
    g.add_input("x", (1, 4, 6, 6))
    g.add_initializer("w", np.ones((4, 4, 3, 3), np.float32))
    g.add_node("FusedConv", ["x", "w"], ["y"], name="fc", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
               activation="tanh")
    g.add_output("y")
    with pytest.raises(pg.UnsupportedError) as e:
        pg.compile(g, level=0).run({"x": np.zeros((1, 4, 6, 6), np.float32)})
    assert "activation" in str(e.value) and "fc" in str(e.value)


# -- the memory plan ----------------------------------------------------------

def test_arena_near_lower_bound():
    """A MobileNetV2-like chain (expand, depthwise, project, twice) at level 3:
    the planner's arena stays near the largest set of live buffers."""
    layers = ([("conv", 32, 3, 2, 1, 1, 1, False), ("bn",), ("clip", 0.0, 6.0)] +
              [("conv", 96, 1, 1, 0, 1, 1, False), ("bn",), ("clip", 0.0, 6.0),
               ("conv", 96, 3, 1, 1, 96, 1, False), ("bn",), ("clip", 0.0, 6.0),
               ("conv", 32, 1, 1, 0, 1, 1, False), ("bn",)] * 2)
    model, out = build((1, 3, 64, 64), layers)
    x = np.random.default_rng(5).standard_normal((1, 3, 64, 64)).astype(np.float32)
    _, m = compiled(model, x, 3, threads=2)
    st = m.memory_stats
    assert st["arena"] <= 1.25 * st["lower_bound"], st
    assert rel_err(m.run({"x": x})[out], ort_run(model, x)) <= TOL


# -- MaxPool's fast path (its own executor's choice) ----------------------------

# (kernel, stride, pad, dilation, ceil_mode, H, W)
POOLS = [(3, 2, 1, 1, 0, 112, 112), (3, 2, 1, 1, 0, 15, 13), (2, 2, 0, 1, 0, 9, 8), (3, 2, 0, 1, 1, 10, 11),
         (5, 1, 2, 1, 0, 13, 13), (3, 1, 2, 2, 0, 12, 9), (2, 3, 1, 1, 1, 11, 7)]


@pytest.mark.parametrize("pool", POOLS, ids=lambda p: "k%d_s%d_p%d_d%d_c%d_%dx%d" % p)
def test_maxpool_fast_against_ort(pool):
    k, s, p, d, ceil, H, W = pool
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                            dilations=[d, d], ceil_mode=ceil)
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    shape_model = onnx.shape_inference.infer_shapes(model)
    model.graph.output[0].CopyFrom(shape_model.graph.output[0])
    b = model.SerializeToString()
    x = np.random.default_rng(6).standard_normal((2, 5, H, W)).astype(np.float32)
    ref = ort_run(b, x)
    for threads in (1, 2):
        m = OnnxModel(b, level=3, threads=threads).compiled({"x": x.shape})
        assert m.op_types == ["MaxPool"]   # no maxpool_fast pass: the executor picks it
        assert np.array_equal(m.run({"x": x})["y"], ref)
    # NaN: skipped as by MaxPool's reference executor (level 0)
    x[0, 0, 1, 1] = np.nan
    x[1, 2, :3, :3] = np.nan
    m0 = OnnxModel(b, level=0).compiled({"x": x.shape})
    assert m0.op_types == ["MaxPool"]
    y0, y3 = m0.run({"x": x})["y"], m.run({"x": x})["y"]
    assert np.array_equal(y0, y3, equal_nan=True)


# -- every CPU level, saved models ---------------------------------------------

def test_every_cpu_level_and_a_saved_model(tmp_path):
    """The network of mbv2_block plus a 5x5 and a 7x7 depthwise conv and a
    pool, compiled under each CPU level (its kernels: AVX-512, AVX2, NEON or
    the C references), agrees with ORT; a saved compiled model loads and
    agrees."""
    layers = FUSION_CASES["mbv2_block"] + [("conv", 16, 5, 1, 2, 16, 1, True), ("hardswish",),
                                           ("conv", 16, 7, 1, 3, 16, 1, True)]
    model, out = build((1, 8, 17, 15), layers, seed=9)
    x = np.random.default_rng(7).standard_normal((1, 8, 17, 15)).astype(np.float32)
    ref = ort_run(model, x)
    seen = set()
    for level in pg.cpu_levels():
        with pg.cpu_mask(level):
            m = OnnxModel(model, level=3, threads=2).compiled({"x": x.shape})
            names = {n for k in m.kernels for n in k["kernels"]}
            seen |= names
            assert rel_err(m.run({"x": x})[out], ref) <= TOL, (level, names)
    assert all(any(f"dwconv{k}x{k}" in n for n in seen) for k in (3, 5, 7)), seen
    m = OnnxModel(model, level=3).compiled({"x": x.shape})
    path = m.save(tmp_path / "cnn.pgm")
    loaded = pg.load_compiled(path)
    assert loaded.op_types == m.op_types
    assert rel_err(loaded.run({"x": x})[out], ref) <= TOL


# -- 1-D convs (Whisper's front end) run on the 2-D GEMM form -------------------

@pytest.mark.parametrize("C,M,W,k,s,p,bias,grp", [(80, 32, 50, 3, 1, 1, True, 1), (32, 32, 50, 3, 2, 1, True, 1),
                                                  (7, 5, 13, 5, 1, 0, False, 1), (3, 4, 9, 1, 2, 0, True, 1),
                                                  # wav2vec2's positional conv: groups, a long kernel
                                                  (32, 32, 49, 16, 1, 8, True, 4)])
def test_conv1d_on_the_gemm_form(C, M, W, k, s, p, bias, grp):
    rng = np.random.default_rng(C * W + k)
    x = rng.standard_normal((2, C, W)).astype(np.float32)
    Cg = C // grp
    inits = [numpy_helper.from_array((rng.standard_normal((M, Cg, k)) / np.sqrt(Cg * k)).astype(np.float32), "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(M).astype(np.float32), "b"))
        ins.append("b")
    Wo = out_hw(W, k, s, p)
    g = helper.make_graph([helper.make_node("Conv", ins, ["y"], kernel_shape=[k], strides=[s], pads=[p, p],
                                            group=grp)],
                          "conv1d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, M, Wo])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    ref = ort_run(model, x)
    for level in (0, 3):
        m, cm = compiled(model, x, level)
        got = cm.run({"x": x})["y"]
        assert got.shape == ref.shape and rel_err(got, ref) <= TOL, (level, rel_err(got, ref))
        bound = [kk for kk in cm.kernels if kk["op_type"] in ("Conv", "FusedConv")]
        assert bound and all(any(n.startswith("f32_gemm") for n in kk["kernels"]) for kk in bound), bound


@pytest.mark.parametrize("N,C", [(2, 0), (0, 3)])
@pytest.mark.parametrize("fed,bias", [(False, True), (True, True), (True, False)])
def test_conv_with_nothing_to_multiply(N, C, fed, bias):
    """No input channel or no batch: the output is the bias alone (zeros
    without one), or empty.  A fed weight and no bias is the fuzzer's find:
    K = 0, and the GEMM form divided its k blocks by zero."""
    rng = np.random.default_rng(5)
    x = np.zeros((N, C, 9), np.float32)
    w = rng.standard_normal((4, C, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32) if bias else np.zeros(4, np.float32)
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    inits = [numpy_helper.from_array(b, "b")] if bias else []
    if fed:
        ins.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w.shape)))
    else:
        inits.append(numpy_helper.from_array(w, "w"))
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["y"], kernel_shape=[3])
    g = helper.make_graph([node], "conv_empty", ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, 4, 7])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    feeds = {"x": x, "w": w} if fed else {"x": x}
    want = np.broadcast_to(b[None, :, None], (N, 4, 7))
    for level in (0, 3):
        got = OnnxModel(model, level=level).run(feeds)["y"]
        assert got.shape == want.shape and np.array_equal(got, want), level


# -- nchwc_layout: the network blocked, reorders only at the edges ---------------

def resnet_like(seed=11, break_with=None):
    """stem 7x7/2 (3 channels, read as NCHW) -> MaxPool -> a basic block with a
    strided 1x1 shortcut (Add, Relu) -> a depthwise 3x3 + ReLU6 -> 1x1 ->
    GlobalAveragePool -> Flatten -> Gemm.  break_with="group2" puts a
    grouped (not depthwise) conv - which stays NCHW - after the block."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def w(name, *shape):
        fan = int(np.prod(shape[1:]))
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan)).astype(np.float32), name))
        return name

    def b(name, n):
        inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name))
        return name

    def conv(x, y, wn, M, C, k, s, p, g=1):
        nodes.append(helper.make_node("Conv", [x, w(wn, M, C // g, k, k), b(wn + "b", M)], [y], kernel_shape=[k, k],
                                      strides=[s, s], pads=[p] * 4, group=g))

    conv("x", "c1", "w1", 24, 3, 7, 2, 3)
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    nodes.append(helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    conv("p1", "c2", "w2", 40, 24, 3, 2, 1)
    nodes.append(helper.make_node("Relu", ["c2"], ["r2"]))
    conv("r2", "c3", "w3", 40, 40, 3, 1, 1)
    conv("p1", "sc", "ws", 40, 24, 1, 2, 0)
    nodes.append(helper.make_node("Add", ["c3", "sc"], ["a1"]))
    nodes.append(helper.make_node("Relu", ["a1"], ["r3"]))
    cur = "r3"
    if break_with == "group2":
        conv(cur, "cg", "wg", 40, 40, 3, 1, 1, g=2)
        cur = "cg"
    conv(cur, "cd", "wd", 40, 40, 3, 1, 1, g=40)
    lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
    hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
    inits += [lo, hi]
    nodes.append(helper.make_node("Clip", ["cd", "lo", "hi"], ["r4"]))
    conv("r4", "c5", "w5", 64, 40, 1, 1, 0)
    nodes.append(helper.make_node("GlobalAveragePool", ["c5"], ["gp"]))
    nodes.append(helper.make_node("Flatten", ["gp"], ["fl"]))
    nodes.append(helper.make_node("Gemm", ["fl", w("wf", 10, 64), b("bf", 10)], ["y"], transB=1))
    graph = helper.make_graph(nodes, "resnet_like", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                  [2, 3, 37, 41])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])], inits)
    return model_bytes(graph)


def resnet_case(seed, break_with=None):
    """resnet_like, an input and ORT's output; skips where nothing re-lays."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    model = resnet_like(break_with=break_with)
    x = np.random.default_rng(seed).standard_normal((2, 3, 37, 41)).astype(np.float32)
    return model, x, ort_run(model, x)


@pytest.mark.parametrize("threads", [1, 2])
def test_nchwc_no_reorders_in_a_whole_network(threads):
    """Stem to pool: blocked throughout, no reorder at all (the stem reads the
    NCHW image in place, GlobalAveragePool writes the plain [N, C, 1, 1])."""
    model, x, ref = resnet_case(12)
    _, m = compiled(model, x, 3, threads)
    ops = m.op_types
    assert ops.count("ReorderInput") == 0 and ops.count("ReorderOutput") == 0, ops
    kern = {k["node"]: k["kernels"] for k in m.kernels}
    convs = [k for k in m.kernels if k["op_type"] in ("Conv", "FusedConv")]
    assert len(convs) == 6 and all(any(n.startswith(("f32_conv_nchwc", "f32_dwconv")) for n in k["kernels"])
                                   for k in convs), kern
    assert rel_err(m.run({"x": x})["y"], ref) <= TOL
    # and the plan: the blocked tensors through the planner, near its bound
    st = m.memory_stats
    assert st["arena"] <= 1.25 * st["lower_bound"], st


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("act", ["silu", "hardswish"])
def test_nchwc_fuses_silu_and_hardswish_into_blocked_convs(act, threads):
    """A conv + SiLU / HardSwish (YOLO, MobileNetV3) is one blocked step with
    the activation as its epilogue, in each form the region has here: the
    1x1 reading the NCHW input in place, depthwise, Winograd (24 -> 40 3x3
    at stride 1) and direct at stride 2 - no separate op, no reorder but
    the one at the graph's output; SiLU on the silu kernel."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    layers = [("conv", 24, 1, 1, 0, 1, 1, True), (act,), ("conv", 24, 3, 1, 1, 24, 1, True), (act,),
              ("conv", 40, 3, 1, 1, 1, 1, True), (act,), ("conv", 20, 3, 2, 1, 1, 1, True), (act,)]
    model, _ = build((2, 8, 15, 17), layers, seed=9)
    x = np.random.default_rng(9).standard_normal((2, 8, 15, 17)).astype(np.float32)
    _, m = compiled(model, x, 3, threads)
    ops = m.op_types
    assert ops == ["FusedConv"] * 4 + ["ReorderOutput"], ops
    convs = [k for k in m.kernels if k["op_type"] == "FusedConv"]
    assert all(any(n.startswith(("f32_conv_nchwc", "f32_dwconv")) for n in k["kernels"]) for k in convs), convs
    assert sum(any("winograd" in n or "wino" in n for n in k["kernels"]) for k in convs) == 1, convs
    if act == "silu":
        assert all(any(n.startswith("f32_silu") for n in k["kernels"]) for k in convs), convs
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL


def add_conv(rng, inits, nodes, src, dst, C, M, k):
    """A bias-free k x k conv src -> dst (C -> M, padded to keep the size)
    with weights drawn from rng, appended to inits and nodes."""
    inits.append(numpy_helper.from_array((rng.standard_normal((M, C, k, k)) / np.sqrt(C * k * k)).astype(
        np.float32), dst + "_w"))
    nodes.append(helper.make_node("Conv", [src, dst + "_w"], [dst], kernel_shape=[k, k], pads=[k // 2] * 4))


@pytest.mark.parametrize("c1,blocked", [(16, True), (12, False)])
def test_nchwc_concat_of_blocked_tensors(c1, blocked):
    """Concat along the channels of blocked tensors (YOLO's C2f / SPPF) is
    the inputs' blocks in turn - when every input but the last is whole
    blocks; else it stays NCHW, with reorders around it."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    rng = np.random.default_rng(c1)
    inits, nodes = [], []

    conv = partial(add_conv, rng, inits, nodes)
    conv("x", "a", 8, c1, 1)
    conv("a", "b", c1, 20, 3)
    nodes.append(helper.make_node("Concat", ["a", "a", "b"], ["cat"], axis=-3))   # b: a part block last
    conv("cat", "y", 2 * c1 + 20, 24, 3)
    graph = helper.make_graph(nodes, "cat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 9, 11])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 24, 9, 11])], inits)
    model = model_bytes(graph)
    x = rng.standard_normal((2, 8, 9, 11)).astype(np.float32)
    _, m = compiled(model, x, 3)
    ops = m.op_types
    assert ops.count("Concat") == 1 and ops.count("ReorderOutput") == (1 if blocked else 3), ops
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL


@pytest.mark.parametrize("start,blocked", [(16, True), (-24, True), (8, False)])
def test_nchwc_slice_of_blocked_channels(start, blocked):
    """A Slice of the channels from a block boundary to the end (YOLO's C2f
    split; a last block in part) takes the same blocks; one from inside a
    block stays NCHW, with reorders around it."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    rng = np.random.default_rng(abs(start))
    inits, nodes = [], []

    conv = partial(add_conv, rng, inits, nodes)

    def ints(name, v):
        inits.append(numpy_helper.from_array(np.array([v], np.int64), name))
        return name

    conv("x", "a", 8, 40, 3)
    nodes.append(helper.make_node("Slice", ["a", ints("s0", 0), ints("e0", 16), ints("ax", 1)], ["lo"]))
    nodes.append(helper.make_node("Slice", ["a", ints("s1", start), ints("e1", 2 ** 62), "ax"], ["hi"]))
    conv("lo", "y1", 16, 8, 3)
    conv("hi", "y2", 40 - (start % 40), 8, 3)
    nodes.append(helper.make_node("Add", ["y1", "y2"], ["y"]))
    graph = helper.make_graph(nodes, "slice", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 9, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 9, 10])], inits)
    model = model_bytes(graph)
    x = rng.standard_normal((2, 8, 9, 10)).astype(np.float32)
    _, m = compiled(model, x, 3)
    ops = m.op_types
    assert ops.count("Slice") == 2 and ops.count("ReorderOutput") == (1 if blocked else 2), ops
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL


@pytest.mark.parametrize("mode,transform", [("nearest", "asymmetric"), ("linear", "half_pixel"),
                                            ("linear", "align_corners")])
def test_nchwc_resize_of_a_blocked_tensor(mode, transform):
    """Resize by constant scales (1 on N and C, YOLO's upsample) runs on the
    blocked tensor, scale 1 on the block axis and its lanes."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    rng = np.random.default_rng(len(mode + transform))
    inits = [numpy_helper.from_array((rng.standard_normal((24, 8, 3, 3)) / 8).astype(np.float32), "w1"),
             numpy_helper.from_array((rng.standard_normal((16, 24, 3, 3)) / 14).astype(np.float32), "w2"),
             numpy_helper.from_array(np.array([1, 1, 2, 1.5], np.float32), "scales")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[3, 3], pads=[1] * 4),
             helper.make_node("Resize", ["a", "", "scales"], ["u"], mode=mode,
                              coordinate_transformation_mode=transform),
             helper.make_node("Conv", ["u", "w2"], ["y"], kernel_shape=[3, 3], pads=[1] * 4)]
    graph = helper.make_graph(nodes, "up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 7, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 14, 15])], inits)
    model = model_bytes(graph)
    x = rng.standard_normal((2, 8, 7, 10)).astype(np.float32)
    _, m = compiled(model, x, 3)
    ops = m.op_types
    assert ops.count("Resize") == 1 and ops.count("ReorderOutput") == 1, ops
    assert rel_err(list(m.run({"x": x}).values())[0], ort_run(model, x)) <= TOL


def test_nchwc_reorders_at_a_region_edge():
    """A grouped conv (no blocked form) in the middle: one ReorderOutput
    before it and one ReorderInput after it (the depthwise conv needs its
    input blocked), nothing else; the output of a blocked conv that is a
    graph output gets a ReorderOutput."""
    model, x, ref = resnet_case(13, break_with="group2")
    _, m = compiled(model, x, 3)
    ops = m.op_types
    assert ops.count("ReorderOutput") == 1 and ops.count("ReorderInput") == 1, ops
    assert rel_err(m.run({"x": x})["y"], ref) <= TOL
    # a graph output produced in the blocked region
    model2, out = build((1, 16, 12, 12), [("conv", 32, 3, 1, 1, 1, 1, True), ("relu",),
                                          ("conv", 24, 1, 1, 0, 1, 1, True)])
    x2 = np.random.default_rng(14).standard_normal((1, 16, 12, 12)).astype(np.float32)
    _, m2 = compiled(model2, x2, 3)
    assert m2.op_types.count("ReorderOutput") == 1 and m2.op_types.count("ReorderInput") == 0, m2.op_types
    assert rel_err(m2.run({"x": x2})[out], ort_run(model2, x2)) <= TOL
    # the pass can be switched off by name
    _, m3 = compiled(model, x, 3, disable=("nchwc_layout",))
    assert "ReorderOutput" not in m3.op_types
    assert rel_err(m3.run({"x": x})["y"], ref) <= TOL


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_residual_fusion(threads):
    """The basic block's Add(conv, shortcut) + Relu folds into the blocked
    conv's epilogue (a FusedConv with the shortcut as a 4th input; the
    shortcut conv comes after it in the file's node order); switched off by
    name, the Add and Relu stay.  Both agree with ORT."""
    model, x, ref = resnet_case(15)
    _, m = compiled(model, x, 3, threads)
    _, off = compiled(model, x, 3, threads, disable=("conv_residual_fusion",))
    assert "Add" not in m.op_types and "Relu" not in m.op_types, m.op_types
    assert off.op_types.count("Add") == 1 and off.op_types.count("Relu") == 1, off.op_types
    assert len(m.op_types) == len(off.op_types) - 2
    fused = [n for n in m.passes[-1]["nodes"] if n["op"] == "FusedConv" and n["inputs"].count(",") == 3]
    assert len(fused) == 1 and "activation=relu" in fused[0]["attrs"], fused
    assert rel_err(m.run({"x": x})["y"], ref) <= TOL
    assert rel_err(off.run({"x": x})["y"], ref) <= TOL


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("hw", [(11, 13), (15, 14)])
def test_flat_pointwise_convs_with_tiles_and_skip(hw, threads):
    """1x1 stride-1 convs run each plane as runs of pixels across image rows
    (143 pixels: 2 runs of 72 and 71; 210: 3 of 70): one reading the NCHW
    image, one untiled on the blocked tensor, and one whose 320 x 320
    weights go in input tiles (the partial sums accumulate in y) with the
    skip connection's Add + Relu in its epilogue - against ORT."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    rng = np.random.default_rng(17)
    H, W = hw

    def w(name, M, C):
        return numpy_helper.from_array((rng.standard_normal((M, C, 1, 1)) / np.sqrt(C)).astype(np.float32), name)

    def b(name, M):
        return numpy_helper.from_array((rng.standard_normal(M) * 0.1).astype(np.float32), name)

    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
             helper.make_node("Add", ["c3", "r2"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    inits = [w("w1", 24, 3), b("b1", 24), w("w2", 320, 24), b("b2", 320), w("w3", 320, 320), b("b3", 320)]
    graph = helper.make_graph(nodes, "pointwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                 [2, 3, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 320, H, W])], inits)
    model = model_bytes(graph)
    x = rng.standard_normal((2, 3, H, W)).astype(np.float32)
    _, m = compiled(model, x, 3, threads)
    assert m.op_types == ["FusedConv"] * 3 + ["ReorderOutput"], m.op_types
    fused = [n for n in m.passes[-1]["nodes"] if n["op"] == "FusedConv" and n["inputs"].count(",") == 3]
    assert len(fused) == 1 and "activation=relu" in fused[0]["attrs"], fused
    assert rel_err(m.run({"x": x})["y"], ort_run(model, x)) <= TOL


def test_conv_residual_not_fused_when_conv_output_is_reused():
    """The conv's output read by the Add and by a second node: the sum cannot
    replace it, so nothing fuses (and the result still matches ORT)."""
    if not blocked_here():
        pytest.skip("no conv_nchwc asm kernel on this CPU: the graph stays NCHW")
    rng = np.random.default_rng(16)
    w1 = numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) / 12).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) / 12).astype(np.float32), "w2")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4),
             helper.make_node("Add", ["c2", "r1"], ["a"]),
             helper.make_node("Relu", ["a"], ["r2"]),
             helper.make_node("Mul", ["r2", "c2"], ["y"])]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 11])]
    graph = helper.make_graph(nodes, "reuse", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                                 [1, 16, 9, 11])], [w1, w2])
    model = model_bytes(graph)
    x = rng.standard_normal((1, 16, 9, 11)).astype(np.float32)
    _, m = compiled(model, x, 3)
    assert m.op_types.count("Add") == 1, m.op_types
    assert rel_err(m.run({"x": x})["y"], ort_run(model, x)) <= TOL


# -- conv_prepack: the GEMM form's W + bias column made at compile ---------------

def test_conv_prepack_bias_column(tmp_path):
    """A GEMM-form conv with a bias (nchwc_layout off) gets W with its bias
    column once at compile (no copy per run: a smaller arena), the same result
    with the pass off, against ORT, and through a saved compiled model."""
    model, out = build((2, 16, 14, 14), [("conv", 24, 3, 1, 1, 1, 1, True), ("relu",),
                                         ("conv", 20, 1, 1, 0, 1, 1, True)])
    x = np.random.default_rng(15).standard_normal((2, 16, 14, 14)).astype(np.float32)
    ref = ort_run(model, x)
    _, m = compiled(model, x, 3, disable=("nchwc_layout",))
    _, moff = compiled(model, x, 3, disable=("nchwc_layout", "conv_prepack"))
    p = [q for q in m.passes if q["name"] == "conv_prepack"]
    assert p and len([c for c in p[0]["changes"] if c["kind"] == "rewritten"]) == 2, p
    # the copy's room left the arena (scratch) for the weights
    st, stoff = m.memory_stats, moff.memory_stats
    assert st["arena"] < stoff["arena"] and st["weights"] > stoff["weights"], (st, stoff)
    y = m.run({"x": x})[out]
    assert rel_err(y, ref) <= TOL
    assert np.array_equal(y, moff.run({"x": x})[out])
    loaded = pg.load_compiled(m.save(tmp_path / "prepacked.pgm"))
    assert np.array_equal(loaded.run({"x": x})[out], y)
