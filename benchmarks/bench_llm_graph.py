"""The decoder's two forms on the same files, interleaved run by run: the
step list (LLM(graph=False)) against the compiled graph (the default, issue
#14 part A: the same kernels through the graph IR, the passes, the planner
and the executor), and llama.cpp (llama-cpp-python) where installed, so the
graph's overhead (per-step dispatch, the rows of a batch it plans for but
does not use, copies) shows as a ratio measured in the same conditions.

    PEREGRINE_LIBRARY=.../libperegrine.so python benchmarks/bench_llm_graph.py \
        [--threads 1 2] [--prompt-tokens 128] [--new-tokens 64] [--rounds 5] \
        [--types smollm2 q4_0 q4_1 q8_0 q4_K q5_K q6_K q4_K_M f16 bf16] [--size 1024]

Files, prompt and timing as benchmarks/bench_llm.py (its synthetic llama
files, written once into --cache-dir): prefill of a 128-token prompt as one
batch, then 64 greedy tokens one at a time; medians over the rounds after a
warm-up round, wall and CPU time.  Prints one table per file and a summary
of graph / step-list ratios (prefill and decode, wall and CPU), per thread
count.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_llm as bl  # noqa: E402

import peregrine_nb as pg  # noqa: E402
from peregrine_nb.gguf import smollm2_path  # noqa: E402
from peregrine_nb.llm import LLM  # noqa: E402


class Ours(bl.Ours):
    def __init__(self, path, threads, graph):
        self.name = "graph" if graph else "step list"
        self.m = LLM(path, threads=threads, n_ctx=512, graph=graph)


def run_file(a, wtype, path):
    print(f"\nmodel {path.name}; prompt {a.prompt_tokens} tokens, {a.new_tokens} new tokens, "
          f"median of {a.rounds} interleaved rounds")
    print(f"{'thr':>3} {'engine':>10} {'prefill t/s':>12} {'(cpu)':>8} {'decode t/s':>11} {'(cpu)':>8}")
    summary = []
    for t in a.threads:
        engines = [Ours(path, t, False), Ours(path, t, True)]
        if a.llama:
            try:
                engines.append(bl.LlamaCpp(path, t))
            except ImportError:
                print("llama_cpp is not installed: Peregrine alone")
        ids = engines[0].m.tokenize(bl.TEXT * 4)[:a.prompt_tokens]
        res = {e.name: {"pw": [], "pc": [], "dw": [], "dc": [], "tokens": None} for e in engines}
        for _ in range(a.rounds + 1):                 # the first round warms up
            for e in engines:
                r = res[e.name]
                logits, toks = [None], [None]
                pw, pc = bl.timed(lambda: logits.__setitem__(0, e.prefill(ids)))
                dw, dc = bl.timed(lambda: toks.__setitem__(0, e.decode(logits[0], a.new_tokens)))
                r["pw"].append(pw); r["pc"].append(pc); r["dw"].append(dw); r["dc"].append(dc)
                r["tokens"] = toks[0]
        med = lambda v: statistics.median(v[1:])  # noqa: E731
        n_dec = a.new_tokens - 1
        rows = {}
        for e in engines:
            r = res[e.name]
            row = (len(ids) / med(r["pw"]), len(ids) / med(r["pc"]), n_dec / med(r["dw"]),
                   n_dec / med(r["dc"]))
            rows[e.name] = row
            print(f"{t:>3} {e.name:>10} {row[0]:12.1f} {row[1]:8.1f} {row[2]:11.1f} {row[3]:8.1f}")
        s, g = rows["step list"], rows["graph"]
        same = res["step list"]["tokens"] == res["graph"]["tokens"]
        print(f"    graph / step list: prefill {g[0] / s[0]:.3f}x (cpu {g[1] / s[1]:.3f}x), decode "
              f"{g[2] / s[2]:.3f}x (cpu {g[3] / s[3]:.3f}x); greedy tokens equal: {same}")
        summary.append((wtype, t, g[0] / s[0], g[1] / s[1], g[2] / s[2], g[3] / s[3]))
        for e in engines:
            del e.m
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--llama", action="store_true", help="llama.cpp as a third engine")
    ap.add_argument("--types", nargs="+", default=["smollm2", "q4_0", "q4_1", "q8_0", "q4_K",
                                                   "q5_K", "q6_K", "q4_K_M", "f16", "bf16"])
    ap.add_argument("--size", type=int, default=1024, help="width of the synthetic files")
    ap.add_argument("--cache-dir", default=os.environ.get("PEREGRINE_BENCH_CACHE",
                                                          "/tmp/peregrine_bench_llm"))
    a = ap.parse_args()
    print(f"cpu {pg.cpu_info().brand} level {pg.cpu_info().level}")
    summary = []
    for wtype in a.types:
        path = smollm2_path() if wtype == "smollm2" else bl.synthetic_path(Path(a.cache_dir), wtype, a.size)
        summary += run_file(a, wtype, path)
    print("\nsummary: graph / step list (tokens/s ratios, > 1: the graph is faster)")
    print(f"{'file':>8} {'thr':>3} {'prefill':>8} {'(cpu)':>7} {'decode':>8} {'(cpu)':>7}")
    for s in summary:
        print(f"{s[0]:>8} {s[1]:>3} {s[2]:7.3f}x {s[3]:6.3f}x {s[4]:7.3f}x {s[5]:6.3f}x")


if __name__ == "__main__":
    main()
