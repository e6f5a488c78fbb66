"""A small text form of a graph, for the ``%%peregrine graph`` cell.

One statement per line; ``#`` starts a comment::

    input x: f32[128, 384]                  # a graph input with its shape
    weight w1: f32[384, 384] = random       # a constant (initializer)
    weight b1: f32[384] = zeros
    const shape: i64[3] = [1, 128, 384]     # 'const' is the same as 'weight'
    h = MatMul(x, w1)                       # outputs = OpType(inputs, attr=value, ...)
    h2 = Add(h, b1)
    y = Softmax(h2, axis=-1)
    q, k, v = Split(y, axis=-1, split=[128, 128, 128])   # several outputs
    o = LayerNormalization(x, g, _, epsilon=1e-5)         # '_' is an absent optional input
    output y

Types: f32, f64, i64, i32, i8, u8, bool (or the numpy names: float32 ...).
Weight values: ``random`` (normal, scaled by 1/sqrt(first dim), so
activations stay of order one), ``randn(std)``, ``uniform(lo, hi)``,
``zeros``, ``ones``, ``fill(v)``, or a literal list (nested or flat, reshaped
to the declared shape).  Attribute values: ints, floats, "strings", lists of
ints or floats.  Op types are ONNX's (MatMul, Gemm, Add, Mul, Div, Sub,
Relu, Gelu, Erf, Sqrt, Pow, Softmax, LayerNormalization, ReduceMean,
Reshape, Transpose, Split, Concat, ...).  Each node is named after its first
output.

>>> g = parse_graph('''
... input x: f32[2, 3]
... weight w: f32[3, 4] = ones
... y = MatMul(x, w)
... output y
... ''')
>>> g.inputs, g.outputs
(['x'], ['y'])
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np

_DTYPES = {
    "f32": np.float32, "float32": np.float32, "float": np.float32,
    "f64": np.float64, "float64": np.float64, "double": np.float64,
    "i64": np.int64, "int64": np.int64, "i32": np.int32, "int32": np.int32,
    "i8": np.int8, "int8": np.int8, "u8": np.uint8, "uint8": np.uint8, "bool": np.bool_,
}

_DECL = re.compile(r"^(input|weight|const)\s+([A-Za-z_][\w./:-]*)\s*:\s*(\w+)\s*\[([^\]]*)\]\s*(?:=\s*(.+))?$")
_NODE = re.compile(r"^([A-Za-z_][\w./:-]*(?:\s*,\s*[A-Za-z_][\w./:-]*)*)\s*=\s*([A-Za-z_]\w*)\s*\((.*)\)$")
_OUTPUT = re.compile(r"^output\s+(.+)$")


class GraphTextError(ValueError):
    """A mistake in the graph text, with its line number (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class _Ctx:
    rng: np.random.Generator


def _split_args(s: str) -> list[str]:
    parts, depth, cur, quote = [], 0, "", None
    for ch in s:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _literal(text: str):
    t = text.strip()
    if t in ("inf", "+inf", "-inf", "nan"):
        return float(t)
    return ast.literal_eval(t)


def _attr_value(text: str):
    v = _literal(text)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, tuple):
        v = list(v)
    if isinstance(v, list) and any(isinstance(x, float) for x in v):
        v = [float(x) for x in v]
    return v


def _weight(init: str | None, shape: tuple[int, ...], dtype, ctx: _Ctx) -> np.ndarray:
    init = (init or "random").strip()
    m = re.fullmatch(r"(\w+)\s*(?:\((.*)\))?", init)
    kind, args = (m.group(1), m.group(2)) if m else (None, None)
    vals = [float(_literal(a)) for a in _split_args(args)] if args else []
    if kind == "random":
        scale = 1.0 / np.sqrt(shape[0]) if len(shape) >= 2 and shape[0] else 0.02
        a = ctx.rng.standard_normal(shape) * scale
    elif kind == "randn":
        a = ctx.rng.standard_normal(shape) * (vals[0] if vals else 1.0)
    elif kind == "uniform":
        lo, hi = (vals + [-1.0, 1.0][len(vals):])[:2]
        a = ctx.rng.uniform(lo, hi, shape)
    elif kind == "zeros":
        a = np.zeros(shape)
    elif kind == "ones":
        a = np.ones(shape)
    elif kind == "fill":
        if len(vals) != 1:
            raise ValueError("fill takes one value: fill(0.5)")
        a = np.full(shape, vals[0])
    else:
        try:
            lit = _literal(init)
        except (ValueError, SyntaxError):
            raise ValueError(f"unknown initializer {init!r} (random, randn(std), uniform(lo, hi), "
                             "zeros, ones, fill(v) or a [list])") from None
        a = np.asarray(lit)
        if a.size != int(np.prod(shape)):
            raise ValueError(f"the literal has {a.size} values but the shape {list(shape)} holds {int(np.prod(shape))}")
        a = a.reshape(shape)
    return np.ascontiguousarray(a.astype(dtype))


def parse_graph(text: str, seed: int = 0):
    """Build a :class:`~peregrine_nb.graph.Graph` from the text form (see the
    module docstring).  Raises GraphTextError naming the line at fault."""
    from .errors import PeregrineError
    from .graph import Graph

    g = Graph()
    ctx = _Ctx(np.random.default_rng(seed))
    n_nodes = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            if m := _DECL.match(line):
                kw, name, dt, dims, init = m.groups()
                if dt not in _DTYPES:
                    raise ValueError(f"unknown type {dt!r} (f32, f64, i64, i32, i8, u8, bool)")
                try:
                    shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
                except ValueError:
                    raise ValueError(f"dimensions must be integers: [{dims}]") from None
                if kw == "input":
                    if init:
                        raise ValueError("an input takes no value (did you mean 'weight'?)")
                    g.add_input(name, shape, _DTYPES[dt])
                else:
                    g.add_initializer(name, _weight(init, shape, _DTYPES[dt], ctx))
            elif m := _OUTPUT.match(line):
                for name in _split_args(m.group(1)):
                    g.add_output(name)
            elif m := _NODE.match(line):
                outs = [o.strip() for o in m.group(1).split(",")]
                op, args = m.group(2), _split_args(m.group(3))
                ins, attrs = [], {}
                for a in args:
                    if re.match(r"^[A-Za-z_]\w*\s*=", a):
                        k, v = a.split("=", 1)
                        try:
                            attrs[k.strip()] = _attr_value(v)
                        except (ValueError, SyntaxError):
                            raise ValueError(f"attribute {k.strip()}: cannot read {v.strip()!r} "
                                             "(write a number, a \"string\" or a [list])") from None
                    elif attrs:
                        raise ValueError(f"input {a!r} after an attribute: inputs come first")
                    else:
                        ins.append("" if a == "_" else a)
                g.add_node(op, ins, outs, name=outs[0], **attrs)
                n_nodes += 1
            else:
                raise ValueError(f"cannot read {line!r}: expected 'input NAME: f32[dims]', "
                                 "'weight NAME: f32[dims] = random', 'out = Op(in, attr=v)' or 'output NAME'")
        except (ValueError, TypeError, PeregrineError) as e:
            raise GraphTextError(lineno, str(e)) from None
    if not g.outputs:
        raise GraphTextError(max(len(text.splitlines()), 1), "the graph has no 'output NAME' line")
    return g
