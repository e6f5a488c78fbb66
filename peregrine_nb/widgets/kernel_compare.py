"""Kernel comparison: race the variants of a kernel family on chosen shapes.

Kernel family, shapes and variants are picked in the widget; Run benchmarks them with
:func:`peregrine_nb.kernels.benchmark` while a progress bar moves, then draws
GFLOP/s per variant as bars and a roofline (arithmetic intensity against
GFLOP/s, under the machine's measured FMA peak and copy bandwidth).  The
numbers are ``.results``, a DataFrame.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .. import kernels
from ._display import Viewer, esc

DEFAULT_SHAPES = {family: shape for family, (shape, _) in kernels.BENCH_SHAPES.items()}
SHAPE_HELP = {family: help_ for family, (_, help_) in kernels.BENCH_SHAPES.items()}
_PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def bench_ops() -> list[str]:
    """The kernel families kernels.benchmark knows how to run, in table order."""
    known = kernels.BENCH_FAMILIES
    return [family for family in kernels.families() if family in known]


def parse_shapes(text: str | Sequence[Any]) -> list[tuple[int, ...]]:
    """'256x256x256, 64x1024x1024' (or ';' / spaces between shapes, 'x' or
    '*' inside one) -> [(256, 256, 256), (64, 1024, 1024)]."""
    if not isinstance(text, str):
        return [tuple(int(d) for d in s) for s in text]
    shapes = []
    for part in re.split(r"[;,\s]+", text.strip()):
        if not part:
            continue
        dims = re.split(r"[x*X]", part)
        if not all(d.isdigit() for d in dims):
            raise ValueError(f"bad shape {part!r}: write it as 256x256x256")
        shapes.append(tuple(int(d) for d in dims))
    if not shapes:
        raise ValueError("no shape given")
    return shapes


class KernelComparison(Viewer):
    """See the module docstring.  ``peaks`` ({'fma_gflops', 'copy_gbps'})
    skips measuring the machine (about half a second)."""

    title = "kernels"

    def __init__(self, family: str = "sgemm", shapes: str | Sequence[Any] | None = None,
                 variants: Sequence[str] | None = None, threads: int | None = 1,
                 peaks: dict[str, float] | None = None, min_time: float = 0.02, repeat: int = 5) -> None:
        import ipywidgets as w
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        families = bench_ops()
        if family not in families:
            raise ValueError(f"kernel family {family!r} cannot be benchmarked here "
                             f"(choose from {', '.join(families)})")
        self.min_time, self.repeat = min_time, repeat
        self._peaks = dict(peaks) if peaks else None
        self.results = None
        self.family = w.Dropdown(options=families, value=family, description="family")
        if isinstance(shapes, str) or shapes is None:
            shape_text = shapes or DEFAULT_SHAPES.get(family, "")
        else:
            shape_text = ", ".join("x".join(str(d) for d in s) for s in shapes)
        self.shapes = w.Text(value=shape_text, description="shapes",
                             placeholder=SHAPE_HELP.get(family, ""), layout=w.Layout(width="40%"))
        self.variants = w.SelectMultiple(description="variants", rows=4)
        self.threads = w.BoundedIntText(value=threads or 1, min=1, max=1024, description="threads",
                                        layout=w.Layout(width="160px"))
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="", layout=w.Layout(width="40%"))
        self.status = w.HTML()
        self.table = w.HTML()
        self.fig = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=("GFLOP/s per variant", "roofline")))
        self._empty_layout(self.fig)
        self.family.observe(self._family_changed, names="value")
        self.run_button.on_click(lambda _: self.run())
        self._fill_variants(family, variants)
        self.widget = w.VBox([
            w.HBox([self.family, self.shapes, self.threads]),
            w.HBox([self.variants, w.VBox([self.run_button, self.progress, self.status])]),
            self.fig, self.table,
        ])

    # -- controls ----------------------------------------------------------------
    def _fill_variants(self, family: str, chosen: Sequence[str] | None = None) -> None:
        names = kernels.runnable_variants(family)
        self.variants.options = names
        self.variants.value = tuple(v for v in (chosen or names) if v in names)

    def _family_changed(self, ch) -> None:
        self._fill_variants(ch["new"])
        self.shapes.value = DEFAULT_SHAPES.get(ch["new"], "")
        self.shapes.placeholder = SHAPE_HELP.get(ch["new"], "")

    @property
    def peaks(self) -> dict[str, float]:
        if self._peaks is None:
            self._peaks = kernels.measure_peak(self.threads.value)
        return self._peaks

    # -- running -------------------------------------------------------------------
    def run(self):
        """Benchmark now; returns (and keeps in .results) the DataFrame."""
        try:
            shapes = parse_shapes(self.shapes.value)
        except ValueError as e:
            self.status.value = f"<span style='color:#b00'>{esc(e)}</span>"
            return None
        names = list(self.variants.value)
        if not names:
            self.status.value = "<span style='color:#b00'>choose at least one variant</span>"
            return None
        self.progress.value, self.progress.max = 0, len(shapes) * len(names)
        self.status.value = "running..."
        self.run_button.disabled = True

        def tick(done: int, total: int) -> None:
            self.progress.max = total
            self.progress.value = done

        try:
            df = kernels.benchmark(self.family.value, shapes, variants=names, threads=self.threads.value,
                                   repeat=self.repeat, min_time=self.min_time, progress=tick)
        except Exception as e:  # noqa: BLE001 - shown in the widget, not raised into the event loop
            self.status.value = f"<span style='color:#b00'>{esc(type(e).__name__)}: {esc(e)}</span>"
            return None
        finally:
            self.run_button.disabled = False
        self.results = df
        self.peaks  # measured once, after the race, so it does not disturb it
        self.status.value = f"done: {len(df)} measurements"
        self._draw(self.fig)
        self.table.value = df.to_html(index=False, float_format=lambda v: f"{v:.4g}")
        return df

    # -- drawing ---------------------------------------------------------------------
    @staticmethod
    def _empty_layout(fig) -> None:
        fig.update_layout(height=380, margin=dict(l=10, r=10, t=40, b=10), barmode="group",
                          plot_bgcolor="white", legend=dict(orientation="h", y=-0.2))
        fig.update_xaxes(type="log", title_text="FLOP / byte", row=1, col=2)
        fig.update_yaxes(type="log", title_text="GFLOP/s", row=1, col=2)
        fig.update_yaxes(title_text="GFLOP/s", row=1, col=1)

    def _traces(self) -> list[tuple[Any, int]]:
        import numpy as np
        import plotly.graph_objects as go

        df = self.results
        out: list[tuple[Any, int]] = []
        for i, (name, g) in enumerate(df.groupby("variant", sort=False)):
            colour = _PALETTE[i % len(_PALETTE)]
            out.append((go.Bar(x=g["shape"], y=g["gflops"], name=name, marker_color=colour,
                               legendgroup=name, hovertemplate="%{x}: %{y:.2f} GFLOP/s"), 1))
            out.append((go.Scatter(x=g["intensity"], y=g["gflops"], mode="markers", name=name,
                                   marker=dict(color=colour, size=10), legendgroup=name, showlegend=False,
                                   text=g["shape"], hovertemplate="%{text}: %{x:.2f} FLOP/B, %{y:.2f} GFLOP/s"), 2))
        pk = self.peaks
        fma, bw = pk["fma_gflops"], pk["copy_gbps"]
        lo = min(float(df.intensity.min()), fma / bw) / 4
        hi = max(float(df.intensity.max()), fma / bw) * 4
        xs = np.geomspace(lo, hi, 64)
        out.append((go.Scatter(x=xs, y=np.minimum(fma, bw * xs), mode="lines", name="roofline",
                               line=dict(color="#333", width=2),
                               hovertemplate="attainable %{y:.1f} GFLOP/s at %{x:.2f} FLOP/B"), 2))
        out.append((go.Scatter(x=[lo, hi], y=[fma, fma], mode="lines", name=f"FMA peak {fma:.0f} GFLOP/s",
                               line=dict(color="#b00", dash="dash")), 2))
        out.append((go.Scatter(x=xs, y=bw * xs, mode="lines", name=f"copy bandwidth {bw:.0f} GB/s",
                               line=dict(color="#06c", dash="dot")), 2))
        return out

    def _draw(self, fig) -> None:
        traces = self._traces()
        with fig.batch_update() if hasattr(fig, "batch_update") else _null():
            fig.data = []
            for tr, col in traces:
                fig.add_trace(tr, row=1, col=col)
            self._empty_layout(fig)
            fig.layout.title = f"{self.family.value}, {self.threads.value} thread(s)"

    def _figure_widget(self):
        return self.fig

    @property
    def figure(self):
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=1, cols=2, subplot_titles=("GFLOP/s per variant", "roofline"))
        self._empty_layout(fig)
        if self.results is not None:
            self._draw(fig)
        return go.Figure(fig)

    def _side_html(self) -> str:
        return self.table.value

    def _static_html(self) -> str:
        from ._display import figure_html

        return figure_html(self.figure) + self.table.value

    def __repr__(self) -> str:
        n = 0 if self.results is None else len(self.results)
        return f"<KernelComparison family={self.family.value} {n} results>"


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
