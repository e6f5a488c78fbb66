"""The graph ops the engine implements, read from its one op table.

Every graph op (MatMul, LayerNormalization, FusedAttention, ...) is one row of
``engine/graph/opdefs.def``: its names, the ONNX version it implements, its
arity, the inputs that must be known at compile time, whether its output is a
view or may run in place, and whether it binds kernels from variant tables.
The IR, shape inference, the executor and the planner read that row; so do
the ONNX importer (which ops and versions it accepts, which inputs it must
bind to values) and the docs' op list (``tools/make_op_docs.py``), through
this module.  Graph ops are not kernel families: a MatMul step is bound to a
variant of the ``sgemm`` family (:mod:`peregrine_nb.kernels`).

>>> from peregrine_nb.graph_ops import graph_ops, onnx_ops
>>> onnx_ops()["Reshape"].value_inputs
(1,)
>>> graph_ops()[0].name
'MatMul'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ._lib import check, cstr, ffi, lib


@dataclass(frozen=True)
class GraphOp:
    name: str                       # the op_type a node names it by
    onnx_name: str | None           # the ONNX op it implements; None: made by a pass
    onnx_version: int               # the newest since_version implemented
    inputs: tuple[int, int]         # (min, max)
    outputs: tuple[int, int]
    value_inputs: tuple[int, ...]   # slots needed at compile time
    is_view: bool
    in_place: bool
    binds_kernels: bool


@lru_cache(maxsize=1)
def graph_ops() -> tuple[GraphOp, ...]:
    """Every graph op, in table order."""
    info = ffi.new("pg_graph_op_info *")
    out = []
    for i in range(lib.pg_graph_op_count()):
        check(lib.pg_graph_op_get_info(i, info))
        out.append(GraphOp(
            cstr(info.name), cstr(info.onnx_name) if info.onnx_name != ffi.NULL else None,
            int(info.onnx_version), (info.min_inputs, info.max_inputs),
            (info.min_outputs, info.max_outputs),
            tuple(b for b in range(32) if info.value_inputs >> b & 1),
            bool(info.is_view), bool(info.in_place), bool(info.binds_kernels)))
    return tuple(out)


@lru_cache(maxsize=1)
def onnx_ops() -> dict[str, GraphOp]:
    """The ONNX ops (default domain) the engine implements, by ONNX name."""
    return {op.onnx_name: op for op in graph_ops() if op.onnx_name}


def table():
    """A DataFrame of :func:`graph_ops`, one row per op."""
    import pandas as pd

    return pd.DataFrame([{
        "op": o.name, "onnx": o.onnx_name or "", "onnx_version": o.onnx_version or None,
        "inputs": f"{o.inputs[0]}..{o.inputs[1]}" if o.inputs[0] != o.inputs[1] else str(o.inputs[0]),
        "outputs": f"{o.outputs[0]}..{o.outputs[1]}" if o.outputs[0] != o.outputs[1] else str(o.outputs[0]),
        "compile_time_inputs": ",".join(map(str, o.value_inputs)),
        "view": o.is_view, "in_place": o.in_place, "binds_kernels": o.binds_kernels,
    } for o in graph_ops()])


def markdown() -> str:
    """The op list as a Markdown table (what docs/graph_ops.md holds)."""
    lines = ["# Graph ops", "",
             "Generated from `engine/graph/opdefs.def` by `tools/make_op_docs.py`; do not edit.", "",
             f"{len(graph_ops())} ops, {len(onnx_ops())} of them ONNX ops (default domain); "
             "the others are made by the fusion passes.", "",
             "| op | ONNX op (version) | inputs | outputs | known at compile time | view / in place | kernels |",
             "|---|---|---|---|---|---|---|"]
    for o in graph_ops():
        rng = lambda r: str(r[0]) if r[0] == r[1] else f"{r[0]}..{r[1]}"  # noqa: E731
        onnx = f"{o.onnx_name} ({o.onnx_version})" if o.onnx_name else "(made by a pass)"
        vi = ", ".join(f"input {i}" for i in o.value_inputs)
        flags = "view" if o.is_view else "in place" if o.in_place else ""
        lines.append(f"| {o.name} | {onnx} | {rng(o.inputs)} | {rng(o.outputs)} | {vi} | {flags} | "
                     f"{'bound at compile' if o.binds_kernels else ''} |")
    return "\n".join(lines) + "\n"
