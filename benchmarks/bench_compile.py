"""Compile time against graph size: the curve that shows every compiler
stage (verify, shape inference, each pass, CSE, the planner) is near-linear.

    python benchmarks/bench_compile.py [--sizes 1000 2000 5000 10000 20000 50000 100000]

Graphs: a chain of alternating Tanh/Relu (the deepest graph: one live
tensor at a time) and a wide graph (n Relu of one input, summed in pairs
by n/2 Adds that are all graph outputs: n/2 buffers live at once).  Prints
build and compile seconds per size at levels 0 and 3, the time per 1,000
nodes, and the growth from one size to the next (2.0x per doubling is
linear; the quadratic stages this replaced gave about 5x).
"""
from __future__ import annotations

import argparse
import time

import peregrine_nb as pg


def chain(n: int) -> pg.Graph:
    g = pg.Graph()
    g.add_input("x", (4, 8))
    prev = "x"
    for i in range(n):
        g.add_node("Relu" if i % 2 else "Tanh", [prev], [f"t{i}"])
        prev = f"t{i}"
    g.add_output(prev)
    return g


def wide(n: int) -> pg.Graph:
    g = pg.Graph()
    g.add_input("x", (4, 8))
    for i in range(n):
        g.add_node("Relu", ["x"], [f"t{i}"])
    for i in range(0, n - 1, 2):
        g.add_node("Add", [f"t{i}", f"t{i + 1}"], [f"s{i}"])
        g.add_output(f"s{i}")
    return g


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000, 50000, 100000])
    ap.add_argument("--kinds", nargs="+", default=["chain", "wide"])
    a = ap.parse_args()
    print(f"{'graph':6} {'nodes':>7} {'build s':>8} {'level 0 s':>10} {'level 3 s':>10} "
          f"{'ms/1k nodes (L3)':>17} {'growth (L3)':>12}")
    for kind in a.kinds:
        make = chain if kind == "chain" else wide
        prev = None
        for n in a.sizes:
            t0 = time.perf_counter()
            g = make(n)
            t1 = time.perf_counter()
            times = []
            for level in (0, 3):
                t2 = time.perf_counter()
                pg.compile(g, level=level)
                times.append(time.perf_counter() - t2)
            nodes = n if kind == "chain" else n + n // 2
            growth = ""
            if prev:
                growth = f"{times[1] / prev[1]:.2f}x / {n / prev[0]:.1f}x"
            print(f"{kind:6} {nodes:>7} {t1 - t0:>8.3f} {times[0]:>10.3f} {times[1]:>10.3f} "
                  f"{1e6 * times[1] / nodes:>17.1f} {growth:>12}", flush=True)
            prev = (n, times[1])


if __name__ == "__main__":
    main()
