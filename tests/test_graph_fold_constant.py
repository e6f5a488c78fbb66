"""Constant folding runs Constant and ConstantOfShape (their value reaches
the executor through kctx.state, pg_exec_node_state): at level 1 they and
what they feed become constants, with the level-0 result."""
from __future__ import annotations

import numpy as np

import peregrine_nb as pg


def test_constant_folds_into_its_consumer():
    g = pg.Graph()
    g.add_input("x", (4,))
    g.add_node("Constant", [], ["c"], value=np.arange(4, dtype=np.float32))
    g.add_node("Mul", ["c", "c"], ["c2"])
    g.add_node("Add", ["x", "c2"], ["y"])
    g.add_output("y")
    x = np.ones(4, np.float32)
    m = pg.compile(g, level=1)
    assert m.op_types == ["Add"]
    np.testing.assert_array_equal(m.run({"x": x})["y"], pg.compile(g, level=0).run({"x": x})["y"])
    np.testing.assert_array_equal(m.run({"x": x})["y"], x + np.arange(4) ** 2)


def test_constant_of_shape_folds():
    g = pg.Graph()
    g.add_input("x", (2, 3))
    g.add_initializer("shape", np.array([2, 3], np.int64))
    g.add_node("ConstantOfShape", ["shape"], ["z"], value=np.array([1.5], np.float32))
    g.add_node("Add", ["x", "z"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=1)
    assert "ConstantOfShape" not in m.op_types
    x = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(m.run({"x": x})["y"], np.full((2, 3), 1.5, np.float32))
