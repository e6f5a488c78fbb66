"""A greedy decode loop over an exported GPT-2 with past key values as
inputs and outputs (tests/models/make_models.py's gpt2-past, bench size:
4 layers, hidden 512, 8 heads, random weights): Peregrine's OnnxModel
against ONNX Runtime on the same file, interleaved.

    python benchmarks/bench_onnx_decode.py [--prompt 8] [--steps 24] [--threads 1 2]
        [--rounds 7] [--dir DIR]

One run is a whole loop: the prompt in one step, then --steps steps of one
token each, every step feeding the last step's present key / value back as
the past.  The past grows by one every step, so every step is a new input
shape: ORT runs it as it comes, Peregrine compiles for it (the OnnxModel
keeps 8 shape sets, fewer than the loop's steps, so a loop compiles every
step again, as a long generation would).  What a compile costs then is
mostly the compile's own copy of the graph and the passes (the graph is
built once and compiled at each step's input shapes); the weights are
packed by the first compile only (OnnxModel.weight_cache).

Each engine runs in its own worker process (engine_worker.py) with the
threads it is told; the table gives the median over --rounds loops of the
time per token (the loop's time / its steps + 1), ours / ORT (below 1:
Peregrine is faster), and how many of the tokens the two engines chose
agree, counted from the first (random weights can leave near ties that
rounding decides).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engine_worker  # noqa: E402
from engine_worker import ort_session, race, serve  # noqa: E402


def decode_loop(run, past_inputs, prompt: int, steps: int):
    """Greedy decoding from a fixed prompt; past_inputs: the model's
    past_{key,value}_i inputs -> their [batch, heads, past, head dim]
    dims; run(feeds) -> outputs in the model's order (logits, then present
    key / value per layer).  Returns the tokens chosen."""
    import numpy as np
    layers = len(past_inputs) // 2
    ids = (np.arange(prompt, dtype=np.int64) * 37 % 997 + 3)[None, :]
    past = {n: np.zeros((1, d[1], 0, d[3]), np.float32) for n, d in past_inputs.items()}
    total, tokens = prompt, []
    for _ in range(steps + 1):
        feeds = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64), **past}
        out = run(feeds)
        ids = out[0][:, -1:].argmax(-1).astype(np.int64)
        tokens.append(int(ids[0, 0]))
        past = {f"past_{kv}_{i}": out[1 + 2 * i + (kv == "value")]
                for i in range(layers) for kv in ("key", "value")}
        total += 1
    return tokens


def worker(engine: str, path: str, prompt: int, steps: int, threads: int, tokens_file: str) -> None:
    def setup():
        import onnx
        model = onnx.load(path, load_external_data=False)
        past_inputs = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
                       for i in model.graph.input if i.name.startswith("past_")}
        if engine == "peregrine":
            import peregrine_nb as pg
            m = pg.OnnxModel(path, level=3, threads=threads)
            order = m.output_names

            def run(feeds):
                out = m.run(feeds)
                return [out[k] for k in order]
        else:
            sess = ort_session(path, threads, quiet=True)

            def run(feeds):
                return sess.run(None, feeds)
        with open(tokens_file, "w") as f:
            json.dump(decode_loop(run, past_inputs, prompt, steps), f)
        return lambda: decode_loop(run, past_inputs, prompt, steps)
    serve(setup)


class Worker(engine_worker.Worker):
    def __init__(self, engine, path, prompt, steps, threads, tokens_file):
        self.engine, self.tokens_file = engine, tokens_file
        super().__init__(__file__, [engine, path, prompt, steps, threads, tokens_file], threads)

    def tokens(self) -> list[int]:
        with open(self.tokens_file) as f:
            return json.load(f)


def agreeing(a: list[int], b: list[int]) -> int:
    """Tokens the same in both, counted from the first."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", default=None, help="where the exported models are (made if missing)")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        engine, path, prompt, steps, threads, tokens_file = a.worker
        worker(engine, path, int(prompt), int(steps), int(threads), tokens_file)
        return

    import tempfile
    import bench_onnx_models
    out = a.dir or os.path.join(tempfile.gettempdir(), "peregrine_bench_onnx_models")
    entry = bench_onnx_models.ensure_models(out, ["gpt2-past"], ["torchscript"])[
        ("gpt2-past", "torchscript")]
    path = os.path.join(out, entry["file"])
    print(f"gpt2-past (bench size): prompt {a.prompt}, then {a.steps} "
          f"tokens; median of {a.rounds} interleaved loops")
    print(f"{'threads':>7} {'peregrine ms/token':>19} {'ort ms/token':>13} {'x ORT':>6} {'paired':>7} "
          f"{'tokens agree':>13}")
    for t in a.threads:
        workers = [Worker(e, path, a.prompt, a.steps, t, os.path.join(out, f"decode_tokens_{e}.json"))
                   for e in ("peregrine", "ort")]
        try:
            for w in workers:
                if w.error:
                    raise SystemExit(f"{w.engine}: {w.error}")
            race(workers, a.rounds, 0.05)
            per = [w.median_ms / (a.steps + 1) for w in workers]
            paired = engine_worker.paired_ratio(workers[0].times, workers[1].times)
            agree = agreeing(workers[0].tokens(), workers[1].tokens())
            print(f"{t:>7} {per[0]:>19.2f} {per[1]:>13.2f} {per[0] / per[1]:>5.2f}x "
                  f"{paired:>6.2f}x {agree:>7}/{a.steps + 1}")
        finally:
            for w in workers:
                w.close()


if __name__ == "__main__":
    main()
