"""The memory pool viewer: the activation arena of a compiled model.

x is the execution step, y the offset in the arena; each tensor is a
rectangle spanning its lifetime (the step that makes it to the last step
that reads it) and its bytes.  A step slider highlights what is live at that
step; beside the plot the arena the planner needed, the naive sum of every
buffer and the lower bound (most bytes live at one step); a dropdown
recompiles the model with another planner and redraws.
"""
from __future__ import annotations

from typing import Any

from ._display import Viewer, esc, fmt_bytes
from ._passlog import _parse_tensors, source_graph

PLANNERS = ("greedy_by_size", "greedy_by_first_use", "naive")
_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf"]


class MemoryViewer(Viewer):
    """See the module docstring.  ``graph`` is the source Graph, needed to
    recompile with another planner (found on the model when it was kept)."""

    title = "memory"

    def __init__(self, model, graph=None) -> None:
        import ipywidgets as w
        import plotly.graph_objects as go

        self.model = model
        self.graph = graph if graph is not None else source_graph(model)
        self.models = {model.memory_stats["planner"]: model}
        current = next(iter(self.models))
        options = list(PLANNERS) if current in PLANNERS else [current, *PLANNERS]
        self.dropdown = w.Dropdown(options=options, value=current, description="planner",
                                   disabled=self.graph is None)
        self.slider = w.IntSlider(value=0, min=0, max=max(model.memory_stats["steps"] - 1, 0),
                                  description="step", continuous_update=True)
        self.stats = w.HTML()
        self.fig = go.FigureWidget()
        self.dropdown.observe(lambda ch: self.set_planner(ch["new"]), names="value")
        self.slider.observe(lambda ch: self._highlight(ch["new"]), names="value")
        note = [] if self.graph is not None else [w.HTML(
            "<i>the source graph was not kept with this model: the planner cannot be switched</i>")]
        self.widget = w.VBox([w.HBox([self.dropdown, self.slider]), *note,
                              w.HBox([self.fig, self.stats], layout=w.Layout(align_items="flex-start"))])
        self.stats.layout.width = "34%"
        self._draw()

    # -- data ------------------------------------------------------------------
    @property
    def planner(self) -> str:
        return self.dropdown.value

    @property
    def plan(self):
        """The arena rows of the current model's plan (a DataFrame)."""
        df = self.model.memory_plan
        return df[(df.offset >= 0) & df.kind.isin(["arena", "inplace", "view"]) & (df.bytes > 0)]

    def _shapes(self) -> dict[str, str]:
        out = {}
        for s in self.model.steps:
            for name, dtype, dims in _parse_tensors(s["outputs"]):
                out[name] = f"{dtype}[{dims.replace('x', ', ')}]"
        return out

    def set_planner(self, planner: str) -> None:
        """Recompile with planner (cached per planner) and redraw."""
        if planner not in self.models:
            if self.graph is None:
                raise ValueError("the source graph is unknown: cannot recompile")
            from ..compiled import compile as pg_compile

            self.models[planner] = pg_compile(self.graph, level=self.model.level,
                                              disable=self.model.disable, planner=planner)
        self.model = self.models[planner]
        if self.dropdown.value != planner:
            self.dropdown.value = planner  # re-enters through observe; harmless
        self._draw()

    # -- drawing -----------------------------------------------------------------
    def _traces(self, step: int) -> list[Any]:
        import plotly.graph_objects as go

        shapes = self._shapes()
        out = []
        for i, r in enumerate(self.plan.to_dict("records")):
            x0, x1 = max(r["first"], 0) - 0.45, r["last"] + 0.45
            y0, y1 = r["offset"], r["offset"] + r["bytes"]
            live = max(r["first"], 0) <= step <= r["last"]
            shared = r["kind"] != "arena"
            text = (f"<b>{esc(r['tensor'])}</b> {esc(shapes.get(r['tensor'], ''))}<br>"
                    f"{fmt_bytes(r['bytes'])} at offset {r['offset']}<br>"
                    f"live steps {r['first']}..{r['last']}"
                    + (f"<br>{r['kind']} of {esc(r['alias_of'])}" if shared and r.get("alias_of") else ""))
            out.append(go.Scatter(
                x=[x0, x1, x1, x0, x0], y=[y0, y0, y1, y1, y0], mode="lines", fill="toself",
                fillcolor=_PALETTE[i % len(_PALETTE)] if not shared else "rgba(0,0,0,0)",
                line=dict(color="#333" if live else "#999", width=2 if live else 1,
                          dash="dot" if shared else "solid"),
                opacity=0.9 if live else 0.25, name=r["tensor"], text=text, hoveron="fills+points",
                hoverinfo="text", showlegend=False))
        return out

    def _layout(self, fig, step: int) -> None:
        st = self.model.memory_stats
        fig.update_layout(
            title=f"arena {fmt_bytes(st['arena'])} ({st['planner']})", height=420,
            margin=dict(l=10, r=10, t=40, b=30), plot_bgcolor="white",
            xaxis=dict(title="execution step", dtick=1 if st["steps"] <= 40 else None, zeroline=False),
            yaxis=dict(title="arena offset (bytes)", zeroline=False, gridcolor="#eee"),
            shapes=[dict(type="line", x0=step, x1=step, y0=0, y1=max(st["arena"], 1),
                         line=dict(color="#b00", width=2)),
                    dict(type="line", x0=-0.5, x1=max(st["steps"] - 0.5, 0.5), y0=st["arena"], y1=st["arena"],
                         line=dict(color="#555", dash="dash", width=1))])

    def _draw(self) -> None:
        steps = max(self.model.memory_stats["steps"] - 1, 0)
        self.slider.max = steps
        if self.slider.value > steps:
            self.slider.value = steps
        step = self.slider.value
        with self.fig.batch_update():
            self.fig.data = []
            self.fig.add_traces(self._traces(step))
            self._layout(self.fig, step)
        self.stats.value = self._side_html()

    def _highlight(self, step: int) -> None:
        rows = self.plan.to_dict("records")
        with self.fig.batch_update():
            for tr, r in zip(self.fig.data, rows):
                live = max(r["first"], 0) <= step <= r["last"]
                tr.opacity = 0.9 if live else 0.25
                tr.line.color = "#333" if live else "#999"
                tr.line.width = 2 if live else 1
            if self.fig.layout.shapes:
                self.fig.layout.shapes[0].x0 = step
                self.fig.layout.shapes[0].x1 = step
        self.stats.value = self._side_html()

    def live_at(self, step: int) -> list[str]:
        return [r["tensor"] for r in self.plan.to_dict("records") if max(r["first"], 0) <= step <= r["last"]]

    def _figure_widget(self):
        return self.fig

    @property
    def figure(self):
        import plotly.graph_objects as go

        fig = go.Figure(self._traces(self.slider.value))
        self._layout(fig, self.slider.value)
        return fig

    def _side_html(self) -> str:
        rows_html = []
        for name, m in sorted(self.models.items()):
            st = m.memory_stats
            mark = " style='font-weight:bold'" if m is self.model else ""
            rows_html.append(f"<tr{mark}><td>{esc(name)}</td><td>{fmt_bytes(st['arena'])}</td>"
                             f"<td>{fmt_bytes(st['naive'])}</td><td>{fmt_bytes(st['lower_bound'])}</td></tr>")
        st = self.model.memory_stats
        step = self.slider.value
        plan = self.plan
        live = plan[(plan["first"].clip(lower=0) <= step) & (plan["last"] >= step)]
        live_own = live[live.kind == "arena"]
        items = "".join(f"<li><code>{esc(t)}</code> {fmt_bytes(b)}</li>"
                        for t, b in zip(live.tensor[:20], live.bytes[:20]))
        ratio = st["arena"] / st["lower_bound"] if st["lower_bound"] else float("nan")
        df = self.model.memory_plan
        pers = df[df.kind == "persistent"]
        persistent = (f"<p>persistent (kept across runs, outside the arena: a KV cache) "
                      f"{fmt_bytes(st.get('persistent', 0))} in {len(pers)} buffers"
                      + (f", e.g. <code>{esc(pers.tensor.iloc[0])}</code>" if len(pers) else "")
                      + "</p>") if st.get("persistent") else ""
        return (
            "<table><tr><th>planner</th><th>arena</th><th>naive sum</th><th>lower bound</th></tr>"
            + "".join(rows_html) + "</table>"
            f"<p>arena / lower bound = {ratio:.2f}; weights {fmt_bytes(st['weights'])} (separate arena"
            + (f"; {fmt_bytes(st['weights_shared'])} of them one copy with the other compiled models "
               "that hold the same bytes" if st.get("weights_shared") else "") + ")</p>"
            + persistent +
            f"<p><b>step {step}</b>: {len(live)} live, {fmt_bytes(int(live_own.bytes.sum()))} in the arena</p>"
            f"<ul>{items}</ul>")

    def __repr__(self) -> str:
        st = self.model.memory_stats
        pers = f" persistent={st['persistent']}B" if st.get("persistent") else ""
        return (f"<MemoryViewer planner={st['planner']} arena={st['arena']}B naive={st['naive']}B "
                f"lower_bound={st['lower_bound']}B{pers}>")
