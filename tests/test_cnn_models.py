"""Convolutional networks exported from torch, run by Peregrine against ONNX
Runtime, and what a bad CNN graph gets told.

tests/models/make_cnn_models.py writes ResNet-18, MobileNetV2, a small
YOLO-style detector and a small encoder-decoder (ConvTranspose, depthwise
5x5, Resize, PixelShuffle, PReLU) with random weights and random BatchNorm
statistics, exported by the TorchScript exporter (opset 17) and the dynamo
exporter (opset 18), with ORT's outputs (ORT_DISABLE_ALL) on 3 input sets:
batch 1 at 64x64, batch 3 at 64x64, batch 2 at 64x96.  A session fixture
runs it once into a temporary folder; set PEREGRINE_CNN_MODELS_DIR to a
folder to keep the exports between runs (made there when its manifest.json
is missing).

For every model x exporter x level (0, 3) x input set each output must match
ORT's, with tests/test_onnx_models.py's metric:

    rel_err(out) = max|peregrine - ort| / max(max|ort|, 1e-6)  <=  1e-4

An UnsupportedError is an expected failure through test_onnx_models'
`unsupported_is_xfail` (it prints what is missing); anything else fails.
Two models are also exported at opset 13 in the test (the older op
versions), and graphs with bad or unsupported attributes must get an error
naming the node and the attribute.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

import peregrine_nb as pg

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE = os.path.join(HERE, "models", "make_cnn_models.py")
_spec = importlib.util.spec_from_file_location("make_cnn_models", MAKE)
mcm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mcm)     # plain data only: no torch import at collection

sys.path.insert(0, HERE)
from test_onnx_models import (TOL, _entry, model_files, read_manifest, rel_err,  # noqa: E402
                              unsupported_is_xfail)

LEVELS = (0, 3)


# ---------------------------------------------------------------------------
# the exported models
# ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def cnn_models_dir(tmp_path_factory) -> str:
    missing = next((f"exporting the CNN models needs `{m}` (the `test` extra of pyproject.toml)"
                    for m in ("torch", "onnx", "onnxruntime") if importlib.util.find_spec(m) is None), None)
    return model_files(tmp_path_factory, MAKE, "PEREGRINE_CNN_MODELS_DIR", "cnn_models", missing)


@pytest.fixture(scope="session")
def cnn_manifest(cnn_models_dir) -> dict:
    return read_manifest(cnn_models_dir)


_loaded: dict = {}   # (path, level) -> OnnxModel or the exception loading it raised
_refs: dict = {}


def _model(path: str, level: int) -> pg.OnnxModel:
    key = (path, level)
    if key not in _loaded:
        try:
            _loaded[key] = pg.OnnxModel(path, level=level, cache_size=3)
        except Exception as e:   # kept: every case of this file reports it
            _loaded[key] = e
    m = _loaded[key]
    if isinstance(m, Exception):
        raise m
    return m


def _references(models_dir: str, e: dict) -> dict:
    path = os.path.join(models_dir, mcm.file_stem(e["model"], e["exporter"]) + ".npz")
    if path not in _refs:
        with np.load(path) as z:
            _refs[path] = {k: z[k] for k in z.files}
    return _refs[path]


def _set(refs: dict, k: int, kind: str) -> dict:
    return {key.split(".", 2)[2]: a for key, a in refs.items() if key.startswith(f"set{k}.{kind}.")}


CASES = [pytest.param(name, exporter, level, k, id=f"{name}-{exporter}-L{level}-{mcm.SHAPE_IDS[k]}")
         for name in mcm.MODELS for exporter in mcm.EXPORTERS for level in LEVELS for k in range(3)]


@pytest.mark.parametrize("name, exporter, level, k", CASES)
def test_against_onnxruntime(cnn_models_dir, cnn_manifest, name, exporter, level, k):
    e = _entry(cnn_manifest, name, exporter)
    refs = _references(cnn_models_dir, e)
    feeds, want = _set(refs, k, "in"), _set(refs, k, "out")
    what = f"{name}-{exporter} level {level} {mcm.SHAPE_IDS[k]}"
    with unsupported_is_xfail(what):
        got = _model(os.path.join(cnn_models_dir, e["file"]), level).run(feeds)
    assert set(got) == set(want), f"{what}: outputs {sorted(got)}, ORT gives {sorted(want)}"
    errs = {}
    for out_name, ref in want.items():
        assert got[out_name].shape == ref.shape, f"{what}: {out_name} shape {got[out_name].shape} != {ref.shape}"
        errs[out_name] = rel_err(got[out_name], ref)
    print(f"{what}: " + ", ".join(f"{n} {v:.2e}" for n, v in errs.items()))
    bad = {n: v for n, v in errs.items() if not v <= TOL}
    assert not bad, f"{what}: relative error above {TOL}: {bad}"


@pytest.mark.parametrize("exporter", mcm.EXPORTERS)
def test_every_cnn_op_is_claimed(cnn_models_dir, cnn_manifest, exporter):
    """Every op type the exports use is one the importer claims (so a new
    exporter habit shows up here by name, not as a skipped model)."""
    onnx = pytest.importorskip("onnx")
    from peregrine_nb.onnx_import import SUPPORTED_OPS
    used: dict[str, set] = {}
    for name in mcm.MODELS:
        e = _entry(cnn_manifest, name, exporter)
        g = onnx.load(os.path.join(cnn_models_dir, e["file"]), load_external_data=False).graph
        for n in g.node:
            used.setdefault(n.op_type, set()).add(name)
    print(f"{exporter}: ops used: {sorted(used)}")
    missing = {op: sorted(ms) for op, ms in used.items() if op not in SUPPORTED_OPS}
    assert not missing, f"ops the {exporter} exports use that the importer lacks: {missing}"


@pytest.mark.parametrize("name", ["yolo", "segnet"])
def test_opset13_export(tmp_path, name):
    """Opset 13, as many deployed files are: the importer resolves the older
    versions of the ops (BatchNormalization 9, Resize 13, MaxPool 12, Clip
    13, ...), every BatchNorm kept (no constant folding); levels 0 and 3
    against ORT on batch 2 at 64x96."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    module, ins, outs, seed = mcm.build(name)
    feeds = mcm.make_inputs((2, 64, 96), seed, 0)
    path = str(tmp_path / f"{name}-opset13.onnx")
    import warnings
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (torch.from_numpy(feeds[mcm.INPUT]),), path, input_names=ins,
                          output_names=outs, dynamic_axes={mcm.INPUT: {0: "b", 2: "h", 3: "w"}},
                          opset_version=13, dynamo=False, do_constant_folding=False)
    want = dict(zip(outs, mcm.ort_session(path).run(None, feeds)))
    for level in LEVELS:
        got = pg.OnnxModel(path, level=level).run(feeds)
        errs = {n: rel_err(got[n], want[n]) for n in outs}
        print(f"{name} opset 13 level {level}: {errs}")
        assert all(v <= TOL for v in errs.values()), f"{name} opset 13 level {level}: {errs}"


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------

def _onnx_model(nodes, inputs, outputs, inits=(), opset=17):
    onnx = pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import helper as h
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def _tensor(name, a):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(a), name)


def test_conv_weight_channels_mismatch_is_a_shape_error_naming_the_node():
    """A Conv whose weight has 4 input channels reading a 3-channel image:
    ShapeError naming the node, the weight and both channel counts."""
    pytest.importorskip("onnx")
    from onnx import TensorProto as T
    from onnx import helper as h
    w = np.zeros((8, 4, 3, 3), np.float32)
    data = _onnx_model([h.make_node("Conv", ["x", "w"], ["y"], name="stem_conv", pads=[1, 1, 1, 1])],
                       [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])], [_tensor("w", w)])
    with pytest.raises(pg.ShapeError) as ei:
        pg.compile(pg.load_onnx(data))
    msg = str(ei.value)
    print(msg)
    for s in ("stem_conv", "'w'", "4 input channels", "3 channels"):
        assert s in msg, f"{s!r} missing from: {msg}"


@pytest.mark.parametrize("op, attrs, inputs, words", [
    ("Resize", dict(mode="nearest", antialias=1), ["x", "", "scales"], ["antialias", "nearest"]),
    ("Resize", dict(mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn_sideways"),
     ["x", "", "scales"], ["coordinate_transformation_mode"]),
    ("BatchNormalization", dict(training_mode=1), ["x", "s", "b", "m", "v"], ["training_mode"]),
    ("Conv", dict(auto_pad="SAME_SIDEWAYS"), ["x", "w4"], ["auto_pad"]),
    ("ConvTranspose", dict(output_shape=[16, 16], pads=[2, 2, 2, 2], strides=[2, 2]), ["x", "wt"],
     ["output_shape"]),
    ("DepthToSpace", dict(blocksize=2, mode="RDC"), ["x"], ["mode"]),
    ("MaxPool", dict(kernel_shape=[2, 2], pads=[2, 0, 2, 0]), ["x"], ["pads"]),
])
def test_unsupported_attribute_names_node_and_attribute(op, attrs, inputs, words):
    """An attribute combination the engine does not implement is an
    UnsupportedError naming the node and the attribute, never a result."""
    pytest.importorskip("onnx")
    from onnx import TensorProto as T
    from onnx import helper as h
    c = 4
    inits = [_tensor("scales", np.array([1, 1, 2, 2], np.float32)), _tensor("s", np.ones(c, np.float32)),
             _tensor("b", np.zeros(c, np.float32)), _tensor("m", np.zeros(c, np.float32)),
             _tensor("v", np.ones(c, np.float32)), _tensor("w4", np.ones((2, c, 3, 3), np.float32)),
             _tensor("wt", np.ones((c, 2, 3, 3), np.float32))]
    used = {i for i in inputs if i}
    node = h.make_node(op, inputs, ["y"], name=f"the_{op.lower()}", **attrs)
    data = _onnx_model([node], [h.make_tensor_value_info("x", T.FLOAT, [1, c, 8, 8])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                       [t for t in inits if t.name in used], opset=19 if op == "Resize" else 17)
    x = np.ones((1, c, 8, 8), np.float32)
    with pytest.raises(pg.UnsupportedError) as ei:
        pg.OnnxModel(data).run({"x": x})
    msg = str(ei.value)
    print(msg)
    assert f"the_{op.lower()}" in msg, msg
    for w in words:
        assert w in msg, f"{w!r} missing from: {msg}"


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_of_an_empty_axis_to_a_size_is_a_shape_error(policy):
    """Sizes ask for pixels sampled from an axis of length 0: a ShapeError
    naming the node, not an infinite scale (whose conversion to an output
    size was undefined behaviour)."""
    pytest.importorskip("onnx")
    from onnx import TensorProto as T
    from onnx import helper as h
    node = h.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="grow_nothing", mode="nearest",
                       keep_aspect_ratio_policy=policy, axes=[2, 3])
    data = _onnx_model([node], [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 0, 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                       [_tensor("sizes", np.array([4, 8], np.int64))], opset=19)
    with pytest.raises(pg.ShapeError) as ei:
        pg.compile(pg.load_onnx(data))
    msg = str(ei.value)
    assert "grow_nothing" in msg and "axis 2 is empty" in msg, msg


def test_kernel_larger_than_padded_input_is_a_shape_error():
    pytest.importorskip("onnx")
    from onnx import TensorProto as T
    from onnx import helper as h
    data = _onnx_model([h.make_node("MaxPool", ["x"], ["y"], name="big_pool", kernel_shape=[9, 9])],
                       [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 4, 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])])
    with pytest.raises(pg.ShapeError) as ei:
        pg.compile(pg.load_onnx(data))
    assert "big_pool" in str(ei.value) and "kernel" in str(ei.value), str(ei.value)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
