"""Graph.to_onnx: a built graph written as ONNX runs in ONNX Runtime and
reads back through load_onnx with the same results."""
import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb.examples import transformer_block

ort = pytest.importorskip("onnxruntime")


def test_transformer_block_in_onnx_runtime_matches_peregrine():
    g = transformer_block(seq=16, hidden=64, heads=4)
    feeds = g.make_feeds()
    sess = ort.InferenceSession(g.to_onnx().SerializeToString())
    theirs = sess.run(None, feeds)[0]
    ours = pg.compile(g, level=3).run(feeds)["out"]
    assert np.abs(theirs - ours).max() < 1e-4
    assert np.abs(theirs - g.reference(feeds)["out"]).max() < 1e-4


def test_round_trip_through_load_onnx():
    g = transformer_block(seq=8, hidden=32, heads=2)
    feeds = g.make_feeds()
    back = pg.load_onnx(g.to_onnx())
    assert np.allclose(pg.compile(back).run(feeds)["out"], pg.compile(g).run(feeds)["out"], atol=1e-5)


def test_export_keeps_int64_inputs_and_shapes():
    g = pg.Graph()
    g.add_input("ids", (2, 3), np.int64)
    g.add_initializer("table", np.arange(20, dtype=np.float32).reshape(10, 2))
    g.add_node("Gather", ["table", "ids"], ["y"])
    g.add_output("y")
    model = g.to_onnx()
    out = model.graph.output[0].type.tensor_type
    assert [d.dim_value for d in out.shape.dim] == [2, 3, 2]
    ids = np.array([[1, 2, 3], [4, 5, 9]], np.int64)
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"ids": ids})[0]
    assert np.array_equal(got, np.arange(20, dtype=np.float32).reshape(10, 2)[ids])
