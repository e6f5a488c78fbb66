"""The graph ops added for exported transformer graphs (Range, Einsum,
Pad, TopK, ...), beyond what the ONNX backend cases check: shape-only
subgraphs folded at compile time for the bound shapes, Einsum's forms and
its refusals, NonZero's refusal, and errors that name the node - at level 0
(the graph as built) and level 3 (after the passes)."""
from __future__ import annotations

import numpy as np
import pytest

import peregrine_nb as pg

rng = np.random.default_rng(7)
LEVELS = [0, 3]


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def build(nodes, inputs=None, inits=None, outputs=("y",)):
    """nodes: (op, inputs, outputs, attrs[, name]); inputs: name -> array
    (fed), inits: name -> array (constants)."""
    g = pg.Graph()
    for k, v in (inputs or {}).items():
        g.add_input(k, v.shape, v.dtype)
    for k, v in (inits or {}).items():
        g.add_initializer(k, v)
    for n in nodes:
        op, ins, outs, attrs = n[:4]
        g.add_node(op, ins, outs, name=n[4] if len(n) > 4 else None, **attrs)
    for o in outputs:
        g.add_output(o)
    return g


def run(nodes, inputs=None, inits=None, outputs=("y",), level=0):
    m = pg.compile(build(nodes, inputs, inits, outputs), level=level)
    res = m.run(dict(inputs or {}))
    return [res[o] for o in outputs], m


# ---- shape-only subgraphs fold at compile time -----------------------------

def _shape_chain():
    """x [B, S, D] -> positions 0..S-1 from its shape (Shape -> Gather ->
    Range), a causal mask from them (Unsqueeze, LessOrEqual -> Where), the
    row count from CumSum/Max/Min on int64 shape values, used as Reshape's
    and Tile's compile-time inputs."""
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        ("Shape", ["x"], ["s"], {}),
        ("Gather", ["s", "one"], ["seq"], {"axis": 0}),                 # S, a scalar
        ("Range", ["zero", "seq", "one"], ["pos"], {}),                  # [0..S-1]
        ("CumSum", ["pos", "zero"], ["cum"], {}),                        # triangular numbers
        ("ReduceMax", ["cum"], ["cmax"], {"keepdims": 1}),               # [S(S-1)/2]
        ("Max", ["seq", "one"], ["smax"], {}),
        ("Min", ["smax", "big"], ["smin"], {}),                          # still S
        ("Unsqueeze", ["smin", "zero1"], ["s1"], {}),
        ("Equal", ["s1", "s1"], ["eq"], {}),
        ("Where", ["eq", "s1", "neg"], ["rows"], {}),                    # [S]
        ("Concat", ["rows", "minus1"], ["tgt"], {"axis": 0}),
        ("Reshape", ["x", "tgt"], ["flat"], {}),                         # [S, B*D]
        ("Unsqueeze", ["pos", "zero1"], ["prow"], {}),
        ("Unsqueeze", ["pos", "one1"], ["pcol"], {}),
        ("LessOrEqual", ["prow", "pcol"], ["causal"], {}),               # [S, S] bool
        ("Size", ["causal"], ["ncell"], {}),
        ("Concat", ["one1", "cmax"], ["reps"], {"axis": 0}),
        ("Tile", ["flat", "reps"], ["tiled"], {}),                       # [S, B*D*S(S-1)/2]
        ("Cast", ["causal"], ["cf"], {"to": 1}),
        ("MatMul", ["cf", "flat"], ["y"], {}),                           # causal prefix sums
    ]
    inits = {"zero": i64(0).reshape(()), "one": i64(1).reshape(()), "big": i64(1 << 40).reshape(()),
             "zero1": i64(0), "one1": i64(1), "neg": i64(-7), "minus1": i64(-1)}
    return nodes, inits


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 9, 4)])
def test_shape_range_chain_folds_at_compile_time(shape, level):
    nodes, inits = _shape_chain()
    x = f32(*shape)
    (y, tiled, ncell), m = run(nodes, {"x": x}, inits, outputs=("y", "tiled", "ncell"), level=level)
    B, S, D = shape
    flat = x.reshape(S, -1)
    np.testing.assert_allclose(y, np.tril(np.ones((S, S), np.float32)) @ flat, rtol=1e-5, atol=1e-5)
    assert tiled.shape == (S, flat.shape[1] * (S * (S - 1) // 2))
    assert int(ncell) == S * S
    if level == 3:
        # every int64 op on shapes ran at compile time; what runs is the data path
        ops = m.op_types
        for op in ("Shape", "Gather", "Range", "CumSum", "ReduceMax", "Max", "Min", "Equal",
                   "Where", "Concat", "LessOrEqual"):
            assert op not in ops, (op, ops)


def test_range_folds_where_its_limit_comes_from_a_shape():
    """Range's inputs are value inputs: known from the bound shape, not fed."""
    i64 = lambda v: np.array(v, np.int64).reshape(())  # noqa: E731
    nodes = [("Shape", ["x"], ["s"], {"start": 1, "end": 2}),
             ("Squeeze", ["s"], ["n"], {}),
             ("Range", ["a", "n", "d"], ["r"], {}),
             ("Cast", ["r"], ["rf"], {"to": 1}),
             ("Add", ["x", "rf"], ["y"], {})]
    for n in (3, 8):
        x = f32(2, n)
        (y,), _ = run(nodes, {"x": x}, {"a": i64(0), "d": i64(1)})
        np.testing.assert_allclose(y, x + np.arange(n, dtype=np.float32))


# ---- NonZero ---------------------------------------------------------------------

def test_nonzero_of_runtime_data_is_refused_naming_the_node():
    nodes = [("Relu", ["x"], ["r"], {}), ("NonZero", ["r"], ["y"], {}, "where_nonzero")]
    with pytest.raises(pg.UnsupportedError, match=r"where_nonzero.*depends on data at run time"):
        pg.compile(build(nodes, {"x": f32(3, 4)}), level=0)


@pytest.mark.parametrize("level", LEVELS)
def test_nonzero_of_a_constant_and_of_shape_values(level):
    c = np.array([[0, 2, 0], [3, 0, 4]], np.float32)
    nodes = [("NonZero", ["c"], ["nz"], {}),
             ("Shape", ["x"], ["s"], {}), ("Sub", ["s", "two"], ["d"], {}),   # [0, 3, 1]
             ("NonZero", ["d"], ["nz2"], {}),
             ("Relu", ["x"], ["y"], {})]
    x = f32(2, 5, 3)
    (nz, nz2, _), _ = run(nodes, {"x": x}, {"c": c, "two": np.array([2, 2, 2], np.int64)},
                          outputs=("nz", "nz2", "y"), level=level)
    np.testing.assert_array_equal(nz, np.array(np.nonzero(c)))
    np.testing.assert_array_equal(nz2, np.array([[1, 2]]))


# ---- Einsum ------------------------------------------------------------------------

EINSUM_FORMS = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 5), (2, 3, 5, 8)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 2)]),   # batch dims broadcast
    ("...ij,...jk->...ik", [(4, 5), (5, 2)]),            # `...` of no dims
    ("ij->ji", [(3, 7)]),
    ("ij->i", [(3, 7)]),
    ("ij->", [(3, 7)]),
    ("ii->i", [(4, 4)]),                                 # a diagonal
    ("bii->b", [(2, 4, 4)]),                             # a batched trace
    ("ij,jk", [(3, 4), (4, 5)]),                         # implicit output: ik
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bsh,hd->bsd", [(2, 3, 8), (8, 4)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    (" b h q d , b h k d -> b h q k ", [(1, 2, 3, 4), (1, 2, 5, 4)]),   # spaces
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("eq,shapes", EINSUM_FORMS)
def test_einsum_forms(eq, shapes, level):
    ins = {f"x{i}": f32(*s) for i, s in enumerate(shapes)}
    (y,), _ = run([("Einsum", list(ins), ["y"], {"equation": eq})], ins, level=level)
    ref = np.einsum(eq.replace(" ", ""), *[v.astype(np.float64) for v in ins.values()])
    assert y.shape == ref.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_einsum_int64_and_float64():
    a = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    b = rng.integers(-5, 5, (4, 2)).astype(np.int64)
    (y,), _ = run([("Einsum", ["a", "b"], ["y"], {"equation": "ij,jk->ik"})], {"a": a, "b": b})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, a @ b)
    a = rng.standard_normal((3, 4))
    (y,), _ = run([("Einsum", ["a"], ["y"], {"equation": "ij->j"})], {"a": a})
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, a.sum(0), rtol=1e-12)


@pytest.mark.parametrize("eq,shapes,err,msg", [
    ("abcde,fghij->a", [(1, 1, 1, 1, 1)] * 2, pg.UnsupportedError, "more than 8 labels"),
    ("ij,jk->ik", [(2, 3)], pg.GraphError, "more terms"),
    ("ij->k", [(2, 3)], pg.GraphError, "output label 'k'"),
    ("ij->ii", [(2, 3)], pg.GraphError, "appears twice"),
    ("i$j->i", [(2, 3)], pg.GraphError, "not a label"),
    ("ij,jk->ik", [(2, 3), (4, 5)], pg.ShapeError, "label 'j' has sizes 3 and 4"),
    ("ijk->i", [(2, 3)], pg.ShapeError, "3 labels"),
    ("ab...,cd...->abcd...", [(1,) * 8] * 2, pg.UnsupportedError, "output rank above 8"),
])
def test_einsum_refusals_name_the_node(eq, shapes, err, msg):
    ins = {f"x{i}": f32(*s) for i, s in enumerate(shapes)}
    with pytest.raises(err, match=f"the_einsum.*{msg}"):
        pg.compile(build([("Einsum", list(ins), ["y"], {"equation": eq}, "the_einsum")], ins), level=0)


# ---- numpy checks of the other new ops on bigger inputs ---------------------------

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode, level):
    x = f32(3, 4, 5)
    pads = np.array([1, 0, 2, 2, 3, 1], np.int64)       # begin per axis, then end
    inits = {"p": pads, "v": np.array(1.5, np.float32)}
    ins = ["x", "p", "v"] if mode == "constant" else ["x", "p"]
    (y,), _ = run([("Pad", ins, ["y"], {"mode": mode})], {"x": x}, inits, level=level)
    width = list(zip(pads[:3], pads[3:]))
    kw = {"constant_values": 1.5} if mode == "constant" else {}
    np.testing.assert_array_equal(y, np.pad(x, width, mode=mode, **kw))


def test_pad_negative_crops_and_axes():
    x = f32(4, 6)
    (y,), _ = run([("Pad", ["x", "p", "", "a"], ["y"], {"mode": "constant"})], {"x": x},
                  {"p": np.array([-1, 2], np.int64), "a": np.array([1], np.int64)})
    np.testing.assert_array_equal(y, np.pad(x[:, 1:], [(0, 0), (0, 2)]))


@pytest.mark.parametrize("level", LEVELS)
def test_topk_argmax_tiles_and_ties(level):
    x = rng.integers(0, 20, (4, 300)).astype(np.float32)   # many ties
    (v, i), _ = run([("TopK", ["x", "k"], ["v", "i"], {"axis": -1, "largest": 1, "sorted": 1})],
                    {"x": x}, {"k": np.array([17], np.int64)}, outputs=("v", "i"), level=level)
    order = np.lexsort((np.arange(300)[None].repeat(4, 0), -x), axis=-1)[:, :17]  # value desc, index asc
    np.testing.assert_array_equal(i, order)
    np.testing.assert_array_equal(v, np.take_along_axis(x, order, -1))
    (a,), _ = run([("ArgMax", ["x"], ["y"], {"axis": 1, "keepdims": 0, "select_last_index": 1})], {"x": x})
    np.testing.assert_array_equal(a, 299 - np.argmax(x[:, ::-1], axis=1))
    (t,), _ = run([("Tile", ["x", "r"], ["y"], {})], {"x": x[:, :7]}, {"r": np.array([2, 3], np.int64)})
    np.testing.assert_array_equal(t, np.tile(x[:, :7], (2, 3)))


@pytest.mark.parametrize("level", LEVELS)
def test_groupnorm_per_group_and_per_channel(level):
    x = f32(2, 6, 5)
    for n in (3, 6):   # version 18: one scale per group; 21: per channel
        s, b = f32(n), f32(n)
        (y,), _ = run([("GroupNormalization", ["x", "s", "b"], ["y"], {"num_groups": 3, "epsilon": 1e-5})],
                      {"x": x}, {"s": s, "b": b}, level=level)
        g = x.reshape(2, 3, -1).astype(np.float64)
        norm = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
        sc = np.repeat(s, 6 // n)[None, :, None]
        bc = np.repeat(b, 6 // n)[None, :, None]
        np.testing.assert_allclose(y, norm * sc + bc, rtol=1e-4, atol=1e-5)


def test_int64_max_min_mod_clip():
    a = np.array([-7, 7, -7, 7, np.iinfo(np.int64).min], np.int64)
    b = np.array([3, -3, -3, 3, -1], np.int64)
    (mx, mn, md, fm), _ = run([("Max", ["a", "b"], ["mx"], {}), ("Min", ["a", "b"], ["mn"], {}),
                               ("Mod", ["a", "b"], ["md"], {"fmod": 0}),
                               ("Mod", ["a", "b"], ["fm"], {"fmod": 1})],
                              {"a": a, "b": b}, outputs=("mx", "mn", "md", "fm"))
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(mn, np.minimum(a, b))
    np.testing.assert_array_equal(md, [2, -2, -1, 1, 0])     # x % -1 is 0, INT64_MIN % -1 no trap
    np.testing.assert_array_equal(fm, [-1, 1, -1, 1, 0])
    (c,), _ = run([("Clip", ["a", "lo", "hi"], ["y"], {})], {"a": a},
                  {"lo": np.array(-5, np.int64), "hi": np.array(5, np.int64)})
    np.testing.assert_array_equal(c, np.clip(a, -5, 5))


def test_range_of_extreme_int64_and_onehot_of_odd_floats():
    big = np.iinfo(np.int64)
    (y,), _ = run([("Range", ["a", "b", "d"], ["y"], {})], {},
                  {"a": np.array(big.min), "b": np.array(big.max), "d": np.array(big.max)})
    np.testing.assert_array_equal(y, [big.min, -1, big.max - 1])
    idx = np.array([0, -1, 2.7, np.nan, 1e30, -1e30, 3], np.float32)
    (y,), _ = run([("OneHot", ["i", "d", "v"], ["y"], {"axis": -1})], {"i": idx},
                  {"d": np.array(3, np.int64), "v": np.array([0, 1], np.float32)})
    ref = np.zeros((7, 3), np.float32)
    ref[0, 0] = ref[1, 2] = ref[2, 2] = 1   # -1 wraps; 2.7 truncates; NaN, +-1e30, 3: no class
    np.testing.assert_array_equal(y, ref)


# ---- errors name the node ------------------------------------------------------------

I64 = lambda *v: np.array(v, np.int64)  # noqa: E731


@pytest.mark.parametrize("nodes,inputs,inits,err,msg", [
    ([("Range", ["a", "b", "d"], ["y"], {}, "bad")], {}, {"a": I64(0).reshape(()), "b": I64(5).reshape(()),
      "d": I64(0).reshape(())}, pg.ShapeError, "delta is zero"),
    ([("Range", ["x", "b", "d"], ["y"], {}, "bad")], {"x": np.zeros((), np.float32)},
     {"b": I64(5).reshape(()), "d": I64(1).reshape(())}, pg.DTypeError, "share a dtype"),
    ([("Tile", ["x", "r"], ["y"], {}, "bad")], {"x": np.zeros((2, 2), np.float32)}, {"r": I64(2, -1)},
     pg.ShapeError, "negative"),
    ([("Tile", ["x", "r"], ["y"], {}, "bad")], {"x": np.zeros((2, 2), np.float32)}, {"r": I64(2)},
     pg.ShapeError, "repeats has 1 values"),
    ([("Pad", ["x", "p"], ["y"], {"mode": "mirror"}, "bad")], {"x": np.zeros((2, 2), np.float32)},
     {"p": I64(0, 0, 0, 0)}, pg.GraphError, "mode 'mirror'"),
    ([("Pad", ["x", "p"], ["y"], {"mode": "constant"}, "bad")], {"x": np.zeros((2, 2), np.float32)},
     {"p": I64(0, -3, 0, 0)}, pg.ShapeError, "negative size"),
    ([("Pad", ["x", "p"], ["y"], {"mode": "constant"}, "bad")], {"x": np.zeros((2, 2), np.float32)},
     {"p": I64(0, 1 << 62, 0, 1 << 62)}, pg.ShapeError, "beyond"),
    ([("TopK", ["x", "k"], ["v", "i"], {"axis": -1}, "bad")], {"x": np.zeros((2, 4), np.float32)},
     {"k": I64(5)}, pg.ShapeError, "K = 5"),
    ([("OneHot", ["x", "d", "v"], ["y"], {}, "bad")], {"x": np.zeros(3, np.int64)},
     {"d": I64(4), "v": np.zeros(3, np.float32)}, pg.ShapeError, "2 elements"),
    ([("Clip", ["x", "lo"], ["y"], {}, "bad")], {"x": np.zeros(3, np.float32)},
     {"lo": np.zeros(2, np.float32)}, pg.ShapeError, "scalar"),
    ([("Mod", ["x", "x2"], ["y"], {"fmod": 2}, "bad")], {"x": np.zeros(3, np.int64), "x2": np.ones(3, np.int64)},
     {}, pg.GraphError, "fmod"),
    ([("Sin", ["x"], ["y"], {}, "bad")], {"x": np.zeros(3, np.int64)}, {}, pg.DTypeError, "float32 or float64"),
    ([("GatherND", ["x", "i"], ["y"], {}, "bad")], {"x": np.zeros((2, 2), np.float32)},
     {"i": I64(0, 0, 0).reshape(1, 3)}, pg.ShapeError, "last dim 3"),
    ([("GroupNormalization", ["x", "s", "b"], ["y"], {"num_groups": 4}, "bad")],
     {"x": np.zeros((1, 6, 2), np.float32)}, {"s": np.ones(6, np.float32), "b": np.ones(6, np.float32)},
     pg.ShapeError, "num_groups"),
    ([("ReduceL2", ["x"], ["y"], {}, "bad")], {"x": np.zeros(3, np.int64)}, {}, pg.DTypeError, "ReduceL2"),
])
def test_compile_errors_name_the_node(nodes, inputs, inits, err, msg):
    outs = tuple(nodes[-1][2][:1])
    with pytest.raises(err, match=f"'bad'.*{msg}"):
        pg.compile(build(nodes, inputs, inits, outputs=outs), level=0)


@pytest.mark.parametrize("op,ins,inits,attrs", [
    ("GatherElements", {"x": np.zeros((2, 3), np.float32), "i": I64(0, 5, 1, 0, 0, 0).reshape(2, 3)}, {},
     {"axis": 1}),
    ("GatherND", {"x": np.zeros((2, 3), np.float32), "i": I64(1, 3).reshape(1, 2)}, {}, {}),
    ("ScatterND", {"x": np.zeros((2, 3), np.float32), "i": I64(-3).reshape(1, 1),
                   "u": np.ones((1, 3), np.float32)}, {}, {}),
    ("CumSum", {"x": np.zeros((2, 3), np.float32), "a": I64(2).reshape(())}, {}, {}),
])
@pytest.mark.parametrize("level", LEVELS)
def test_run_time_index_errors_name_the_node(op, ins, inits, attrs, level):
    m = pg.compile(build([(op, list(ins), ["y"], attrs, "bad_index")], ins, inits), level=level)
    with pytest.raises(pg.InvalidArgumentError, match="'bad_index'.*out of range"):
        m.run(ins)


# ---- float16 models through the ONNX importer ---------------------------------------

def _half_model(out_type=None):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = (rng.standard_normal((4, 3)) / 2).astype(np.float16)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(0.5, np.float16))),
        helper.make_node("Add", ["h", "c"], ["a"]),
        helper.make_node("Cast", ["a"], ["a32"], to=TensorProto.FLOAT),
        helper.make_node("Relu", ["a32"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(
        nodes, "half", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["n", 4])],
        [helper.make_tensor_value_info("y", out_type or TensorProto.FLOAT16, ["n", 3])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), w, onnx


def test_float16_model_runs_as_float32():
    from peregrine_nb.onnx_import import OnnxModel, load_onnx
    model, w, _ = _half_model()
    x = rng.standard_normal((5, 4)).astype(np.float16)
    ref = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + 0.5, 0)
    y = OnnxModel(model).run({"x": x})["y"]
    assert y.dtype == np.float16 and y.shape == (5, 3)
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    g = load_onnx(model, shapes={"x": (5, 4)})   # the Graph itself is float32
    out = pg.compile(g).run({"x": x.astype(np.float32)})["y"]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="float16"):
        OnnxModel(model).run({"x": x.astype(np.float32)})


def test_bfloat16_output_is_refused_clearly():
    from onnx import TensorProto
    from peregrine_nb.onnx_import import load_onnx
    model, _, _ = _half_model(TensorProto.BFLOAT16)
    model.graph.node[-1].attribute[0].i = TensorProto.BFLOAT16
    with pytest.raises(pg.UnsupportedError, match="output 'y'.*bfloat16"):
        load_onnx(model, shapes={"x": (2, 4)})
