"""The fusion stepper: walk through the optimiser's passes one at a time and
watch the graph shrink.

>>> from peregrine_nb.widgets import FusionStepper     # doctest: +SKIP
>>> s = FusionStepper(model); s                        # doctest: +SKIP
>>> s.next.click(); s.index                            # doctest: +SKIP
1
"""
from __future__ import annotations

from ._dag import figure as dag_figure, style, traces
from ._display import Viewer, esc, fmt_bytes
from ._passlog import PassSnapshot, snapshots


class FusionStepper(Viewer):
    """A slider and prev/next buttons over the pass log of a compiled model;
    the graph after the selected pass drawn as a layered DAG, and beside it
    what the pass changed and why, with node, MatMul and weight-byte counts
    (and their change from the previous entry)."""

    title = "passes"

    def __init__(self, model, graph=None, passes: list[PassSnapshot] | None = None) -> None:
        import ipywidgets as w
        import plotly.graph_objects as go

        self.model = model
        self.passes = passes if passes is not None else snapshots(model, graph)
        if not self.passes:
            raise ValueError("the model has no pass log and no steps to show")
        self._graph_inputs = set(getattr(model, "inputs", {}) or {}) or None
        last = len(self.passes) - 1
        self.slider = w.IntSlider(value=last, min=0, max=last, description="pass",
                                  continuous_update=False, layout=w.Layout(width="60%"))
        self.prev = w.Button(description="◀ prev", layout=w.Layout(width="80px"))
        self.next = w.Button(description="next ▶", layout=w.Layout(width="80px"))
        self.info = w.HTML()
        self.fig = go.FigureWidget()
        style(self.fig)
        self.prev.on_click(lambda _: self._step(-1))
        self.next.on_click(lambda _: self._step(+1))
        self.slider.observe(lambda ch: self._show(ch["new"]), names="value")
        self.widget = w.VBox([
            w.HBox([self.prev, self.slider, self.next]),
            w.HBox([self.fig, self.info], layout=w.Layout(align_items="flex-start")),
        ])
        self.info.layout.width = "38%"
        self._show(last)

    # -- state -----------------------------------------------------------
    @property
    def index(self) -> int:
        return self.slider.value

    @property
    def current(self) -> PassSnapshot:
        return self.passes[self.index]

    def _step(self, d: int) -> None:
        self.slider.value = min(max(self.slider.value + d, 0), self.slider.max)

    def _show(self, i: int) -> None:
        snap = self.passes[i]
        title = f"{snap.index}: {snap.name}"
        with self.fig.batch_update():
            self.fig.data = []
            self.fig.add_traces(traces(snap.nodes, self._graph_inputs))
            self.fig.layout.title = title
        self.info.value = self._side_html()
        self.prev.disabled = i == 0
        self.next.disabled = i == self.slider.max

    def _figure_widget(self):
        return self.fig

    @property
    def figure(self):
        snap = self.current
        return dag_figure(snap.nodes, f"{snap.index}: {snap.name}", self._graph_inputs)

    # -- the side panel ----------------------------------------------------------
    def _side_html(self) -> str:
        i = self.index if hasattr(self, "slider") else len(self.passes) - 1
        snap = self.passes[i]
        c = snap.counts
        prev = self.passes[i - 1] if i > 0 else None
        pc = prev.counts if prev else None

        def delta(key: str) -> str:
            if not pc or pc[key] == c[key]:
                return ""
            d = c[key] - pc[key]
            return f" <span style='color:{'#2b7a0b' if d < 0 else '#b00'}'>({d:+d})</span>"

        wb = fmt_bytes(snap.const_bytes) if snap.const_bytes >= 0 else "?"
        if prev and prev.const_bytes >= 0 and snap.const_bytes >= 0 and prev.const_bytes != snap.const_bytes:
            wb += f" ({fmt_bytes(snap.const_bytes - prev.const_bytes)})"
        status = "" if snap.index == 0 else (
            "ran" if snap.ran else "skipped (disabled or above the level)" if not snap.enabled else "did not run")
        rows = [
            ("pass", f"<b>{esc(snap.name)}</b>" + (f" (level {snap.level})" if snap.level else "")),
            ("what", esc(snap.description)),
            ("status", esc(status) + (f", {snap.ms:.2f} ms" if snap.ms else "")),
            ("nodes", f"{c['nodes']}{delta('nodes')}"),
            ("MatMuls", f"{c['matmuls']}{delta('matmuls')}"),
            ("fused", f"{c['fused']}{delta('fused')}"),
            ("weights", wb),
        ]
        table = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                        for k, v in rows)
        changes = "".join(
            f"<li><b>{esc(x['kind'])}</b> <code>{esc(x['node'])}</code> {esc(x['op'])}"
            + (f": {esc(x['reason'])}" if x.get("reason") else "") + "</li>"
            for x in snap.changes[:40])
        if len(snap.changes) > 40:
            changes += f"<li>... and {len(snap.changes) - 40} more</li>"
        return (f"<table>{table}</table><div><b>changes</b><ul style='margin-top:2px'>"
                f"{changes or '<li>none</li>'}</ul></div>")

    def __repr__(self) -> str:
        return f"<FusionStepper {len(self.passes)} entries, at {self.index}: {self.current.name}>"
