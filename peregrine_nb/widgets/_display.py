"""Showing a widget so that it also survives in a saved notebook.

A live Jupyter front end renders the widget view; nbconvert, GitHub and a
notebook opened without a kernel fall back to the static HTML in the same
MIME bundle.  The HTML is the viewer's current figure (built in its final
state first) with its side panel, so what a reader saw is what is stored.
"""
from __future__ import annotations

import html
from typing import Any


def figure_html(fig, full: bool = False) -> str:
    """A plotly figure as a self-contained HTML fragment (plotly.js from the CDN)."""
    return fig.to_html(include_plotlyjs="cdn", full_html=full)


class Viewer:
    """Base of the notebook viewers: ``.widget`` (the live ipywidgets box),
    ``.figure`` (a plain plotly Figure in the current state) and a MIME
    bundle holding both the widget view and a static fallback."""

    title = "viewer"

    widget: Any

    @property
    def figure(self):
        """The current state as a plain plotly Figure (a copy)."""
        import plotly.graph_objects as go

        return go.Figure(self._figure_widget())

    def _figure_widget(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _side_html(self) -> str:
        return ""

    def _static_html(self) -> str:
        side = self._side_html()
        return ("<div style='display:flex;gap:1em;align-items:flex-start'>"
                f"<div style='flex:3'>{figure_html(self.figure)}</div>"
                + (f"<div style='flex:2;font-size:12px'>{side}</div>" if side else "")
                + "</div>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        # A front end that opens the widget after the figure was filled in
        # (Voila, a reloaded page) draws from the synced traitlets, which
        # plotly only updates when a view already exists: bring them up to date.
        import copy

        fw = self._figure_widget()
        fw._widget_data = copy.deepcopy(fw._data)
        fw._widget_layout = copy.deepcopy(fw._layout)
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/html"] = self._static_html()
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def esc(x: Any) -> str:
    return html.escape(str(x))


def fmt_bytes(n: float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
