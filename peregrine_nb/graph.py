"""Build a computation graph (ONNX op semantics) to compile with
:func:`peregrine_nb.compile`.

>>> import numpy as np, peregrine_nb as pg
>>> g = pg.Graph()
>>> g.add_input("x", (2, 3))
>>> g.add_initializer("w", np.ones((3, 4), np.float32))
>>> g.add_node("MatMul", ["x", "w"], ["y"])
'MatMul_0'
>>> g.add_output("y")
>>> m = pg.compile(g)
>>> m.run({"x": np.ones((2, 3), np.float32)})["y"].shape
(2, 4)
"""
from __future__ import annotations

import html
from typing import Any, Iterable, Sequence

import numpy as np

from ._lib import check, cstr, ffi, lib
from .errors import InvalidArgumentError

# numpy dtype -> pg_dtype (ONNX TensorProto codes)
_DTYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.int32): 6,
    np.dtype(np.int64): 7,
    np.dtype(np.bool_): 9,
    np.dtype(np.float16): 10,   # storage only (the GGUF decoder's f16 KV cache)
    np.dtype(np.float64): 11,
}
_NP = {v: k for k, v in _DTYPES.items()}


def dtype_code(dtype: Any) -> int:
    """The engine's dtype code of a numpy dtype (or of the code itself)."""
    if isinstance(dtype, int):
        return dtype
    dt = np.dtype(dtype)
    if dt not in _DTYPES or dt == np.float16:   # float16: the engine reads it (KV caches), graphs do not take it
        raise TypeError(f"dtype {dt} is not supported (float32, int64, int32, bool, int8, uint8, float64)")
    return _DTYPES[dt]


def numpy_dtype(code: int) -> np.dtype:
    return _NP[code]


def _dims(shape: Sequence[int]):
    return ffi.new("int64_t[]", [int(d) for d in shape] or [0])


class Graph:
    """A graph being built: inputs, initializers (weights), nodes, outputs.

    Nodes follow ONNX: ``add_node("Gemm", ["x", "w", "b"], ["y"], transB=1)``.
    Attributes are typed from their Python value: int, float, str, a list of
    ints or floats, or a numpy array (a tensor attribute, as Constant's
    ``value``).  An empty string in ``inputs`` is an absent optional input.
    """

    def __init__(self) -> None:
        p = ffi.new("pg_graph **")
        check(lib.pg_graph_new(p))
        self._g = ffi.gc(p[0], lib.pg_graph_free)
        self._keep: list[Any] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.nodes: list[tuple[str, str, list[str], list[str], dict]] = []
        # what to_onnx() writes back: input shapes/dtypes and the weight
        # arrays (references to the arrays given, except where converted)
        self.input_specs: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        self.initializers: dict[str, np.ndarray] = {}

    def with_input_shapes(self, shapes: dict[str, Sequence[int]]) -> "Graph":
        """A copy of this graph whose inputs named in ``shapes`` have those
        shapes instead, made without building it again (``pg_graph_copy``):
        the copy reads the lent arrays (``add_initializer(copy=False)``) in
        place too, and holds them."""
        for name in shapes:
            if name not in self.input_specs:
                raise InvalidArgumentError(f"{name!r} is not an input of the graph "
                                           f"(inputs: {self.inputs})")
        p = ffi.new("pg_graph **")
        check(lib.pg_graph_copy(self._g, p))
        g = Graph.__new__(Graph)
        g._g = ffi.gc(p[0], lib.pg_graph_free)
        g._keep = list(self._keep)
        g.inputs, g.outputs, g.nodes = list(self.inputs), list(self.outputs), list(self.nodes)
        g.input_specs, g.initializers = dict(self.input_specs), dict(self.initializers)
        for name, shape in shapes.items():
            check(lib.pg_graph_set_input_shape(g._g, name.encode(), len(shape), _dims(shape)))
            g.input_specs[name] = (tuple(int(d) for d in shape), g.input_specs[name][1])
        return g

    # -- building -------------------------------------------------------
    def add_input(self, name: str, shape: Sequence[int], dtype: Any = np.float32) -> None:
        """A graph input fed at run time, with a concrete shape."""
        check(lib.pg_graph_add_input(self._g, name.encode(), dtype_code(dtype), len(shape), _dims(shape)))
        self.inputs.append(name)
        self.input_specs[name] = (tuple(int(d) for d in shape), numpy_dtype(dtype_code(dtype)))

    def add_initializer(self, name: str, array: Any, copy: bool = True) -> None:
        """A constant (weight); the array is copied.  ``copy=False`` lends
        the engine a read-only array instead (one built graph per input
        shape then costs no second copy of the weights): the graph keeps a
        reference, and the array must not change while the graph lives -
        a writeable array is refused."""
        a = np.asarray(array, order="C")
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        add = lib.pg_graph_add_initializer
        if not copy and a.size:
            if a.flags.writeable or not a.flags.aligned:
                raise ValueError(f"initializer {name!r}: copy=False needs a read-only, aligned "
                                 "array (a.setflags(write=False))")
            add = lib.pg_graph_add_initializer_view
        check(add(self._g, name.encode(), dtype_code(a.dtype), a.ndim, _dims(a.shape),
                  ffi.from_buffer(a)))
        self.initializers[name] = a

    def add_node(self, op_type: str, inputs: Iterable[str], outputs: Iterable[str],
                 name: str | None = None, **attrs: Any) -> str:
        """Add a node; returns its name (generated when not given)."""
        ins = [ffi.new("char[]", s.encode()) for s in inputs]
        outs = [ffi.new("char[]", s.encode()) for s in outputs]
        ins_arr = ffi.new("const char *[]", ins or [ffi.NULL])
        outs_arr = ffi.new("const char *[]", outs)
        check(lib.pg_graph_add_node(self._g, op_type.encode(), name.encode() if name else ffi.NULL,
                                    ins_arr, len(ins), outs_arr, len(outs)))
        node = cstr(lib.pg_graph_last_node(self._g))
        for k, v in attrs.items():
            self.set_attr(node, k, v)
        self.nodes.append((node, op_type, list(inputs) if not isinstance(inputs, list) else inputs,
                           list(outputs) if not isinstance(outputs, list) else outputs, dict(attrs)))
        return node

    def set_attr(self, node: str, key: str, value: Any) -> None:
        n, k = node.encode(), key.encode()
        if isinstance(value, (bool, np.bool_)) or isinstance(value, (int, np.integer)):
            check(lib.pg_graph_set_attr_int(self._g, n, k, int(value)))
        elif isinstance(value, (float, np.floating)):
            check(lib.pg_graph_set_attr_float(self._g, n, k, float(value)))
        elif isinstance(value, str):
            check(lib.pg_graph_set_attr_string(self._g, n, k, value.encode()))
        elif isinstance(value, np.ndarray):
            a = np.asarray(value, order="C")
            check(lib.pg_graph_set_attr_tensor(self._g, n, k, dtype_code(a.dtype), a.ndim, _dims(a.shape),
                                               ffi.from_buffer(a) if a.size else ffi.new("char[8]")))
        elif isinstance(value, (list, tuple)):
            if all(isinstance(v, (int, np.integer)) for v in value):
                arr = ffi.new("int64_t[]", [int(v) for v in value] or [0])
                check(lib.pg_graph_set_attr_ints(self._g, n, k, arr, len(value)))
            else:
                arr = ffi.new("float[]", [float(v) for v in value] or [0.0])
                check(lib.pg_graph_set_attr_floats(self._g, n, k, arr, len(value)))
        else:
            raise TypeError(f"attribute {key!r}: unsupported value type {type(value).__name__}")

    def add_output(self, name: str) -> None:
        check(lib.pg_graph_add_output(self._g, name.encode()))
        self.outputs.append(name)

    def check(self) -> "Graph":
        """Verify the graph and infer its shapes now (compile does it too)."""
        check(lib.pg_graph_check(self._g))
        return self

    # -- export ----------------------------------------------------------------
    def to_onnx(self, opset: int = 17):
        """The graph as an ONNX ModelProto (needs the `onnx` package), so the
        same model can be run by ONNX Runtime for comparison.  Only standard
        ONNX ops can be written: fused ops exist after compiling, not here."""
        import onnx
        from onnx import helper, numpy_helper

        from .compiled import compile as pg_compile

        def value_info(name, shape, dtype):
            return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), shape)

        # output types and shapes as the engine infers them (level 0: as built)
        out_specs = {name: spec for name, spec in pg_compile(self, level=0).outputs.items()}

        nodes = []
        for name, op, ins, outs, attrs in self.nodes:
            a = {k: numpy_helper.from_array(np.asarray(v)) if isinstance(v, np.ndarray) else v
                 for k, v in attrs.items()}
            nodes.append(helper.make_node(op, ins, outs, name=name, **a))
        graph = helper.make_graph(
            nodes, "peregrine",
            [value_info(n, *self.input_specs[n]) for n in self.inputs],
            [value_info(n, *out_specs[n]) for n in self.outputs],
            [numpy_helper.from_array(a, n) for n, a in self.initializers.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="peregrine_nb")
        onnx.checker.check_model(model)
        return model

    # -- display -------------------------------------------------------------
    def __str__(self) -> str:
        p = lib.pg_graph_text(self._g)
        if p == ffi.NULL:
            return f"<Graph: {cstr(lib.pg_last_error())}>"
        return cstr(p)

    def __repr__(self) -> str:
        return f"<Graph {len(self.inputs)} inputs, {len(self.nodes)} nodes, {len(self.outputs)} outputs>"

    def _repr_html_(self) -> str:
        return "<pre style='font-size:12px'>" + html.escape(str(self)) + "</pre>"
