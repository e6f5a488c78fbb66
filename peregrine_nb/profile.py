"""Where a compiled model's run goes: each step's time over a number of
runs, its share of the run, and for the convs and matrix products the
GFLOP/s it ran at inside the network (:meth:`CompiledModel.profile`).

The engine times each step with two clock reads (pg_model_profile /
pg_model_step_time); the FLOPs are 2 x the multiply-adds the op defines
(a Winograd conv counts as its direct form, a blocked conv's input channels
padded to whole blocks of 16), so GFLOP/s compares layers and engines on
the same work.

>>> import numpy as np, peregrine_nb as pg
>>> g = pg.Graph(); g.add_input("x", (64, 64)); g.add_initializer("w", np.ones((64, 64), np.float32))
>>> _ = g.add_node("MatMul", ["x", "w"], ["y"]); g.add_output("y")
>>> p = pg.compile(g).profile({"x": np.ones((64, 64), np.float32)}, runs=3)
>>> p.rows[0]["op_type"], p.rows[0]["flops"]
('MatMul', 524288.0)
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StepProfile:
    """Per step (execution order): step, node, op_type, kernels, ms (per
    run), share (of the steps' summed time), flops (one run's; 0 where the
    op has no products) and gflops (flops / time; None without flops)."""
    rows: list[dict[str, Any]]
    runs: int
    wall_ms: float             # a run's wall time, the mean of the timed runs (as the steps' times)
    threads: int = 1
    note: str = field(default="")

    @property
    def step_ms(self) -> float:
        """The steps' summed time per run (the rest of wall_ms is the call itself:
        feeds, outputs, Python)."""
        return sum(r["ms"] for r in self.rows)

    def top(self, n: int = 10) -> list[dict[str, Any]]:
        """The n steps that take longest."""
        return sorted(self.rows, key=lambda r: -r["ms"])[:n]

    def by_op(self) -> list[dict[str, Any]]:
        """Time per op type: op_type, steps, ms, share, gflops (where known), longest first."""
        acc: dict[str, dict[str, Any]] = {}
        for r in self.rows:
            a = acc.setdefault(r["op_type"], {"op_type": r["op_type"], "steps": 0, "ms": 0.0, "flops": 0.0})
            a["steps"] += 1
            a["ms"] += r["ms"]
            a["flops"] += r["flops"]
        total = self.step_ms or 1.0
        out = []
        for a in acc.values():
            a["share"] = a["ms"] / total
            a["gflops"] = a["flops"] / (a["ms"] * 1e6) if a["flops"] and a["ms"] > 0 else None
            out.append(a)
        return sorted(out, key=lambda a: -a["ms"])

    def text(self, n: int | None = None) -> str:
        """The table as text: every step (or the n longest), then the totals."""
        rows = self.rows if n is None else self.top(n)
        lines = [f"{'step':>4}  {'op_type':<16} {'node':<28} {'ms':>8} {'share':>6} {'GFLOP/s':>8}  kernels"]
        for r in rows:
            gf = f"{r['gflops']:8.1f}" if r["gflops"] is not None else f"{'':>8}"
            lines.append(f"{r['step']:4d}  {r['op_type']:<16} {r['node'][:28]:<28} {r['ms']:8.3f} "
                         f"{100 * r['share']:5.1f}% {gf}  {' '.join(r['kernels'])}")
        lines.append(f"steps {self.step_ms:.3f} ms of a {self.wall_ms:.3f} ms run (mean of {self.runs}, "
                     f"{self.threads} thread{'s' if self.threads != 1 else ''})"
                     + (f"; {self.note}" if self.note else ""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("step", "op_type", "node", "ms", "share", "GFLOP/s", "kernels"))
        body = []
        for r in self.rows:
            bar = f"<div style='background:#4c78a8;height:8px;width:{max(1, round(200 * r['share']))}px'></div>"
            gf = f"{r['gflops']:.1f}" if r["gflops"] is not None else ""
            body.append(f"<tr><td>{r['step']}</td><td>{html.escape(r['op_type'])}</td>"
                        f"<td>{html.escape(r['node'])}</td><td>{r['ms']:.3f}</td><td>{bar}</td>"
                        f"<td>{gf}</td><td>{html.escape(' '.join(r['kernels']))}</td></tr>")
        foot = html.escape(self.text(0).splitlines()[-1])
        return (f"<table style='font-size:12px'><tr>{head}</tr>{''.join(body)}</table>"
                f"<p style='font-size:12px'>{foot}</p>")
