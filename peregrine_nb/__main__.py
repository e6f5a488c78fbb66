"""`python -m peregrine_nb` / `peregrine-nb`: the headless entry point.

    peregrine-nb            the CPU report (same as `peregrine-nb cpu`)
    peregrine-nb cpu        CPU, dispatch level and the kernel each op uses
    peregrine-nb tour       the headless tour: kernels raced, a model compiled
                            pass by pass, its memory plan, embeddings
                            [--html FILE] also writes it with the figures
    peregrine-nb embed FILE --out OUT.parquet [--scheduler ADDR] [--workers N]
                            sentence embeddings (all-MiniLM-L6-v2) of FILE
                            (.txt one sentence a line, or .csv / .parquet with
                            --column) on Dask: a scheduler's workers, or a
                            LocalCluster of N single-threaded workers (default
                            one per core; 0: this process); OUT gets the
                            columns text and embedding, in input order
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="peregrine-nb", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("cpu", help="CPU features, dispatch level and kernels")
    tour = sub.add_parser("tour", help="the headless tour of the engine")
    tour.add_argument("--html", metavar="FILE", help="also write the tour with its figures to FILE")
    tour.add_argument("--quick", action="store_true", help="smaller shapes and fewer repeats")
    emb = sub.add_parser("embed", help="embed the sentences of a file on Dask, to Parquet")
    emb.add_argument("file", help=".txt (one sentence a line), .csv or .parquet")
    emb.add_argument("--out", required=True, metavar="FILE.parquet", help="where to write the embeddings")
    emb.add_argument("--column", help="the text column of a .csv / .parquet file")
    emb.add_argument("--scheduler", metavar="ADDR", help="a Dask scheduler (tcp://host:8786) to run on")
    emb.add_argument("--workers", type=int, default=None,
                     help="without --scheduler: LocalCluster workers (default one per core; 0: this process)")
    emb.add_argument("--threads", type=int, default=1, help="engine threads per worker (default 1)")
    emb.add_argument("--batch-size", type=int, default=32)
    emb.add_argument("--chunk-size", type=int, default=512, help="sentences per task")
    emb.add_argument("--buckets", default=None, help="padded lengths, comma-separated (default 16,24,32,48,64,96,128,192,256)")
    emb.add_argument("--model", default=None, help="a folder written by MiniLM.save (default: compiled and cached)")
    emb.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                     help="without --model: the precision of the compiled, cached folder (default fp32)")
    args = parser.parse_args(argv)
    if args.command == "embed":
        return _embed(parser, args)

    import peregrine_nb as pg

    if args.command in (None, "cpu"):
        print(f"Peregrine {pg.__version__}")
        print(pg.cpu_info())
        return 0
    if args.command == "tour":
        from .tour import run_tour

        print(f"Peregrine {pg.__version__}: the tour")
        run_tour(html=args.html, quick=args.quick)
        return 0
    parser.print_help()
    return 2


def _embed(parser, args) -> int:
    import os
    if not os.path.isfile(args.file):
        print(f"peregrine-nb embed: {args.file}: no such file", file=sys.stderr)
        return 2
    if args.workers is not None and args.workers < 0 or args.threads < 1 or args.batch_size < 1 \
            or args.chunk_size < 1:
        print("peregrine-nb embed: --workers must be >= 0, --threads, --batch-size and --chunk-size >= 1",
              file=sys.stderr)
        return 2
    if args.scheduler and args.workers is not None:
        print("peregrine-nb embed: --workers is for a LocalCluster; with --scheduler the cluster has its own",
              file=sys.stderr)
        return 2
    try:
        buckets = tuple(int(b) for b in args.buckets.split(",")) if args.buckets else None
    except ValueError:
        print(f"peregrine-nb embed: --buckets {args.buckets!r} is not a list of lengths", file=sys.stderr)
        return 2
    from . import dask as pgd
    try:
        texts_note = f"{args.file} -> {args.out}"
        kw = {"threads": args.threads, "batch_size": args.batch_size, "chunk_size": args.chunk_size}
        if buckets:
            kw["buckets"] = buckets
        if args.model:
            kw["model"] = args.model
        elif args.precision != "fp32":
            kw["precision"] = args.precision
        client, cluster = None, None
        if args.scheduler:
            from distributed import Client
            client = Client(args.scheduler)
            where = f"scheduler {args.scheduler}"
        elif args.workers == 0:
            client = False
            where = "this process"
        else:
            from distributed import Client
            cluster = pgd.local_cluster(args.workers, threads=args.threads)
            client = Client(cluster)
            where = f"LocalCluster of {len(cluster.workers)} worker(s) x 1 thread, dashboard {client.dashboard_link}"
        print(f"peregrine-nb embed: {texts_note} on {where}", flush=True)
        try:
            rep = pgd.embed_file(args.file, args.out, column=args.column, client=client, **kw)
        finally:
            if client:
                client.close()
            if cluster is not None:
                cluster.close()
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"peregrine-nb embed: {e}", file=sys.stderr)
        return 1
    print(f"wrote {rep.sentences} embeddings to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
