"""ORT-quantised ONNX models: Peregrine (OnnxModel, level 3: quant_fusion's
int8 QuantMatMul steps on gemm_u8s8) against ONNX Runtime (ORT_ENABLE_ALL)
on the same file, interleaved.

    unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
    python benchmarks/bench_quant_onnx.py [--variants dyn-s8 dyn-u8 qdq] [--batches 1 8]
        [--threads 1 2] [--rounds 9] [--seq 128] [--dir DIR]

The model is tests/models/make_quant_models.py's BERT-style encoder at
--size bench (make_models.py's builder: BERT-base-shaped layers, hidden
768, 12 heads, FFN 3072, 2 layers, random weights), quantised by ORT:
quantize_dynamic with QInt8 weights (``dyn-s8``, the default and the
issue's target), QUInt8 weights (``dyn-u8``), or quantize_static QDQ
(``qdq``).  It is made once into --dir (default: a folder under the
system's temp dir, reused while its manifest says bench size).  The fp32
file is timed too (ORT and Peregrine on it), for scale.

Inputs: --seq tokens (128), all attended, batch --batches.  Each engine
runs in its own worker process with only the threads it is told to use
(Peregrine: OnnxModel(threads=t); ORT: intra_op_num_threads=t,
inter_op_num_threads=1, sequential); the parent asks them to run once in
turn, so that a shared machine's noise falls on both alike, and reports the
median of --rounds runs after 2 warm-up runs, and the ratio ORT / Peregrine
(above 1: Peregrine is faster).

Target (issue #15): the quantize_dynamic model at least 1.1x faster than ORT
on its own int8 model, 1 and 2 threads.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engine_worker  # noqa: E402
from engine_worker import ort_session, race, serve  # noqa: E402

MAKE = os.path.join(HERE, "..", "tests", "models", "make_quant_models.py")
TARGET = 1.1


def _mq():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_quant_models", MAKE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_inputs(batch: int, seq: int) -> dict:
    import numpy as np
    rng = np.random.default_rng(7)
    ids = rng.integers(3, 1000, size=(batch, seq)).astype(np.int64)
    tt = np.zeros_like(ids)
    tt[:, seq // 2:] = 1
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": tt}


def worker(engine: str, path: str, batch: int, seq: int, threads: int) -> None:
    def setup():
        feeds = bench_inputs(batch, seq)
        if engine == "peregrine":
            import peregrine_nb as pg
            model = pg.OnnxModel(path, level=3, threads=threads)
            feeds = {k: v for k, v in feeds.items() if k in model.input_names}
            return lambda: model.run(feeds)
        sess = ort_session(path, threads, quiet=True)
        names = [i.name for i in sess.get_inputs()]
        feeds = {k: v for k, v in feeds.items() if k in names}
        return lambda: sess.run(None, feeds)
    serve(setup)


class Worker(engine_worker.Worker):
    def __init__(self, engine, path, batch, seq, threads):
        super().__init__(__file__, [engine, path, batch, seq, threads], threads)


def ensure_models(out: str) -> dict:
    manifest = os.path.join(out, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            m = json.load(f)
        if m.get("size") == "bench" and "bert" in m.get("models", {}):
            return m["models"]["bert"]
    print(f"making the bench-size BERT and its quantised versions into {out} ...", flush=True)
    subprocess.run([sys.executable, MAKE, "--out", out, "--size", "bench", "--only", "bert", "--no-refs"],
                   check=True)
    with open(manifest) as f:
        return json.load(f)["models"]["bert"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", nargs="+", default=["dyn-s8", "fp32"],
                    choices=["fp32", "dyn-s8", "dyn-u8", "qdq", "qdq-pc", "qdq-u8"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "peregrine_bench_quant_models"))
    a = ap.parse_args()
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if k in os.environ:
            print(f"warning: {k} is set; unset it before benchmarking", flush=True)
    entry = ensure_models(a.dir)
    print(f"BERT-style encoder (hidden 768, FFN 3072, 2 layers), seq {a.seq}; ORT_ENABLE_ALL; "
          f"median of {a.rounds} interleaved runs")
    print(f"{'variant':<8} {'batch':>5} {'thr':>3} {'peregrine ms':>13} {'ort ms':>9} {'ort/pg':>7}")
    rows = []
    for variant in a.variants:
        path = os.path.join(a.dir, entry["files"][variant])
        for threads in a.threads:
            for batch in a.batches:
                ws = {e: Worker(e, path, batch, a.seq, threads) for e in ("peregrine", "onnxruntime")}
                race(list(ws.values()), a.rounds, 0.05)
                for w in ws.values():
                    w.close()
                pm, om = ws["peregrine"].median_ms, ws["onnxruntime"].median_ms
                if pm is None or om is None:
                    why = ws["peregrine"].error or ws["onnxruntime"].error
                    print(f"{variant:<8} {batch:>5} {threads:>3}  failed: {why}", flush=True)
                    continue
                ratio = om / pm
                rows.append((variant, batch, threads, ratio))
                print(f"{variant:<8} {batch:>5} {threads:>3} {pm:>13.2f} {om:>9.2f} {ratio:>6.2f}x", flush=True)
    dyn = [r for r in rows if r[0] == "dyn-s8"]
    if dyn:
        worst = min(r[3] for r in dyn)
        print(f"\ndyn-s8: worst ORT/Peregrine {worst:.2f}x (target >= {TARGET}x): "
              + ("met" if worst >= TARGET else "NOT met"))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
