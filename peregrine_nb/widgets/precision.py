"""Speed against error for one model in fp32, bf16 and int8-dynamic - the
viewer beside the kernel race.

``PrecisionTradeoff(graph, feeds)`` compiles ``graph`` once per precision
(``pg.compile(graph, precision=...)``), and on Run times each (median of
``repeat`` runs, the precisions interleaved) and compares each against the
fp32 model on the same feeds (``CompiledModel.compare``): a scatter of
median latency against error (1 - cosine, log scale) per output, and a
table with the speed-up over fp32, max abs / max rel error, cosine and the
precision each model really got (a CPU without the kernels falls back to
fp32, and says so).

>>> from peregrine_nb.widgets import PrecisionTradeoff              # doctest: +SKIP
>>> PrecisionTradeoff(g, {"x": x}).run()                            # doctest: +SKIP
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np

from ._display import Viewer, esc

PRECISIONS = ("fp32", "bf16", "int8-dynamic")
_COLOURS = {"fp32": "#333", "bf16": "#06c", "int8-dynamic": "#c60"}


class PrecisionTradeoff(Viewer):
    """See the module docstring."""

    title = "precision"

    def __init__(self, graph, feeds: Mapping[str, Any], precisions: Sequence[str] = PRECISIONS,
                 threads: int | None = 1, repeat: int = 7, level: int = 3) -> None:
        import ipywidgets as w
        import plotly.graph_objects as go

        from ..compiled import compile as _compile

        self.graph, self.feeds, self.repeat = graph, dict(feeds), int(repeat)
        self.precisions = list(dict.fromkeys(["fp32", *precisions]))   # fp32 is the reference
        self.models = {p: _compile(graph, level=level, threads=threads, precision=p) for p in self.precisions}
        self.results = None
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.status = w.HTML()
        self.table = w.HTML()
        self.fig = go.FigureWidget()
        self._layout(self.fig)
        self.run_button.on_click(lambda _: self.run())
        self.widget = w.VBox([w.HBox([self.run_button, self.status]), self.fig, self.table])

    def run(self):
        """Time and compare now; returns (and keeps in .results) the DataFrame:
        one row per precision and output."""
        import pandas as pd

        self.run_button.disabled = True
        self.status.value = "running..."
        try:
            times = {p: [] for p in self.precisions}
            for m in self.models.values():
                m.run(self.feeds)                     # warm up
            for _ in range(self.repeat):              # interleaved
                for p, m in self.models.items():
                    t0 = time.perf_counter()
                    m.run(self.feeds)
                    times[p].append(time.perf_counter() - t0)
            ref = self.models["fp32"]
            rows = []
            for p, m in self.models.items():
                med = float(np.median(times[p])) * 1e3
                err = m.compare(ref, self.feeds)
                for out, e in err.iterrows():
                    rows.append({"precision": p, "bound": m.precision, "output": out, "median_ms": med,
                                 "speedup": 0.0, "max_abs": e.max_abs, "max_rel": e.max_rel,
                                 "cosine": e.cosine, "one_minus_cos": max(1.0 - e.cosine, 1e-12)})
            df = pd.DataFrame(rows)
            base = float(df[df.precision == "fp32"].median_ms.iloc[0])
            df["speedup"] = base / df.median_ms
        except Exception as e:  # noqa: BLE001 - shown in the widget
            self.status.value = f"<span style='color:#b00'>{esc(type(e).__name__)}: {esc(e)}</span>"
            return None
        finally:
            self.run_button.disabled = False
        self.results = df
        self.status.value = f"done: {len(self.precisions)} precisions x {self.repeat} runs"
        self._draw(self.fig)
        self.table.value = df.drop(columns=["one_minus_cos"]).to_html(
            index=False, float_format=lambda v: f"{v:.4g}")
        return df

    @staticmethod
    def _layout(fig) -> None:
        fig.update_layout(height=360, margin=dict(l=10, r=10, t=40, b=10), plot_bgcolor="white",
                          title="speed against error (against fp32)",
                          xaxis=dict(title="median latency, ms"),
                          yaxis=dict(title="1 - cosine", type="log"))

    def _draw(self, fig) -> None:
        import plotly.graph_objects as go

        df = self.results
        fig.data = []
        for p, g in df.groupby("precision", sort=False):
            fig.add_trace(go.Scatter(
                x=g.median_ms, y=g.one_minus_cos, mode="markers+text", name=f"{p} (bound {g.bound.iloc[0]})",
                text=[p] * len(g), textposition="top center",
                marker=dict(size=14, color=_COLOURS.get(p, "#888")),
                customdata=np.stack([g.output, g.max_abs, g.speedup], axis=1) if len(g) else None,
                hovertemplate="%{customdata[0]}: %{x:.2f} ms, 1-cos %{y:.2e}, max abs %{customdata[1]:.3g}, "
                              "%{customdata[2]:.2f}x fp32"))
        self._layout(fig)

    def _figure_widget(self):
        return self.fig

    def _side_html(self) -> str:
        return self.table.value

    def __repr__(self) -> str:
        n = 0 if self.results is None else len(self.results)
        return f"<PrecisionTradeoff {'/'.join(self.precisions)} {n} results>"

