"""A graph snapshot drawn as a layered DAG with plotly.

Layers come from the longest path from the graph's inputs (a node sits one
layer right of its deepest producer), nodes are stacked within a layer in
execution order; edges are straight lines from producer to consumer.  Nodes
are coloured by kind and fused nodes drawn as diamonds with a dark rim, so a
fusion shows as several circles collapsing into one diamond.
"""
from __future__ import annotations

from typing import Any

KIND_COLOURS = {
    "matmul": "#d62728",
    "attention": "#9467bd",
    "norm": "#2ca02c",
    "elementwise": "#1f77b4",
    "shape": "#7f7f7f",
    "input": "#bcbd22",
    "other": "#ff7f0e",
}

_SHAPE_OPS = {"reshape", "transpose", "split", "concat", "gather", "slice", "squeeze", "unsqueeze",
              "shape", "flatten", "expand", "constant", "constantofshape", "cast", "identity",
              "range", "tile", "where", "pad"}
_NORM_OPS = {"layernormalization", "rmsnormalization", "rmsnorm", "layernorm", "reducemean",
             "batchnormalization", "instancenormalization", "groupnormalization", "skiplayernormalization"}
_ELTWISE_OPS = {"add", "sub", "mul", "div", "pow", "sqrt", "relu", "gelu", "sigmoid", "tanh", "silu",
                "erf", "exp", "log", "neg", "abs", "reciprocal", "max", "min", "clip", "fastgelu",
                "leakyrelu", "equal", "less", "greater", "not", "and", "or", "softplus", "hardsigmoid"}


def kind_of(op: str) -> str:
    o = op.lower()
    if "attention" in o or o == "softmax":
        return "attention"
    if "matmul" in o or o in ("gemm", "conv"):
        return "matmul"
    if "norm" in o or o in _NORM_OPS:
        return "norm"
    if o in _SHAPE_OPS:
        return "shape"
    if o in _ELTWISE_OPS:
        return "elementwise"
    return "other"


def layout(nodes: list[dict[str, Any]], graph_inputs=None) -> tuple[dict[str, tuple[float, float]], list[tuple[str, str]], list[str]]:
    """Positions (x = layer, y = slot) of every node and of the graph inputs
    that feed them (weights left out), the edges, and the input names."""
    producer = {}
    for n in nodes:
        for t in n["outputs"]:
            if t:
                producer[t] = n["name"]
    layer: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    inputs: list[str] = []
    for n in nodes:  # execution order: producers come first
        deepest = -1
        for t in n["inputs"]:
            if not t:
                continue
            if t in producer:
                src = producer[t]
                deepest = max(deepest, layer.get(src, 0))
                edges.append((src, n["name"]))
            elif (t in graph_inputs) if graph_inputs is not None else not _is_weight(t):
                key = "in:" + t
                if key not in layer:
                    layer[key] = 0
                    inputs.append(t)
                edges.append((key, n["name"]))
                deepest = max(deepest, 0)
        layer[n["name"]] = deepest + 1
    by_layer: dict[int, list[str]] = {}
    for name, lv in layer.items():
        by_layer.setdefault(lv, []).append(name)
    pos = {}
    for lv, names in by_layer.items():
        k = len(names)
        for i, name in enumerate(names):
            pos[name] = (float(lv), (k - 1) / 2.0 - i)
    return pos, edges, inputs


def _is_weight(tensor: str) -> bool:
    # without the model's input list, tell weights from inputs by name
    t = tensor.lower()
    return any(k in t for k in ("weight", "bias", "gamma", "beta", "const", "qkv_", "ln_ones")) or \
        t.startswith(("w", "b")) and t[1:].isdigit()


def hover(n: dict[str, Any]) -> str:
    lines = [f"<b>{n['name']}</b>: {n['op']}" + (" (fused)" if n.get("fused") else "")]
    ins = n.get("in_shapes") or []
    for i, t in enumerate(n["inputs"]):
        if t:
            lines.append(f"in  {t}: {ins[i] if i < len(ins) else '?'}")
    shapes, dtypes = n.get("shapes") or [], n.get("dtypes") or []
    for i, t in enumerate(n["outputs"]):
        lines.append(f"out {t}: {dtypes[i] if i < len(dtypes) else '?'}[{shapes[i] if i < len(shapes) else '?'}]")
    if n.get("attrs"):
        lines.append(n["attrs"])
    return "<br>".join(lines)


def traces(nodes: list[dict[str, Any]], graph_inputs=None):
    """The plotly traces of one snapshot: edges, inputs, one trace per kind."""
    import plotly.graph_objects as go

    pos, edges, inputs = layout(nodes, graph_inputs)
    ex, ey = [], []
    for a, b in edges:
        if a in pos and b in pos:
            ex += [pos[a][0], pos[b][0], None]
            ey += [pos[a][1], pos[b][1], None]
    out = [go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbb", width=1),
                      hoverinfo="skip", name="edges", showlegend=False)]
    if inputs:
        out.append(go.Scatter(
            x=[pos["in:" + t][0] for t in inputs], y=[pos["in:" + t][1] for t in inputs],
            mode="markers+text", text=inputs, textposition="middle left",
            marker=dict(size=10, color=KIND_COLOURS["input"], symbol="square"),
            hovertext=[f"graph input {t}" for t in inputs], hoverinfo="text", name="input"))
    labels = len(nodes) <= 60  # beyond that the op names overlap: hover tells them
    for kind, colour in KIND_COLOURS.items():
        group = [n for n in nodes if kind_of(n["op"]) == kind and n["name"] in pos]
        if kind == "input" or not group:
            continue
        out.append(go.Scatter(
            x=[pos[n["name"]][0] for n in group], y=[pos[n["name"]][1] for n in group],
            mode="markers+text" if labels else "markers", text=[n["op"] for n in group],
            textposition="top center",
            textfont=dict(size=9),
            marker=dict(size=[18 if n.get("fused") else 12 for n in group], color=colour,
                        symbol=["diamond" if n.get("fused") else "circle" for n in group],
                        line=dict(width=[3 if n.get("fused") else 0 for n in group], color="#222")),
            hovertext=[hover(n) for n in group], hoverinfo="text", name=kind))
    return out


def figure(nodes: list[dict[str, Any]], title: str = "", graph_inputs=None):
    import plotly.graph_objects as go

    fig = go.Figure(traces(nodes, graph_inputs))
    style(fig, title)
    return fig


def style(fig, title: str = "") -> None:
    fig.update_layout(title=title, height=420, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(visible=False), yaxis=dict(visible=False),
                      plot_bgcolor="white", legend=dict(orientation="h", y=-0.02))
