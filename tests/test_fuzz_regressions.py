"""The fuzzers' corpora and every crash they ever found, replayed.

tests/fuzz/corpus/<target>/ holds the seeds (tests/fuzz/make_seeds.py) and
what fuzzing runs merged back (tests/run_fuzz.sh with FUZZ_MERGE=1);
tests/fuzz/crashes/<target>/ holds every crash input found, minimised, kept
forever.  Each file goes through its target's entry point in the Python API
(tests/fuzz/replay.py: load_gguf, the tokenizer, the graph byte code of
engine/fuzz/fuzz_graph.c, load_onnx + compile + run), which may only end
in a clean error (PeregrineError, FileNotFoundError):

  - corpus files in this process (thousands of them, fast);
  - crash files each in a subprocess, so a crash fails one test, not all;
  - when the libFuzzer targets are built (tests/run_fuzz.sh puts them in
    build-fuzz/, or $PEREGRINE_FUZZ_BUILD names the build directory), the
    corpus and crash files also through the C targets under ASan + UBSan.

A crash in code not fixed yet (the graph compiler and the executor) is
listed in tests/fuzz/known_bugs.json: its case is xfail(strict=True), so
the fix turns it into a failure until the entry is removed.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "tests" / "fuzz"
sys.path.insert(0, str(FUZZ))

import replay  # noqa: E402
import triage  # noqa: E402

TARGETS = replay.TARGETS
C_TARGETS = ("gguf", "tokenizer", "graph")

# crash file (target/name) -> (what is wrong, the check that shows it: "c"
# the sanitizer build of the C target only, "py" the Python API too), from
# tests/fuzz/known_bugs.json
KNOWN: dict[str, tuple[str, str]] = {
    f"{b['target']}/{f}": (f"{b['id']}: {b['description'].split(': ')[0]} (tests/fuzz/known_bugs.json)", shows)
    for b in triage.known_bugs() for f, shows in b["files"].items()
}


def _files(kind: str, target: str) -> list[Path]:
    d = FUZZ / kind / target
    return sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith(".")) if d.is_dir() else []


def _params(kind: str, targets=TARGETS, check: str = "py"):
    out = []
    for t in targets:
        for p in _files(kind, t):
            key = f"{t}/{p.name}"
            marks = []
            if kind == "crashes" and key in KNOWN and KNOWN[key][1] in (check, "py"):
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[key][0]))
            out.append(pytest.param(t, p, id=key, marks=marks))
    return out


def test_every_target_has_a_corpus():
    for t in TARGETS:
        assert _files("corpus", t), f"tests/fuzz/corpus/{t} is empty"
    for key in KNOWN:
        assert (FUZZ / "crashes" / key).is_file(), f"KNOWN names {key}, which is not in tests/fuzz/crashes"
    total = sum(p.stat().st_size for p in (FUZZ / "corpus").rglob("*") if p.is_file())
    assert total < 4 << 20, f"the corpus has grown to {total} bytes: minimise it (run_fuzz.sh FUZZ_MERGE=1)"


def test_graph_seeds_cover_every_op():
    import graph_bytecode
    names = {p.name for p in _files("corpus", "graph")}
    missing = [op for op in graph_bytecode.op_names() if f"op_{op}.bin" not in names]
    assert not missing, f"no seed program for {missing}: rerun tests/fuzz/make_seeds.py"


@pytest.mark.parametrize("target,path", _params("corpus"))
def test_corpus(target, path):
    replay.ENTRY[target](path.read_bytes())


def _subprocess_env() -> dict[str, str]:
    import peregrine_nb
    env = dict(os.environ)
    pkg_parent = str(Path(peregrine_nb.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


@pytest.mark.parametrize("target,path", _params("crashes", check="py"))
def test_crash_input_python(target, path):
    r = subprocess.run([sys.executable, str(FUZZ / "replay.py"), target, str(path)],
                       capture_output=True, text=True, timeout=120, env=_subprocess_env())
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"


def _fuzz_build() -> Path | None:
    d = os.environ.get("PEREGRINE_FUZZ_BUILD")
    d = Path(d) if d else ROOT / "build-fuzz"
    return d if (d / "engine" / "fuzz" / "fuzz_graph").is_file() else None


def _sanitizer_env(suppress: bool, tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    if suppress:
        triage.suppressions(str(tmp / "ubsan.supp"))
        env["UBSAN_OPTIONS"] += f":suppressions={tmp / 'ubsan.supp'}"
    env["PG_FUZZ_VOCAB_DIR"] = str(FUZZ / "vocab")
    return env


def _run_c(target: str, args: list[str], suppress: bool, tmp: Path) -> subprocess.CompletedProcess:
    build = _fuzz_build()
    if build is None:
        pytest.skip("the libFuzzer targets are not built (tests/run_fuzz.sh builds them in build-fuzz/)")
    exe = build / "engine" / "fuzz" / f"fuzz_{target}"
    # Linux keeps the peak-RSS count (what libFuzzer's -rss_limit_mb reads)
    # across the exec from this pytest process, which has held models of
    # gigabytes by now: that limit off, the per-allocation one kept; any
    # artifact goes to tmp, not the tree.
    return subprocess.run([str(exe), "-runs=0", "-timeout=20", "-rss_limit_mb=0", "-malloc_limit_mb=2048",
                           f"-artifact_prefix={tmp}/", *args], capture_output=True, text=True,
                          timeout=600, env=_sanitizer_env(suppress, tmp))


@pytest.mark.parametrize("target", C_TARGETS)
def test_corpus_c_target(target, tmp_path):
    """The whole corpus once through the sanitizer build (known UB suppressed)."""
    r = _run_c(target, [str(FUZZ / "corpus" / target)], suppress=True, tmp=tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]


@pytest.mark.parametrize("target,path", _params("crashes", C_TARGETS, check="c"))
def test_crash_input_c_target(target, path, tmp_path):
    """Each crash input alone, nothing suppressed."""
    r = _run_c(target, [str(path)], suppress=False, tmp=tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
