"""One engine per worker process, for the benchmarks that race Peregrine
against ONNX Runtime on the same file (bench_onnx_models, bench_quant_onnx,
bench_cnn, bench_precision).

Each engine runs in its own process, given only the threads it is told to
use, and the parent tells them in turn to "run" once, so the noise of a
shared machine falls on both alike.  The child side is serve(); the parent
side is Worker.  The protocol is one JSON line per message on stdout
({"ready": ...} or {"error": ...} once, then {"t": seconds} per run);
other lines there (library chatter) are skipped.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Callable


def ort_session(path: str, threads: int, quiet: bool = False, profile_prefix: str | None = None):
    """ONNX Runtime as the benchmarks run it: ORT_ENABLE_ALL, ``threads``
    intra-op threads, one inter-op thread, sequential, its workers not
    spinning once a run is over.

    Why no spinning: the races alternate the two engines on the same cores,
    and ORT's pool spins on after its run, past the pause between calls, on
    the cores the next engine runs on.  Measured (AMD Zen 3, 2 vCPUs,
    MobileNetV2 batch 1, 2 threads, bench_cnn's race): Peregrine 26.3 ms
    beside a spinning ORT, 9.3 ms beside one that sleeps, 7.2 ms alone;
    ORT itself 9.9 ms spinning, 8.3 ms not - it loses nothing."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if quiet:
        so.log_severity_level = 3
    if profile_prefix:   # ORT's own per-node profiler, into profile_prefix*.json
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def race(workers, rounds: int, pause: float) -> None:
    """Each worker runs once per round, ``pause`` seconds after the one
    before (so that the engine that ran last has stopped spinning); the
    order reverses every other round, so that a machine speeding up or
    slowing down within a round favours no engine."""
    for r in range(rounds):
        for w in workers[::-1] if r % 2 else workers:
            time.sleep(pause)
            w.run_once()


def paired_ratio(ours: list[float], theirs: list[float]) -> float | None:
    """The median of ours[i] / theirs[i] over the rounds of a race: each
    round's runs ran next to each other, so the noise of a shared machine
    mostly cancels in their ratio (the ratio of the two medians pairs runs
    from different rounds)."""
    pairs = [a / b for a, b in zip(ours, theirs) if b > 0]
    return statistics.median(pairs) if pairs and len(ours) == len(theirs) else None


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:400]


def serve(setup: Callable[[], Callable[[], object]]) -> None:
    """The child: ``setup()`` builds the engine and returns its run
    function; run twice (the first Peregrine run also compiles for the
    shapes), report ready with the setup time, then one timed run per
    "run" line on stdin until another line comes.  A failure in setup is
    reported as {"error": ...}."""
    t0 = time.perf_counter()
    try:
        run = setup()
        run()
        setup_s = time.perf_counter() - t0
        run()
    except Exception as e:
        print(json.dumps({"error": _one_line(e)}), flush=True)
        return
    print(json.dumps({"ready": True, "setup_s": setup_s}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        t0 = time.perf_counter()
        run()
        print(json.dumps({"t": time.perf_counter() - t0}), flush=True)


class Worker:
    """The parent's handle on one child: ``script --worker *args`` with the
    BLAS / OpenMP thread counts set to ``threads``."""

    def __init__(self, script: str, args, threads: int):
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(threads)
        self.p = subprocess.Popen([sys.executable, os.path.abspath(script), "--worker", *map(str, args)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()
        self.error = self.ready.get("error") if self.ready else "the worker died"
        self.times: list[float] = []

    def _read(self):
        while True:
            line = self.p.stdout.readline()
            if not line:
                return None
            try:
                return json.loads(line)
            except ValueError:
                continue   # library chatter on stdout

    def run_once(self):
        if self.error:
            return
        self.p.stdin.write("run\n")
        self.p.stdin.flush()
        r = self._read()
        if r is None:
            self.error = "the worker died while running"
        else:
            self.times.append(r["t"])

    def close(self):
        try:
            self.p.stdin.write("stop\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        self.p.wait()

    @property
    def median_ms(self):
        return statistics.median(self.times) * 1e3 if self.times and not self.error else None
