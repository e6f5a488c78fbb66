"""One row per decoder architecture: Peregrine against llama.cpp
(llama-cpp-python) on the same file, the same thread count, interleaved run
by run so a noisy machine hurts both alike.

    unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
    PEREGRINE_LIBRARY=.../libperegrine.so python benchmarks/bench_llm_archs.py \\
        [--threads 1 2] [--types q8_0] [--archs llama qwen2 ...] \\
        [--prompt-tokens 128] [--new-tokens 64] [--rounds 3]

The files are tests/llm/make_gguf_models.py's architectures at bench size
(--size bench: width 1024, FFN 2816, 6 layers, each architecture's own head
size, GQA/MQA, biases, norms, soft-capping, window...), random weights of
the given type, written once into --cache-dir.  Prefill: a prompt of
--prompt-tokens tokens as one batch; decode: --new-tokens tokens greedily,
one at a time, after it.  Printed: the median tokens/s of each engine over
the rounds, from wall time and from the process's CPU time (on a shared
machine, CPU time at one thread is what the run would take alone), and the
ratio peregrine / llama.cpp.  1 and 2 threads are separate tables.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from pathlib import Path

import numpy as np

import peregrine_nb as pg

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "make_gguf_models", HERE.parent / "tests" / "llm" / "make_gguf_models.py")
mk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mk)

TEXT = ("The quick brown fox jumps over the lazy dog. Once upon a time there was a little "
        "engine that could, and the children played in the garden near the old mill. ") * 20


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


class Ours:
    name = "peregrine"

    def __init__(self, path, threads):
        self.m = pg.models.load_llm(path, threads=threads, n_ctx=512)

    def prefill(self, ids):
        self.m.reset()
        return self.m.eval(ids)

    def decode(self, logits, n):
        t = int(np.argmax(logits))
        for _ in range(n):
            t = int(np.argmax(self.m.eval([t])))


class LlamaCpp:
    name = "llama.cpp"

    def __init__(self, path, threads):
        import llama_cpp
        self.llama_cpp = llama_cpp
        self.m = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_batch=512, n_ubatch=512,
                                 n_threads=threads, n_threads_batch=threads, verbose=False)

    def logits(self):
        p = self.llama_cpp.llama_get_logits_ith(self.m.ctx, -1)
        return np.ctypeslib.as_array(p, shape=(self.m.n_vocab(),))

    def prefill(self, ids):
        self.m.reset()
        self.m.eval(ids)
        return self.logits().copy()

    def decode(self, logits, n):
        t = int(np.argmax(logits))
        for _ in range(n):
            self.m.eval([t])
            t = int(np.argmax(self.logits()))


def bench(a, path, threads):
    engines = [Ours(path, threads), LlamaCpp(path, threads)]
    ids = engines[0].m.tokenize(TEXT)[:a.prompt_tokens]
    res = {e.name: {"pw": [], "pc": [], "dw": [], "dc": []} for e in engines}
    for r in range(a.rounds + 1):           # round 0 warms up, not counted
        for e in (engines if r % 2 else engines[::-1]):
            pw, pc, logits = timed(lambda: e.prefill(ids))
            dw, dc, _ = timed(lambda: e.decode(logits, a.new_tokens))
            if r:
                d = res[e.name]
                d["pw"].append(len(ids) / pw)
                d["pc"].append(len(ids) / pc)
                d["dw"].append(a.new_tokens / dw)
                d["dc"].append(a.new_tokens / dc)
    return {k: {m: statistics.median(v) for m, v in d.items()} for k, d in res.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--types", nargs="+", default=["q8_0"], choices=mk.TYPES)
    ap.add_argument("--archs", nargs="+", default=list(mk.ARCHS), choices=list(mk.ARCHS))
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache-dir", default=os.environ.get("PEREGRINE_BENCH_CACHE",
                                                          "/tmp/peregrine_bench_llm_archs"))
    a = ap.parse_args()
    info = pg.cpu_info()
    print(f"cpu {info.brand} level {info.level}; prompt {a.prompt_tokens} tokens, "
          f"{a.new_tokens} new; median of {a.rounds} interleaved rounds")
    for wtype in a.types:
        for threads in a.threads:
            print(f"\n{wtype}, {threads} thread{'s' if threads > 1 else ''} "
                  f"(tokens/s: wall / cpu; ratio = peregrine / llama.cpp, wall)")
            print(f"{'arch':>7} {'head':>5} | {'decode pg':>13} {'decode llama':>13} {'ratio':>6} | "
                  f"{'prefill pg':>13} {'prefill llama':>13} {'ratio':>6}")
            for arch in a.archs:
                path = mk.path_for(a.cache_dir, arch, wtype, "bench")
                if not path.exists():
                    mk.write_model(a.cache_dir, arch, wtype, "bench")
                r = bench(a, path, threads)
                o, l = r["peregrine"], r["llama.cpp"]
                hd = mk.BENCH[arch]["HD"]
                print(f"{arch:>7} {hd:>5} | {o['dw']:6.1f}/{o['dc']:6.1f} {l['dw']:6.1f}/{l['dc']:6.1f} "
                      f"{o['dw'] / l['dw']:5.2f}x | {o['pw']:6.0f}/{o['pc']:6.0f} "
                      f"{l['pw']:6.0f}/{l['pc']:6.0f} {o['pw'] / l['pw']:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
