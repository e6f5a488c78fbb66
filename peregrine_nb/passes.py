"""The graph optimiser's log: what each pass did to a compiled model.

>>> import peregrine_nb as pg
>>> from peregrine_nb.examples import transformer_block
>>> from peregrine_nb.passes import pass_log, pass_registry
>>> m = pg.compile(transformer_block(seq=8, hidden=32, heads=4), level=3)
>>> log = pass_log(m)
>>> log[0].name, log[-1].name
('input', 'weight_prepack')
>>> [c.reason for c in log.by_name("attention_fusion").changes][-1][:22]
'fused 5 nodes MatMul..'

Entry 0 is the graph as built; then one entry per registered pass, in run
order, enabled or not.  Each entry has the pass's changes (node added,
removed or rewritten, with a reason) and the graph after it (``nodes``).
"""
from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ._lib import check, cstr, ffi, lib

_KIND = {0: "added", 1: "removed", 2: "rewritten"}
LEVELS = {0: "none", 1: "basic", 2: "extended", 3: "layout"}


@dataclass
class Change:
    kind: str          # "added" | "removed" | "rewritten"
    node: str
    op: str
    reason: str


@dataclass
class SnapshotNode:
    name: str
    op: str
    inputs: list[str]
    outputs: list[str]
    in_shapes: list[str]
    shapes: list[str]
    dtypes: list[str]
    attrs: str
    fused: bool


@dataclass
class PassEntry:
    name: str
    description: str
    level: int
    enabled: bool
    ran: bool
    ms: float
    const_bytes: int
    changes: list[Change] = field(default_factory=list)
    nodes: list[SnapshotNode] = field(default_factory=list)

    def op_counts(self) -> Counter:
        """Op type -> how many nodes of it the graph has after this pass."""
        return Counter(n.op for n in self.nodes)

    def _repr_html_(self) -> str:
        state = "ran" if self.ran else ("switched off" if not self.enabled else "did not run")
        head = (f"<b>{html.escape(self.name)}</b> (level {self.level}, {state}, {self.ms:.2f} ms): "
                f"{html.escape(self.description)}<br>{len(self.nodes)} nodes after it: "
                + ", ".join(f"{html.escape(op)} x{n}" for op, n in sorted(self.op_counts().items())))
        rows = "".join(f"<tr><td>{c.kind}</td><td>{html.escape(c.node)}</td><td>{html.escape(c.op)}</td>"
                       f"<td style='text-align:left'>{html.escape(c.reason)}</td></tr>" for c in self.changes)
        table = ("<table><tr><th>change</th><th>node</th><th>op</th><th>why</th></tr>" + rows + "</table>"
                 if rows else "<br>no changes")
        return head + table


class PassLog(list):
    """A list of :class:`PassEntry`, with lookup by pass name."""

    def by_name(self, name: str) -> PassEntry:
        for p in self:
            if p.name == name:
                return p
        raise KeyError(f"no pass {name!r} (passes: {[p.name for p in self]})")

    def _repr_html_(self) -> str:
        rows = []
        for p in self:
            state = "ran" if p.ran else ("off" if not p.enabled else "-")
            rows.append(f"<tr><td>{html.escape(p.name)}</td><td>{p.level}</td><td>{state}</td>"
                        f"<td>{len(p.changes)}</td><td>{len(p.nodes)}</td><td>{p.ms:.2f}</td></tr>")
        return ("<table><tr><th>pass</th><th>level</th><th></th><th>changes</th><th>nodes</th>"
                "<th>ms</th></tr>" + "".join(rows) + "</table>")


def _split(s, sep: str) -> list[str]:
    t = cstr(s)
    return t.split(sep) if t else []


def pass_registry() -> list[tuple[str, int, str]]:
    """(name, level, description) of every pass this build has, in run order."""
    info = ffi.new("pg_pass_info *")
    out = []
    for i in range(lib.pg_pass_registry_count()):
        check(lib.pg_pass_registry_info(i, info))
        out.append((cstr(info.name), info.level, cstr(info.description)))
    return out


def pass_log(model: Any) -> PassLog:
    """The pass log of a compiled model (empty for level 0)."""
    m = (model._pass_log_handle() if hasattr(model, "_pass_log_handle")
         else model._m if hasattr(model, "_m") else model)
    info = ffi.new("pg_pass_info *")
    ch = ffi.new("pg_pass_change *")
    sn = ffi.new("pg_snapshot_node *")
    log = PassLog()
    for p in range(lib.pg_model_pass_count(m)):
        check(lib.pg_model_pass_info(m, p, info))
        e = PassEntry(cstr(info.name), cstr(info.description), info.level, bool(info.enabled),
                      bool(info.ran), info.ms, info.const_bytes)
        for i in range(info.n_changes):
            check(lib.pg_model_pass_change(m, p, i, ch))
            e.changes.append(Change(_KIND.get(ch.kind, "?"), cstr(ch.node), cstr(ch.op), cstr(ch.reason)))
        for i in range(info.n_nodes):
            check(lib.pg_model_snapshot_node(m, p, i, sn))
            e.nodes.append(SnapshotNode(cstr(sn.name), cstr(sn.op), cstr(sn.inputs).split(","),
                                        _split(sn.outputs, ","), _split(sn.in_shapes, ";"),
                                        _split(sn.shapes, ";"), _split(sn.dtypes, ";"),
                                        cstr(sn.attrs), bool(sn.fused)))
        log.append(e)
    return log
