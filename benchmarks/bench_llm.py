"""SmolLM2-135M-Instruct (Q4_1 GGUF), and synthetic llama files of every
weight type: Peregrine's decoder against llama.cpp (llama-cpp-python) on
the same file and the same thread count, interleaved run by run so a noisy
machine hurts both alike.

    PEREGRINE_LIBRARY=.../libperegrine.so python benchmarks/bench_llm.py \
        [--threads 1 2] [--prompt-tokens 128] [--new-tokens 64] [--rounds 5] \
        [--types smollm2 q4_0 q4_1 q8_0 q4_K q5_K q6_K q4_K_M f16 bf16] [--size 1024]

--types picks the files: "smollm2" is the real model (the default, as
before); the others are llama files written once (into --cache-dir) with
the gguf package and random weights of that type in every matrix
(q4_K_M: q6_K output, attn_v and ffn_down, q4_K elsewhere, as llama.cpp's
Q4_K_M), shaped like a SmolLM2 scaled to width --size (default 1024: 8
layers, FFN 2816, 16 heads of 64, 4 KV heads; widths multiples of 256 so
the k-quants fit) with the tokenizer of tests/llm/make_gguf_models.py.

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
import os
import statistics
import sys
import time
from pathlib import Path

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


TYPE_MIX = {"q4_K_M": {"default": "q4_k", "output": "q6_k", "attn_v": "q6_k", "ffn_down": "q6_k"}}


def synthetic_path(cache: Path, wtype: str, E: int) -> Path:
    """A llama GGUF of random weights of wtype (written once, then reused)."""
    path = cache / f"bench_llama_{E}_{wtype}.gguf"
    if path.exists():
        return path
    import gguf
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "llm"))
    import make_gguf_models as mg
    cache.mkdir(parents=True, exist_ok=True)
    roles = TYPE_MIX.get(wtype, {"default": wtype.lower()})
    F, L, H, KV = (E * 11 // 4 + 255) // 256 * 256, 8, E // 64, max(1, E // 256)
    rng = np.random.default_rng(1234)
    tokens, merges, ttypes = mg.make_vocab()
    tmp = path.with_suffix(".part")
    w = gguf.GGUFWriter(str(tmp), "llama")
    w.add_name(f"bench-llama-{E}-{wtype}")
    for k, v in (("block_count", L), ("context_length", 2048), ("embedding_length", E),
                 ("feed_forward_length", F), ("head_count", H), ("head_count_kv", KV)):
        getattr(w, "add_" + k)(v)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(64)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(ttypes)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|endoftext|>"))
    w.add_eos_token_id(tokens.index("<|endoftext|>"))

    def mat(name, rows, cols, role, std=0.02):
        arr, raw = mg._matrix(rng, rows, cols, roles.get(role, roles["default"]), std)
        w.add_tensor(name, arr, raw_dtype=raw)

    def vec(name, n):
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32))
    mat("token_embd.weight", len(tokens), E, "token_embd", 0.5)
    vec("output_norm.weight", E)
    mat("output.weight", len(tokens), E, "output")
    for layer in range(L):
        p = f"blk.{layer}."
        vec(p + "attn_norm.weight", E)
        vec(p + "ffn_norm.weight", E)
        mat(p + "attn_q.weight", E, E, "attn_q")
        mat(p + "attn_k.weight", KV * 64, E, "attn_k")
        mat(p + "attn_v.weight", KV * 64, E, "attn_v")
        mat(p + "attn_output.weight", E, E, "attn_output")
        mat(p + "ffn_gate.weight", F, E, "ffn_gate")
        mat(p + "ffn_up.weight", F, E, "ffn_up")
        mat(p + "ffn_down.weight", E, F, "ffn_down")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, path)
    return path


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


def divergence(engines, ids, ours, theirs, i):
    """Where the greedy sequences part: both engines on the shared prefix
    (the prompt and the i tokens both chose), each one's logit margin
    between its own choice and the other's, and how far apart the two
    logit rows are - all as shares of the logit range.  A near-tie is a
    margin far below the rows' difference."""
    ctx = list(ids) + list(ours[:i])
    rows = {}
    for e in engines:
        rows[e.name] = np.asarray(e.prefill(ctx), np.float64)
    L, M = rows["peregrine"], rows["llama.cpp"]
    a, b = int(ours[i]), int(theirs[i])
    rng = float(M.max() - M.min()) or 1.0
    return (f"first difference at token {i}: peregrine {a} by {(L[a] - L[b]) / rng:.2e} of the logit range, "
            f"llama.cpp {b} by {(M[b] - M[a]) / rng:.2e}; the two rows differ by at most "
            f"{np.abs(L - M).max() / rng:.2e} (mean {np.abs(L - M).mean() / rng:.2e})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-llama", action="store_true", help="Peregrine alone")
    ap.add_argument("--types", nargs="+", default=["smollm2"],
                    help="smollm2 (the real Q4_1 file) and/or synthetic files: q4_0 q4_1 q8_0 "
                         "q4_K q5_K q6_K q4_K_M f16 bf16")
    ap.add_argument("--size", type=int, default=1024, help="width of the synthetic files")
    ap.add_argument("--cache-dir", default=os.environ.get("PEREGRINE_BENCH_CACHE",
                                                          "/tmp/peregrine_bench_llm"))
    a = ap.parse_args()
    summary = []
    for wtype in a.types:
        path = smollm2_path() if wtype == "smollm2" else synthetic_path(Path(a.cache_dir), wtype, a.size)
        summary += run_file(a, wtype, path)
    if len(summary) > 1:
        print("\nsummary (peregrine / llama.cpp, wall time; decode as % of its bound)")
        print(f"{'file':>8} {'thr':>3} {'prefill':>8} {'decode':>8} {'% bound':>8}")
        for s in summary:
            print(f"{s[0]:>8} {s[1]:>3} {s[2]:7.2f}x {s[3]:7.2f}x {s[4]:7.0f}%")


def run_file(a, wtype, path):
    print(f"\nmodel {path.name}; prompt {a.prompt_tokens} tokens, {a.new_tokens} new tokens, "
          f"median of {a.rounds} interleaved rounds")
    print(f"cpu {pg.cpu_info().brand} level {pg.cpu_info().level}")
    hdr = (f"{'thr':>3} {'engine':>10} {'prefill t/s':>12} {'(cpu)':>8} {'decode t/s':>11} "
           f"{'(cpu)':>8} {'decode bound':>12} {'% bound':>8}")
    print(hdr)
    rows, summary = [], []
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
                  f"{row[5]:8.1f} {row[6]:12.1f} {100 * row[4] / bound:7.0f}%")
        if len(engines) == 2:
            a_, b_ = res["peregrine"]["tokens"], res["llama.cpp"]["tokens"]
            same = next((i for i in range(len(a_)) if a_[i] != b_[i]), len(a_))
            p, l = rows[-2], rows[-1]
            print(f"    ratio peregrine / llama.cpp: prefill {p[2] / l[2]:.2f}x "
                  f"(cpu {p[3] / l[3]:.2f}x), decode {p[4] / l[4]:.2f}x (cpu {p[5] / l[5]:.2f}x); "
                  f"greedy tokens equal: {same}/{len(a_)}; copy {gbps:.1f} GB/s, "
                  f"{wbytes / 1e6:.1f} MB of weights per token")
            if same < len(a_):
                print("    " + divergence(engines, ids, a_, b_, same))
            summary.append((wtype, t, p[2] / l[2], p[4] / l[4], 100 * p[4] / bound))
        for e in engines:
            del e.m
    return summary


if __name__ == "__main__":
    main()
