"""SGEMM and GEMV against numpy (OpenBLAS) and the machine's measured peaks.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_kernels.py

(unset those two in this command alone: they slow a current OpenBLAS; the
script prints which OpenBLAS kernel and how many threads threadpoolctl sees.)

In one run, interleaved (peregrine, numpy, peregrine, numpy, ...), medians:
SGEMM on squares and the MiniLM shapes with B pre-packed, GEMV against the
copy bandwidth, at 1 thread and at 2.  Prints a table and the ratios.

    python benchmarks/bench_kernels.py --cold [--threads 1]

instead times BERT-base's layer products (128 and 1024 rows) with the
weights coming from DRAM, as in a model whose weights exceed L3: each call
takes the next of enough copies of B (packed for peregrine, plain for
numpy) to fill COLD_BYTES, so no call finds its B in cache.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from peregrine_nb import kernels

SGEMM_SHAPES = [  # (M, N, K)
    (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
    (128, 384, 384), (128, 1536, 384), (128, 384, 1536),  # MiniLM: QKV/out, FFN up, FFN down
    (8, 4096, 4096),
]
GEMV_SHAPES = [(384, 384), (4096, 4096)]  # (N, K)
# BERT-base's layer products (M, N, K): QKV, attention output, FFN up, FFN
# down (A's rows 12 KiB apart) at batch 1 and 8, sequence 128
COLD_SHAPES = [(m, n, k) for m in (128, 1024)
               for n, k in ((2304, 768), (768, 768), (3072, 768), (768, 3072))]
COLD_BYTES = 128 << 20   # four times a 32 MiB L3


def interleaved(fns: dict, repeat: int, min_time: float, pause: float = 0.25) -> dict[str, float]:
    """Median seconds per call of each callable, measured in alternation.
    A pause before each batch lets the previous library's worker threads stop
    spinning (OpenBLAS busy-waits about 2^28 cycles after a call, ~0.1 s), so
    one library's idle threads do not steal the next one's second core."""
    inner = {}
    for name, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        inner[name] = max(1, int(min_time / max(time.perf_counter() - t0, 1e-7)))
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            time.sleep(pause)
            t0 = time.perf_counter()
            for _ in range(inner[name]):
                fn()
            times[name].append((time.perf_counter() - t0) / inner[name])
    return {name: statistics.median(t) for name, t in times.items()}


def cold(rng, threads: list[int], repeat: int) -> None:
    """SGEMM against weights from DRAM: every call a different copy of B."""
    print(f"{'cold sgemm MxNxK':>18} {'peregrine':>10} {'numpy':>10} {'vs numpy':>9} {'of peak':>8}")
    for nt in threads:
        with threadpool_limits(nt):
            peak = kernels.measure_peak(nt)
            print(f"=== {nt} thread(s): FMA peak {peak['fma_gflops']:.1f} GFLOP/s")
            for M, N, K in COLD_SHAPES:
                copies = max(2, COLD_BYTES // (4 * K * N))
                a = rng.standard_normal((M, K), dtype=np.float32)
                b = [rng.standard_normal((K, N), dtype=np.float32) for _ in range(copies)]
                packed = [kernels.pack(x) for x in b]
                c = np.empty((M, N), np.float32)
                turn = {"pg": 0, "np": 0}

                def run_pg():
                    kernels.sgemm(a, packed[turn["pg"] % copies], threads=nt, out=c)
                    turn["pg"] += 1

                def run_np():
                    np.matmul(a, b[turn["np"] % copies], out=c)
                    turn["np"] += 1

                t = interleaved({"pg": run_pg, "np": run_np}, repeat, 0.05)
                fl = 2.0 * M * N * K
                gp, gn = fl / t["pg"] / 1e9, fl / t["np"] / 1e9
                print(f"{f'{M}x{N}x{K}':>18} {gp:8.1f} GF {gn:8.1f} GF {gp / gn:8.2f}x "
                      f"{gp / peak['fma_gflops']:7.0%}")
                del packed, b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--quick", action="store_true", help="skip 2048 squares")
    ap.add_argument("--cold", action="store_true",
                    help="BERT-base's products with the weights from DRAM instead")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    if args.cold:
        cold(rng, [int(t) for t in args.threads.split(",")], args.repeat)
        return

    blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    print("numpy BLAS:", ", ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')}" for i in blas) or "none found")

    for nt in [int(t) for t in args.threads.split(",")]:
        with threadpool_limits(nt):
            print(f"\n=== {nt} thread(s); numpy sees {[i['num_threads'] for i in threadpool_info() if i.get('internal_api') == 'openblas']}")
            peak = kernels.measure_peak(nt)
            print(f"measured FMA peak {peak['fma_gflops']:.1f} GFLOP/s, copy bandwidth {peak['copy_gbps']:.1f} GB/s")
            print(f"{'sgemm MxNxK':>18} {'peregrine':>10} {'numpy':>10} {'vs numpy':>9} {'of peak':>8}")
            for M, N, K in SGEMM_SHAPES:
                if args.quick and M >= 2048:
                    continue
                a = rng.standard_normal((M, K), dtype=np.float32)
                b = rng.standard_normal((K, N), dtype=np.float32)
                packed = kernels.pack(b)
                c = np.empty((M, N), np.float32)
                t = interleaved({
                    "pg": lambda: kernels.sgemm(a, packed, threads=nt, out=c),
                    "np": lambda: np.matmul(a, b, out=c),
                }, args.repeat, args.min_time)
                fl = 2.0 * M * N * K
                gp, gn = fl / t["pg"] / 1e9, fl / t["np"] / 1e9
                print(f"{f'{M}x{N}x{K}':>18} {gp:8.1f} GF {gn:8.1f} GF {gp / gn:8.2f}x {gp / peak['fma_gflops']:7.0%}")
            print(f"{'gemv NxK':>18} {'peregrine':>10} {'numpy':>10} {'vs numpy':>9} {'of copy':>8}")
            for N, K in GEMV_SHAPES:
                x = rng.standard_normal(K, dtype=np.float32)
                b = rng.standard_normal((K, N), dtype=np.float32)
                y = np.empty(N, np.float32)
                t = interleaved({
                    "pg": lambda: kernels.gemv(x, b),
                    "np": lambda: np.matmul(x, b, out=y),
                }, args.repeat, args.min_time)
                nbytes = 4.0 * K * N
                bp, bn = nbytes / t["pg"] / 1e9, nbytes / t["np"] / 1e9
                print(f"{f'{N}x{K}':>18} {bp:7.1f} GB/s {bn:6.1f} GB/s {bp / bn:7.2f}x {bp / peak['copy_gbps']:7.0%}")


if __name__ == "__main__":
    main()
