"""Import ONNX models into a :class:`~peregrine_nb.graph.Graph`.

>>> m = load_onnx("model.onnx", shapes={"input_ids": (1, 128)})   # doctest: +SKIP
>>> compiled = peregrine_nb.compile(m)                              # doctest: +SKIP

or, for a model whose batch/sequence dims vary from call to call,

>>> model = OnnxModel("model.onnx")                                 # doctest: +SKIP
>>> model.run({"input_ids": ids, "attention_mask": mask})           # doctest: +SKIP

which compiles once per distinct set of input shapes and keeps the results.

The engine compiles for concrete shapes, so symbolic dims ("batch",
"sequence") are resolved here from the shapes given.  The `onnx` package is
only needed to read a file: it is imported when a model is loaded, never when
peregrine_nb is imported.

Opsets: the default domain at opset 13 and later.  Files exported at a newer
opset load too when every op they use still has a version this importer
knows (most ops after 21 only gained element types).  Attributes that the
ONNX schema defaults are written out explicitly, so the engine never relies
on a default of its own.

Half precision: float16 and bfloat16 constants become float32 when the model
is read and Cast to them computes float32, so such a model runs in float32
(at least as precise as in half precision).  float16 graph inputs and
outputs are float32 in the Graph; OnnxModel takes float16 feeds and returns
float16 results.  bfloat16 inputs and outputs are refused.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .compiled import CompiledModel, WeightCache, compile as _compile
from .errors import FormatError, ShapeError, UnsupportedError
from .graph import Graph
from .graph_ops import onnx_ops

MIN_OPSET = 13

# ONNX op type -> the highest since_version whose semantics the importer and
# engine implement, and the input slots whose VALUE decides output shapes
# (the engine needs them at compile time: a graph input feeding one is
# compiled as a constant, its value given to load_onnx(values=...) or taken
# from the feeds by OnnxModel).  Both come from the engine's op table
# (engine/graph/opdefs.def, peregrine_nb.graph_ops), the one list that the
# IR, shape inference, the executor, the tests and the docs read.  A node
# whose resolved schema version is newer is reported as unsupported (its
# meaning may have changed); versions after 21 in the table changed only the
# element types the op accepts.
SUPPORTED_OPS: dict[str, int] = {name: op.onnx_version for name, op in onnx_ops().items()}
VALUE_SLOTS: dict[str, tuple[int, ...]] = {name: op.value_inputs for name, op in onnx_ops().items()
                                           if op.value_inputs}

# ONNX TensorProto element type -> numpy dtype the engine handles
_ELEM = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}
# float16 / bfloat16 constants (initializers, Constant values, tensor
# attributes) are converted to float32 when the model is read, and Cast to
# either computes float32 instead: such a model runs in float32 throughout
# (more precise than the half-precision reference, never less).  float16
# graph inputs and outputs are float32 in the Graph; OnnxModel converts
# float16 feeds and results itself.  bfloat16 inputs/outputs are refused
# (numpy has no bfloat16).
_HALF = {10: "float16", 16: "bfloat16"}
_ELEM_NAME = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
              8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
              14: "complex64", 15: "complex128", 16: "bfloat16"}


def _onnx():
    try:
        import onnx  # noqa: F401  (lazy: only the importer needs it)
        from onnx import numpy_helper  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("loading ONNX files needs the `onnx` package (pip install onnx)") from e
    return onnx


# ---------------------------------------------------------------------------
# reading and checking the file
# ---------------------------------------------------------------------------

def _read_model(src: Any):
    """A ModelProto from a path, bytes or a ModelProto; FormatError when the
    bytes are not a usable ONNX model."""
    onnx = _onnx()
    if isinstance(src, onnx.ModelProto):
        model = src
        where = "the ModelProto"
    else:
        if isinstance(src, (bytes, bytearray, memoryview)):
            data, where, base = bytes(src), "the ONNX bytes", None
        else:
            path = os.fspath(src)
            with open(path, "rb") as f:    # a missing file stays FileNotFoundError
                data = f.read()
            where, base = repr(path), os.path.dirname(os.path.abspath(path))
        model = onnx.ModelProto()
        try:
            model.ParseFromString(data)
        except Exception as e:  # protobuf's DecodeError, or anything it raises on garbage
            raise FormatError(f"{where} is not a valid ONNX file ({len(data)} bytes; "
                              f"protobuf: {e})") from None
        if base is not None and _uses_external_data(model):
            try:
                from onnx.external_data_helper import load_external_data_for_model
                load_external_data_for_model(model, base)
            except Exception as e:
                raise FormatError(f"{where}: could not load external tensor data: {e}") from None
    if not model.HasField("graph") or not model.graph.output:
        raise FormatError(f"{where} holds no graph with outputs (an empty, truncated or non-ONNX file?)")
    bad = _non_utf8_string(model)
    if bad:
        raise FormatError(f"{where} is malformed: {bad} is not valid UTF-8")
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise FormatError(f"{where} is malformed: {msg[0] if msg else type(e).__name__}"
                          + (f" ({' '.join(m.strip() for m in msg[1:3])})" if len(msg) > 1 else "")) from None
    return model


def _non_utf8_string(msg, path: str = "model") -> str | None:
    """The first string field (a name, an op type, an attribute name...)
    whose bytes are not UTF-8, which protobuf hands out as bytes instead of
    str (the checker lets them through); None if there is none."""
    from google.protobuf.descriptor import FieldDescriptor as F
    for field, value in msg.ListFields():
        # protobuf >= 6 has is_repeated; older versions only label
        rep = field.is_repeated if hasattr(field, "is_repeated") else field.label == F.LABEL_REPEATED
        values = value if rep else [value]
        for i, v in enumerate(values):
            where = f"{path}.{field.name}" + (f"[{i}]" if rep else "")
            if field.type == F.TYPE_STRING and not isinstance(v, str):
                return f"{where} ({bytes(v)[:40]!r})"
            if field.type == F.TYPE_MESSAGE:
                bad = _non_utf8_string(v, where)
                if bad:
                    return bad
    return None


def _uses_external_data(model) -> bool:
    return any(t.data_location == 1 for t in model.graph.initializer)


def _opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise FormatError("the model imports no version of the default ONNX opset")


# ops implemented at versions older than opset 13 resolves to: the oldest
# version accepted (Upsample, deprecated at 10, runs as asymmetric Resize)
_OLDEST = {"Upsample": 7}


def _first_version(op: str) -> int:
    """since_version of op as opset 13 resolves it."""
    from onnx import defs
    try:
        return defs.get_schema(op, MIN_OPSET, "").since_version
    except Exception:   # an op introduced after opset 13
        return 0


def _to_array(tensor, what: str) -> np.ndarray:
    from onnx import numpy_helper
    if tensor.data_type in _HALF:
        try:
            a = numpy_helper.to_array(tensor)
        except Exception as e:
            raise FormatError(f"{what}: tensor data does not match its dims {list(tensor.dims)}: {e}") from None
        return np.asarray(a, dtype=np.float32, order="C")
    if tensor.data_type not in _ELEM:
        raise UnsupportedError(f"{what}: element type {_ELEM_NAME.get(tensor.data_type, tensor.data_type)} "
                               f"is not supported (float, double, int64, int32, int8, uint8, bool)")
    try:
        a = numpy_helper.to_array(tensor)
    except Exception as e:
        raise FormatError(f"{what}: tensor data does not match its dims {list(tensor.dims)}: {e}") from None
    return np.asarray(a, dtype=_ELEM[tensor.data_type], order="C")  # keeps rank 0 (ascontiguousarray would not)


# ---------------------------------------------------------------------------
# attributes
# ---------------------------------------------------------------------------

def _attr_value(attr, node_desc: str) -> Any:
    from onnx import AttributeProto as A
    t = attr.type
    if t == A.INT:
        return int(attr.i)
    if t == A.FLOAT:
        return float(attr.f)
    if t == A.STRING:
        return attr.s.decode("utf-8", "replace")
    if t == A.INTS:
        return [int(v) for v in attr.ints]
    if t == A.FLOATS:
        return [float(v) for v in attr.floats]
    if t == A.TENSOR:
        return _to_array(attr.t, f"{node_desc} attribute {attr.name!r}")
    kind = A.AttributeType.Name(t) if t in A.AttributeType.values() else str(t)
    raise UnsupportedError(f"{node_desc}: attribute {attr.name!r} of kind {kind} is not supported")


def _schema_defaults(op: str, opset: int) -> dict[str, Any]:
    """Attributes the schema gives a default value, as Python values."""
    from onnx import defs, helper
    try:
        schema = defs.get_schema(op, opset, "")
    except Exception:
        return {}
    out = {}
    for name, a in schema.attributes.items():
        if a.default_value is not None and a.default_value.type:
            try:
                out[name] = helper.get_attribute_value(a.default_value)
            except Exception:
                continue
    for k, v in list(out.items()):
        if isinstance(v, bytes):
            out[k] = v.decode()
        elif isinstance(v, (list, tuple)):
            out[k] = list(v)
        elif not isinstance(v, (int, float, str)):
            del out[k]   # tensors / graphs as defaults: none of the supported ops have one
    return out


# ---------------------------------------------------------------------------
# the parsed model: everything but the input shapes
# ---------------------------------------------------------------------------

class _Node:
    __slots__ = ("op", "name", "inputs", "outputs", "attrs")

    def __init__(self, op, name, inputs, outputs, attrs):
        self.op, self.name, self.inputs, self.outputs, self.attrs = op, name, inputs, outputs, attrs


class _Parsed:
    """The model as the importer needs it, independent of input shapes:
    initializers as arrays, nodes as (op, name, inputs, outputs, attrs) with
    every defaulted attribute filled in and ONNX-version differences
    rewritten away."""

    def __init__(self, model) -> None:
        onnx = _onnx()
        self.opset = _opset(model)
        g = model.graph
        self.initializers: dict[str, np.ndarray] = {}
        self.half_inputs: set[str] = set()    # float16 in the model, float32 in the Graph
        self.half_outputs: set[str] = set()
        for t in g.initializer:
            self.initializers[t.name] = _to_array(t, f"initializer {t.name!r}")
        if g.sparse_initializer:
            raise UnsupportedError("sparse initializers are not supported")
        # inputs: (name, elem_type, dims with None / str for symbolic)
        self.inputs: list[tuple[str, int, list]] = []
        for vi in g.input:
            if vi.name in self.initializers:
                continue   # IR < 4 lists initializers as inputs too
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                raise UnsupportedError(f"input {vi.name!r}: only tensor inputs are supported")
            elem = tt.elem_type
            if elem == 10:   # float16: a float32 input of the Graph (OnnxModel converts the feeds)
                self.half_inputs.add(vi.name)
                elem = 1
            if elem not in _ELEM:
                raise UnsupportedError(f"input {vi.name!r}: element type "
                                       f"{_ELEM_NAME.get(tt.elem_type, tt.elem_type)} is not supported")
            dims: list = []
            if tt.HasField("shape"):
                for d in tt.shape.dim:
                    if d.HasField("dim_value"):
                        dims.append(int(d.dim_value))
                    else:
                        dims.append(d.dim_param or None)
            else:
                dims = None  # type: ignore[assignment]
            self.inputs.append((vi.name, elem, dims))
        self.outputs = [o.name for o in g.output]
        for o in g.output:
            et = o.type.tensor_type.elem_type if o.type.HasField("tensor_type") else 0
            if et == 10:
                self.half_outputs.add(o.name)
            elif et == 16:
                raise UnsupportedError(f"output {o.name!r}: element type bfloat16 is not supported "
                                       "(numpy has no bfloat16; float16 outputs are converted)")
        self.nodes: list[_Node] = []
        self._unsupported: dict[str, list[str]] = {}
        self._noop: dict[str, int] = {}
        used_names: set[str] = set()
        for i, n in enumerate(g.node):
            name = n.name or f"{n.op_type}_{i}"
            while name in used_names:
                name = f"{name}_{i}"
            used_names.add(name)
            self._convert(n, name)
        graph_inputs = {n for n, _, _ in self.inputs}
        self.value_inputs: list[str] = []
        for n in self.nodes:
            for slot in VALUE_SLOTS.get(n.op, ()):
                if slot < len(n.inputs) and n.inputs[slot] in graph_inputs \
                        and n.inputs[slot] not in self.value_inputs:
                    self.value_inputs.append(n.inputs[slot])
        if self._unsupported:
            parts = [f"{op} (nodes: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})"
                     for op, names in sorted(self._unsupported.items())]
            raise UnsupportedError(f"the model uses {len(self._unsupported)} unsupported op type(s): "
                                   + "; ".join(parts))
        del onnx

    # -- one node -----------------------------------------------------------
    def _unsupported_op(self, key: str, name: str) -> None:
        self._unsupported.setdefault(key, []).append(name)

    def _convert(self, n, name: str) -> None:
        from onnx import defs
        op = n.op_type
        domain = n.domain if n.domain not in ("", "ai.onnx") else ""
        if domain or op not in SUPPORTED_OPS:
            self._unsupported_op(f"{domain + '.' if domain else ''}{op}", name)
            return
        try:
            since = defs.get_schema(op, self.opset, "").since_version
        except Exception:
            since = SUPPORTED_OPS[op]
        # the version this node resolves to must be one that opset 13 or a
        # later opset resolves to (older versions had other semantics), and
        # not newer than the one implemented here
        if since > SUPPORTED_OPS[op] or since < _OLDEST.get(op, _first_version(op)):
            self._unsupported_op(f"{op} (version {since})", name)
            return
        desc = f"node {name!r} ({op})"
        attrs = _schema_defaults(op, self.opset)
        try:
            for a in n.attribute:
                if a.ref_attr_name:
                    raise UnsupportedError(f"{desc}: attribute {a.name!r} refers to a function attribute")
                attrs[a.name] = _attr_value(a, desc)
        except UnsupportedError as e:
            self._unsupported_op(f"{op} ({e})", name)
            return
        inputs, outputs = list(n.input), list(n.output)
        while inputs and inputs[-1] == "":
            inputs.pop()
        rewrite = getattr(self, "_op_" + op, None)
        if rewrite is not None:
            why = rewrite(name, inputs, outputs, attrs)
            if why:
                self._unsupported_op(f"{op} ({why})", name)
            return
        self.nodes.append(_Node(op, name, inputs, outputs, attrs))

    def _emit(self, op, name, inputs, outputs, attrs=None) -> None:
        self.nodes.append(_Node(op, name, list(inputs), list(outputs), dict(attrs or {})))

    def _const(self, name: str, value: np.ndarray) -> str:
        k = name
        while k in self.initializers:
            k += "_"
        self.initializers[k] = value
        return k

    # -- per-op rewrites (return a reason string when the node cannot be run)
    def _op_Dropout(self, name, inputs, outputs, attrs):
        # inference: identity; the mask output (all true) is rarely consumed
        if len(inputs) >= 3:
            tm = inputs[2]
            if tm in self.initializers and np.asarray(self.initializers[tm]).size != 1:
                # a scalar bool in the schema; an empty one has no first value to read
                return f"training_mode of {np.asarray(self.initializers[tm]).size} values"
            if tm in self.initializers and bool(np.asarray(self.initializers[tm]).reshape(-1)[0]):
                return "training_mode=true"
            if tm not in self.initializers:
                return "training_mode given at run time"
        self._emit("Identity", name, inputs[:1], outputs[:1])
        if len(outputs) > 1 and outputs[1]:
            return "the mask output"
        return None

    def _op_LayerNormalization(self, name, inputs, outputs, attrs):
        if len([o for o in outputs if o]) > 1:
            return "the Mean/InvStdDev outputs (training only)"
        attrs.pop("stash_type", None)
        self._emit("LayerNormalization", name, inputs, outputs[:1], attrs)

    def _op_RMSNormalization(self, name, inputs, outputs, attrs):
        attrs.pop("stash_type", None)
        self._emit("RMSNormalization", name, inputs, outputs, attrs)

    def _op_ReduceMean(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceMean", name, inputs, outputs, attrs)

    def _op_ReduceSum(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceSum", name, inputs, outputs, attrs)

    def _op_ReduceMax(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceMax", name, inputs, outputs, attrs)

    def _op_ReduceMin(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceMin", name, inputs, outputs, attrs)

    def _op_ReduceProd(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceProd", name, inputs, outputs, attrs)

    def _op_ReduceL2(self, name, inputs, outputs, attrs):
        return self._reduce("ReduceL2", name, inputs, outputs, attrs)

    def _op_Range(self, name, inputs, outputs, attrs):
        attrs.pop("stash_type", None)   # float16/bfloat16 only; the engine computes in double
        self._emit("Range", name, inputs, outputs, attrs)

    def _op_GroupNormalization(self, name, inputs, outputs, attrs):
        # version 18 gave scale/bias per group, 21 per channel: the engine
        # tells them apart by their size.  Statistics are kept in double.
        attrs.pop("stash_type", None)
        self._emit("GroupNormalization", name, inputs, outputs, attrs)

    def _reduce(self, op, name, inputs, outputs, attrs):
        # noop_with_empty_axes: empty axes mean "no reduction" instead of
        # "all axes".  Whether the axes are empty may only be known once an
        # axes input is bound to a value, so build() decides (_fix_reduce).
        self._noop[name] = int(attrs.pop("noop_with_empty_axes", 0))
        self._emit(op, name, inputs, outputs, attrs)
        return None

    def _op_Upsample(self, name, inputs, outputs, attrs):
        # version 7 gave the scales as an attribute, 9 as an input
        scales = attrs.pop("scales", None)
        if scales is not None:
            inputs = [inputs[0], self._const(name + "_scales", np.asarray(scales, np.float32))]
        self._emit("Upsample", name, inputs, outputs, attrs)

    def _op_Split(self, name, inputs, outputs, attrs):
        attrs.pop("num_outputs", None)
        self._emit("Split", name, inputs, outputs, attrs)

    def _op_Cast(self, name, inputs, outputs, attrs):
        if attrs.get("to") in _HALF:
            attrs["to"] = 1   # half precision computed as float32 (see _HALF)
        if attrs.get("to") not in _ELEM:
            t = attrs.get("to")
            return f"to={_ELEM_NAME.get(t, t)}"
        attrs.pop("saturate", None)
        attrs.pop("round_mode", None)
        self._emit("Cast", name, inputs, outputs, attrs)

    def _op_Constant(self, name, inputs, outputs, attrs):
        for k in ("sparse_value", "value_string", "value_strings"):
            if k in attrs:
                return f"a {k} value"
        # A Constant node is an initializer by another name: made one here,
        # so the passes' pattern matchers (which look for constant tensors)
        # see exporter-written scalars (eps, sqrt 2, the mask minimum) as such.
        if "value" in attrs:
            value = attrs["value"]
        elif "value_float" in attrs:
            value = np.array(attrs["value_float"], np.float32)
        elif "value_int" in attrs:
            value = np.array(attrs["value_int"], np.int64)
        elif "value_floats" in attrs:
            value = np.array(attrs["value_floats"], np.float32).reshape(-1)
        elif "value_ints" in attrs:
            value = np.array(attrs["value_ints"], np.int64).reshape(-1)
        else:
            return "no value attribute"
        if outputs[0] in self.initializers:
            return f"output {outputs[0]!r} is also an initializer"
        self.initializers[outputs[0]] = np.asarray(value, order="C")

    # -- shapes ----------------------------------------------------------------
    def resolve_shapes(self, shapes: Mapping[str, Sequence[int]] | None) -> dict[str, tuple[int, ...]]:
        """Concrete shape of every input: given ones checked against the
        model's fixed dims; symbolic dims bound consistently across inputs."""
        shapes = dict(shapes or {})
        names = [n for n, _, _ in self.inputs]
        extra = set(shapes) - set(names)
        if extra:
            raise ShapeError(f"shapes given for {sorted(extra)}, which are not inputs of the model "
                             f"(inputs: {names})")
        bound: dict[str, int] = {}
        out: dict[str, tuple[int, ...]] = {}
        for name, _, dims in self.inputs:
            if name in shapes:
                s = tuple(int(d) for d in shapes[name])
                if dims is not None:
                    if len(s) != len(dims):
                        raise ShapeError(f"input {name!r}: shape {s} has rank {len(s)}, the model "
                                         f"declares rank {len(dims)} {self._show(dims)}")
                    for i, (got, want) in enumerate(zip(s, dims)):
                        if isinstance(want, int) and want != got:
                            raise ShapeError(f"input {name!r}: dim {i} is {got}, the model fixes it "
                                             f"at {want} {self._show(dims)}")
                        if isinstance(want, str):
                            if bound.setdefault(want, got) != got:
                                raise ShapeError(f"input {name!r}: dim {i} ({want!r}) is {got}, but "
                                                 f"another input binds {want!r} to {bound[want]}")
                out[name] = s
            elif dims is not None and all(isinstance(d, int) for d in dims):
                out[name] = tuple(dims)
        for name, _, dims in self.inputs:
            if name in out:
                continue
            if dims is not None and all(isinstance(d, int) or d in bound for d in dims):
                out[name] = tuple(d if isinstance(d, int) else bound[d] for d in dims)
                continue
            raise ShapeError(f"input {name!r} has dynamic dims {self._show(dims)}: pass its shape, "
                             f"e.g. load_onnx(..., shapes={{{name!r}: (...)}}), or use OnnxModel, "
                             "which compiles for the shapes it is fed")
        return out

    @staticmethod
    def _show(dims) -> str:
        if dims is None:
            return "(unknown rank)"
        return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"

    # -- building ---------------------------------------------------------------
    def _lent(self, name: str) -> np.ndarray:
        """Initializer ``name`` as the read-only array every built graph
        borrows (Graph.add_initializer(copy=False)): one copy of the weights
        however many shape sets an OnnxModel compiles.  On a 64-byte
        boundary, so the compile reads it in place (pg_ir_clone_lent)."""
        a = self.initializers[name]
        if a.flags.writeable or not a.flags.c_contiguous or a.ctypes.data % 64:
            a = _aligned_copy(a)
            a.setflags(write=False)
            self.initializers[name] = a
        return a

    def build(self, shapes: Mapping[str, Sequence[int]] | None,
              values: Mapping[str, Any] | None = None) -> Graph:
        values = dict(values or {})
        shapes = dict(shapes or {})
        names = {n: et for n, et, _ in self.inputs}
        for k, v in values.items():
            if k not in names:
                raise ShapeError(f"values given for {k!r}, which is not an input of the model")
            values[k] = np.asarray(v, dtype=_ELEM[names[k]], order="C")
            shapes.setdefault(k, values[k].shape)
        missing = [k for k in self.value_inputs if k not in values]
        if missing:
            raise ShapeError(f"inputs {missing} decide output shapes (the shape of a Reshape, the "
                             "axes of a reduction...) and must be known when compiling: pass them "
                             "as load_onnx(..., values={name: array}), or use OnnxModel")
        concrete = self.resolve_shapes(shapes)
        g = Graph()
        for name, et, _ in self.inputs:
            if name in values:
                if values[name].shape != concrete[name]:
                    raise ShapeError(f"input {name!r}: value of shape {values[name].shape}, "
                                     f"expected {concrete[name]}")
                g.add_initializer(name, values[name])
                continue
            g.add_input(name, concrete[name], _ELEM[et])
        for name, arr in self.initializers.items():
            if arr.dtype == np.float64:
                # Graph.add_initializer narrows float64; the engine keeps
                # double constants as they are through the C API
                _add_f64_initializer(g, name, arr)
            else:
                g.add_initializer(name, self._lent(name), copy=False)
        for n in self.nodes:
            n = self._fix_reduce(n, values)
            g.add_node(n.op, n.inputs, n.outputs, name=n.name)
            for k, v in n.attrs.items():
                g.set_attr(n.name, k, v)
        for o in self.outputs:
            g.add_output(o)
        return g


    def _fix_reduce(self, n: _Node, values: Mapping[str, np.ndarray]) -> _Node:
        if n.name not in self._noop:
            return n
        axes = None
        if len(n.inputs) > 1 and n.inputs[1]:
            axes = values.get(n.inputs[1], self.initializers.get(n.inputs[1]))
            if axes is None:
                return n
            axes = list(np.asarray(axes).reshape(-1))
        elif "axes" in n.attrs:
            axes = list(n.attrs["axes"])
        if axes:
            return n
        if self._noop[n.name]:
            return _Node("Identity", n.name, n.inputs[:1], n.outputs, {})
        attrs = {k: v for k, v in n.attrs.items() if k != "axes"}
        return _Node(n.op, n.name, n.inputs[:1], n.outputs, attrs)


def _add_f64_initializer(g: Graph, name: str, arr: np.ndarray) -> None:
    from ._lib import check, ffi, lib
    a = np.asarray(arr, order="C")
    dims = ffi.new("int64_t[]", [int(d) for d in a.shape] or [0])
    check(lib.pg_graph_add_initializer(g._g, name.encode(), 11, a.ndim, dims,
                                       ffi.from_buffer(a) if a.size else ffi.new("char[8]")))


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------

def load_onnx(model: Any, shapes: Mapping[str, Sequence[int]] | None = None,
              values: Mapping[str, Any] | None = None) -> Graph:
    """Read an ONNX model (a path, the file's bytes, or an onnx.ModelProto)
    into a Graph with concrete input shapes.

    ``shapes`` maps input names to shapes; it is needed for inputs with
    symbolic dims ("batch", "sequence") - a dim name bound by one input is
    reused for the others.  ``values`` binds inputs to constant arrays; it
    is required for inputs whose value decides a shape (a Reshape's target
    shape fed as an input, reduction axes...): `value_inputs(model)` lists
    them.  Such an input is no longer fed at run time.  Raises FormatError for a malformed or truncated
    file, UnsupportedError listing every unsupported op type (with the nodes
    that use it), ShapeError for missing or contradicting shapes."""
    return _Parsed(_read_model(model)).build(shapes, values)


def value_inputs(model: Any) -> list[str]:
    """Inputs of the model whose values must be known when compiling."""
    return list(_Parsed(_read_model(model)).value_inputs)


def _aligned_copy(a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``a`` whose data starts on a 64-byte boundary
    (the engine's alignment for constants)."""
    raw = np.empty(a.nbytes + 64, np.uint8)
    off = -raw.ctypes.data % 64
    out = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class OnnxModel:
    """An ONNX model compiled on demand: ``run(feeds)`` compiles for the
    feeds' shapes the first time it sees them and reuses that compiled model
    afterwards (``cache_size`` distinct shape sets are kept, least recently
    used dropped first).  The shape sets hold the weights once: each built
    graph borrows the parsed arrays, and the compiled models share their
    packed weights (``memory_stats["weights_shared"]``), packed by the first
    compile only (``weight_cache``, a :class:`WeightCache`).  They keep no
    pass log: a compiled model's ``passes`` compiles its twin with one when
    first read (a decode loop compiles a shape set per step)."""

    def __init__(self, model: Any, level: int = 3, disable: Iterable[str] = (),
                 threads: int | None = None, cache_size: int = 8) -> None:
        self._parsed = _Parsed(_read_model(model))
        self.level, self.disable, self.threads = level, tuple(disable), threads
        self.cache_size = max(1, int(cache_size))
        self._cache: dict[tuple, CompiledModel] = {}
        self.weight_cache = WeightCache()
        self._template: Graph | None = None
        self.compiles = 0

    @property
    def input_names(self) -> list[str]:
        return [n for n, _, _ in self._parsed.inputs]

    @property
    def output_names(self) -> list[str]:
        return list(self._parsed.outputs)

    def graph(self, shapes: Mapping[str, Sequence[int]] | None = None) -> Graph:
        return self._parsed.build(shapes)

    def compiled(self, shapes: Mapping[str, Sequence[int]],
                 values: Mapping[str, Any] | None = None) -> CompiledModel:
        """The compiled model for these input shapes (and values of the
        inputs that decide shapes), compiled now if new."""
        values = {k: np.asarray(v) for k, v in (values or {}).items()}
        key = (tuple(sorted((k, tuple(int(d) for d in v)) for k, v in shapes.items())),
               tuple(sorted((k, str(v.dtype), v.shape, v.tobytes()) for k, v in values.items())))
        m = self._cache.pop(key, None)
        if m is None:
            graph, input_shapes = self._graph_for(dict(key[0]), values)
            m = _compile(graph, level=self.level, disable=self.disable, threads=self.threads,
                         weight_cache=self.weight_cache, input_shapes=input_shapes,
                         pass_log=False)
            self.compiles += 1
            while len(self._cache) >= self.cache_size:
                self._cache.pop(next(iter(self._cache)))
        self._cache[key] = m   # most recently used last
        return m

    def _graph_for(self, shapes: dict, values: dict) -> tuple[Graph, dict | None]:
        """The graph to compile for these shapes, and the input shapes to
        compile it at (None: its own).  The graph is built once and compiled
        at each new shape set as it is (compile's ``input_shapes``: no
        rebuild, no copy per shape set, a decode loop's every step).  Inputs
        whose values decide shapes are constants of the graph: those builds
        are not shared."""
        if values:
            return self._parsed.build(shapes, values), None
        concrete = self._parsed.resolve_shapes(shapes)
        if self._template is None:
            # kept as a copy (pg_graph_copy): its records in one block, in
            # order, which every compile's clone then reads as one stream; the
            # builder's are scattered over the heap, and a decode step finds
            # them evicted by its weights (gpt2-past: pg_compile 1.1-1.3 ->
            # 0.96-1.03 ms a step)
            self._template = self._parsed.build(concrete).with_input_shapes({})
            return self._template, None
        return self._template, concrete

    def run(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        feeds = {k: np.asarray(v) for k, v in feeds.items()}
        half_in, half_out = self._parsed.half_inputs, self._parsed.half_outputs
        for k in half_in & set(feeds):
            if feeds[k].dtype != np.float16:
                raise TypeError(f"input {k!r} is float16 in the model; fed {feeds[k].dtype}")
            feeds[k] = feeds[k].astype(np.float32)
        names = self.input_names   # (a list built per read: once per run)
        missing = [n for n in names if n not in feeds]
        if missing:
            raise KeyError(f"inputs {missing} are not fed (inputs: {names})")
        vals = {k: feeds[k] for k in self._parsed.value_inputs}
        m = self.compiled({k: feeds[k].shape for k in names}, vals)
        out = m.run({k: v for k, v in feeds.items() if k not in vals})
        for k in half_out & set(out):
            if out[k].dtype == np.float32:
                out[k] = out[k].astype(np.float16)
        return out

    __call__ = run

    def __repr__(self) -> str:
        return (f"<OnnxModel opset {self._parsed.opset}, {len(self._parsed.nodes)} nodes, "
                f"{len(self._cache)} compiled shape set(s)>")
