"""`python -m peregrine_nb` / `peregrine-nb`: the headless entry point.

    peregrine-nb            the CPU report (same as `peregrine-nb cpu`)
    peregrine-nb cpu        CPU, dispatch level and the kernel each op uses
    peregrine-nb tour       the headless tour: kernels raced, a model compiled
                            pass by pass, its memory plan, embeddings
                            [--html FILE] also writes it with the figures
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
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
