"""The machinery behind ``%%peregrine kernel``: a cell of GNU assembly for
one kernel family's signature, assembled, linked into a shared library,
checked against the family's C reference by checkasm IN A SUBPROCESS (so a crash in the cell's
code is a message, never a dead kernel), then benchmarked against the
built-in variants.

The cell is preprocessed with the engine's assembly header (pg_asm.h:
PG_FUNC / PG_ENDFUNC / PG_SYM; on x86-64 Intel syntax is already on), with
PG_FUNC exporting the symbol so checkasm can load it.  Write one routine::

    %%peregrine kernel --family vadd --isa avx2
            .text
    PG_FUNC(my_vadd)                 # rdi = n, rsi = a, rdx = b, rcx = y
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

checkasm runs the family's own check on it (``checkasm --family=NAME``): the
edge sizes (0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, ...) and random ones, the
family's tolerance, canaries in
the callee-saved registers (rbx, rbp, r12-r15 / x19-x29, d8-d15), a missing
vzeroupper, guard bytes before and after every buffer, and crash recovery.
"""
from __future__ import annotations

import atexit
import html
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ._lib import _HERE, bin_path

# The kernel families a cell may implement, with the C signature its routine must have.
SIGNATURES: dict[str, str] = {
    "vadd": "void f(size_t n, const float *a, const float *b, float *y)   /* y = a + b */",
    "vmul": "void f(size_t n, const float *a, const float *b, float *y)   /* y = a * b */",
    "vexp": "void f(size_t n, const float *x, float *y)                    /* y = exp(x) */",
    "sigmoid": "void f(size_t n, const float *x, float *y)",
    "silu": "void f(size_t n, const float *x, float *y)",
    "tanh": "void f(size_t n, const float *x, float *y)",
    "gelu_erf": "void f(size_t n, const float *x, float *y)",
    "gelu_tanh": "void f(size_t n, const float *x, float *y)",
    "softmax": "void f(size_t n, const float *x, float scale, const float *mask, float *y)",
    "layernorm": "void f(size_t n, const float *x, const float *gamma, const float *beta, float eps, float *y)",
    "rmsnorm": "void f(size_t n, const float *x, const float *gamma, float eps, float *y)",
    "gemv": "void f(size_t N, size_t K, const float *x, const float *B, size_t ldb, const float *bias, float *y)",
}

# ISA name -> (architecture, CPU feature names it needs)
ISAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sse2": ("x86_64", ("sse2",)),
    "sse41": ("x86_64", ("sse41",)),
    "avx": ("x86_64", ("avx",)),
    "avx2": ("x86_64", ("avx2",)),
    "avx2_fma3": ("x86_64", ("avx2", "fma")),
    "fma3": ("x86_64", ("avx2", "fma")),
    "neon": ("aarch64", ("neon",)),
    "dotprod": ("aarch64", ("neon", "dotprod")),
}

_CELL_HEADER = """\
/* pg_cell.h - included before a %%%%peregrine kernel cell: the engine's
 * assembly macros, with PG_FUNC exporting the routine (the engine hides its
 * own) so checkasm can find it with dlsym. */
#include "pg_asm.h"
#undef PG_FUNC
#define PG_FUNC(name) .globl name; .type name, %s; .p2align 5; name:
"""


class KernelBuildError(ValueError):
    """The cell did not assemble or link; one line per complaint, with the
    cell's line numbers."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass
class KernelResult:
    """What happened to a kernel cell: the check (ok, failures, the
    checkasm log) and, when it passed, the benchmark against the built-in
    variants (a DataFrame)."""

    family: str
    isa: str
    symbol: str
    ok: bool
    failures: list[str] = field(default_factory=list)
    log: str = ""
    bench: object = None
    library: str = ""

    @property
    def message(self) -> str:
        if self.ok:
            return f"{self.symbol}: passed checkasm for {self.family} ({self.isa})"
        return f"{self.symbol}: FAILED checkasm for {self.family}: " + ("; ".join(self.failures[:3]) or "see .log")

    def __repr__(self) -> str:
        s = self.message
        if self.bench is not None:
            s += "\n" + self.bench.to_string(index=False)
        return s

    def _repr_html_(self) -> str:
        colour = "#2b7a0b" if self.ok else "#b00"
        fails = "".join(f"<li><code>{html.escape(f)}</code></li>" for f in self.failures[:10])
        body = f"<div style='color:{colour};font-weight:bold'>{html.escape(self.message)}</div>"
        if fails:
            body += f"<ul>{fails}</ul>"
        if self.bench is not None:
            body += self.bench.to_html(index=False, float_format=lambda v: f"{v:.4g}")
        return body


def include_dir(arch: str) -> Path:
    """Where pg_asm.h for arch is: installed with the package, or the source tree."""
    for d in (_HERE / "include" / "asm" / arch, _HERE.parent / "asm" / arch):
        if (d / "pg_asm.h").is_file():
            return d
    raise FileNotFoundError(f"pg_asm.h for {arch} was not found (reinstall the package with `pip install .`)")


def find_symbol(source: str) -> str | None:
    m = re.search(r"^\s*PG_FUNC\(\s*(\w+)\s*\)", source, re.M)
    if m:
        return m.group(1)
    m = re.search(r"^\s*\.globl\s+(\w+)", source, re.M)
    return m.group(1) if m else None


_DIAG = re.compile(r"^(?P<file>[^:\s]+\.S):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<msg>.*)$")


def _clean_diagnostics(text: str, cell_name: str) -> list[str]:
    """gcc/gas output -> one line per error or warning, with cell line numbers."""
    out = []
    for raw in text.splitlines():
        m = _DIAG.match(raw.strip())
        if m and Path(m["file"]).name == cell_name:
            msg = re.sub(r"^(fatal )?error:\s*", "Error: ", m["msg"])
            msg = re.sub(r"^warning:\s*", "Warning: ", msg)
            out.append(f"line {m['line']}: {msg}")
        elif raw.startswith(("ld:", "/usr/bin/ld", "collect2")) or " undefined reference" in raw:
            out.append(raw.strip())
    if not out:
        out = [ln.strip() for ln in text.splitlines() if ln.strip() and "Assembler messages" not in ln][:10]
    return out or ["the assembler failed without a message"]


_builds: list[str] = []


@atexit.register
def _cleanup() -> None:
    for d in _builds:
        shutil.rmtree(d, ignore_errors=True)


def assemble(source: str, arch: str, cc: str | None = None) -> tuple[Path, str]:
    """Assemble and link the cell into a shared library; returns (path,
    symbol).  KernelBuildError with the cell's line numbers on failure."""
    symbol = find_symbol(source)
    if not symbol:
        raise KernelBuildError(["the cell defines no routine: declare it with PG_FUNC(name) ... PG_ENDFUNC(name)"])
    cc = cc or os.environ.get("CC", "gcc")
    build = tempfile.mkdtemp(prefix="pg_kernel_")
    _builds.append(build)
    b = Path(build)
    (b / "kernel.S").write_text(source if source.endswith("\n") else source + "\n")
    (b / "pg_cell.h").write_text(_CELL_HEADER % ("@function" if arch == "x86_64" else "%function"))
    inc = include_dir(arch)
    cmds = [
        [cc, "-c", "-x", "assembler-with-cpp", f"-I{inc}", "-include", str(b / "pg_cell.h"),
         "-Wa,--noexecstack", "kernel.S", "-o", "kernel.o"],
        [cc, "-shared", "-nostdlib", "-Wl,-z,noexecstack", "-o", "kernel.so", "kernel.o"],
    ]
    for cmd in cmds:
        try:
            p = subprocess.run(cmd, cwd=build, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise KernelBuildError([f"the compiler {cc!r} was not found (set CC)"]) from None
        if p.returncode != 0:
            raise KernelBuildError(_clean_diagnostics(p.stderr + p.stdout, "kernel.S"))
    return b / "kernel.so", symbol


def _run_checkasm(args: list[str], timeout: float) -> tuple[int, str, str]:
    exe = str(bin_path("checkasm"))
    try:
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        def s(x):
            return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
        return -999, s(e.stdout), s(e.stderr)


def check(library: Path, symbol: str, family: str, seed: int = 1,
          timeout: float = 60) -> tuple[bool, list[str], str]:
    """checkasm on the routine, as an implementation of the kernel family, in
    a subprocess: (ok, failures, log)."""
    rc, out, err = _run_checkasm([f"--load={library}", f"--symbol={symbol}", f"--family={family}",
                                  f"--seed={seed}"], timeout)
    log = out + err
    failures = list(dict.fromkeys(re.sub(r"^\s*FAIL \S+:\s*", "", ln)
                                  for ln in err.splitlines() if "FAIL" in ln))
    if rc == -999:
        failures.append(f"timed out after {timeout:.0f} s (an endless loop?)")
    elif rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        failures.append(f"the check process died with {name} (the routine corrupted memory or the stack)")
    elif rc == 2:
        failures += [ln.replace("checkasm: ", "") for ln in err.splitlines() if ln.startswith("checkasm:")] \
            or ["checkasm refused the routine"]
    ok = rc == 0 and not failures and re.search(rf"\b{re.escape(symbol)}\s+ok\s*$", out, re.M) is not None
    if rc == 0 and not ok and not failures:
        failures.append("checkasm did not report the routine as checked")
    return ok, failures, log


_BENCH = re.compile(r"^\s*bench\s+(?P<name>\S+)\s+(?P<label>.*?)\s*(?P<ns>[\d.]+) ns\s+x\s*(?P<x>[\d.]+) vs C"
                    r"(?:\s+(?P<gflops>[\d.]+) GFLOP/s)?(?:\s+(?P<gbps>[\d.]+) GB/s)?")


def parse_bench(text: str) -> list[dict]:
    rows = []
    for ln in text.splitlines():
        m = _BENCH.match(ln)
        if m:
            rows.append({"variant": m["name"], "label": m["label"].strip(), "ns": float(m["ns"]),
                         "speedup_vs_c": float(m["x"]),
                         "gflops": float(m["gflops"]) if m["gflops"] else None,
                         "gbps": float(m["gbps"]) if m["gbps"] else None})
    return rows


_builtin_bench: dict[str, list[dict]] = {}


def benchmark(library: Path, symbol: str, family: str, seed: int = 1, timeout: float = 120):
    """The routine against the built-in variants and the C reference, timed
    by checkasm --bench on the same data: a DataFrame."""
    import pandas as pd

    _, out, _ = _run_checkasm([f"--load={library}", f"--symbol={symbol}", f"--family={family}",
                               f"--seed={seed}", "--bench"], timeout)
    mine = parse_bench(out)
    if family not in _builtin_bench:
        _, bout, _ = _run_checkasm(["--bench", f"--function={family}", f"--seed={seed}"], timeout)
        _builtin_bench[family] = parse_bench(bout)
    rows = [dict(r, yours=True) for r in mine] + [dict(r, yours=False) for r in _builtin_bench[family]]
    # the C reference, from any line's time and speed-up
    seen = set()
    for r in list(rows):
        if r["label"] in seen or not r["speedup_vs_c"]:
            continue
        seen.add(r["label"])
        t = r["ns"] * r["speedup_vs_c"]
        scale = r["ns"] / t
        rows.append({"variant": f"f32_{family}_c (reference)", "label": r["label"], "ns": t, "speedup_vs_c": 1.0,
                     "gflops": r["gflops"] * scale if r["gflops"] else None,
                     "gbps": r["gbps"] * scale if r["gbps"] else None, "yours": False})
    df = pd.DataFrame(rows, columns=["variant", "label", "ns", "speedup_vs_c", "gflops", "gbps", "yours"])
    return df.sort_values(["label", "ns"], kind="stable").reset_index(drop=True)


def validate(family: str, isa: str) -> str:
    """The architecture for isa, after checking the kernel family and isa
    make sense here; ValueError (one line) otherwise."""
    from .cpu import cpu_info

    if family not in SIGNATURES:
        raise ValueError(f"kernel family {family!r} cannot be written in a cell "
                         f"(supported: {', '.join(SIGNATURES)})")
    if isa not in ISAS:
        raise ValueError(f"unknown ISA {isa!r} (known: {', '.join(ISAS)})")
    arch, needs = ISAS[isa]
    info = cpu_info()
    if info.arch != arch:
        raise ValueError(f"ISA {isa} is for {arch}, but this machine is {info.arch}")
    missing = [f for f in needs if f not in info.flags]
    if missing:
        raise ValueError(f"this CPU lacks {', '.join(missing)}, needed for {isa}")
    return arch


def run_cell(source: str, family: str, isa: str, bench: bool = True, seed: int = 1,
             timeout: float = 60) -> KernelResult:
    """Assemble, check (in a subprocess) and benchmark one kernel cell that
    implements a kernel family."""
    arch = validate(family, isa)
    library, symbol = assemble(source, arch)
    ok, failures, log = check(library, symbol, family, seed=seed, timeout=timeout)
    res = KernelResult(family=family, isa=isa, symbol=symbol, ok=ok, failures=failures, log=log, library=str(library))
    if ok and bench:
        res.bench = benchmark(library, symbol, family, seed=seed)
    return res
