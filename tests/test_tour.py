"""The README's main job: `peregrine-nb tour` prints what the engine did."""
import re
import subprocess
import sys


def test_tour_prints_every_section_and_writes_html(tmp_path):
    page = tmp_path / "tour.html"
    r = subprocess.run([sys.executable, "-m", "peregrine_nb", "tour", "--quick", "--html", str(page)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    for title in ["CPU and dispatch", "Kernel variants raced", "Compiling, pass by pass", "Memory plan",
                  "Sentence embeddings", "Against ONNX Runtime"]:
        assert title in out, title
    # the compile log names the fusions it made on MiniLM
    assert "all-MiniLM-L6-v2" in out
    assert re.search(r"layernorm_fusion .*\(-\d+\)", out)
    assert "into FusedAttention" in out and "into QKVMatMul" in out
    # the memory plan: one row per step, letters inside the arena
    assert re.search(r"^step +\d+ \|[A-Za-z0-9.]+\|", out, re.M)
    # similar sentences are closer than unrelated ones
    rows = re.findall(r"^  \[(\d)\] +(-?\d\.\d{3}) +(-?\d\.\d{3}) +(-?\d\.\d{3}) +(-?\d\.\d{3})$", out, re.M)
    sim = {int(i): list(map(float, v)) for i, *v in rows}
    assert sim[0][1] > sim[0][2] + 0.3
    assert re.search(r"ratio +\d+\.\d\d", out)
    html = page.read_text()
    assert "plotly" in html.lower() and "Compiling, pass by pass" in html
