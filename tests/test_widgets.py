"""The notebook viewers, driven from Python as a person drives them: move a
slider, click a button, pick a planner; then check what the figure and the
side panel show changed."""
import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import plotly.graph_objects as go  # noqa: E402

import peregrine_nb as pg  # noqa: E402
from peregrine_nb.examples import transformer_block  # noqa: E402
from peregrine_nb.widgets import (  # noqa: E402
    FusionStepper, KernelComparison, MemoryViewer, parse_shapes, snapshots)
from peregrine_nb.widgets._dag import kind_of, layout  # noqa: E402


@pytest.fixture(scope="module")
def block():
    g = transformer_block(seq=8, hidden=32, heads=4)
    m = pg.compile(g)
    return g, m


def n_markers(fig):
    """Op nodes drawn (not edges, not graph inputs)."""
    return sum(len(t.x) for t in fig.data if t.mode and "markers" in t.mode and t.name != "input")


# ---- the fusion stepper ------------------------------------------------------------

def test_stepper_starts_at_the_last_pass_and_steps_back(block):
    g, m = block
    s = FusionStepper(m, graph=g)
    assert s.index == len(s.passes) - 1
    assert s.passes[0].name == "input"
    assert s.next.disabled and not s.prev.disabled
    last_nodes = n_markers(s.fig)
    assert last_nodes == s.current.counts["nodes"]
    s.slider.value = 0
    assert s.prev.disabled and not s.next.disabled
    first_nodes = n_markers(s.fig)
    assert first_nodes == s.passes[0].counts["nodes"] > last_nodes
    assert "input" in s.fig.layout.title.text
    s.next.click()
    assert s.index == 1
    s.prev.click()
    s.prev.click()  # at 0 already: stays
    assert s.index == 0


def test_stepper_side_panel_says_what_a_fusion_did(block):
    g, m = block
    s = FusionStepper(m, graph=g)
    names = [p.name for p in s.passes]
    i = names.index("layernorm_fusion")
    s.slider.value = i - 1
    before = s.info.value
    s.next.click()
    assert s.index == i
    html = s.info.value
    assert html != before
    assert "layernorm_fusion" in html and "LayerNormalization" in html and "fused" in html
    # node count went down, shown as a negative delta
    assert "(-" in html
    # fused nodes are drawn as diamonds
    symbols = [sym for t in s.fig.data if t.marker and t.marker.symbol is not None
               and not isinstance(t.marker.symbol, str) for sym in t.marker.symbol]
    assert "diamond" in symbols


def test_stepper_counts_matmuls_and_weights(block):
    g, m = block
    log = snapshots(m, g)
    first, last = log[0].counts, log[-1].counts
    assert first["matmuls"] > last["matmuls"]  # attention and QKV fusions took MatMuls
    assert all(p.const_bytes > 0 for p in log)
    s = FusionStepper(m)
    assert "MatMuls" in s.info.value and "weights" in s.info.value


def test_stepper_static_figure_and_bundle(block):
    g, m = block
    s = FusionStepper(m, graph=g)
    s.slider.value = 3
    fig = s.figure
    assert isinstance(fig, go.Figure) and not isinstance(fig, go.FigureWidget)
    assert n_markers(fig) == s.passes[3].counts["nodes"]
    bundle = s._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "plotly" in bundle["text/html"] and "noop_elimination" in bundle["text/html"] or \
        s.passes[3].name in bundle["text/html"]


def test_stepper_hover_has_shapes_and_dtypes(block):
    g, m = block
    s = FusionStepper(m)
    texts = [h for t in s.fig.data if t.hovertext for h in t.hovertext]
    assert any("float32[" in h for h in texts)
    assert any("FusedAttention" in h for h in texts)


def test_layers_follow_the_longest_path():
    nodes = [
        {"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["ta"]},
        {"name": "b", "op": "Sigmoid", "inputs": ["ta"], "outputs": ["tb"]},
        {"name": "c", "op": "Add", "inputs": ["ta", "tb"], "outputs": ["tc"]},
        {"name": "d", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["td"]},
    ]
    pos, edges, inputs = layout(nodes, graph_inputs={"x"})
    assert inputs == ["x"]
    assert pos["in:x"][0] == 0 and pos["a"][0] == 1 and pos["b"][0] == 2
    assert pos["c"][0] == 3  # after b, its deepest producer, not next to a
    assert pos["d"][0] == 1
    assert ("a", "c") in edges and ("b", "c") in edges and ("in:x", "d") in edges
    assert not any(e[0] == "in:w" for e in edges)  # weights are not drawn
    assert [kind_of(o) for o in ("MatMul", "FusedAttention", "LayerNormalization", "Reshape", "Add")] == \
        ["matmul", "attention", "norm", "shape", "elementwise"]


def test_stepper_without_a_pass_log_falls_back_to_steps():
    g = pg.Graph()
    g.add_input("x", (4, 8))
    g.add_initializer("w", np.ones((8, 8), np.float32))
    g.add_node("MatMul", ["x", "w"], ["h"])
    g.add_node("Relu", ["h"], ["y"])
    g.add_output("y")
    m = pg.compile(g, level=0)
    s = FusionStepper(m)
    assert len(s.passes) >= 1
    assert n_markers(s.fig) == 2


# ---- the memory viewer ------------------------------------------------------------------

def test_memory_viewer_step_slider_highlights_live_tensors(block):
    g, m = block
    v = MemoryViewer(m, graph=g)
    rows = v.plan.to_dict("records")
    assert len(v.fig.data) == len(rows) > 0
    v.slider.value = 0
    op0 = [t.opacity for t in v.fig.data]
    live0 = set(v.live_at(0))
    v.slider.value = v.slider.max
    op1 = [t.opacity for t in v.fig.data]
    assert op0 != op1
    for t, r in zip(v.fig.data, rows):
        assert (t.opacity == 0.9) == (max(r["first"], 0) <= v.slider.max <= r["last"])
    assert set(v.live_at(v.slider.max)) != live0
    assert v.fig.layout.shapes[0].x0 == v.slider.max
    assert f"step {v.slider.max}" in v.stats.value


def test_memory_viewer_switches_planner(block):
    g, m = block
    v = MemoryViewer(m, graph=g)
    greedy = v.model.memory_stats
    assert "greedy_by_size" in v.fig.layout.title.text
    v.dropdown.value = "naive"
    naive = v.model.memory_stats
    assert naive["planner"] == "naive" and "naive" in v.fig.layout.title.text
    assert naive["arena"] >= greedy["arena"] >= greedy["lower_bound"]
    # the side table lists both planners, the current one in bold
    assert v.stats.value.count("<tr") >= 3 and "naive" in v.stats.value
    # rectangles moved: offsets follow the plan
    ys = sorted(max(t.y) for t in v.fig.data)
    assert max(ys) <= naive["arena"]
    v.dropdown.value = "greedy_by_size"
    assert v.model is m  # cached, not recompiled


def test_memory_viewer_hover_and_figure(block):
    g, m = block
    v = MemoryViewer(m, graph=g)
    assert any("bytes" in t.text or "B at offset" in t.text for t in v.fig.data)
    fig = v.figure
    assert isinstance(fig, go.Figure) and len(fig.data) == len(v.fig.data)
    assert "text/html" in v._repr_mimebundle_()


def test_memory_viewer_recompiles_from_the_models_own_graph():
    # a CompiledModel keeps the Graph it came from, so no graph need be passed
    g = transformer_block(seq=4, hidden=16, heads=2)
    m = pg.compile(g)
    v = MemoryViewer(m)
    assert not v.dropdown.disabled
    v.set_planner("naive")
    assert v.model.memory_stats["planner"] == "naive"
    assert v.model.memory_stats["arena"] >= m.memory_stats["arena"]


# ---- the kernel comparison ----------------------------------------------------------------

def test_kernel_comparison_runs_and_draws():
    k = KernelComparison("gemv", shapes="64x64, 128x64", threads=1,
                         peaks={"fma_gflops": 100.0, "copy_gbps": 20.0}, min_time=0.001, repeat=2)
    names = list(k.variants.value)
    assert names and names[-1].endswith("_c")
    assert len(k.fig.data) == 0
    k.run_button.click()
    df = k.results
    assert len(df) == 2 * len(names)
    assert k.progress.value == k.progress.max == len(df)
    assert {"family", "gflops", "gbps", "intensity", "variant"} <= set(df.columns)
    assert set(df.family) == {"gemv"}
    assert repr(k) == f"<KernelComparison family=gemv {len(df)} results>"
    bars = [t for t in k.fig.data if t.type == "bar"]
    assert sorted(t.name for t in bars) == sorted(names)
    lines = [t.name for t in k.fig.data if t.type == "scatter" and t.mode == "lines"]
    assert "roofline" in lines and any("FMA peak" in n for n in lines) and any("bandwidth" in n for n in lines)
    assert "<table" in k.table.value
    assert isinstance(k.figure, go.Figure) and len(k.figure.data) == len(k.fig.data)


def test_kernel_comparison_controls():
    k = KernelComparison("sgemm", peaks={"fma_gflops": 1.0, "copy_gbps": 1.0})
    assert k.family.value == "sgemm" and k.family.description == "family"
    assert repr(k) == "<KernelComparison family=sgemm 0 results>"
    k.family.value = "gemv"
    assert all("gemv" in v for v in k.variants.options)
    assert all(len(s) == 2 for s in parse_shapes(k.shapes.value))  # N x K
    k.shapes.value = "12xq"
    assert k.run() is None and "bad shape" in k.status.value
    k.shapes.value = "64x64"
    k.variants.value = ()
    assert k.run() is None and "variant" in k.status.value
    with pytest.raises(ValueError, match="kernel family 'nonsense'"):
        KernelComparison("nonsense")
    assert KernelComparison(family="gemv", peaks={"fma_gflops": 1.0, "copy_gbps": 1.0}).family.value == "gemv"
    assert parse_shapes("2x3x4; 5*6*7") == [(2, 3, 4), (5, 6, 7)]
