"""The headless tour: what the engine does, printed step by step.

    peregrine-nb tour [--html FILE] [--quick]

1. the CPU and the kernel variant each kernel family dispatches to;
2. the kernel variants raced against each other and the C reference;
3. a model compiled pass by pass, with what each pass changed and why;
4. its memory plan drawn as text (one row per step, one letter per buffer);
5. sentence embeddings from all-MiniLM-L6-v2 and their similarities, when
   the model package is installed, and the timing against ONNX Runtime when
   that is installed too.

`--html FILE` writes the same sections as a page with the interactive
figures (plotly) embedded.
"""
from __future__ import annotations

import html as html_mod
import time
from dataclasses import dataclass, field
from typing import Any

from . import kernels
from .compiled import compile as pg_compile
from .cpu import cpu_info
from .memory_text import draw_memory_plan


@dataclass
class Section:
    title: str
    text: str
    figures: list[Any] = field(default_factory=list)


def _table(df, columns, floatfmt="{:.2f}") -> str:
    view = df[columns].copy()
    for c in view.columns:
        if view[c].dtype.kind == "f":
            view[c] = view[c].map(floatfmt.format)
    return view.to_string(index=False)


def section_cpu() -> Section:
    return Section("CPU and dispatch", str(cpu_info()))


def section_kernels(quick: bool) -> Section:
    repeat, min_time = (3, 0.005) if quick else (5, 0.02)
    parts, figures = [], []
    for family, shapes in [("sgemm", [(128, 384, 384)] if quick else [(128, 384, 384), (256, 256, 256)]),
                           ("softmax", [(128, 128)]), ("layernorm", [(128, 384)]), ("gelu_erf", [(65536,)])]:
        df = kernels.benchmark(family, shapes, repeat=repeat, min_time=min_time, threads=1)
        metric = "gflops" if family == "sgemm" else "gbps"
        parts.append(f"{family}:\n" + _table(df, ["shape", "variant", "seconds", metric, "speedup_vs_c"],
                                             "{:.3g}"))
        figures.append(_bar_figure(df, family, metric))
    return Section("Kernel variants raced (1 thread, medians)", "\n\n".join(parts), figures)


def _bar_figure(df, family, metric):
    try:
        import plotly.graph_objects as go
    except ImportError:
        return None
    fig = go.Figure(go.Bar(x=df["variant"] + " " + df["shape"], y=df[metric]))
    fig.update_layout(title=f"{family}: {metric}", height=320, margin=dict(l=40, r=10, t=40, b=80))
    return fig


def _model_for_tour(quick: bool):
    """MiniLM when its package is installed, else a BERT-style block."""
    from .models import find_minilm_dir, minilm

    try:
        find_minilm_dir()
    except FileNotFoundError:  # the model package is optional for the tour
        from .examples import transformer_block
        g = transformer_block(seq=32, hidden=128 if quick else 384, heads=4 if quick else 12)
        return "a BERT encoder layer (examples.transformer_block)", None, g
    enc = minilm()
    return "all-MiniLM-L6-v2, batch 1, sequence 32", enc, enc.graph(batch=1, seq=32)


def section_compile(graph, label: str) -> tuple[Section, Any]:
    t0 = time.perf_counter()
    model = pg_compile(graph, level=3)
    ms = (time.perf_counter() - t0) * 1e3
    lines = [f"model: {label}; compiled at level 3 in {ms:.0f} ms"]
    prev_nodes = None
    for p in model.passes:
        n_nodes = len(p["nodes"])
        delta = "" if prev_nodes is None else f" ({n_nodes - prev_nodes:+d})"
        state = "" if p["enabled"] else "  [disabled]"
        lines.append(f"  {p['name']:<22} level {p['level']}  {n_nodes:4d} nodes{delta}  "
                     f"{len(p['changes'])} changes{state}")
        seen = set()
        for c in p["changes"]:
            if c["reason"] and c["reason"] not in seen and len(seen) < 3:
                seen.add(c["reason"])
                lines.append(f"      - {c['reason']}")
        if len(p["changes"]) > len(seen) and seen:
            lines.append(f"      ... {len(p['changes']) - len(seen)} more")
        prev_nodes = n_nodes
    ops = model.op_types
    counts = {op: ops.count(op) for op in sorted(set(ops))}
    lines.append("execution plan: " + ", ".join(f"{k} x{v}" for k, v in counts.items()))
    return Section("Compiling, pass by pass", "\n".join(lines)), model


def section_memory(model) -> Section:
    st = model.memory_stats
    plan = model.memory_plan
    head = (f"planner {st['planner']}: arena {st['arena']:,} B, lower bound {st['lower_bound']:,} B "
            f"({st['arena'] / max(st['lower_bound'], 1):.2f}x), naive sum {st['naive']:,} B "
            f"({st['naive'] / max(st['arena'], 1):.1f}x the arena); weights {st['weights']:,} B")
    figures = []
    try:
        from .widgets.memory import MemoryViewer
        figures.append(MemoryViewer(model).figure)
    except Exception:  # widgets need the notebook extra
        pass
    return Section("Memory plan", head + "\n" + draw_memory_plan(plan, st["arena"], width=72), figures)


def section_embeddings(encoder) -> Section:
    sentences = ["A peregrine falcon dives at over 300 km/h.",
                 "The fastest bird is the peregrine falcon.",
                 "Matrix multiplication dominates transformer inference.",
                 "GEMM kernels are the heart of an inference engine."]
    emb = encoder.encode(sentences)
    sim = emb @ emb.T
    lines = [f"{len(sentences)} sentences -> {emb.shape[1]}-dim embeddings (normalised, mean pooling)"]
    for i, s in enumerate(sentences):
        lines.append(f"  [{i}] {s}")
    lines.append("cosine similarity:")
    lines.append("       " + "".join(f"[{j}]    " for j in range(len(sentences))))
    for i in range(len(sentences)):
        lines.append(f"  [{i}]  " + " ".join(f"{sim[i, j]:6.3f}" for j in range(len(sentences))))
    return Section("Sentence embeddings (all-MiniLM-L6-v2)", "\n".join(lines))


def section_vs_ort(encoder, quick: bool) -> Section:
    """MiniLM at sequence 128 in Peregrine and in ONNX Runtime (the same
    graph, written out with Graph.to_onnx), interleaved, medians, 1 thread."""
    try:
        import onnxruntime as ort
    except ImportError:
        return Section("Against ONNX Runtime", "onnxruntime is not installed: skipped "
                       "(pip install onnxruntime onnx to see the comparison)")
    import numpy as np

    seq, rounds = 128, 5 if quick else 15
    graph = encoder.graph(batch=1, seq=seq)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(graph.to_onnx().SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    model = pg_compile(graph, level=3, threads=1)
    rng = np.random.default_rng(0)
    feeds = {"input_ids": rng.integers(1000, 20000, (1, seq)).astype(np.int64),
             "attention_mask": np.ones((1, seq), np.int64)}
    ours, theirs = model.run(feeds), sess.run(None, feeds)
    diff = float(np.abs(next(iter(ours.values())) - theirs[0]).max())
    times = {"peregrine": [], "onnxruntime": []}
    for _ in range(rounds):
        for name, fn in (("peregrine", lambda: model.run(feeds)), ("onnxruntime", lambda: sess.run(None, feeds))):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}
    text = (f"all-MiniLM-L6-v2 forward, batch 1, sequence {seq}, 1 thread, median of {rounds} interleaved runs\n"
            f"  peregrine    {med['peregrine']:8.2f} ms\n"
            f"  onnxruntime  {med['onnxruntime']:8.2f} ms   (ORT_ENABLE_ALL)\n"
            f"  ratio        {med['peregrine'] / med['onnxruntime']:8.2f}   (below 1: Peregrine is faster)\n"
            f"  max |difference| of the hidden states: {diff:.2e}\n"
            f"  (benchmarks/bench_minilm.py measures batch 8 and 2 threads too)")
    return Section("Against ONNX Runtime", text)


def run_tour(html: str | None = None, quick: bool = False, out=print) -> list[Section]:
    sections = [section_cpu(), section_kernels(quick)]
    label, encoder, graph = _model_for_tour(quick)
    comp, model = section_compile(graph, label)
    sections += [comp, section_memory(model)]
    if encoder is not None:
        sections.append(section_embeddings(encoder))
        sections.append(section_vs_ort(encoder, quick))
    for i, s in enumerate(sections, 1):
        out(f"\n== {i}. {s.title}\n{s.text}")
    if html:
        write_html(sections, html)
        out(f"\nwrote {html}")
    return sections


def write_html(sections: list[Section], path: str) -> None:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>Peregrine tour</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}</style></head><body>",
             "<h1>Peregrine tour</h1>"]
    plotly_included = False
    for i, s in enumerate(sections, 1):
        parts.append(f"<h2>{i}. {html_mod.escape(s.title)}</h2><pre>{html_mod.escape(s.text)}</pre>")
        for fig in s.figures:
            if fig is None:
                continue
            parts.append(fig.to_html(full_html=False, include_plotlyjs=not plotly_included))
            plotly_included = True
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


__all__ = ["run_tour", "write_html", "Section"]
