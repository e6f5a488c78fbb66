"""The optimiser's log, pass by pass, as plain Python records.

The engine keeps, per compiled model, the graph as built (entry 0, "input")
and a snapshot after every pass with the changes it made and why
(pg_model_pass_* in peregrine.h).  This reads that log into
:class:`PassSnapshot` records the fusion stepper draws.  A model whose log
is empty (compiled at level 0, or a library built before the log existed)
still gets two entries: the graph as built (recompiled at level 0 when the
source graph is known) and the compiled graph, from the execution steps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .._lib import check, cstr, ffi, lib

_CHANGE_KINDS = {0: "added", 1: "removed", 2: "rewritten"}


@dataclass
class PassSnapshot:
    """One entry of the pass log: what the pass is, what it changed, and the
    graph after it (nodes in execution order)."""

    index: int
    name: str
    description: str = ""
    level: int = 0
    enabled: bool = True
    ran: bool = True
    ms: float = 0.0
    const_bytes: int = -1
    changes: list[dict[str, str]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """nodes, matmuls (any MatMul/Gemm form) and fused nodes."""
        return {
            "nodes": len(self.nodes),
            "matmuls": sum(1 for n in self.nodes if is_matmul(n["op"])),
            "fused": sum(1 for n in self.nodes if n.get("fused")),
        }

    def _repr_html_(self) -> str:
        from ._display import esc, fmt_bytes

        c = self.counts
        ch = "".join(f"<li><b>{esc(x['kind'])}</b> {esc(x['node'])} ({esc(x['op'])}): {esc(x['reason'])}</li>"
                     for x in self.changes) or "<li>no change</li>"
        wb = fmt_bytes(self.const_bytes) if self.const_bytes >= 0 else "?"
        return (f"<div><b>{self.index}: {esc(self.name)}</b> <i>{esc(self.description)}</i><br>"
                f"{c['nodes']} nodes, {c['matmuls']} MatMuls, {c['fused']} fused, weights {wb}"
                f"<ul>{ch}</ul></div>")


def is_matmul(op: str) -> bool:
    o = op.lower()
    return "matmul" in o or o in ("gemm", "conv")


def _split(s: str, sep: str) -> list[str]:
    return [] if not s else s.split(sep)


def from_engine(model) -> list[PassSnapshot]:
    """The model's pass log through the C API ([] if it has none)."""
    m = model._pass_log_handle() if hasattr(model, "_pass_log_handle") else getattr(model, "_m", None)
    if m is None or not hasattr(lib, "pg_model_pass_count"):
        return []
    out = []
    pi = ffi.new("pg_pass_info *")
    pc = ffi.new("pg_pass_change *")
    sn = ffi.new("pg_snapshot_node *")
    for p in range(lib.pg_model_pass_count(m)):
        check(lib.pg_model_pass_info(m, p, pi))
        snap = PassSnapshot(index=p, name=cstr(pi.name), description=cstr(pi.description),
                            level=pi.level, enabled=bool(pi.enabled), ran=bool(pi.ran),
                            ms=float(pi.ms), const_bytes=int(pi.const_bytes))
        for i in range(pi.n_changes):
            check(lib.pg_model_pass_change(m, p, i, pc))
            snap.changes.append({"kind": _CHANGE_KINDS.get(int(pc.kind), "?"), "node": cstr(pc.node),
                                 "op": cstr(pc.op), "reason": cstr(pc.reason)})
        for i in range(pi.n_nodes):
            check(lib.pg_model_snapshot_node(m, p, i, sn))
            snap.nodes.append({
                "name": cstr(sn.name), "op": cstr(sn.op),
                "inputs": _split(cstr(sn.inputs), ","), "outputs": _split(cstr(sn.outputs), ","),
                "in_shapes": _split(cstr(sn.in_shapes), ";"), "shapes": _split(cstr(sn.shapes), ";"),
                "dtypes": _split(cstr(sn.dtypes), ";"), "attrs": cstr(sn.attrs), "fused": bool(sn.fused),
            })
        out.append(snap)
    return out


_TENSOR = re.compile(r"\s*(?P<name>.+?)\*?:(?P<dtype>[a-z0-9]+)\[(?P<dims>[^\]]*)\](?P<tag>\w*)\s*$")


def _parse_tensors(s: str) -> list[tuple[str, str, str]]:
    """'x:float32[4,8], w:float32[8,8]packed' -> [(name, dtype, '4x8'), ...]."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    out = []
    for p in parts:
        m = _TENSOR.match(p)
        if m:
            out.append((m["name"].strip(), m["dtype"], m["dims"].replace(",", "x") or "scalar"))
        elif p.strip() and p.strip() != "-":
            out.append((p.strip(), "?", "?"))
    return out


def from_steps(model, index: int, name: str, description: str) -> PassSnapshot:
    """A snapshot of a compiled model built from its execution steps."""
    snap = PassSnapshot(index=index, name=name, description=description)
    try:
        snap.const_bytes = int(model.memory_stats["weights"])
    except Exception:  # noqa: BLE001 - stats are optional here
        pass
    for s in model.steps:
        ins, outs = _parse_tensors(s["inputs"]), _parse_tensors(s["outputs"])
        snap.nodes.append({
            "name": s["node"], "op": s["op_type"],
            "inputs": [t[0] for t in ins], "outputs": [t[0] for t in outs],
            "in_shapes": [t[2] for t in ins], "shapes": [t[2] for t in outs],
            "dtypes": [t[1] for t in outs], "attrs": s.get("detail", ""),
            "fused": s["op_type"].startswith(("Fused", "QKV")),
        })
    return snap


def snapshots(model, graph=None) -> list[PassSnapshot]:
    """Every entry of the model's pass log, or the two-entry fallback."""
    log = from_engine(model)
    if log:
        return log
    first = None
    graph = graph if graph is not None else source_graph(model)
    if graph is not None and getattr(model, "level", 0) != 0:
        from ..compiled import compile as pg_compile

        try:
            first = from_steps(pg_compile(graph, level=0), 0, "input", "the graph as built")
        except Exception:  # noqa: BLE001 - the fallback is best effort
            first = None
    last = from_steps(model, 1 if first else 0, "compiled",
                      f"after every pass of level {getattr(model, 'level', '?')}")
    if first:
        ops0, ops1 = {n["name"] for n in first.nodes}, {n["name"] for n in last.nodes}
        last.changes = ([{"kind": "removed", "node": n["name"], "op": n["op"], "reason": "not in the compiled graph"}
                         for n in first.nodes if n["name"] not in ops1]
                        + [{"kind": "added", "node": n["name"], "op": n["op"], "reason": "made by a pass"}
                           for n in last.nodes if n["name"] not in ops0])
        return [first, last]
    return [last]


def source_graph(model):
    """The Graph a model was compiled from (CompiledModel keeps it)."""
    return getattr(model, "graph", None)
