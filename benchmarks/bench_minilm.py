"""all-MiniLM-L6-v2 forward (last_hidden_state), sequence 128: Peregrine
against ONNX Runtime (ORT_ENABLE_ALL) and torch, interleaved.

    python benchmarks/bench_minilm.py [--rounds 15] [--batches 1 8] [--threads 1 2]

Each engine lives in its own worker process, so that its peak RSS is its
own; the parent sends "run once" to the workers in turn (peregrine, ORT,
torch, peregrine, ...), with a pause between runs so that no engine's idle
spinning threads run into the next one's time, so that the noise of a shared machine falls on all of
them alike, and reports per engine and configuration: median latency, the
ratio to ORT, GFLOP/s (matrix products and attention, 2 per FMA) against the
measured FMA peak at that thread count (peregrine_nb.kernels.measure_peak),
compile / session-creation time, and peak RSS.

The ONNX file ORT runs is a torch export of the same weights (the one the
tests make), written to --onnx (default: a temporary folder).
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
from engine_worker import race  # noqa: E402

SEQ = 128
HIDDEN, FFN, LAYERS = 384, 1536, 6


def flops(batch: int, seq: int = SEQ) -> float:
    """Multiply-adds x 2 of one forward: QKV, output, FFN products and the
    two attention products; elementwise work is left out."""
    per_token_layer = 2 * HIDDEN * (4 * HIDDEN + 2 * FFN) + 2 * 2 * seq * HIDDEN
    return float(batch * seq * LAYERS * per_token_layer)


# ---------------------------------------------------------------------------
# workers: one engine each; read commands on stdin, answer one JSON line
# ---------------------------------------------------------------------------

def _inputs(batch: int):
    import numpy as np
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, size=(batch, SEQ)).astype(np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    mask = np.ones((batch, SEQ), np.int64)
    return ids, mask


def _peak_rss_mb() -> float:
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over execve,
    # so a worker would report its parent's peak
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(engine: str, batch: int, threads: int, onnx_path: str) -> None:
    ids, mask = _inputs(batch)
    t0 = time.perf_counter()
    if engine == "peregrine":
        import peregrine_nb as pg
        enc = pg.models.minilm(level=3, threads=threads)
        model = enc.compiled(batch, SEQ)
        feeds = {"input_ids": ids, "attention_mask": mask}
        run = lambda: model.run(feeds)  # noqa: E731
    elif engine == "onnxruntime":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if os.environ.get("BENCH_NO_SPIN") == "1":
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feeds = {"input_ids": ids, "attention_mask": mask}
        run = lambda: sess.run(None, feeds)  # noqa: E731
    elif engine == "torch":
        import torch
        from transformers import AutoModel
        import peregrine_nb as pg
        torch.set_num_threads(threads)
        bert = AutoModel.from_pretrained(pg.models.find_minilm_dir()).eval()
        ti, tm = torch.from_numpy(ids), torch.from_numpy(mask)

        def run():
            with torch.inference_mode():
                return bert(input_ids=ti, attention_mask=tm).last_hidden_state
    else:
        raise SystemExit(f"unknown engine {engine}")
    setup = time.perf_counter() - t0
    run()   # warm up: page in weights, pack, fill caches
    run()
    print(json.dumps({"ready": True, "setup_s": setup, "rss_mb": _peak_rss_mb()}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        t0 = time.perf_counter()
        run()
        print(json.dumps({"t": time.perf_counter() - t0}), flush=True)
    print(json.dumps({"rss_mb": _peak_rss_mb()}), flush=True)


# ---------------------------------------------------------------------------
# the parent
# ---------------------------------------------------------------------------

def export_onnx(path: str) -> None:
    import torch
    from transformers import AutoModel
    import peregrine_nb as pg
    bert = AutoModel.from_pretrained(pg.models.find_minilm_dir(), attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):   # as tests/test_minilm.py exports it
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
            h = self.m.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))
            return self.m.encoder(h, attention_mask=ext).last_hidden_state

    ids = torch.ones((1, 8), dtype=torch.int64)
    dyn = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Encoder(bert), (ids, torch.ones_like(ids)), path,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn},
                          opset_version=17, dynamo=False)


class Worker:
    def __init__(self, engine, batch, threads, onnx_path, no_spin=False):
        env = dict(os.environ)
        # each engine gets only the threads it is told to use
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(threads)
        if no_spin:   # ORT and OpenMP threads sleep at once instead of spinning for work
            env["BENCH_NO_SPIN"] = "1"
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        self.engine = engine
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", engine,
                                   str(batch), str(threads), onnx_path],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()
        self.times: list[float] = []

    def _read(self):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"the {self.engine} worker died")
            try:
                return json.loads(line)
            except ValueError:
                continue   # library chatter on stdout

    def run_once(self):
        self.p.stdin.write("run\n")
        self.p.stdin.flush()
        self.times.append(self._read()["t"])

    def close(self) -> float:
        self.p.stdin.write("stop\n")
        self.p.stdin.flush()
        rss = self._read()["rss_mb"]
        self.p.wait()
        return rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--pause", type=float, default=0.1,
                    help="seconds between runs, so that the thread pools of the engine that ran last "
                         "have stopped spinning (they would steal the cores of the next one)")
    ap.add_argument("--no-spin", action="store_true",
                    help="ORT without intra-op spinning, torch with OMP_WAIT_POLICY=PASSIVE: fairer to "
                         "them on an oversubscribed machine, where a spinning thread burns the time "
                         "slice of the thread it waits for")
    ap.add_argument("--engines", nargs="+", default=["peregrine", "onnxruntime", "torch"])
    ap.add_argument("--onnx", default=None, help="where to write (or find) the ONNX export")
    args = ap.parse_args()

    from peregrine_nb import kernels
    onnx_path = args.onnx or os.path.join(tempfile.mkdtemp(prefix="bench_minilm_"), "minilm.onnx")
    if "onnxruntime" in args.engines and not os.path.exists(onnx_path):
        export_onnx(onnx_path)
    peaks = {t: kernels.measure_peak(t)["fma_gflops"] for t in args.threads}
    print(f"measured FMA peak: " + ", ".join(f"{t} thread(s) {p:.0f} GFLOP/s" for t, p in peaks.items()))
    print(f"MiniLM-L6 forward, seq {SEQ}: {flops(1) / 1e9:.2f} GFLOP per sequence; "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
          + ("; ORT/OpenMP spinning off" if args.no_spin else "") + "\n")
    rows = []
    for batch in args.batches:
        for threads in args.threads:
            workers = [Worker(e, batch, threads, onnx_path, args.no_spin) for e in args.engines]
            race(workers, args.rounds, args.pause)
            for w in workers:
                med = statistics.median(w.times)
                gf = flops(batch) / med / 1e9
                rows.append({"engine": w.engine, "batch": batch, "threads": threads, "median_ms": med * 1e3,
                             "best_ms": min(w.times) * 1e3,
                             "gflops": gf, "peak_frac": gf / peaks[threads], "setup_s": w.ready["setup_s"],
                             "rss_mb": w.close()})
            ort_ms = next((r["median_ms"] for r in rows[-len(workers):] if r["engine"] == "onnxruntime"), None)
            for r in rows[-len(workers):]:
                r["vs_ort"] = r["median_ms"] / ort_ms if ort_ms else float("nan")

    hdr = f"{'engine':<12} {'batch':>5} {'thr':>3} {'median ms':>10} {'best ms':>8} {'x ORT':>6} {'GFLOP/s':>8} " \
          f"{'% peak':>7} {'setup s':>8} {'peak RSS MB':>12}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['engine']:<12} {r['batch']:>5} {r['threads']:>3} {r['median_ms']:>10.2f} {r['best_ms']:>8.2f} "
              f"{r['vs_ort']:>6.2f} "
              f"{r['gflops']:>8.1f} {100 * r['peak_frac']:>6.1f}% {r['setup_s']:>8.2f} {r['rss_mb']:>12.0f}")
    print("\nx ORT: median latency / ORT's (below 1 = faster than ORT); GFLOP/s and % peak from the "
          "median.  best: the fastest round (what the engine can do when the machine is quiet).")
    print("setup: peregrine = weights "
          "+ graph build + compile; ORT = session creation; torch = model load.")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        main()
