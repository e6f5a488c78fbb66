"""load_onnx / OnnxModel: building, attributes, shapes, the compile cache,
and the errors (malformed files, unsupported ops, missing shapes)."""
from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import peregrine_nb as pg  # noqa: E402
from peregrine_nb.onnx_import import OnnxModel, load_onnx, value_inputs  # noqa: E402
from peregrine_nb._lib import lib  # noqa: E402
from peregrine_nb.passes import pass_log  # noqa: E402
from peregrine_nb.widgets._passlog import from_engine  # noqa: E402


def mlp_model(batch="batch", opset=17):
    """x [batch, 8] -> Gemm -> Relu -> MatMul -> Softmax -> y."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8)).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1, alpha=1.0),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["z"], name="fc2"),
        helper.make_node("Softmax", ["z"], ["y"], name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    ref = lambda x: _softmax(np.maximum(x @ w1.T + b1, 0) @ w2)  # noqa: E731
    return model, ref


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_load_and_run(tmp_path):
    model, ref = mlp_model()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    for src in (str(path), path, model, model.SerializeToString()):
        g = load_onnx(src, shapes={"x": (3, 8)})
        y = pg.compile(g).run({"x": x})["y"]
        np.testing.assert_allclose(y, ref(x), rtol=1e-5, atol=1e-6)


def test_dynamic_dims_need_shapes():
    model, _ = mlp_model()
    with pytest.raises(pg.ShapeError, match=r"input 'x' has dynamic dims \[batch, 8\]"):
        load_onnx(model)
    with pytest.raises(pg.ShapeError, match="the model fixes it at 8"):
        load_onnx(model, shapes={"x": (2, 9)})
    with pytest.raises(pg.ShapeError, match="not inputs of the model"):
        load_onnx(model, shapes={"x": (2, 8), "nope": (1,)})
    fixed, _ = mlp_model(batch=5)
    assert "x" in str(load_onnx(fixed))   # fully static: no shapes needed


def test_onnx_model_compiles_once_per_shape():
    model, ref = mlp_model()
    m = OnnxModel(model)
    rng = np.random.default_rng(2)
    for n in (1, 4, 1, 4, 7, 1):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        np.testing.assert_allclose(m.run({"x": x})["y"], ref(x), rtol=1e-5, atol=1e-6)
    assert m.compiles == 3
    with pytest.raises(KeyError, match="not fed"):
        m.run({})


def test_shape_sets_borrow_one_copy_of_the_weights():
    """Each shape set's graph lends the engine the parsed arrays
    (Graph.add_initializer(copy=False)) instead of copying them: the arrays
    are read-only and every built graph holds the very same objects, and
    the compiled models still give the reference's answers.  The graph is
    built from the model once: another shape set compiles it at its input
    shapes (compile's input_shapes), with no copy of it until its
    CompiledModel.graph is asked for (Graph.with_input_shapes), leaving the
    first as it was."""
    model, ref = mlp_model()
    m = OnnxModel(model)
    rng = np.random.default_rng(3)
    for n in (2, 5):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        np.testing.assert_allclose(m.run({"x": x})["y"], ref(x), rtol=1e-5, atol=1e-6)
    assert [c._input_shapes for c in m._cache.values()] == [None, {"x": (5, 8)}]
    parsed = m._parsed.initializers
    graphs = [c.graph for c in m._cache.values()]
    assert len(graphs) == 2
    for name in ("w1", "b1", "w2"):
        assert not parsed[name].flags.writeable
        assert all(g.initializers[name] is parsed[name] for g in graphs)
    first, second = graphs
    assert first is m._template
    assert first.input_specs["x"][0] == (2, 8) and second.input_specs["x"][0] == (5, 8)
    assert str(first) != str(second)
    ones = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(pg.compile(first).run({"x": ones})["y"], ref(ones), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(pg.InvalidArgumentError, match="'nope' is not an input"):
        first.with_input_shapes({"nope": (1, 8)})


def test_shape_sets_compile_without_a_pass_log_until_asked():
    """A shape set's compile keeps no pass log (compile(pass_log=False):
    the snapshots are ~20% of a decode step's recompile); its ``passes``,
    pass_log() and the widgets' reader get the same log as a compile that
    kept one, from a twin compiled when first asked, at that shape set."""
    model, _ = mlp_model()
    m = OnnxModel(model)
    for n in (2, 5):
        m.run({"x": np.ones((n, 8), np.float32)})
    for c in m._cache.values():
        assert lib.pg_model_pass_count(c._m) == 0 and c._log_twin is None
    second = m.compiled({"x": (5, 8)})
    kept = pg.compile(m._template.with_input_shapes({"x": (5, 8)}))
    assert lib.pg_model_pass_count(kept._m) > 0
    def strip(log):
        return [{k: v for k, v in p.items() if k != "ms"} for p in log]
    assert strip(second.passes) == strip(kept.passes)
    assert second._log_twin is not None
    assert [p.name for p in pass_log(second)] == [p.name for p in pass_log(kept)]
    assert [s.name for s in from_engine(second)] == [s.name for s in from_engine(kept)]
    assert lib.pg_model_pass_count(pg.compile(m._template, pass_log=False)._m) == 0
    assert pg.compile(m._template, pass_log=False).passes[-1]["nodes"]


def test_shape_sets_share_one_packed_copy():
    """The compiled models of two shape sets hold their packed weights once
    (exec/shared_consts.c): each reports its large weights as shared, and a
    model left alone reports none."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((256, 128)).astype(np.float32)   # 128 KiB: shared
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 128])],
        [numpy_helper.from_array(w, "w")])
    m = OnnxModel(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    xs = [rng.standard_normal((n, 256)).astype(np.float32) for n in (1, 3)]
    for x in xs:
        np.testing.assert_allclose(m.run({"x": x})["y"], x @ w, rtol=1e-4, atol=1e-4)
    models = list(m._cache.values())
    assert all(c.memory_stats["weights_shared"] >= w.nbytes for c in models)
    assert "shared with other compiled models" in models[0].report()
    m._cache.pop(next(iter(m._cache)))
    del models
    gc.collect()
    (alone,) = m._cache.values()
    assert alone.memory_stats["weights_shared"] == 0


def test_shape_sets_pack_each_weight_once():
    """A new shape set takes the packings of the first compile from the
    OnnxModel's weight cache (exec/weight_cache.c) instead of packing again:
    the second compile hits and adds nothing, its pass log says where the
    panels came from, both models are right, and a plain compile of the
    same graph does not ask the cache."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((256, 128)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["y"], name="relu")], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 128])],
        [numpy_helper.from_array(w, "w")])
    m = OnnxModel(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x1 = rng.standard_normal((1, 256)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": x1})["y"], np.maximum(x1 @ w, 0), rtol=1e-4, atol=1e-4)
    first = m.weight_cache.stats
    assert first["misses"] >= 1 and first["entries"] >= 1 and first["bytes"] >= w.nbytes
    x3 = rng.standard_normal((3, 256)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": x3})["y"], np.maximum(x3 @ w, 0), rtol=1e-4, atol=1e-4)
    second = m.weight_cache.stats
    assert second["hits"] > first["hits"]
    assert (second["misses"], second["entries"], second["bytes"]) == \
        (first["misses"], first["entries"], first["bytes"])
    c3 = m.compiled({"x": (3, 256)})
    reasons = [c.reason for c in pass_log(c3).by_name("weight_prepack").changes]
    assert reasons and all("the weight cache's, packed by an earlier compile" in r for r in reasons)
    logged = m.weight_cache.stats   # the pass log's twin compile hit the cache too
    assert logged["hits"] > second["hits"] and logged["misses"] == second["misses"]
    pg.compile(m.graph({"x": (2, 256)}))
    assert m.weight_cache.stats == logged


def test_lent_initializer_must_be_read_only():
    g = pg.Graph()
    w = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="read-only"):
        g.add_initializer("w", w, copy=False)
    w.setflags(write=False)
    g.add_initializer("w", w, copy=False)
    assert g.initializers["w"] is w


def test_symbolic_dims_bind_across_inputs():
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "add",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    g = load_onnx(model, shapes={"a": (4, 3)})       # b takes n = 4 from a
    out = pg.compile(g).run({"a": np.ones((4, 3), np.float32), "b": np.ones((4, 3), np.float32)})
    assert out["c"].shape == (4, 3)
    with pytest.raises(pg.ShapeError, match="binds 'n' to 4"):
        load_onnx(model, shapes={"a": (4, 3), "b": (5, 3)})


def test_shape_deciding_inputs_are_bound_to_values():
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, ["k"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert value_inputs(model) == ["shape"]
    with pytest.raises(pg.ShapeError, match=r"inputs \['shape'\] decide output shapes"):
        load_onnx(model)
    g = load_onnx(model, values={"shape": np.array([3, 4])})
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(pg.compile(g).run({"x": x})["y"], x.reshape(3, 4))
    m = OnnxModel(model)
    assert m.run({"x": x, "shape": np.array([4, 3])})["y"].shape == (4, 3)
    assert m.run({"x": x, "shape": np.array([12])})["y"].shape == (12,)
    assert m.compiles == 2


def test_every_attribute_kind_and_schema_defaults():
    # ints (perm), int (axis), float (alpha, epsilon), string (approximate),
    # tensor (Constant value); LayerNormalization's epsilon left to the schema
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.full((1, 1, 3), 0.5, np.float32))),
        helper.make_node("Mul", ["t", "c"], ["m"]),
        helper.make_node("Gelu", ["m"], ["g"], approximate="tanh"),
        helper.make_node("Constant", [], ["scale"], value_floats=[1.0, 2.0, 3.0]),
        helper.make_node("LayerNormalization", ["g", "scale"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "kinds", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    y = pg.compile(load_onnx(model)).run({"x": x})["y"]
    m = x.transpose(0, 2, 1) * 0.5
    g = 0.5 * m * (1 + np.tanh(np.sqrt(2 / np.pi) * (m + 0.044715 * m ** 3)))
    ln = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5) * np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(y, ln, rtol=1e-4, atol=1e-4)


def test_unsupported_ops_are_all_listed():
    nodes = [
        helper.make_node("Softsign", ["x"], ["c"], name="softsign1"),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("Softsign", ["r"], ["c2"], name="softsign2"),
        helper.make_node("LpNormalization", ["c2"], ["p"], name="lpnorm"),
        helper.make_node("Hardmax", ["p"], ["v"], name="hardmax"),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, ["a", "b", "c", "d"])],
        [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w"),
         numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w2"),
         numpy_helper.from_array(np.array([2], np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(pg.UnsupportedError) as e:
        load_onnx(model)
    msg = str(e.value)
    assert "3 unsupported op type(s)" in msg
    assert "Softsign (nodes: softsign1, softsign2)" in msg and "LpNormalization (nodes: lpnorm)" in msg
    assert "Hardmax (nodes: hardmax)" in msg
    assert "Relu" not in msg


def test_custom_domain_ops_are_unsupported():
    graph = helper.make_graph(
        [helper.make_node("FastGelu", ["x"], ["y"], name="fg", domain="com.microsoft")], "ms",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                     helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(pg.UnsupportedError, match=r"com\.microsoft\.FastGelu \(nodes: fg\)"):
        load_onnx(model)


def test_old_op_versions_are_unsupported():
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], name="sm")], "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    with pytest.raises(pg.UnsupportedError, match=r"Softmax \(version 11\)"):
        load_onnx(model)


def test_malformed_files_are_format_errors(tmp_path):
    model, _ = mlp_model(batch=2)
    data = model.SerializeToString()
    bad = tmp_path / "bad.onnx"
    # every truncation point: a FormatError (or, at a field boundary that
    # leaves a complete model, a model that loads) - never another error
    formats = 0
    for cut in range(0, len(data), max(1, len(data) // 400)):
        bad.write_bytes(data[:cut])
        try:
            load_onnx(str(bad))
        except pg.FormatError:
            formats += 1
    assert formats > 0
    for blob in (b"", b"\x00" * 64, b"not an onnx file at all", bytes(range(256)) * 4):
        bad.write_bytes(blob)
        with pytest.raises(pg.FormatError):
            load_onnx(str(bad))
    with pytest.raises(FileNotFoundError):
        load_onnx(str(tmp_path / "missing.onnx"))


def test_initializer_with_wrong_size_is_a_format_error():
    model, _ = mlp_model(batch=2)
    t = model.graph.initializer[0]
    t.raw_data = t.raw_data[:-8]
    with pytest.raises(pg.FormatError):
        load_onnx(model)


def test_importing_peregrine_does_not_import_onnx_or_torch():
    code = ("import sys, peregrine_nb; "
            "bad = [m for m in ('onnx', 'torch', 'onnxruntime', 'tokenizers', 'safetensors') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_zero_size_feed():
    """A zero-size input (0 rows) runs and gives a zero-size output."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "empty",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m = pg.compile(load_onnx(model))
    y = m.run({"x": np.zeros((0, 3), np.float32)})["y"]
    assert y.shape == (0, 3)
