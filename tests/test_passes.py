"""The graph optimiser: every pass on the node patterns torch.onnx.export
writes (BERT's LayerNorm, erf-GELU and attention), checked three ways - the
ops left after each pass, the reasons logged, and outputs equal to level 0
and to numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb.examples import transformer_block
from peregrine_nb.passes import pass_log, pass_registry

RNG = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def c(g, name, value, dtype=np.float32):
    g.add_initializer(name, np.asarray(value, dtype))
    return name


def ops_after(model, name=None):
    log = pass_log(model)
    return (log.by_name(name) if name else log[-1]).op_counts()


def run_levels(g, feeds, levels=(0, 1, 2, 3), **kw):
    """Outputs at every level, each checked against level 0."""
    outs = {lvl: pg.compile(g, level=lvl, **kw).run(feeds) for lvl in levels}
    for lvl in levels[1:]:
        for k in outs[levels[0]]:
            np.testing.assert_allclose(outs[lvl][k], outs[levels[0]][k], rtol=1e-4, atol=1e-4,
                                       err_msg=f"level {lvl}, output {k}")
    return outs


# ---- the framework ----------------------------------------------------------

def test_registry_names_and_levels():
    reg = pass_registry()
    names = [n for n, _, _ in reg]
    assert names[0] == "shape_inference"
    assert names[-1] == "weight_prepack"
    levels = dict((n, l) for n, l, _ in reg)
    assert levels["constant_folding"] == 1 and levels["cse"] == 1 and levels["dce"] == 1
    assert levels["layernorm_fusion"] == 2 and levels["attention_fusion"] == 2
    assert levels["qkv_fusion"] == 2 and levels["weight_prepack"] == 3
    assert [l for _, l, _ in reg] == sorted(l for _, l, _ in reg)   # run in level order
    assert all(d for _, _, d in reg)


def _tiny():
    g = pg.Graph()
    g.add_input("x", (2, 4))
    g.add_node("Identity", ["x"], ["a"])
    g.add_node("Relu", ["a"], ["y"])
    g.add_output("y")
    return g


def test_unknown_disabled_pass_lists_known_ones():
    with pytest.raises(pg.InvalidArgumentError) as e:
        pg.compile(_tiny(), level=2, disable=["gelu_fusion", "no_such_pass"])
    msg = str(e.value)
    assert "no_such_pass" in msg and "known passes" in msg
    for name, _, _ in pass_registry():
        assert name in msg


def test_log_lists_every_pass_and_marks_disabled_and_levels():
    m = pg.compile(_tiny(), level=1, disable=["cse", " dce "])
    log = pass_log(m)
    assert [p.name for p in log] == ["input"] + [n for n, _, _ in pass_registry()]
    by = {p.name: p for p in log}
    assert by["cse"].enabled is False and by["cse"].ran is False
    assert by["dce"].enabled is False
    assert by["noop_elimination"].ran is True
    assert by["layernorm_fusion"].enabled is False      # level 2 > 1
    assert by["weight_prepack"].enabled is False
    # the Identity went in noop_elimination, with a reason
    ch = by["noop_elimination"].changes
    assert [(x.kind, x.op) for x in ch] == [("removed", "Identity")]
    assert "Identity" in ch[0].reason
    assert by["input"].op_counts() == {"Identity": 1, "Relu": 1}
    assert by["noop_elimination"].op_counts() == {"Relu": 1}


def test_level0_has_no_log_and_bad_index_is_an_error():
    m = pg.compile(_tiny(), level=0)
    assert pass_log(m) == []
    from peregrine_nb._lib import ffi, lib
    info = ffi.new("pg_pass_info *")
    assert lib.pg_model_pass_info(m._m, 0, info) != 0
    assert "out of range" in ffi.string(lib.pg_last_error()).decode()
    m3 = pg.compile(_tiny(), level=3)
    n = lib.pg_model_pass_count(m3._m)
    assert lib.pg_model_pass_info(m3._m, n, info) != 0
    sn = ffi.new("pg_snapshot_node *")
    assert lib.pg_model_snapshot_node(m3._m, 0, 99, sn) != 0


# ---- the transformer block ----------------------------------------------------

@pytest.fixture(scope="module")
def block():
    return transformer_block(seq=16, hidden=64, heads=4, ffn=128)


def test_transformer_block_fuses_everything(block):
    m = pg.compile(block, level=3)
    log = pass_log(m)
    before = log[0].op_counts()
    assert before["MatMul"] == 8 and before["Softmax"] == 1 and before["Erf"] == 1
    assert before["ReduceMean"] == 4 and before["Shape"] == 4
    # after constant folding the shape chains are gone
    after_fold = log.by_name("constant_folding").op_counts()
    for op in ("Shape", "Gather", "Unsqueeze", "Concat"):
        assert op not in after_fold
    # noop: the two K transposes became one
    assert log.by_name("noop_elimination").op_counts()["Transpose"] == 4
    assert log.by_name("layernorm_fusion").op_counts()["LayerNormalization"] == 2
    assert "ReduceMean" not in log.by_name("layernorm_fusion").op_counts()
    assert log.by_name("gelu_fusion").op_counts()["Gelu"] == 1
    ep = log.by_name("matmul_epilogue_fusion").op_counts()
    assert ep["FusedMatMul"] == 6 and "Gelu" not in ep and "MatMul" == "MatMul"
    att = log.by_name("attention_fusion").op_counts()
    assert att["FusedAttention"] == 1 and "Softmax" not in att and "MatMul" not in att
    final = log[-1].op_counts()
    # the head split of Q, K, V and the merge of the context went into
    # FusedAttention (qkv_layout=bshd): no Reshape, no Transpose is left
    assert final == {"QKVMatMul": 1, "FusedAttention": 1, "FusedMatMul": 3,
                     "LayerNormalization": 2, "Add": 2}
    nodes = {n.op: n for n in log[-1].nodes}
    assert nodes["QKVMatMul"].fused and "splits=[64,64,64]" in nodes["QKVMatMul"].attrs
    assert nodes["QKVMatMul"].shapes == ["1x16x64"] * 3
    assert "num_heads=4" in nodes["FusedAttention"].attrs
    assert "k_transposed=0" in nodes["FusedAttention"].attrs
    assert "qkv_layout=bshd" in nodes["FusedAttention"].attrs
    assert nodes["FusedAttention"].shapes == ["1x16x64"]
    assert nodes["FusedAttention"].inputs[:3] == nodes["QKVMatMul"].outputs
    assert nodes["FusedAttention"].inputs[3] == "mask"
    ffn1 = [n for n in log[-1].nodes if n.op == "FusedMatMul" and "activation=gelu" in n.attrs]
    assert len(ffn1) == 1
    # layout: every weight packed
    assert all("packed" in n.in_shapes[1] for n in log[-1].nodes
               if n.op in ("FusedMatMul", "QKVMatMul"))
    # reasons name the fused ops
    reasons = [x.reason for x in log.by_name("layernorm_fusion").changes]
    assert any(r.startswith("fused 9 nodes ReduceMean..Add into LayerNormalization") for r in reasons)
    att_reasons = [x.reason for x in log.by_name("attention_fusion").changes]
    assert any(r.startswith("fused 13 nodes Reshape..Reshape into FusedAttention") for r in att_reasons)
    assert any("qkv_layout=bshd" in r and "strides, not copies" in r for r in att_reasons)


def test_transformer_block_outputs_match_numpy_at_every_level(block):
    feeds = block.make_feeds()
    ref = block.reference(feeds)["out"]
    outs = run_levels(block, feeds)
    for lvl, o in outs.items():
        np.testing.assert_allclose(o["out"], ref, rtol=2e-4, atol=2e-4, err_msg=f"level {lvl}")


def test_transformer_block_without_mask_and_bigger_batch():
    g = transformer_block(seq=8, hidden=32, heads=2, batch=2, mask=False, seed=3)
    feeds = g.make_feeds()
    m = pg.compile(g, level=2)
    assert ops_after(m)["FusedAttention"] == 1
    np.testing.assert_allclose(m.run(feeds)["out"], g.reference(feeds)["out"], rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("off,expect", [
    ("qkv_fusion", {"FusedMatMul": 6}),
    ("attention_fusion", {"Softmax": 1, "MatMul": 2}),
    ("gelu_fusion", {"Erf": 1}),
    ("layernorm_fusion,rmsnorm_fusion", {"ReduceMean": 4}),
    # without layernorm_fusion, the centred half of each LayerNorm is still an
    # RMSNorm of (x - mean): rmsnorm_fusion takes it, the mean stays
    ("layernorm_fusion", {"ReduceMean": 2, "RMSNorm": 2}),
    ("matmul_epilogue_fusion", {"MatMul": 3, "QKVMatMul": 1, "Gelu": 1}),   # QKV takes plain MatMuls
    ("constant_folding", {"Shape": 0}),   # shape chains stay (shape inference still knows them)
])
def test_transformer_block_pass_switched_off(block, off, expect):
    m = pg.compile(block, level=3, disable=off.split(","))
    counts = ops_after(m)
    for op, n in expect.items():
        if op == "Shape":
            continue
        assert counts.get(op, 0) == n, (off, counts)
    feeds = block.make_feeds()
    np.testing.assert_allclose(m.run(feeds)["out"], block.reference(feeds)["out"], rtol=2e-4, atol=2e-4)


# ---- LayerNorm variants ---------------------------------------------------------

def _ln_graph(variant):
    g = pg.Graph()
    g.add_input("x", (2, 5, 16))
    if variant == "opset18":
        g.add_node("ReduceMean", ["x", c(g, "ax", [-1], np.int64)], ["m"], keepdims=1)
    else:
        g.add_node("ReduceMean", ["x"], ["m"], axes=[-1])
    g.add_node("Sub", ["x", "m"], ["d"])
    if variant == "dup_sub":
        g.add_node("Sub", ["x", "m"], ["d2"])
    if variant == "mulsq":
        g.add_node("Mul", ["d", "d"], ["p"])
    else:
        g.add_node("Pow", ["d", c(g, "two", 2.0)], ["p"])
    if variant == "opset18":
        g.add_node("ReduceMean", ["p", "ax"], ["v"], keepdims=1)
    else:
        g.add_node("ReduceMean", ["p"], ["v"], axes=[-1])
    g.add_node("Add", [c(g, "eps", 1e-5), "v"], ["ve"])      # eps first: either order
    g.add_node("Sqrt", ["ve"], ["s"])
    num = "d2" if variant == "dup_sub" else "d"
    if variant == "reciprocal":
        g.add_node("Reciprocal", ["s"], ["r"])
        g.add_node("Mul", [num, "r"], ["n"])
    else:
        g.add_node("Div", [num, "s"], ["n"])
    if variant == "no_affine":
        g.add_node("Relu", ["n"], ["y"])
    else:
        g.add_node("Mul", [c(g, "gamma", f32(16)), "n"], ["gn"])
        g.add_node("Add", ["gn", c(g, "beta", f32(16))], ["y0"])
        g.add_node("Relu", ["y0"], ["y"])
    g.add_output("y")
    return g


@pytest.mark.parametrize("variant", ["plain", "dup_sub", "mulsq", "reciprocal", "no_affine", "opset18"])
def test_layernorm_variants(variant):
    g = _ln_graph(variant)
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert counts.get("LayerNormalization", 0) == 1, counts
    assert counts.get("ReduceMean", 0) == 0 and counts.get("Sqrt", 0) == 0
    feeds = {"x": f32(2, 5, 16)}
    run_levels(g, feeds)


def test_layernorm_not_fused_when_intermediate_is_read_outside():
    g = _ln_graph("plain")
    g.add_output("v")          # the variance is also a graph output
    m = pg.compile(g, level=2)
    assert "LayerNormalization" not in ops_after(m)
    run_levels(g, {"x": f32(2, 5, 16)})


# ---- GELU variants ----------------------------------------------------------------

def _gelu_graph(variant):
    g = pg.Graph()
    g.add_input("x", (3, 32))
    if variant == "mul_rsqrt2":
        g.add_node("Mul", ["x", c(g, "k", 1 / math.sqrt(2))], ["d"])
    else:
        g.add_node("Div", ["x", c(g, "k", math.sqrt(2))], ["d"])
    g.add_node("Erf", ["d"], ["e"])
    g.add_node("Add", [c(g, "one", 1.0), "e"], ["a"])
    if variant in ("torch", "mul_rsqrt2"):          # (x * (1 + erf)) * 0.5
        g.add_node("Mul", ["x", "a"], ["m"])
        g.add_node("Mul", ["m", c(g, "half", 0.5)], ["y"])
    elif variant == "bert":                          # (x * 0.5) * (1 + erf)
        g.add_node("Mul", ["x", c(g, "half", 0.5)], ["h"])
        g.add_node("Mul", ["h", "a"], ["y"])
    elif variant == "half_first":                    # ((1 + erf) * 0.5) * x
        g.add_node("Mul", ["a", c(g, "half", 0.5)], ["h"])
        g.add_node("Mul", ["h", "x"], ["y"])
    g.add_output("y")
    return g


@pytest.mark.parametrize("variant", ["torch", "bert", "half_first", "mul_rsqrt2"])
def test_gelu_variants(variant):
    g = _gelu_graph(variant)
    m = pg.compile(g, level=2)
    assert ops_after(m) == {"Gelu": 1}
    x = f32(3, 32, scale=2.0)
    y = m.run({"x": x})["y"]
    ref = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    run_levels(g, {"x": x})


def test_gelu_wrong_constant_not_fused():
    g = pg.Graph()
    g.add_input("x", (3, 8))
    g.add_node("Div", ["x", c(g, "k", 1.3)], ["d"])
    g.add_node("Erf", ["d"], ["e"])
    g.add_node("Add", ["e", c(g, "one", 1.0)], ["a"])
    g.add_node("Mul", ["x", "a"], ["m"])
    g.add_node("Mul", ["m", c(g, "half", 0.5)], ["y"])
    g.add_output("y")
    assert "Gelu" not in ops_after(pg.compile(g, level=2))


def _gelu_tanh_graph(cube, tail, shape=(3, 32), k=0.044715):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) as exporters
    write it: x^3 by Pow or two Muls, or factored as BLOOM writes it
    (sqrt(2/pi) * x * (1 + 0.044715 * x * x), constant k); the three tails
    of the erf form."""
    g = pg.Graph()
    g.add_input("x", shape)
    if cube == "factored":
        g.add_node("Mul", ["x", c(g, "s2pi", math.sqrt(2 / math.pi))], ["sx"])
        g.add_node("Mul", ["x", c(g, "k", k)], ["kx"])
        g.add_node("Mul", ["kx", "x"], ["kxx"])
        g.add_node("Add", ["kxx", c(g, "one_in", 1.0)], ["p1"])
        g.add_node("Mul", ["sx", "p1"], ["u"])
    elif cube == "pow":
        g.add_node("Pow", ["x", c(g, "three", 3.0)], ["x3"])
    elif cube == "mul_sq_x":
        g.add_node("Mul", ["x", "x"], ["sq"])
        g.add_node("Mul", ["sq", "x"], ["x3"])
    else:   # x * (x * x)
        g.add_node("Mul", ["x", "x"], ["sq"])
        g.add_node("Mul", ["x", "sq"], ["x3"])
    if cube != "factored":
        g.add_node("Mul", [c(g, "k", k), "x3"], ["kx3"])
        g.add_node("Add", ["kx3", "x"], ["inner"])
        g.add_node("Mul", ["inner", c(g, "s2pi", math.sqrt(2 / math.pi))], ["u"])
    g.add_node("Tanh", ["u"], ["t"])
    g.add_node("Add", ["t", c(g, "one", 1.0)], ["a"])
    if tail == "torch":
        g.add_node("Mul", ["x", "a"], ["m"])
        g.add_node("Mul", ["m", c(g, "half", 0.5)], ["y"])
    elif tail == "gpt2":                              # (0.5 * x) * (1 + tanh)
        g.add_node("Mul", [c(g, "half", 0.5), "x"], ["h"])
        g.add_node("Mul", ["h", "a"], ["y"])
    else:
        g.add_node("Mul", ["a", c(g, "half", 0.5)], ["h"])
        g.add_node("Mul", ["h", "x"], ["y"])
    g.add_output("y")
    return g


def gelu_tanh_ref(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("cube,tail", [("pow", "torch"), ("mul_sq_x", "gpt2"), ("mul_x_sq", "half_first"),
                                       ("pow", "gpt2"), ("factored", "gpt2")])
def test_gelu_tanh_variants(cube, tail):
    g = _gelu_tanh_graph(cube, tail)
    m = pg.compile(g, level=2)
    assert ops_after(m) == {"Gelu": 1}, ops_after(m)
    node = pass_log(m)[-1].nodes[0]
    assert "approximate=tanh" in node.attrs and node.inputs == ["x"]
    reasons = [x.reason for x in pass_log(m).by_name("gelu_fusion").changes]
    assert any(r.startswith("fused") and "into Gelu" in r for r in reasons)
    x = f32(3, 32, scale=3.0)
    np.testing.assert_allclose(m.run({"x": x})["y"], gelu_tanh_ref(x), rtol=1e-5, atol=1e-5)
    run_levels(g, {"x": x})


def test_gelu_tanh_after_a_matmul_becomes_its_epilogue():
    g = pg.Graph()
    g.add_input("x0", (4, 16))
    g.add_node("MatMul", ["x0", c(g, "w", f32(16, 24))], ["mm"])
    g.add_node("Add", ["mm", c(g, "b", f32(24))], ["x"])
    # the tanh-GELU chain over the biased product, operands the other way round
    g.add_node("Pow", ["x", c(g, "three", 3.0)], ["x3"])
    g.add_node("Mul", [c(g, "k", 0.044715), "x3"], ["kx3"])
    g.add_node("Add", ["x", "kx3"], ["inner"])
    g.add_node("Mul", [c(g, "s2pi", math.sqrt(2 / math.pi)), "inner"], ["u"])
    g.add_node("Tanh", ["u"], ["t"])
    g.add_node("Add", [c(g, "one", 1.0), "t"], ["a"])
    g.add_node("Mul", ["x", "a"], ["m"])
    g.add_node("Mul", ["m", c(g, "half", 0.5)], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    assert ops_after(m) == {"FusedMatMul": 1}, ops_after(m)
    assert "activation=gelu_tanh" in pass_log(m)[-1].nodes[0].attrs
    run_levels(g, {"x0": f32(4, 16)})


def test_gelu_tanh_wrong_constant_or_shared_cube_not_fused():
    g = _gelu_tanh_graph("pow", "torch")
    g2 = pg.Graph()
    g2.add_input("x", (3, 8))
    g2.add_node("Pow", ["x", c(g2, "three", 3.0)], ["x3"])
    g2.add_node("Mul", [c(g2, "k", 0.05), "x3"], ["kx3"])          # not 0.044715
    g2.add_node("Add", ["kx3", "x"], ["inner"])
    g2.add_node("Mul", ["inner", c(g2, "s2pi", math.sqrt(2 / math.pi))], ["u"])
    g2.add_node("Tanh", ["u"], ["t"])
    g2.add_node("Add", ["t", c(g2, "one", 1.0)], ["a"])
    g2.add_node("Mul", ["x", "a"], ["m"])
    g2.add_node("Mul", ["m", c(g2, "half", 0.5)], ["y"])
    g2.add_output("y")
    assert "Gelu" not in ops_after(pg.compile(g2, level=2))
    g.add_output("x3")                                                # x^3 read outside
    assert "Gelu" not in ops_after(pg.compile(g, level=2))
    g3 = _gelu_tanh_graph("factored", "gpt2", k=0.05)                 # BLOOM's form, not 0.044715
    assert "Gelu" not in ops_after(pg.compile(g3, level=2))
    g4 = _gelu_tanh_graph("factored", "gpt2")
    g4.add_output("kxx")                                              # x * x * k read outside
    assert "Gelu" not in ops_after(pg.compile(g4, level=2))


# ---- InstanceNormalization's affine ---------------------------------------------------

@pytest.mark.parametrize("gshape,bshape,folded", [((6, 1), (6, 1), 2), ((1, 6, 1), None, 1), (None, (6, 1), 1),
                                                   ((), (6, 1), 2), ((1, 11), (6, 1), 0)])
def test_instancenorm_affine_folds_into_its_scale_and_bias(gshape, bshape, folded):
    """GroupNorm as torch exports it (InstanceNormalization with ones and
    zeros, then Mul(gamma), Add(beta) per channel) becomes one
    InstanceNormalization with gamma and beta as its own scale and bias;
    a Mul along another axis (shape [1, 11] over [2, 6, 11]) stays."""
    g = pg.Graph()
    g.add_input("x", (2, 6, 11))
    g.add_node("InstanceNormalization", ["x", c(g, "s", np.ones(6, np.float32)), c(g, "b", np.zeros(6, np.float32))],
               ["n"], epsilon=1e-5)
    last = "n"
    if gshape is not None:
        g.add_node("Mul", [last, c(g, "gam", f32(*gshape) if gshape else np.float32(1.7))], ["m"])
        last = "m"
    if bshape is not None:
        g.add_node("Add", [last, c(g, "bet", f32(*bshape))], ["a"])
        last = "a"
    g.add_node("Relu", [last], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=2)
    ops = ops_after(m)
    if folded:
        assert ops == {"InstanceNormalization": 1, "Relu": 1}, ops
    else:
        assert ops.get("Mul") == 1, ops
    run_levels(g, {"x": f32(2, 6, 11, scale=3.0)})


# ---- SiLU, RMSNorm -------------------------------------------------------------------

def test_silu_and_rmsnorm():
    g = pg.Graph()
    g.add_input("x", (4, 24))
    g.add_node("Pow", ["x", c(g, "two", 2.0)], ["p"])
    g.add_node("ReduceMean", ["p"], ["ms"], axes=[-1])
    g.add_node("Add", ["ms", c(g, "eps", 1e-6)], ["mse"])
    g.add_node("Sqrt", ["mse"], ["s"])
    g.add_node("Reciprocal", ["s"], ["r"])
    g.add_node("Mul", ["x", "r"], ["n"])
    w = f32(24)
    g.add_node("Mul", [c(g, "w", w), "n"], ["h"])
    g.add_node("Sigmoid", ["h"], ["sg"])
    g.add_node("Mul", ["sg", "h"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=2)
    assert ops_after(m) == {"RMSNorm": 1, "SiLU": 1}
    x = f32(4, 24)
    h = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * w
    ref = h / (1 + np.exp(-h))
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-5)
    run_levels(g, {"x": x})


# ---- MatMul epilogues and QKV -------------------------------------------------------------

@pytest.mark.parametrize("act", ["Relu", "Sigmoid", "Tanh", None])
def test_matmul_bias_activation(act):
    g = pg.Graph()
    g.add_input("x", (2, 7, 20))
    w, b = f32(20, 36), f32(36)
    g.add_node("MatMul", ["x", c(g, "w", w)], ["mm"])
    g.add_node("Add", [c(g, "b", b.reshape(1, 36)), "mm"], ["z"])    # bias first, [1, N]
    if act:
        g.add_node(act, ["z"], ["y"])
    else:
        g.add_node("Identity", ["z"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert counts == {"FusedMatMul": 1}, counts
    node = pass_log(m)[-1].nodes[0]
    assert f"activation={(act or 'none').lower()}" in node.attrs
    run_levels(g, {"x": f32(2, 7, 20)})


def test_matmul_add_not_fused_when_bias_broadcasts_rows_or_is_not_constant():
    g = pg.Graph()
    g.add_input("x", (4, 8))
    g.add_input("b", (8,))
    g.add_node("MatMul", ["x", c(g, "w", f32(8, 8))], ["mm"])
    g.add_node("Add", ["mm", "b"], ["y"])                           # bias fed at run time
    g.add_node("MatMul", ["x", c(g, "w2", f32(8, 8))], ["mm2"])
    g.add_node("Add", ["mm2", c(g, "full", f32(4, 8))], ["y2"])      # not a per-column bias
    g.add_output("y")
    g.add_output("y2")
    counts = ops_after(pg.compile(g, level=2))
    assert counts.get("FusedMatMul", 0) == 0 and counts["MatMul"] == 2
    run_levels(g, {"x": f32(4, 8), "b": f32(8)})


@pytest.mark.parametrize("tb,alpha,beta,cshape,act", [
    (1, 1.0, 1.0, (24,), None), (0, 1.0, 1.0, (1, 24), "Relu"), (1, 0.5, 2.0, (24,), None),
    (0, 2.0, 0.0, (24,), "Tanh"), (1, 1.0, 1.0, None, "Sigmoid")])
def test_gemm_constant_b_becomes_packed_fused_matmul(tb, alpha, beta, cshape, act):
    g = pg.Graph()
    g.add_input("x", (5, 40))
    bmat = f32(24, 40) if tb else f32(40, 24)
    ins = ["x", c(g, "B", bmat)]
    cmat = f32(*cshape) if cshape else None
    if cshape:
        ins.append(c(g, "C", cmat))
    g.add_node("Gemm", ins, ["z"], transB=tb, alpha=alpha, beta=beta)
    g.add_node(act or "Identity", ["z"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    assert ops_after(m) == {"FusedMatMul": 1}, ops_after(m)
    node = pass_log(m)[-1].nodes[0]
    assert "packed" in node.in_shapes[1] and node.in_shapes[1].startswith("40x24")
    assert f"activation={(act or 'none').lower()}" in node.attrs
    assert (len(node.inputs) == 3) == (cshape is not None and beta != 0.0)
    reasons = [x.reason for x in pass_log(m).by_name("matmul_epilogue_fusion").changes]
    assert any(r.startswith("fused") and "Gemm" in r and "FusedMatMul" in r for r in reasons)
    if tb or alpha != 1.0 or beta not in (0.0, 1.0):
        assert any("made once at compile time" in r for r in reasons)
    x = f32(5, 40)
    ref = alpha * (x.astype(np.float64) @ (bmat.T if tb else bmat))
    if cshape:
        ref = ref + beta * cmat
    ref = {"Relu": lambda v: np.maximum(v, 0), "Tanh": np.tanh,
           "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), None: lambda v: v}[act](ref)
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-4)
    run_levels(g, {"x": x})


def test_gemm_not_fused_when_c_varies_by_row_or_a_is_transposed():
    g = pg.Graph()
    g.add_input("x", (5, 8))
    g.add_node("Gemm", ["x", c(g, "B", f32(8, 6)), c(g, "C", f32(5, 6))], ["y"])
    g.add_node("Gemm", ["x", c(g, "B2", f32(5, 6))], ["y2"], transA=1)
    g.add_output("y")
    g.add_output("y2")
    assert ops_after(pg.compile(g, level=3)) == {"Gemm": 2}
    run_levels(g, {"x": f32(5, 8)})


def test_matmul_of_a_transposed_constant_weight_is_packed():
    """MatMul(x, Transpose(W)): constant folding transposes W once, the
    weight is then packed like any other."""
    g = pg.Graph()
    g.add_input("x", (3, 7, 32))
    w = f32(48, 32)
    g.add_node("Transpose", [c(g, "w", w)], ["wt"], perm=[1, 0])
    g.add_node("MatMul", ["x", "wt"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    assert ops_after(m) == {"MatMul": 1}
    assert "packed" in pass_log(m)[-1].nodes[0].in_shapes[1]
    x = f32(3, 7, 32)
    np.testing.assert_allclose(m.run({"x": x})["y"], x @ w.T, rtol=1e-4, atol=1e-4)


def test_qkv_mixed_bias_and_plain_matmuls():
    g = pg.Graph()
    g.add_input("x", (1, 6, 16))
    g.add_node("MatMul", ["x", c(g, "wq", f32(16, 16))], ["q0"])
    g.add_node("Add", ["q0", c(g, "bq", f32(16))], ["q"])
    g.add_node("MatMul", ["x", c(g, "wk", f32(16, 16))], ["k"])           # no bias
    g.add_node("MatMul", ["x", c(g, "wv", f32(16, 32))], ["v0"])          # wider V
    g.add_node("Add", ["v0", c(g, "bv", f32(32))], ["v"])
    for t in ("q", "k", "v"):
        g.add_output(t)
    m = pg.compile(g, level=3)
    counts = ops_after(m)
    assert counts == {"QKVMatMul": 1}, counts
    n = pass_log(m)[-1].nodes[0]
    assert "splits=[16,16,32]" in n.attrs
    run_levels(g, {"x": f32(1, 6, 16)})


def test_qkv_needs_three_of_the_same_k():
    g = pg.Graph()
    g.add_input("x", (5, 16))
    g.add_node("MatMul", ["x", c(g, "w1", f32(16, 8))], ["a"])
    g.add_node("MatMul", ["x", c(g, "w2", f32(16, 8))], ["b"])
    g.add_output("a")
    g.add_output("b")
    assert "QKVMatMul" not in ops_after(pg.compile(g, level=2))


# ---- the gate/up pair of an MLP -------------------------------------------------------------

def _mlp(rows, bias, swap, up_reader=False, gate_act="silu"):
    """x -> down(act(x Wg [+ bg]) * (x Wu [+ bu])): Llama's MLP, SiLU as
    torch writes it (x * Sigmoid(x))."""
    g = pg.Graph()
    g.add_input("x", rows + (24,))
    wg, wu, wd = f32(24, 40, scale=0.3), f32(24, 40, scale=0.3), f32(40, 24, scale=0.3)
    bg, bu = f32(40), f32(40)
    g.add_node("MatMul", ["x", c(g, "wg", wg)], ["g0"])
    if bias:
        g.add_node("Add", ["g0", c(g, "bg", bg)], ["g1"])
    gi = "g1" if bias else "g0"
    if gate_act == "silu":
        g.add_node("Sigmoid", [gi], ["gs"])
        g.add_node("Mul", [gi, "gs"], ["gate"])
    else:
        g.add_node("Identity", [gi], ["gate"])
    g.add_node("MatMul", ["x", c(g, "wu", wu)], ["u0"])
    if bias:
        g.add_node("Add", ["u0", c(g, "bu", bu)], ["up"])
    ui = "up" if bias else "u0"
    g.add_node("Mul", [ui, "gate"] if swap else ["gate", ui], ["h"])
    g.add_node("MatMul", ["h", c(g, "wd", wd)], ["y"])
    g.add_output("y")
    if up_reader:
        g.add_output(ui)
    x = f32(*rows, 24)
    hg = x @ wg + (bg if bias else 0)
    hu = x @ wu + (bu if bias else 0)
    gate = hg / (1 + np.exp(-hg)) if gate_act == "silu" else hg
    return g, {"x": x}, (gate * hu) @ wd


def _gated_nodes(m):
    return [n for n in pass_log(m).by_name("qkv_fusion").nodes if "gated=1" in n.attrs]


@pytest.mark.parametrize("rows, bias, swap", [((2, 7), True, False), ((5,), False, True), ((1, 1), True, True)])
def test_gate_up_pair_becomes_one_gated_product(rows, bias, swap):
    """Mul(SiLU(x Wg + bg), x Wu + bu) -> one FusedMatMul over [Wg | Wu]
    (gated=1, activation silu), the Mul gone; the same outputs as numpy
    and level 0, the weight packed at level 3."""
    g, feeds, ref = _mlp(rows, bias, swap)
    m = pg.compile(g, level=3)
    gated = _gated_nodes(m)
    assert len(gated) == 1 and "activation=silu" in gated[0].attrs, [n.attrs for n in gated]
    counts = ops_after(m)
    assert "Mul" not in counts and counts.get("FusedMatMul", 0) == 1, counts
    np.testing.assert_allclose(m.run(feeds)["y"], ref, rtol=1e-4, atol=1e-4)
    run_levels(g, feeds)


@pytest.mark.parametrize("case", ["up_read_elsewhere", "no_gate_activation"])
def test_gate_up_pair_near_misses(case):
    """An up product also read by another node (here a graph output), or a
    Mul of two plain products, stays as it is."""
    g, feeds, ref = _mlp((3, 4), True, False, up_reader=case == "up_read_elsewhere",
                         gate_act="silu" if case == "up_read_elsewhere" else None)
    m = pg.compile(g, level=3)
    assert not _gated_nodes(m)
    np.testing.assert_allclose(m.run(feeds)["y"], ref, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="session")
def exported_models(tmp_path_factory):
    """tests/models/make_models.py's exports (one folder a session, shared
    with test_onnx_models.py)."""
    import test_onnx_models as tom
    d = tom.model_files(tmp_path_factory, tom.MAKE_MODELS, "PEREGRINE_MODELS_DIR", "onnx_models",
                        tom._missing_export_deps())
    return tom, d, tom.read_manifest(d)


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_gate_up_pair_fuses_on_exports_and_matches_ort(exported_models, name):
    """The Llama / Qwen2 torch exports at level 3: one gated FusedMatMul per
    layer, and every output still within 1e-4 of ONNX Runtime's at the
    three input shapes (batch 1 sequence 1, padded batches)."""
    import os
    tom, d, man = exported_models
    e = tom._entry(man, name, "torchscript")
    path = os.path.join(d, e["file"])
    m = pg.OnnxModel(path, level=3)
    for k in range(3):
        refs = tom.references(d, e)
        feeds = tom._feeds_of_set(d, e, k)
        want = {key.split(".", 2)[2]: a for key, a in refs.items() if key.startswith(f"set{k}.out.")}
        got = m.run(feeds)
        cm = m.compiled({n: a.shape for n, a in feeds.items()}, {n: feeds[n] for n in m._parsed.value_inputs})
        assert len(_gated_nodes(cm)) == tom.LAYERS, [n.attrs for n in _gated_nodes(cm)]
        for out_name, ref in want.items():
            err = tom.rel_err(got[out_name], ref)
            assert err <= tom.TOL, f"{name} set {k} {out_name}: relative error {err:.2e} against ORT"


# ---- attention variants ---------------------------------------------------------------------

def _attention_graph(scale_op="Div", mask=True, k_form="swap", prescale_q=False):
    B, H, S, D = 2, 3, 5, 8
    g = pg.Graph()
    g.add_input("q", (B, H, S, D))
    g.add_input("k", (B, H, S, D) if k_form == "swap" else (B, H, D, S))
    g.add_input("v", (B, H, S, D))
    if mask:
        g.add_input("mask", (B, 1, 1, S))
    q = "q"
    if prescale_q:
        g.add_node("Mul", ["q", c(g, "qs", 0.5)], ["qq"])
        q = "qq"
    if k_form == "swap":
        g.add_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2])
        kt = "kt"
    else:
        kt = "k"
    g.add_node("MatMul", [q, kt], ["s"])
    if scale_op == "Div":
        g.add_node("Div", ["s", c(g, "sc", math.sqrt(D))], ["ss"])
    elif scale_op == "Mul":
        g.add_node("Mul", [c(g, "sc", 1 / math.sqrt(D)), "s"], ["ss"])
    else:
        g.add_node("Identity", ["s"], ["ss"])
    last = "ss"
    if mask:
        g.add_node("Add", ["mask", "ss"], ["sm"])
        last = "sm"
    g.add_node("Softmax", [last], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "v"], ["o"])
    g.add_output("o")
    return g, (B, H, S, D)


@pytest.mark.parametrize("scale_op,mask,k_form,prescale", [
    ("Div", True, "swap", False),
    ("Mul", True, "ready", False),
    ("none", False, "swap", False),
    ("Div", False, "ready", True),
])
def test_attention_variants(scale_op, mask, k_form, prescale):
    g, (B, H, S, D) = _attention_graph(scale_op, mask, k_form, prescale)
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert counts == {"FusedAttention": 1}, counts
    node = pass_log(m)[-1].nodes[0]
    want_scale = (1 / math.sqrt(D) if scale_op != "none" else 1.0) * (0.5 if prescale else 1.0)
    got = float(node.attrs.split("scale=")[1].split()[0])
    assert abs(got - want_scale) < 1e-5
    assert f"k_transposed={0 if k_form == 'swap' else 1}" in node.attrs
    feeds = {"q": f32(B, H, S, D), "k": f32(B, H, S, D) if k_form == "swap" else f32(B, H, D, S),
             "v": f32(B, H, S, D)}
    if mask:
        mk = np.zeros((B, 1, 1, S), np.float32)
        mk[..., -2:] = -10000.0
        feeds["mask"] = mk
    # numpy
    k = feeds["k"] if k_form == "ready" else feeds["k"].transpose(0, 1, 3, 2)
    s = (feeds["q"].astype(np.float64) @ k) * want_scale
    if mask:
        s = s + feeds["mask"]
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(m.run(feeds)["o"], p @ feeds["v"], rtol=1e-4, atol=1e-5)
    run_levels(g, feeds)


@pytest.mark.parametrize("bias_shape,shared", [((1, 3, 5, 5), False), ((3, 1, 5), False), ((2, 3, 5, 1), False),
                                               ((1, 3, 5, 5), True)])
def test_attention_with_a_bias_and_a_mask(bias_shape, shared):
    """Add(Add(scores, bias), mask) - MPNet's relative position bias, then
    the padding mask - fuses with Add(bias, mask) as the one mask (their sum
    fits the scores [2, 3, 5, 5]); scores + bias read outside the pattern
    (a graph output here) leave it alone.  Against numpy, and level 0."""
    B, H, S, D = 2, 3, 5, 8
    g = pg.Graph()
    for name, shape in (("q", (B, H, S, D)), ("k", (B, H, S, D)), ("v", (B, H, S, D)), ("mask", (B, 1, 1, S)),
                        ("bias", bias_shape)):
        g.add_input(name, shape)
    g.add_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2])
    g.add_node("MatMul", ["q", "kt"], ["s"])
    g.add_node("Div", ["s", c(g, "sc", math.sqrt(D))], ["ss"])
    g.add_node("Add", ["ss", "bias"], ["sb"])
    g.add_node("Add", ["sb", "mask"], ["sm"])
    g.add_node("Softmax", ["sm"], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "v"], ["o"])
    g.add_output("o")
    if shared:
        g.add_output("sb")
    mk = np.zeros((B, 1, 1, S), np.float32)
    mk[1, ..., -2:] = -10000.0
    feeds = {"q": f32(B, H, S, D), "k": f32(B, H, S, D), "v": f32(B, H, S, D), "mask": mk,
             "bias": f32(*bias_shape)}
    m = pg.compile(g, level=2)
    if shared:
        assert "FusedAttention" not in ops_after(m), ops_after(m)
        return
    assert ops_after(m) == {"Add": 1, "FusedAttention": 1}, ops_after(m)
    s = (feeds["q"].astype(np.float64) @ feeds["k"].transpose(0, 1, 3, 2)) / math.sqrt(D)
    s = s + feeds["bias"] + feeds["mask"]
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(m.run(feeds)["o"], p @ feeds["v"], rtol=1e-4, atol=1e-5)
    run_levels(g, feeds)


def test_attention_not_fused_when_scores_are_an_output():
    g, (B, H, S, D) = _attention_graph()
    g.add_output("p")
    assert "FusedAttention" not in ops_after(pg.compile(g, level=2))


# ---- basic passes --------------------------------------------------------------------------

def test_constant_folding_shape_chain_and_weight_transpose():
    g = pg.Graph()
    g.add_input("x0", (2, 3, 4))
    g.add_node("Relu", ["x0"], ["x"])
    g.add_node("Shape", ["x"], ["sh"])
    g.add_node("Gather", ["sh", c(g, "i0", 0, np.int64)], ["d0"], axis=0)
    g.add_node("Unsqueeze", ["d0", c(g, "ax", [0], np.int64)], ["d0u"])
    g.add_node("Concat", ["d0u", c(g, "tail", [12], np.int64)], ["ns"], axis=0)
    g.add_node("Reshape", ["x", "ns"], ["r"])
    w = f32(5, 12)
    g.add_node("Transpose", [c(g, "wT", w)], ["w"], perm=[1, 0])      # weight stored transposed
    g.add_node("MatMul", ["r", "w"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=1)
    log = pass_log(m)
    assert log.by_name("constant_folding").op_counts() == {"Relu": 1, "Reshape": 1, "MatMul": 1}
    reasons = {x.op: x.reason for x in log.by_name("constant_folding").changes}
    assert "known from shapes" in reasons["Shape"]
    assert "constants" in reasons["Transpose"]
    x = f32(2, 3, 4)
    np.testing.assert_allclose(m.run({"x0": x})["y"], np.maximum(x, 0).reshape(2, 12) @ w.T,
                               rtol=1e-5, atol=1e-5)


def test_noop_elimination_cases():
    g = pg.Graph()
    g.add_input("x0", (2, 3, 4))
    g.add_node("Neg", ["x0"], ["x"])
    g.add_node("Transpose", ["x"], ["t1"], perm=[0, 2, 1])
    g.add_node("Transpose", ["t1"], ["t2"], perm=[0, 2, 1])          # inverse: both go
    g.add_node("Reshape", ["t2", c(g, "s_same", [2, 3, 4], np.int64)], ["r1"])   # same shape
    g.add_node("Reshape", ["r1", c(g, "s_a", [6, 4], np.int64)], ["r2"])
    g.add_node("Reshape", ["r2", c(g, "s_b", [0, 2, 2], np.int64)], ["r3"])      # 0: copy dim
    g.add_node("Cast", ["r3"], ["y0"], to=1)                           # float -> float
    g.add_node("Relu", ["y0"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=1)
    counts = ops_after(m)
    assert counts == {"Neg": 1, "Reshape": 1, "Relu": 1}, counts
    x = f32(2, 3, 4)
    np.testing.assert_allclose(m.run({"x0": x})["y"], np.maximum(-x.reshape(6, 2, 2), 0))


def test_output_fed_straight_from_an_input_keeps_its_node():
    g = pg.Graph()
    g.add_input("x", (3,))
    g.add_node("Identity", ["x"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    x = f32(3)
    np.testing.assert_array_equal(m.run({"x": x})["y"], x)


def test_cse_and_dce():
    g = pg.Graph()
    g.add_input("x", (4, 4))
    g.add_node("Mul", ["x", c(g, "k1", 3.0)], ["a"])
    g.add_node("Mul", ["x", c(g, "k2", 3.0)], ["b"])       # equal constant: same as a
    g.add_node("Exp", ["a"], ["ea"])
    g.add_node("Exp", ["b"], ["eb"])                       # then same as ea
    g.add_node("Add", ["ea", "eb"], ["y"])
    g.add_node("Neg", ["x"], ["unused"])                   # dead
    g.add_output("y")
    m = pg.compile(g, level=1)
    log = pass_log(m)
    assert log.by_name("cse").op_counts() == {"Mul": 1, "Exp": 1, "Add": 1, "Neg": 1}
    assert log.by_name("dce").op_counts() == {"Mul": 1, "Exp": 1, "Add": 1}
    assert [x.op for x in log.by_name("dce").changes] == ["Neg"]
    x = f32(4, 4)
    np.testing.assert_allclose(m.run({"x": x})["y"], 2 * np.exp(3 * x), rtol=1e-5)


def test_weight_prepack_only_at_level3():
    g = pg.Graph()
    g.add_input("x", (3, 40))
    g.add_node("MatMul", ["x", c(g, "w", f32(40, 50))], ["y"])
    g.add_output("y")
    m2, m3 = pg.compile(g, level=2), pg.compile(g, level=3)
    assert "packed" not in pass_log(m2)[-1].nodes[0].in_shapes[1]
    n3 = pass_log(m3)[-1].nodes[0]
    assert "packed" in n3.in_shapes[1]
    assert pass_log(m3).by_name("weight_prepack").changes[0].kind == "rewritten"
    run_levels(g, {"x": f32(3, 40)})


@pytest.mark.parametrize("act", ["Relu", "Gelu", None])
@pytest.mark.parametrize("n", [16, 100, 1000])
def test_one_row_on_a_packed_weight_runs_gemv_over_the_panels(act, n):
    """A decoding step at batch 1 (one row of A) against a packed weight:
    bound to gemv_panels where an assembly reader of the panel width
    exists (else SGEMM, as before), with bias and the activation after it;
    the same numbers as level 0's plain product."""
    g = pg.Graph()
    g.add_input("x", (1, 1, 77))
    w, b = f32(77, n), f32(n)
    g.add_node("MatMul", ["x", c(g, "w", w)], ["mm"])
    g.add_node("Add", ["mm", c(g, "b", b)], ["z"])
    g.add_node(act or "Identity", ["z"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    names = [k for s in m.kernels for k in s["kernels"]]
    # every SGEMM kernel's panel width has its reader (AVX-512's 32, AVX2's 16, NEON's 12)
    readers = {"f32_gemm_12x32_": "f32_gemv_panels32_", "f32_gemm_6x16_": "f32_gemv_panels16_",
               "f32_gemm_8x12_": "f32_gemv_panels12_"}
    sgemm = [v for v in names if v.startswith("f32_gemm_")]
    want = [r for s, r in readers.items() if sgemm and sgemm[0].startswith(s)]
    got = [v for v in names if v.startswith("f32_gemv_panels")]
    assert [v[:len(want[0])] for v in got] == want if want else not got, names
    x = f32(1, 1, 77)
    run_levels(g, {"x": x})
    ref = pg.compile(g, level=0).run({"x": x})["y"]
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-5, atol=1e-5)


def test_shared_weight_read_as_activation_is_not_packed():
    g = pg.Graph()
    g.add_input("x", (8, 8))
    g.add_node("MatMul", ["x", c(g, "w", f32(8, 8))], ["y0"])
    g.add_node("Add", ["y0", "w"], ["y"])          # w also read elementwise: must stay row-major
    g.add_output("y")
    m = pg.compile(g, level=3)
    assert all("packed" not in s for n in pass_log(m)[-1].nodes for s in n.in_shapes)
    run_levels(g, {"x": f32(8, 8)})


def test_cse_keeps_twin_graph_outputs_apart():
    g = pg.Graph()
    g.add_input("x", (3, 3))
    g.add_node("Exp", ["x"], ["a"])
    g.add_node("Exp", ["x"], ["b"])
    g.add_output("a")
    g.add_output("b")
    m = pg.compile(g, level=3)
    assert ops_after(m) == {"Exp": 2}
    x = f32(3, 3)
    out = m.run({"x": x})
    np.testing.assert_allclose(out["a"], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(out["b"], np.exp(x), rtol=1e-6)


# ---- the exporters' forms (torch.onnx.export, TorchScript and dynamo) ------------------------
# Each pattern as transformers 5 exports it fuses; a near miss (a wrong constant, axis or shape)
# stays unfused, and every level gives the same numbers as level 0.

def _exported_attention(guard=0.0, k_form="ts", kscale=None, merge="rows3", B=2, H=3, S=5, D=8):
    """Q, K, V from [B,S,H*D] projections, each split into heads; Q and K each
    multiplied by sqrt(1/sqrt(D)) (kscale: K's factor instead, a scalar or an
    array); K^T as Transpose(0,2,3,1) ("ts") or Reshape/Transpose(0,2,1)/Reshape
    ("dynamo", or "dynamo_bad": Transpose(1,0,2)); an additive float mask from
    Where(bool, 0, finfo.min); Softmax; Where(IsNaN(P), guard, P) (guard None:
    no guard); P.V; the head merge to [B,S,H*D] ("rows3") or [B*S,H*D] ("rows2")."""
    g = pg.Graph()
    for n in ("xq", "xk", "xv"):
        g.add_input(n, (B, S, H * D))
    g.add_input("keep", (B, 1, 1, S), np.bool_)
    g.add_node("Where", ["keep", c(g, "zero", [0.0]), c(g, "fmin", [np.finfo(np.float32).min])], ["mask"])
    hs = c(g, "hs", [B, S, H, D], np.int64)
    for n in ("q", "k", "v"):
        g.add_node("Reshape", ["x" + n, hs], [n + "4"])
    g.add_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3])
    g.add_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3])
    if k_form == "ts":
        g.add_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1])
    else:
        g.add_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 1, 3])
        g.add_node("Reshape", ["kh", c(g, "k3", [B * H, S, D], np.int64)], ["k3r"])
        if k_form == "dynamo":
            g.add_node("Transpose", ["k3r"], ["k3t"], perm=[0, 2, 1])
        else:
            g.add_node("Transpose", ["k3r"], ["k3t"], perm=[1, 0, 2])
        g.add_node("Reshape", ["k3t", c(g, "k4s", [B, H, D, S], np.int64)], ["kt"])
    sq = float(D) ** -0.25
    g.add_node("Mul", ["qh", c(g, "sq", sq)], ["qs"])
    g.add_node("Mul", ["kt", c(g, "sk", sq if kscale is None else kscale)], ["ks"])
    g.add_node("MatMul", ["qs", "ks"], ["s"])
    g.add_node("Add", ["s", "mask"], ["sm"])
    g.add_node("Softmax", ["sm"], ["p"], axis=-1)
    pp = "p"
    if guard is not None:
        g.add_node("IsNaN", ["p"], ["nan"])
        g.add_node("Where", ["nan", c(g, "guard", [guard]), "p"], ["pg"])
        pp = "pg"
    g.add_node("MatMul", [pp, "vh"], ["o"])
    g.add_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3])
    shape = [B, S, H * D] if merge == "rows3" else [B * S, H * D]
    g.add_node("Reshape", ["ot", c(g, "ms", shape, np.int64)], ["y"])
    g.add_output("y")
    feeds = {n: f32(B, S, H * D) for n in ("xq", "xk", "xv")}
    keep = np.ones((B, 1, 1, S), np.bool_)
    keep[1, ..., -2:] = False
    feeds["keep"] = keep
    return g, feeds


def _attention_ref(feeds, B=2, H=3, S=5, D=8, kscale=None):
    q, k, v = (feeds[n].astype(np.float64).reshape(B, S, H, D).transpose(0, 2, 1, 3) for n in ("xq", "xk", "xv"))
    sq = float(D) ** -0.25
    kt = k.transpose(0, 1, 3, 2) * (sq if kscale is None else np.asarray(kscale, np.float64))
    s = (q * sq) @ kt + np.where(feeds["keep"], 0.0, np.finfo(np.float32).min)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(B, S, H * D)


@pytest.mark.parametrize("k_form, merge", [("ts", "rows3"), ("dynamo", "rows3"), ("ts", "rows2")])
def test_exported_attention_fuses_to_bshd(k_form, merge):
    g, feeds = _exported_attention(k_form=k_form, merge=merge)
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    # the mask's Where stays; with [B*S, H*D] rows one Reshape (a view) flattens the fused output
    want = {"FusedAttention": 1, "Where": 1}
    if merge == "rows2":
        want["Reshape"] = 1
    assert counts == want, counts
    node = next(n for n in pass_log(m)[-1].nodes if n.op == "FusedAttention")
    assert "qkv_layout=bshd" in node.attrs and "nan_to_zero=1" in node.attrs, node.attrs
    got = float(node.attrs.split("scale=")[1].split()[0])
    assert abs(got - 8 ** -0.5) < 1e-6, got
    ref = _attention_ref(feeds)
    out = m.run(feeds)["y"]
    np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-4, atol=1e-5)
    run_levels(g, feeds)


def test_exported_attention_guard_turns_a_fully_masked_row_to_zeros():
    """Where(IsNaN(P), 0, P) after the softmax, absorbed: a row whose every key
    is masked with -inf gives zeros, as the unfused graph does."""
    B, H, S, D = 1, 2, 4, 8
    g = pg.Graph()
    for n in ("q", "k", "v"):
        g.add_input(n, (B, H, S, D))
    g.add_input("mask", (B, 1, S, S))
    g.add_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2])
    g.add_node("MatMul", ["q", "kt"], ["s"])
    g.add_node("Add", ["s", "mask"], ["sm"])
    g.add_node("Softmax", ["sm"], ["p"], axis=-1)
    g.add_node("IsNaN", ["p"], ["nan"])
    g.add_node("Where", ["nan", c(g, "zero", 0.0), "p"], ["pg"])
    g.add_node("MatMul", ["pg", "v"], ["o"])
    g.add_output("o")
    mask = np.zeros((B, 1, S, S), np.float32)
    mask[..., 2, :] = -np.inf
    feeds = {"q": f32(B, H, S, D), "k": f32(B, H, S, D), "v": f32(B, H, S, D), "mask": mask}
    m = pg.compile(g, level=2)
    assert ops_after(m) == {"FusedAttention": 1}
    out = m.run(feeds)["o"]
    assert np.all(out[:, :, 2] == 0) and np.isfinite(out).all()
    l0 = pg.compile(g, level=0).run(feeds)["o"]
    np.testing.assert_allclose(out, l0, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant", ["guard_one", "kscale_array", "dynamo_bad_perm"])
def test_exported_attention_near_misses(variant):
    """A guard writing 1 instead of 0 is not the exporters' guard: nothing
    fuses.  K scaled by an array (not a scalar) or a K^T chain with another
    Transpose: the attention fuses without absorbing them, reading their
    result as K^T.  Every level agrees with level 0 and numpy."""
    B, H, S, D = 2, 3, 5, 8
    kw = {"guard_one": dict(guard=1.0), "kscale_array": dict(kscale=f32(D, S) + 2.0),
          "dynamo_bad_perm": dict(k_form="dynamo_bad")}[variant]
    g, feeds = _exported_attention(**kw)
    counts = ops_after(pg.compile(g, level=2))
    if variant == "guard_one":
        assert "FusedAttention" not in counts and counts["Softmax"] == 1, counts
    else:
        assert counts["FusedAttention"] == 1, counts
        node_attrs = [n.attrs for n in pass_log(pg.compile(g, level=2))[-1].nodes if n.op == "FusedAttention"][0]
        assert "k_transposed=1" in node_attrs and "bshd" not in node_attrs, node_attrs
        if variant == "kscale_array":
            assert counts["Mul"] == 1, counts
            np.testing.assert_allclose(pg.compile(g, level=2).run(feeds)["y"],
                                       _attention_ref(feeds, kscale=kw["kscale"]), rtol=1e-4, atol=1e-5)
        else:
            assert counts["Transpose"] >= 1, counts
    run_levels(g, feeds)


@pytest.mark.parametrize("one, fuses", [(1.0, True), (2.0, False)])
def test_rmsnorm_torchscript_form(one, fuses):
    """TorchScript's RMSNorm: Pow/ReduceMean/Add/Sqrt/Div(1, .)/Mul(x, .)/Mul(w, .);
    a Div of 2 by the root is no reciprocal and stays."""
    g = pg.Graph()
    g.add_input("x", (2, 5, 24))
    g.add_node("Pow", ["x", c(g, "two", 2.0)], ["p"])
    g.add_node("ReduceMean", ["p"], ["ms"], axes=[-1])
    g.add_node("Add", ["ms", c(g, "eps", 1e-6)], ["mse"])
    g.add_node("Sqrt", ["mse"], ["s"])
    g.add_node("Div", [c(g, "one", one), "s"], ["r"])
    g.add_node("Mul", ["x", "r"], ["n"])
    w = f32(24)
    g.add_node("Mul", [c(g, "w", w), "n"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=2)
    assert (ops_after(m) == {"RMSNorm": 1}) == fuses, ops_after(m)
    x = f32(2, 5, 24)
    ref = one * x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-5)
    run_levels(g, {"x": x})


@pytest.mark.parametrize("axis, extra_reader, fuses", [(-1, False, True), (2, False, True), (1, False, False),
                                                       (-1, True, False)])
def test_split_of_one_product_becomes_qkv(axis, extra_reader, fuses):
    """GPT-2's c_attn: one product + bias, Split of the last axis into three ->
    QKVMatMul; a Split of another axis, or a product read elsewhere too, stays."""
    g = pg.Graph()
    g.add_input("x", (2, 6, 16))
    w, b = f32(16, 48), f32(48)
    g.add_node("MatMul", ["x", c(g, "w", w)], ["z"])
    g.add_node("Add", ["z", c(g, "b", b)], ["zb"])
    sizes = [16, 16, 16] if axis in (-1, 2) else [2, 2, 2]
    if axis == 1:
        sizes = [1, 2, 3]
    g.add_node("Split", ["zb", c(g, "sp", sizes, np.int64)], ["q", "k", "v"], axis=axis)
    outs = ["q", "k", "v"]
    if extra_reader:
        g.add_node("Relu", ["zb"], ["r"])
        outs.append("r")
    for o in outs:
        g.add_output(o)
    m = pg.compile(g, level=3)
    counts = ops_after(m)
    assert (counts.get("QKVMatMul", 0) == 1 and "Split" not in counts) == fuses, counts
    x = f32(2, 6, 16)
    ref = x.astype(np.float64) @ w + b
    got = m.run({"x": x})
    for o, part in zip(("q", "k", "v"), np.split(ref, np.cumsum(sizes)[:-1], axis=axis)):
        np.testing.assert_allclose(got[o], part, rtol=1e-4, atol=1e-4)
    run_levels(g, {"x": x})


@pytest.mark.parametrize("out_shape, fuses", [((2, 6, 24), True), ((6, 2, 24), False)])
def test_gemm_on_flattened_rows_takes_them_unflattened(out_shape, fuses):
    """Reshape [B,S,K] -> [B*S,K] -> Gemm -> Reshape [B,S,N] -> Gelu (TorchScript's
    Linear, GPT-2's Conv1D): one FusedMatMul on the rows with the GELU in its
    epilogue.  Unflattened to another shape ([S,B,N]) it stays a 2-D product
    with its Reshapes, and the Gelu is left alone."""
    g = pg.Graph()
    g.add_input("x", (2, 6, 16))
    w, b = f32(16, 24), f32(24)
    g.add_node("Reshape", ["x", c(g, "flat", [12, 16], np.int64)], ["x2"])
    g.add_node("Gemm", ["x2", c(g, "w", w), c(g, "b", b)], ["z2"])
    g.add_node("Reshape", ["z2", c(g, "back", list(out_shape), np.int64)], ["z"])
    g.add_node("Gelu", ["z"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=3)
    counts = ops_after(m)
    assert (counts == {"FusedMatMul": 1}) == fuses, counts
    if fuses:
        assert "activation=gelu" in pass_log(m)[-1].nodes[0].attrs
    else:
        assert counts["Gelu"] == 1 and counts["Reshape"] == 2, counts
    x = f32(2, 6, 16)
    z = (x.reshape(12, 16).astype(np.float64) @ w + b).reshape(out_shape)
    from math import erf
    ref = 0.5 * z * (1 + np.vectorize(erf)(z / math.sqrt(2)))
    np.testing.assert_allclose(m.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-4)
    run_levels(g, {"x": x})


@pytest.mark.parametrize("case", ["causal_fmin", "padding_neg_inf", "fully_masked_row", "huge_score_in_tail",
                                  "nan_in_tail"])
def test_attention_masked_tail_matches_unfused(case):
    """FusedAttention stops a row's softmax before a tail of keys that are
    masked off for sure (mask <= -1e30 and a bounded score): the same numbers
    as the unfused graph whatever the tail holds - a causal finfo.min mask,
    -inf padding, a fully masked row (near-uniform, not zeros), a tail score
    too large to drop, or a NaN in the tail (the whole row is NaN either way)."""
    B, H, S, D = 2, 2, 16, 8
    g = pg.Graph()
    for n in ("q", "k", "v"):
        g.add_input(n, (B, H, S, D))
    g.add_input("mask", (B, 1, S, S))
    g.add_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2])
    g.add_node("MatMul", ["q", "kt"], ["s"])
    g.add_node("Mul", ["s", c(g, "sc", 1 / math.sqrt(D))], ["ss"])
    g.add_node("Add", ["ss", "mask"], ["sm"])
    g.add_node("Softmax", ["sm"], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "v"], ["o"])
    g.add_output("o")
    fmin = np.finfo(np.float32).min
    mask = np.zeros((B, 1, S, S), np.float32)
    q, k, v = f32(B, H, S, D), f32(B, H, S, D), f32(B, H, S, D)
    if case == "causal_fmin":
        mask[:] = np.triu(np.full((S, S), fmin, np.float32), 1)
    elif case == "padding_neg_inf":
        mask[1, ..., 11:] = -np.inf
    elif case == "fully_masked_row":
        mask[:] = np.triu(np.full((S, S), fmin, np.float32), 1)
        mask[0, 0, 3, :] = fmin
    elif case == "huge_score_in_tail":
        mask[:] = np.triu(np.full((S, S), fmin, np.float32), 1)
        k[0, 0, 12] *= 1e30
    else:
        mask[:] = np.triu(np.full((S, S), fmin, np.float32), 1)
        k[1, 1, 14, 0] = np.nan
    feeds = {"q": q, "k": k, "v": v, "mask": mask}
    m = pg.compile(g, level=2)
    assert ops_after(m) == {"FusedAttention": 1}
    got, ref = m.run(feeds)["o"], pg.compile(g, level=0).run(feeds)["o"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(ref), rtol=1e-4, atol=1e-5)


def _rotary_graph(variant="exact", B=2, H=3, S=5, D=8):
    """apply_rotary_pos_emb as exported: X*cos + Concat(-X[..,D/2:], X[..,:D/2])*sin
    with cos/sin constants [1,1,S,D] (what Range/Einsum/Cos/Sin fold into)."""
    g = pg.Graph()
    g.add_input("x", (B, H, S, D))
    if variant == "cos_input":
        g.add_input("cos", (1, 1, S, D))
        cos = "cos"
    else:
        cos = c(g, "cos", np.cos(f32(1, 1, S, D)))
    sin = c(g, "sin", np.sin(f32(1, 1, S, D)))
    h = D // 2
    lo_end = h + 1 if variant == "bad_split" else h
    big = np.iinfo(np.int64).max
    g.add_node("Mul", ["x", cos], ["a"])
    g.add_node("Slice", ["x", c(g, "z", [0], np.int64), c(g, "h1", [lo_end], np.int64), c(g, "ax", [-1], np.int64),
                         c(g, "one", [1], np.int64)], ["x1"])
    g.add_node("Slice", ["x", c(g, "h2", [lo_end], np.int64), c(g, "e", [big], np.int64), "ax", "one"], ["x2"])
    g.add_node("Neg", ["x2"], ["n2"])
    g.add_node("Concat", ["x1", "n2"] if variant == "swapped" else ["n2", "x1"], ["rh"], axis=-1)
    g.add_node("Mul", ["rh", sin], ["b"])
    g.add_node("Add", ["b", "a"], ["y"])
    g.add_output("y")
    return g


def _rotary_ref(x, cos, sin, h):
    rh = np.concatenate([-x[..., h:], x[..., :h]], -1)
    return x * cos + rh * sin


@pytest.mark.parametrize("variant, fuses", [("exact", True), ("swapped", False), ("bad_split", False),
                                            ("cos_input", False)])
def test_rotary_embedding_fuses_only_when_exact(variant, fuses):
    """The exported rotate_half rotary -> one Rotary node; the halves
    concatenated the other way round, a split off the middle (D/2 + 1) or a
    cos fed at run time (not a folded constant) stay unfused.  Every level
    gives level 0's numbers."""
    B, H, S, D = 2, 3, 5, 8
    g = _rotary_graph(variant, B, H, S, D)
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert (counts == {"Rotary": 1}) == fuses, counts
    x = f32(B, H, S, D)
    feeds = {"x": x}
    if variant == "cos_input":
        feeds["cos"] = np.cos(f32(1, 1, S, D))
    out = m.run(feeds)["y"]
    # the fused node computes the same float operations as the seven it replaces
    np.testing.assert_allclose(out, pg.compile(g, level=0).run(feeds)["y"], rtol=1e-6, atol=1e-6)
    run_levels(g, feeds)


def test_rotary_against_numpy_and_in_a_bigger_shape():
    """Rotary against numpy directly, with cos/sin broadcasting over batch and
    heads and D = 64 (Llama's head size)."""
    B, H, S, D = 3, 4, 7, 64
    rng = np.random.default_rng(3)
    cos = np.cos(rng.standard_normal((1, 1, S, D))).astype(np.float32)
    sin = np.sin(rng.standard_normal((1, 1, S, D))).astype(np.float32)
    g = pg.Graph()
    g.add_input("x", (B, H, S, D))
    g.add_node("Rotary", ["x", c(g, "cos", cos), c(g, "sin", sin)], ["y"])
    g.add_output("y")
    x = f32(B, H, S, D)
    for lvl in (0, 3):
        got = pg.compile(g, level=lvl).run({"x": x})["y"]
        np.testing.assert_allclose(got, _rotary_ref(x.astype(np.float64), cos, sin, D // 2), rtol=1e-5, atol=1e-6)
    g2 = pg.Graph()
    g2.add_input("x", (2, 5))
    g2.add_node("Rotary", ["x", c(g2, "cos", np.ones((2, 5), np.float32)), c(g2, "sin", np.ones((2, 5), np.float32))],
                ["y"])
    g2.add_output("y")
    with pytest.raises(pg.ShapeError, match="even last dim"):
        pg.compile(g2, level=0)


@pytest.mark.parametrize("axis, absorbed", [(2, True), (3, False)])
def test_grouped_query_attention_repeat_kv_is_absorbed(axis, absorbed):
    """transformers' repeat_kv (Unsqueeze(2) -> Expand -> Reshape of K and V
    from Hkv heads to H): FusedAttention reads the Hkv heads directly.
    Unsqueezed at axis 3 instead (heads and positions interleaved: not a
    head repeat) it is left as copies, and the attention still agrees."""
    B, H, Hkv, S, D = 2, 4, 2, 5, 8
    grp = H // Hkv
    g = pg.Graph()
    g.add_input("q", (B, H, S, D))
    g.add_input("k", (B, Hkv, S, D))
    g.add_input("v", (B, Hkv, S, D))
    ax = c(g, "ax", [axis], np.int64)
    e5 = [B, Hkv, grp, S, D] if axis == 2 else [B, Hkv, S, grp, D]
    for n in ("k", "v"):
        g.add_node("Unsqueeze", [n, ax], [n + "5"])
        g.add_node("Expand", [n + "5", c(g, n + "e", e5, np.int64)], [n + "x"])
        g.add_node("Reshape", [n + "x", c(g, n + "r", [B, H, S, D], np.int64)], [n + "r4"])
    g.add_node("Transpose", ["kr4"], ["kt"], perm=[0, 1, 3, 2])
    g.add_node("MatMul", ["q", "kt"], ["s"])
    g.add_node("Mul", ["s", c(g, "sc", 1 / math.sqrt(D))], ["ss"])
    g.add_node("Softmax", ["ss"], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "vr4"], ["o"])
    g.add_output("o")
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert counts["FusedAttention"] == 1, counts
    assert ("Expand" not in counts) == absorbed, counts
    feeds = {"q": f32(B, H, S, D), "k": f32(B, Hkv, S, D), "v": f32(B, Hkv, S, D)}
    if absorbed:
        k = np.repeat(feeds["k"], grp, axis=1).astype(np.float64)
        v = np.repeat(feeds["v"], grp, axis=1)
        s = feeds["q"] @ k.transpose(0, 1, 3, 2) / math.sqrt(D)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        np.testing.assert_allclose(m.run(feeds)["o"], p @ v, rtol=1e-4, atol=1e-5)
    run_levels(g, feeds)


@pytest.mark.parametrize("per_head_cos", [False, True])
def test_rotary_on_the_head_split_moves_before_the_transpose(per_head_cos):
    """Llama's Q: rows [B,S,H*D] -> Reshape -> Transpose(0,2,1,3) -> rotary ->
    attention.  The rotation moves before the Transpose (cos/sin as
    [S,1,D]), so the attention reads the rotated rows in place (bshd) and no
    Transpose is left.  A cos that varies by head cannot move: the Rotary
    stays on the head layout and the attention keeps it."""
    B, H, S, D = 2, 3, 5, 8
    g = pg.Graph()
    g.add_input("xq", (B, S, H * D))
    g.add_input("xk", (B, S, H * D))
    g.add_input("xv", (B, S, H * D))
    hs = c(g, "hs", [B, S, H, D], np.int64)
    cos = np.cos(f32(1, H if per_head_cos else 1, S, D))
    sin = np.sin(f32(1, H if per_head_cos else 1, S, D))
    c(g, "cos", cos)
    c(g, "sin", sin)
    ax, one, z = c(g, "ax", [-1], np.int64), c(g, "one", [1], np.int64), c(g, "z", [0], np.int64)
    hh, big = c(g, "hh", [D // 2], np.int64), c(g, "big", [np.iinfo(np.int64).max], np.int64)
    for n in ("q", "k", "v"):
        g.add_node("Reshape", ["x" + n, hs], [n + "4"])
        g.add_node("Transpose", [n + "4"], [n + "h"], perm=[0, 2, 1, 3])
    for n in ("q", "k"):
        x = n + "h"
        g.add_node("Mul", [x, "cos"], [n + "a"])
        g.add_node("Slice", [x, z, hh, ax, one], [n + "1"])
        g.add_node("Slice", [x, hh, big, ax, one], [n + "2"])
        g.add_node("Neg", [n + "2"], [n + "n"])
        g.add_node("Concat", [n + "n", n + "1"], [n + "rh"], axis=-1)
        g.add_node("Mul", [n + "rh", "sin"], [n + "b"])
        g.add_node("Add", [n + "a", n + "b"], [n + "r"])
    g.add_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2])
    g.add_node("MatMul", ["qr", "kt"], ["s"])
    g.add_node("Mul", ["s", c(g, "sc", 1 / math.sqrt(D))], ["ss"])
    g.add_node("Softmax", ["ss"], ["p"], axis=-1)
    g.add_node("MatMul", ["p", "vh"], ["o"])
    g.add_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3])
    g.add_node("Reshape", ["ot", c(g, "ms", [B, S, H * D], np.int64)], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=2)
    counts = ops_after(m)
    assert counts["Rotary"] == 2 and counts["FusedAttention"] == 1, counts
    node = next(n for n in pass_log(m)[-1].nodes if n.op == "FusedAttention")
    assert ("bshd" in node.attrs) == (not per_head_cos), node.attrs
    assert ("Transpose" not in counts) == (not per_head_cos), counts
    feeds = {n: f32(B, S, H * D) for n in ("xq", "xk", "xv")}
    q, k, v = (feeds[n].astype(np.float64).reshape(B, S, H, D).transpose(0, 2, 1, 3) for n in ("xq", "xk", "xv"))
    q, k = (_rotary_ref(t, cos, sin, D // 2) for t in (q, k))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ref = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, H * D)
    np.testing.assert_allclose(m.run(feeds)["y"], ref, rtol=1e-4, atol=1e-5)
    run_levels(g, feeds)


def test_one_input_concat_is_removed_and_the_past_is_read_in_place():
    """A Concat of one input (the GPT-2 TorchScript export concatenates
    past_key_0 alone before the first layer) is a copy: noop_elimination
    bypasses it; the result is the same as at level 0."""
    g = pg.Graph()
    g.add_input("past", (2, 3, 5))
    g.add_input("new", (2, 3, 1))
    g.add_node("Concat", ["past"], ["p"], axis=-1)
    g.add_node("Concat", ["p", "new"], ["y"], axis=-1)
    g.add_node("Concat", ["new"], ["z"], axis=0)       # a graph output fed by an input: kept
    g.add_output("y")
    g.add_output("z")
    m = pg.compile(g, level=1)
    ch = pass_log(m)[[p.name for p in pass_log(m)].index("noop_elimination")].changes
    assert [(x.kind, x.op) for x in ch] == [("removed", "Concat")]
    assert "Concat of one input" in ch[0].reason
    assert m.op_types == ["Concat", "Concat"]
    rng = np.random.default_rng(3)
    f = {"past": rng.standard_normal((2, 3, 5)).astype(np.float32),
         "new": rng.standard_normal((2, 3, 1)).astype(np.float32)}
    got, want = m.run(f), pg.compile(g, level=0).run(f)
    np.testing.assert_array_equal(got["y"], np.concatenate([f["past"], f["new"]], axis=-1))
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_array_equal(got["z"], f["new"])
