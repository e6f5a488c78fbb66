"""SmolLM2-135M-Instruct (Q4_1 GGUF): Peregrine's decoder against llama.cpp
(llama-cpp-python) on the same file and the same thread count, interleaved
run by run so a noisy machine hurts both alike.

    PEREGRINE_LIBRARY=.../libperegrine.so python benchmarks/bench_llm.py \
        [--threads 1 2] [--prompt-tokens 128] [--new-tokens 64] [--rounds 5]

Prefill: a 128-token prompt evaluated as one batch (logits of the last
token).  Decode: 64 tokens generated greedily one at a time after it.
Tokens/s are given from wall time and from the process's CPU time (on a
shared machine, CPU time at one thread is what the run would take alone).
The median over rounds is printed.  The decode bound is the bytes of
weights one token reads divided by the measured copy bandwidth
(pg_measure_copy_gbps, STREAM-style (read + write) / time) at that thread
count: no decoder that reads every weight once per token can beat it.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import peregrine_nb as pg
from peregrine_nb._lib import lib
from peregrine_nb.gguf import smollm2_path
from peregrine_nb.llm import LLM

TEXT = ("The history of the printing press begins in the fifteenth century, when Johannes "
        "Gutenberg combined movable metal type, oil-based inks and a wooden screw press into a "
        "system that could produce books quickly and cheaply. Before that, every copy of a text "
        "was written by hand, usually by monks in monasteries, and a single Bible could take "
        "years to finish. The new machines spread across Europe within decades: by 1500 there "
        "were presses in more than two hundred cities, and millions of volumes had been printed. "
        "Scholars argue about the consequences, but most agree that cheaper books helped the "
        "Reformation, the Scientific Revolution and the rise of literacy among ordinary people. "
        "Newspapers, pamphlets and scientific journals followed, and ideas travelled faster "
        "than ever before.")


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


class Ours:
    name = "peregrine"

    def __init__(self, path, threads):
        self.m = LLM(path, threads=threads, n_ctx=512)

    def prefill(self, ids):
        self.m.reset()
        return self.m.eval(ids)

    def decode(self, first_logits, n):
        t = int(np.argmax(first_logits))
        out = [t]
        for _ in range(n - 1):
            t = int(np.argmax(self.m.eval([t])))
            out.append(t)
        return out


class LlamaCpp:
    name = "llama.cpp"

    def __init__(self, path, threads):
        import llama_cpp
        self.m = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_batch=512, n_ubatch=512,
                                 n_threads=threads, n_threads_batch=threads, verbose=False)

    def logits(self):
        # the last token's row straight from llama.cpp (without logits_all,
        # Llama.scores is not filled for it)
        import llama_cpp
        p = llama_cpp.llama_get_logits_ith(self.m.ctx, -1)
        return np.ctypeslib.as_array(p, shape=(self.m.n_vocab(),))

    def prefill(self, ids):
        self.m.reset()
        self.m.eval(ids)
        return self.logits().copy()

    def decode(self, first_logits, n):
        t = int(np.argmax(first_logits))
        out = [t]
        for _ in range(n - 1):
            self.m.eval([t])
            t = int(np.argmax(self.logits()))
            out.append(t)
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-llama", action="store_true", help="Peregrine alone")
    a = ap.parse_args()
    path = smollm2_path()
    print(f"model {path.name}; prompt {a.prompt_tokens} tokens, {a.new_tokens} new tokens, "
          f"median of {a.rounds} interleaved rounds")
    print(f"cpu {pg.cpu_info().brand} level {pg.cpu_info().level}")
    hdr = (f"{'thr':>3} {'engine':>10} {'prefill t/s':>12} {'(cpu)':>8} {'decode t/s':>11} "
           f"{'(cpu)':>8} {'decode bound':>12}")
    print(hdr)
    rows = []
    for t in a.threads:
        engines = [Ours(path, t)]
        if not a.no_llama:
            try:
                engines.append(LlamaCpp(path, t))
            except ImportError:
                print("llama_cpp is not installed: Peregrine alone")
        ids = engines[0].m.tokenize(TEXT * 4)[:a.prompt_tokens]
        assert len(ids) == a.prompt_tokens
        gbps = lib.pg_measure_copy_gbps(256 << 20, t)
        wbytes = engines[0].m.info.weight_bytes
        bound = gbps * 1e9 / wbytes
        res = {e.name: {"pw": [], "pc": [], "dw": [], "dc": [], "tokens": None} for e in engines}
        for _ in range(a.rounds + 1):                 # the first round warms up
            for e in engines:
                r = res[e.name]
                logits = [None]
                pw, pc = timed(lambda: logits.__setitem__(0, e.prefill(ids)))
                toks = [None]
                dw, dc = timed(lambda: toks.__setitem__(0, e.decode(logits[0], a.new_tokens)))
                r["pw"].append(pw); r["pc"].append(pc); r["dw"].append(dw); r["dc"].append(dc)
                r["tokens"] = toks[0]
        for e in engines:
            r = res[e.name]
            med = lambda v: statistics.median(v[1:])  # noqa: E731
            n_dec = a.new_tokens - 1                    # the first token came from the prefill
            row = (t, e.name, len(ids) / med(r["pw"]), len(ids) / med(r["pc"]),
                   n_dec / med(r["dw"]), n_dec / med(r["dc"]), bound)
            rows.append(row)
            print(f"{row[0]:>3} {row[1]:>10} {row[2]:12.1f} {row[3]:8.1f} {row[4]:11.1f} "
                  f"{row[5]:8.1f} {row[6]:12.1f}")
        if len(engines) == 2:
            a_, b_ = res["peregrine"]["tokens"], res["llama.cpp"]["tokens"]
            same = next((i for i in range(len(a_)) if a_[i] != b_[i]), len(a_))
            p, l = rows[-2], rows[-1]
            print(f"    ratio peregrine / llama.cpp: prefill {p[2] / l[2]:.2f}x "
                  f"(cpu {p[3] / l[3]:.2f}x), decode {p[4] / l[4]:.2f}x (cpu {p[5] / l[5]:.2f}x); "
                  f"greedy tokens equal: {same}/{len(a_)}; copy {gbps:.1f} GB/s, "
                  f"{wbytes / 1e6:.1f} MB of weights per token")


if __name__ == "__main__":
    main()
