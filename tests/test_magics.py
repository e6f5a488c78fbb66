"""The %peregrine magics through IPython's testing shell: what each returns,
what -o stores, and that a bad argument or bad assembly is one clean
UsageError line."""
import platform
import textwrap

import pytest

pytest.importorskip("IPython")
pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from IPython.core.error import UsageError  # noqa: E402
from IPython.testing.globalipapp import get_ipython  # noqa: E402

import peregrine_nb as pg  # noqa: E402
from peregrine_nb.compiled import CompiledModel  # noqa: E402
from peregrine_nb.widgets import FusionStepper, KernelComparison, MemoryViewer  # noqa: E402

X86_AVX2 = platform.machine() in ("x86_64", "AMD64") and "avx2" in pg.cpu_info().flags

MLP = """
# a two-layer MLP: MatMul + Add + Relu fuses into one FusedMatMul
input x: f32[1, 16, 64]
weight w1: f32[64, 256] = random
weight b1: f32[256] = zeros
weight w2: f32[256, 64] = random
h = MatMul(x, w1)
h2 = Add(h, b1)
a = Relu(h2)
y = MatMul(a, w2)
z = Softmax(y, axis=-1)
output z
"""


@pytest.fixture(scope="module")
def ip():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "peregrine_nb")
    return shell


def line(ip, text):
    return ip.run_line_magic("peregrine", text)


def cell(ip, args, body):
    return ip.run_cell_magic("peregrine", args, body)


def usage_error(fn, *a) -> str:
    with pytest.raises(UsageError) as e:
        fn(*a)
    msg = str(e.value)
    return msg


def one_line(msg: str) -> str:
    assert "\n" not in msg.strip(), msg
    assert "Traceback" not in msg
    return msg


# ---- loading and help --------------------------------------------------------------

def test_extension_registers_the_magic(ip):
    assert "peregrine" in ip.magics_manager.magics["line"]
    assert "peregrine" in ip.magics_manager.magics["cell"]
    doc = ip.find_line_magic("peregrine").__doc__
    for word in ("cpu", "compile", "passes", "memory", "bench", "graph", "kernel", "-o VAR", "%peregrine {cpu",
                 "%peregrine compile [--level N]", "%%peregrine kernel --family NAME --isa ISA",
                 "%peregrine bench FAMILY"):
        assert word in doc, word
    assert "--op" not in doc


# ---- cpu ------------------------------------------------------------------------------------

def test_cpu_panel(ip):
    r = line(ip, "cpu -o cpu_panel")
    assert ip.user_ns["cpu_panel"] is r
    html = r._repr_html_()
    assert r.info.arch in html and "mask in force" in html
    for family in ("vadd", "sgemm", "gemv"):
        assert family in html
    selected = r.variants[r.variants.selected]
    assert set(selected.family) == set(r.variants.family)  # one dispatched variant per kernel family
    with pg.cpu_mask("c"):
        r_c = line(ip, "cpu")
    assert r_c.info.level == "c"
    assert all(v.endswith("_c") for v in r_c.variants[r_c.variants.selected].variant)


# ---- %%peregrine graph ------------------------------------------------------------------------

def test_graph_cell_builds_compiles_and_fuses(ip):
    m = cell(ip, "graph -o mlp -g mlp_graph", MLP)
    assert isinstance(m, CompiledModel) and ip.user_ns["mlp"] is m
    assert isinstance(ip.user_ns["mlp_graph"], pg.Graph)
    assert "FusedMatMul" in m.op_types and "Relu" not in m.op_types
    m0 = cell(ip, "graph --level 0", MLP)
    assert m0.op_types == ["MatMul", "Add", "Relu", "MatMul", "Softmax"]
    import numpy as np

    x = np.random.default_rng(0).standard_normal((1, 16, 64)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": x})["z"], m0.run({"x": x})["z"], rtol=1e-4, atol=1e-6)
    assert "FusedMatMul" in m._repr_html_()


def test_graph_cell_can_open_the_viewers(ip):
    s = cell(ip, "graph --show passes", MLP)
    assert isinstance(s, FusionStepper)
    assert any(p.name == "matmul_epilogue_fusion" for p in s.passes)
    v = cell(ip, "graph --show memory --planner naive", MLP)
    assert isinstance(v, MemoryViewer) and v.planner == "naive"
    v.dropdown.value = "greedy_by_size"  # the kept graph allows recompiling
    assert v.model.memory_stats["planner"] == "greedy_by_size"


def test_graph_cell_transformer_block_in_a_few_lines(ip):
    text = textwrap.dedent("""
        input x: f32[8, 32]
        weight g: f32[32] = ones
        weight b: f32[32] = zeros
        weight w1: f32[32, 128] = random
        weight w2: f32[128, 32] = random
        n = LayerNormalization(x, g, b, axis=-1, epsilon=1e-5)
        h = MatMul(n, w1)
        a = Gelu(h)
        y = MatMul(a, w2)
        r = Add(x, y)
        output r
    """)
    m = cell(ip, "graph", text)
    assert m.op_types.count("FusedMatMul") + m.op_types.count("MatMul") == 2
    assert "Gelu" not in m.op_types  # folded into the first MatMul's epilogue


ATTENTION = """
input x: f32[1, 16, 64]
weight ln_g: f32[64] = ones
weight ln_b: f32[64] = zeros
weight wq: f32[64, 64] = random
weight wk: f32[64, 64] = random
weight wv: f32[64, 64] = random
weight wo: f32[64, 64] = random
const split_heads: i64[4] = [1, 16, 4, 16]
const merge_heads: i64[3] = [1, 16, 64]
const scale: f32[] = [0.25]
n = LayerNormalization(x, ln_g, ln_b, axis=-1, epsilon=1e-5)
q0 = MatMul(n, wq)
k0 = MatMul(n, wk)
v0 = MatMul(n, wv)
q1 = Reshape(q0, split_heads)
k1 = Reshape(k0, split_heads)
v1 = Reshape(v0, split_heads)
q = Transpose(q1, perm=[0, 2, 1, 3])
kt = Transpose(k1, perm=[0, 2, 3, 1])
v = Transpose(v1, perm=[0, 2, 1, 3])
s0 = MatMul(q, kt)
s = Mul(s0, scale)
p = Softmax(s, axis=-1)
o0 = MatMul(p, v)
o1 = Transpose(o0, perm=[0, 2, 1, 3])
o = Reshape(o1, merge_heads)
a = MatMul(o, wo)
y = Add(x, a)
output y
"""


def test_graph_cell_attention_fuses_and_matches_level_0(ip):
    import numpy as np

    m = cell(ip, "graph -o attn", ATTENTION)
    assert "QKVMatMul" in m.op_types and "FusedAttention" in m.op_types and "Softmax" not in m.op_types
    m0 = cell(ip, "graph --level 0", ATTENTION)
    x = np.random.default_rng(1).standard_normal((1, 16, 64)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": x})["y"], m0.run({"x": x})["y"], rtol=1e-4, atol=1e-5)
    s = line(ip, "passes attn")
    reasons = [c["reason"] for p in s.passes for c in p.changes]
    assert any("FusedAttention" in r for r in reasons) and any("QKVMatMul" in r for r in reasons)
    assert "Plotly.newPlot" in s._repr_mimebundle_()["text/html"]  # the static copy a saved notebook keeps


@pytest.mark.parametrize("body, where", [
    ("input x: f32[2]\ny = Relu(x)\nfrob\noutput y", "line 3"),
    ("input x: q32[2]\noutput x", "line 1"),
    ("input x: f32[2, a]\noutput x", "line 1"),
    ("input x: f32[2]\nweight w: f32[2] = sparkly\ny = Add(x, w)\noutput y", "line 2"),
    ("input x: f32[2]\nweight w: f32[3] = [1, 2]\noutput x", "line 2"),
    ("input x: f32[2]\ny = Softmax(x, axis=, 1)\noutput y", "line 2"),
    ("input x: f32[2]\ny = Relu(x)", "output"),
])
def test_graph_cell_errors_name_the_line(ip, body, where):
    msg = one_line(usage_error(cell, ip, "graph", body))
    assert where in msg


def test_graph_cell_engine_errors_are_one_line(ip):
    msg = one_line(usage_error(cell, ip, "graph", "input x: f32[2]\ny = Relu(q)\noutput y"))
    assert "q" in msg
    msg = one_line(usage_error(cell, ip, "graph", "input x: f32[2]\ny = Frobnicate(x)\noutput y"))
    assert "Frobnicate" in msg


# ---- compile / passes / memory ------------------------------------------------------------------

def test_compile_a_graph_variable(ip):
    cell(ip, "graph -g g_mlp --level 0", MLP)
    m3 = line(ip, "compile g_mlp -o m3")
    m0 = line(ip, "compile g_mlp --level 0")
    assert ip.user_ns["m3"] is m3
    assert len(m3.op_types) < len(m0.op_types)
    md = line(ip, "compile g_mlp --disable matmul_epilogue_fusion")
    assert "FusedMatMul" not in md.op_types
    mn = line(ip, "compile g_mlp --planner naive")
    assert mn.memory_stats["planner"] == "naive"
    # a compiled model recompiles from its kept graph
    again = line(ip, "compile m3 --level 1")
    assert again.level == 1


def test_compile_an_onnx_file(ip, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np

    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    b = numpy_helper.from_array(np.zeros(4, np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], [w, b])
    path = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    m = line(ip, f"compile {path} --shape x=2x8 -o onnx_m")
    assert ip.user_ns["onnx_m"] is m and m.op_types == ["FusedMatMul"]
    assert m.run({"x": np.ones((2, 8), np.float32)})["y"].shape == (2, 4)
    one_line(usage_error(line, ip, f"compile {path}"))  # the batch dim is unknown
    one_line(usage_error(line, ip, f"compile {path} --shape x=2xq"))


def test_passes_and_memory_open_viewers(ip):
    cell(ip, "graph -o pm", MLP)
    s = line(ip, "passes pm -o stepper")
    assert isinstance(s, FusionStepper) and ip.user_ns["stepper"] is s
    v = line(ip, "memory pm")
    assert isinstance(v, MemoryViewer)
    ip.user_ns["gg"] = ip.user_ns["pm"].graph
    assert isinstance(line(ip, "passes gg"), FusionStepper)  # a Graph compiles first
    # a model compiled in Python, with its graph named: the planner menu works
    ip.user_ns["plain"] = pg.compile(ip.user_ns["gg"])
    v = line(ip, "memory plain --graph gg")
    assert not v.dropdown.disabled
    v.dropdown.value = "naive"
    assert v.model.memory_stats["planner"] == "naive"
    ip.user_ns["the_number"] = 42
    assert "not a Graph" in one_line(usage_error(line, ip, "memory plain --graph the_number"))


@pytest.mark.parametrize("args, needle", [
    ("", "needs a command"),
    ("frobnicate", "unknown command"),
    ("compile", "MODEL"),
    ("compile not_defined_anywhere", "not defined"),
    ("compile g_bad --level 7", "--level"),
    ("compile /no/such/model.onnx", "no such file"),
    ("compile g_bad --disable no_such_pass", "no_such_pass"),
    ("compile g_bad --shape x=1x2", "ONNX"),
    ("compile g_bad --planner best", "--planner"),
    ("compile g_bad --bogus", "unrecognized"),
    ("passes the_number", "not a compiled model"),
    ("memory", "MODEL"),
    ("bench nonsense", "kernel family 'nonsense' cannot be benchmarked"),
    ("bench sgemm --shape 12x12", "3 dimensions"),
    ("bench gemv --shape 12xfoo", "bad shape"),
    ("bench gemv --variants nope", "no runnable variant"),
    ("bench gemv --threads 0", "threads"),
    ("graph", "cell magic"),
    ("kernel --family vadd --isa avx2", "cell magic"),
    ("cpu 'unbalanced", "cannot split"),
])
def test_bad_arguments_are_one_clean_line(ip, args, needle):
    ip.user_ns["the_number"] = 42
    cell(ip, "graph -g g_bad --level 0", MLP)
    msg = one_line(usage_error(line, ip, args))
    assert needle in msg, msg


def test_cell_body_on_a_line_command_is_refused(ip):
    one_line(usage_error(cell, ip, "cpu", "something"))


def test_usage_error_shows_without_traceback(ip, capsys):
    res = ip.run_cell("%peregrine compile not_defined_anywhere")
    assert isinstance(res.error_in_exec, UsageError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "UsageError" in text and "Traceback" not in text


# ---- bench --------------------------------------------------------------------------------------

def test_bench_opens_the_comparison_and_runs(ip, monkeypatch):
    from peregrine_nb import kernels

    monkeypatch.setattr(kernels, "measure_peak", lambda threads=1: {"fma_gflops": 50.0, "copy_gbps": 10.0})
    k = line(ip, "bench gemv --shape 64x64 -o kc")
    assert isinstance(k, KernelComparison) and ip.user_ns["kc"] is k
    assert k.results is None and k.shapes.value == "64x64"
    k.min_time, k.repeat = 0.001, 2
    df = k.run()
    assert len(df) == len(k.variants.value)
    ref = [v for v in k.variants.options if v.endswith("_c")][0]
    k2 = line(ip, f"bench gemv --shape 32x32 --variants {ref} --run")
    assert list(k2.results.variant) == [ref]


# ---- %%peregrine kernel ------------------------------------------------------------------------

VADD = """\
        .text
PG_FUNC(my_vadd)                 // rdi = n, rsi = a, rdx = b, rcx = y
        test    rdi, rdi
        jz      2f
1:      vmovss  xmm0, [rsi]
        vaddss  xmm0, xmm0, [rdx]
        vmovss  [rcx], xmm0
        add     rsi, 4
        add     rdx, 4
        add     rcx, 4
        dec     rdi
        jnz     1b
2:      ret
PG_ENDFUNC(my_vadd)
"""

needs_avx2 = pytest.mark.skipif(not X86_AVX2, reason="x86-64 AVX2 kernel cells")


@needs_avx2
def test_kernel_cell_passes_and_is_benchmarked(ip):
    r = cell(ip, "kernel --family vadd --isa avx2 -o kr", VADD)
    assert ip.user_ns["kr"] is r
    assert r.ok, r.log
    assert r.family == "vadd" and "passed checkasm for vadd" in r.message
    assert "passed" in r._repr_html_()
    df = r.bench
    assert df is not None and df.yours.sum() == 1
    assert "my_vadd" in set(df.variant)
    assert any(v.endswith("(reference)") for v in df.variant)
    assert any(v.startswith("f32_vadd_") and not v.endswith("(reference)") for v in df.variant)
    assert (df.ns > 0).all()


@needs_avx2
def test_kernel_cell_clobbering_rbx_fails_cleanly(ip):
    bad = VADD.replace("2:      ret", "2:      xor     rbx, rbx\n        ret")
    r = cell(ip, "kernel --family vadd --isa avx2 --no-bench", bad)
    assert not r.ok and r.bench is None
    assert any("rbx" in f for f in r.failures)
    assert "FAILED" in r.message


@needs_avx2
def test_kernel_cell_wrong_result_fails(ip):
    bad = VADD.replace("vaddss", "vsubss")
    r = cell(ip, "kernel --family vadd --isa avx2 --no-bench", bad)
    assert not r.ok and any("expected" in f for f in r.failures)


@needs_avx2
def test_kernel_cell_overrun_is_caught(ip):
    # writes one float past the end of y
    bad = VADD.replace("2:      ret", "2:      vmovss  [rcx], xmm0\n        ret")
    r = cell(ip, "kernel --family vadd --isa avx2 --no-bench", bad)
    assert not r.ok and any("past the end" in f for f in r.failures)


@needs_avx2
def test_kernel_cell_crash_does_not_kill_the_kernel(ip):
    bad = VADD.replace("        test    rdi, rdi\n        jz      2f\n", "        xor     rsi, rsi\n")
    r = cell(ip, "kernel --family vadd --isa avx2 --no-bench", bad)
    assert not r.ok
    assert any("signal" in f or "died" in f for f in r.failures)
    assert line(ip, "cpu") is not None  # still alive


@needs_avx2
def test_kernel_cell_endless_loop_is_stopped(ip):
    bad = VADD.replace("        test    rdi, rdi\n        jz      2f\n", "3:      jmp     3b\n")
    r = cell(ip, "kernel --family vadd --isa avx2 --no-bench --timeout 2", bad)
    assert not r.ok and any("timed out" in f for f in r.failures)


@needs_avx2
def test_kernel_cell_assembler_errors_carry_cell_lines(ip):
    bad = VADD.replace("vaddss  xmm0, xmm0, [rdx]", "vfrobss xmm0, xmm0, [rdx]") \
              .replace("add     rcx, 4", "add     rcx,, 4")
    msg = usage_error(cell, ip, "kernel --family vadd --isa avx2", bad)
    lines = msg.strip().splitlines()
    assert len(lines) == 2, msg
    assert lines[0].startswith("line 6:") and "vfrobss" in lines[0]
    assert lines[1].startswith("line 10:")
    assert "Traceback" not in msg and "kernel.S" not in msg


@needs_avx2
def test_kernel_cell_without_a_routine(ip):
    msg = one_line(usage_error(cell, ip, "kernel --family vadd --isa avx2", "        .text\n        ret\n"))
    assert "PG_FUNC" in msg


@pytest.mark.parametrize("args, needle", [
    ("kernel --family sgemm --isa avx2", "kernel family 'sgemm' cannot be written"),
    ("kernel --family vadd --isa mmx", "unknown ISA"),
    ("kernel --family vadd", "--isa"),
    ("kernel --isa avx2", "--family"),
    ("kernel --op vadd --isa avx2", "required: --family"),  # the old name is gone, no alias
    ("kernel --family vadd --op vadd --isa avx2", "--op"),
])
def test_kernel_cell_bad_arguments(ip, args, needle):
    msg = one_line(usage_error(cell, ip, args, VADD))
    assert needle in msg, msg


def test_kernel_cell_isa_of_another_architecture(ip):
    other = "neon" if platform.machine() in ("x86_64", "AMD64") else "avx2"
    msg = one_line(usage_error(cell, ip, f"kernel --family vadd --isa {other}", VADD))
    assert "this machine is" in msg
