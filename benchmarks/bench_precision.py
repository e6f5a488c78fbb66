"""all-MiniLM-L6-v2 forward, sequence 128, in fp32, bf16 and int8: Peregrine
(compile(precision="fp32" | "bf16" | "int8-dynamic")) against ONNX Runtime
fp32 and ONNX Runtime on its own quantize_dynamic model, interleaved.

    python benchmarks/bench_precision.py [--rounds 15] [--batches 1 8] [--threads 1 2]

One worker process per engine (bench_minilm.py's workers and its ONNX
export, reused); the parent sends "run once" to each in turn with a pause
between runs, so that a shared machine's noise falls on all alike.  Per
configuration it prints the median latency, the ratios the issue asks for
(our bf16 against ORT fp32, our int8 against ORT int8), and the accuracy of
each engine's last_hidden_state against our fp32 (cosine over the whole
output, max abs) computed on the same inputs.  Run it by hand after
`unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE`.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_minilm as bm  # noqa: E402
from engine_worker import race  # noqa: E402

SEQ = bm.SEQ
ENGINES = ["pg-fp32", "pg-bf16", "pg-int8", "ort-fp32", "ort-int8"]


def worker(engine: str, batch: int, threads: int, onnx_path: str, out_npy: str) -> None:
    import numpy as np
    ids, mask = bm._inputs(batch)
    t0 = time.perf_counter()
    if engine.startswith("pg-"):
        import peregrine_nb as pg
        prec = {"pg-fp32": "fp32", "pg-bf16": "bf16", "pg-int8": "int8-dynamic"}[engine]
        enc = pg.models.minilm(level=3, threads=threads, precision=prec)
        model = enc.compiled(batch, SEQ)
        feeds = {"input_ids": ids, "attention_mask": mask}
        run = lambda: next(iter(model.run(feeds).values()))  # noqa: E731
        got = model.precision
    else:
        from engine_worker import ort_session
        path = onnx_path if engine == "ort-fp32" else onnx_path.replace(".onnx", ".int8.onnx")
        sess = ort_session(path, threads)
        feeds = {"input_ids": ids, "attention_mask": mask}
        run = lambda: sess.run(None, feeds)[0]  # noqa: E731
        got = "fp32" if engine == "ort-fp32" else "int8 (quantize_dynamic)"
    setup = time.perf_counter() - t0
    y = run()
    run()
    np.save(out_npy, np.asarray(y, np.float32))
    print(json.dumps({"ready": True, "setup_s": setup, "precision": got}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        t0 = time.perf_counter()
        run()
        print(json.dumps({"t": time.perf_counter() - t0}), flush=True)
    print(json.dumps({"rss_mb": bm._peak_rss_mb()}), flush=True)


class Worker(bm.Worker):
    def __init__(self, engine, batch, threads, onnx_path, out_npy):
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(threads)
        self.engine = engine
        self.out_npy = out_npy
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", engine,
                                   str(batch), str(threads), onnx_path, out_npy],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()
        self.times: list[float] = []


def quantize(onnx_path: str) -> str:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    out = onnx_path.replace(".onnx", ".int8.onnx")
    if not os.path.exists(out):
        quantize_dynamic(onnx_path, out, weight_type=QuantType.QInt8)
    return out


def main() -> None:
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--pause", type=float, default=0.1)
    ap.add_argument("--engines", nargs="+", default=ENGINES)
    ap.add_argument("--onnx", default=None, help="where to write (or find) the fp32 ONNX export")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="bench_precision_")
    onnx_path = args.onnx or os.path.join(tmp, "minilm.onnx")
    if any(e.startswith("ort") for e in args.engines):
        if not os.path.exists(onnx_path):
            bm.export_onnx(onnx_path)
        quantize(onnx_path)
    import peregrine_nb as pg
    print(f"MiniLM-L6 forward, seq {SEQ}; CPU level {pg.cpu_info().level}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    rows = []
    for batch in args.batches:
        for threads in args.threads:
            workers = [Worker(e, batch, threads, onnx_path, os.path.join(tmp, f"{e}_{batch}_{threads}.npy"))
                       for e in args.engines]
            race(workers, args.rounds, args.pause)
            ref = np.load(workers[0].out_npy).astype(np.float64) if args.engines[0] == "pg-fp32" else None
            res = {}
            for w in workers:
                med = statistics.median(w.times)
                y = np.load(w.out_npy).astype(np.float64)
                cos = mx = float("nan")
                if ref is not None and y.shape == ref.shape:
                    a, b = y.ravel(), ref.ravel()
                    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
                    # per token: the worst cosine of one hidden state
                    ya, ra = y.reshape(-1, y.shape[-1]), ref.reshape(-1, ref.shape[-1])
                    tok = (ya * ra).sum(1) / (np.linalg.norm(ya, axis=1) * np.linalg.norm(ra, axis=1))
                    mx = float(tok.min())
                res[w.engine] = med
                rows.append({"engine": w.engine, "batch": batch, "threads": threads, "median_ms": med * 1e3,
                             "best_ms": min(w.times) * 1e3, "precision": w.ready["precision"],
                             "cos": cos, "tok_cos": mx, "rss_mb": w.close()})
            for r in rows[-len(workers):]:
                r["vs_ort32"] = r["median_ms"] / (res["ort-fp32"] * 1e3) if "ort-fp32" in res else float("nan")
                r["vs_ort8"] = r["median_ms"] / (res["ort-int8"] * 1e3) if "ort-int8" in res else float("nan")

    hdr = (f"{'engine':<9} {'batch':>5} {'thr':>3} {'median ms':>10} {'best ms':>8} {'/ORT32':>7} {'/ORT8':>6} "
           f"{'cos vs pg-fp32':>15} {'min tok cos':>12}  bound precision")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['engine']:<9} {r['batch']:>5} {r['threads']:>3} {r['median_ms']:>10.2f} {r['best_ms']:>8.2f} "
              f"{r['vs_ort32']:>7.2f} {r['vs_ort8']:>6.2f} {r['cos']:>15.6f} {r['tok_cos']:>12.6f}  {r['precision']}")
    print("\n/ORT32, /ORT8: median latency over ORT fp32's / ORT int8's (below 1 = faster).  Targets: "
          "pg-bf16 /ORT32 <= 1/1.6 = 0.625, pg-int8 /ORT8 <= 1/1.1 = 0.909.")
    print("\nspeed-ups (ORT median / ours):")
    for batch in args.batches:
        for threads in args.threads:
            sel = {r["engine"]: r["median_ms"] for r in rows if r["batch"] == batch and r["threads"] == threads}
            parts = []
            if "pg-bf16" in sel and "ort-fp32" in sel:
                parts.append(f"bf16 vs ORT fp32 {sel['ort-fp32'] / sel['pg-bf16']:.2f}x")
            if "pg-int8" in sel and "ort-int8" in sel:
                parts.append(f"int8 vs ORT int8 {sel['ort-int8'] / sel['pg-int8']:.2f}x")
            if "pg-fp32" in sel and "ort-fp32" in sel:
                parts.append(f"fp32 vs ORT fp32 {sel['ort-fp32'] / sel['pg-fp32']:.2f}x")
            print(f"  B={batch} threads={threads}: " + ", ".join(parts))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
