"""Sentences per second on 1 process vs a LocalCluster of 2 workers x 1
thread, for Peregrine and for onnxruntime running the same corpus the same
way (peregrine_nb.dask.embed: the same chunks, length buckets, batches,
tokenizer and pooling; only the forward pass differs), interleaved, medians.

    python benchmarks/bench_scale.py [--n 800] [--rounds 5] [--chunk 100]

ORT runs a torch export of the same MiniLM weights (benchmarks/bench_minilm.py
export_onnx, as the tests export it), one intra-op thread per process.
Dask overhead per batch = (wall x workers - time inside the tasks) / batches.
Targets (the issue): cluster >= 1.8x one process; Peregrine >= 1.2x ORT on
the cluster.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=800, help="sentences in the corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=100, help="sentences per task")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--buckets", default="16,32,64,128")
    ap.add_argument("--onnx", default=None)
    args = ap.parse_args()

    import peregrine_nb as pg
    import peregrine_nb.dask as pgd
    from distributed import Client

    buckets = tuple(int(b) for b in args.buckets.split(","))
    onnx_path = args.onnx or os.path.join(tempfile.mkdtemp(prefix="bench_scale_"), "minilm.onnx")
    if not os.path.exists(onnx_path):
        from bench_minilm import export_onnx
        export_onnx(onnx_path)
    folder = pgd.prepare_minilm(3, buckets, args.batch)
    corpus = pgd.sample_corpus(args.n, seed=3)
    cluster = pgd.local_cluster(2, threads=1, dashboard_address=":0")
    client = Client(cluster)
    info = pg.cpu_info()
    print(f"CPU: {info.brand or info.arch}, {os.cpu_count()} CPUs, level {info.level}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"corpus: {len(corpus)} generated sentences, chunks of {args.chunk}, batch {args.batch}, "
          f"buckets {buckets}\n")
    kw = dict(model=folder, buckets=buckets, batch_size=args.batch, chunk_size=args.chunk, progress=False,
              verbose=False)
    engines = {"peregrine": None, "onnxruntime": onnx_path}
    modes = {"1 process": False, "2 workers x 1 thread": client}
    # warm: every engine loaded in this process and on every worker
    for onnx in engines.values():
        for c in modes.values():
            pgd.embed(corpus[:64], client=c, onnx_path=onnx, **kw)
    rates = {(e, m): [] for e in engines for m in modes}
    overhead = {e: [] for e in engines}
    waste = 0.0
    for r in range(args.rounds):
        order = [(e, m) for e in engines for m in modes]
        if r % 2:
            order.reverse()
        for e, m in order:
            pgd.embed(corpus, client=modes[m], onnx_path=engines[e], **kw)
            rep = pgd.last_report
            rates[(e, m)].append(rep.per_second)
            waste = rep.padding_waste
            if modes[m] is not False:
                overhead[e].append(max(rep.seconds * rep.workers - rep.task_seconds, 0.0) / max(rep.batches, 1))
    med = {k: statistics.median(v) for k, v in rates.items()}
    hdr = f"{'engine':<12} {'mode':<22} {'sentences/s':>12} {'x 1 process':>12} {'x ORT':>7}"
    print(hdr)
    print("-" * len(hdr))
    for e in engines:
        for m in modes:
            x1 = med[(e, m)] / med[(e, "1 process")]
            xo = med[(e, m)] / med[("onnxruntime", m)]
            print(f"{e:<12} {m:<22} {med[(e, m)]:>12.1f} {x1:>12.2f} {xo:>7.2f}")
    print(f"\nmedians of {args.rounds} interleaved rounds; padding waste {waste:.1%} of the token slots")
    for e in engines:
        print(f"Dask overhead per batch ({e}): {1e3 * statistics.median(overhead[e]):.1f} ms "
              f"(wall x workers - time in tasks, over batches)")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
