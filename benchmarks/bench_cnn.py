"""ResNet-18 and MobileNetV2 at 224x224: Peregrine (OnnxModel, level 3)
against ONNX Runtime (ORT_ENABLE_ALL) on the same file, interleaved; then
every conv of the two networks as it runs in them, per shape class, its
GFLOP/s against the measured FMA peak beside ORT's; with --layers, one
conv of each class in a file of its own; with --layouts, the layout
measurement quoted in engine/exec/conv_fast.c.

    unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
    python benchmarks/bench_cnn.py [--models resnet18 mobilenetv2] [--batches 1 8]
        [--threads 1 2] [--rounds 7] [--dir DIR] [--no-profile] [--layers] [--layouts]

The models come from tests/models/make_cnn_models.py (its builders and its
torchscript export, random weights, BatchNorm statistics randomised), made
once into --dir (default: a temporary folder).  Per (model, batch, threads)
both engines get the thread count (Peregrine threads=t; ORT
intra_op_num_threads=t, inter_op_num_threads=1, sequential) and are run in
turn, one call each per round, after 2 warm-up calls: the median of --rounds
per engine and the ratio Peregrine / ORT (below 1: Peregrine is faster).
Target (issue #13): at 1 thread at most 0.9x ORT's latency on both models.

Convs in the networks (the default): Peregrine's step profile
(CompiledModel.profile: the engine times each step) and ORT's own profiler
on the same file at batch 1, 1 thread, matched conv by conv through the
output tensor both engines name their nodes after, summed per shape class,
GFLOP/s on the same exact count (2 M C/g k k per output pixel) for both.

Conv layers (--layers): one Conv (+ its fused activation) of each shape class of the
two networks as it runs inside a network (6 copies after a 1x1 conv, each
read by a GlobalAveragePool, minus the same file without them: the engine's
layout on both sides and no reorder), its GFLOP/s (2 M K pixels per call)
against the FMA peak that the `peak` kernel family measures on 1 thread,
and ORT on the same files.  A 3x3 stride-1 conv runs as Winograd F(2x2, 3x3)
where the CPU has its transforms in asm (wino_f23 rows): its GFLOP/s is the
direct count (what the layer would cost without it), its share of the
peak that of the 16 products per tile it does run.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine_worker import ort_session  # noqa: E402
MAKE = os.path.join(HERE, "..", "tests", "models", "make_cnn_models.py")


def make_module():
    spec = importlib.util.spec_from_file_location("make_cnn_models", MAKE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def export_model(name: str, d: str) -> tuple[str, str]:
    """The torchscript export of the builder's model at 224x224; (path, input name)."""
    mm = make_module()
    path = os.path.join(d, mm.file_stem(name, "torchscript") + ".onnx")
    module, ins, outs, seed = mm.build(name)
    if not os.path.exists(path):
        sample = mm.make_inputs((1, 224, 224), seed, 0)
        mm.export(module, ins, outs, sample, path, "torchscript")
    return path, ins[0]


def race(fns: dict, rounds: int, pause: float = 0.01, stat=statistics.median) -> dict:
    for f in fns.values():
        f()
        f()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
            time.sleep(pause)
    return {k: stat(v) for k, v in times.items()}


def bench_models(args, d: str) -> None:
    from peregrine_nb.onnx_import import OnnxModel
    print(f"{'model':>12} {'batch':>5} {'thr':>3} {'peregrine':>11} {'ORT':>11} {'ratio':>7}  max rel err")
    for name in args.models:
        path, inp = export_model(name, d)
        for b in args.batches:
            x = np.random.default_rng(b).standard_normal((b, 3, 224, 224)).astype(np.float32)
            for t in args.threads:
                m = OnnxModel(path, level=3, threads=t).compiled({inp: x.shape})
                s = ort_session(path, t)
                feeds = {inp: x}
                got = list(m.run(feeds).values())[0]
                ref = s.run(None, feeds)[0]
                err = float(np.max(np.abs(got - ref)) / (np.max(np.abs(ref)) + 1e-12))
                med = race({"pg": lambda: m.run(feeds), "ort": lambda: s.run(None, feeds)}, args.rounds)
                print(f"{name:>12} {b:5d} {t:3d} {med['pg'] * 1e3:8.2f} ms {med['ort'] * 1e3:8.2f} ms "
                      f"{med['pg'] / med['ort']:6.2f}x  {err:.1e}", flush=True)


# (label, C, H, M, k, stride, pad, group, activation): the conv shape classes
LAYERS = [
    ("r18 stem 7x7/2", 3, 224, 64, 7, 2, 3, 1, "relu"),
    ("r18 3x3 64@56", 64, 56, 64, 3, 1, 1, 1, "relu"),
    ("r18 3x3 128@28", 128, 28, 128, 3, 1, 1, 1, "relu"),
    ("r18 3x3 256@14", 256, 14, 256, 3, 1, 1, 1, "relu"),
    ("r18 3x3 512@7", 512, 7, 512, 3, 1, 1, 1, "relu"),
    ("r18 1x1/2 128->256", 128, 28, 256, 1, 2, 0, 1, None),
    ("mb2 1x1 24->144@56", 24, 56, 144, 1, 1, 0, 1, "relu6"),
    ("mb2 1x1 144->24@56", 144, 56, 24, 1, 1, 0, 1, None),
    ("mb2 1x1 320->1280@7", 320, 7, 1280, 1, 1, 0, 1, "relu6"),
    ("mb2 dw3x3 96@112/2", 96, 112, 96, 3, 2, 1, 96, "relu6"),
    ("mb2 dw3x3 144@56", 144, 56, 144, 3, 1, 1, 144, "relu6"),
    ("mb2 dw3x3 576@14", 576, 14, 576, 3, 1, 1, 576, "relu6"),
    ("dw5x5 240@28", 240, 28, 240, 5, 1, 2, 240, "relu6"),
]


def conv_file(C, H, M, k, s, p, g, act, d, pre=False, copies=0):
    """A conv (+ its activation) on a [1, C, H, H] input; copies=0: the conv
    alone (the layout table's NCHW step).  copies=R: R copies of it with
    their own random weights (no engine merges them) reading one input -
    after a 1x1 C -> C conv when pre, so it sits as in a network, its input
    in the engine's layout (NCHW16c at level 3 on AVX-512, ORT's NCHWc) -
    each read by a GlobalAveragePool, the pools summed; copies=-1: the same
    file with no conv (pre -> GlobalAveragePool)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(C * 7 + k)
    inits, nodes = [], []
    OH = (H + 2 * p - k) // s + 1

    def conv(src, i):
        inits.extend([numpy_helper.from_array((rng.standard_normal((M, C // g, k, k)) * 0.1).astype(np.float32),
                                              f"w{i}"),
                      numpy_helper.from_array(rng.standard_normal(M).astype(np.float32), f"b{i}")])
        nodes.append(helper.make_node("Conv", [src, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[k, k],
                                      strides=[s, s], pads=[p] * 4, group=g))
        out = f"c{i}"
        if act == "relu":
            nodes.append(helper.make_node("Relu", [out], [f"y{i}"]))
            out = f"y{i}"
        elif act == "relu6":
            nodes.append(helper.make_node("Clip", [out, "lo", "hi"], [f"y{i}"]))
            out = f"y{i}"
        return out

    if act == "relu6":
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
    cur = "x"
    if pre:
        inits += [numpy_helper.from_array((rng.standard_normal((C, C, 1, 1)) * 0.1).astype(np.float32), "wp"),
                  numpy_helper.from_array(rng.standard_normal(C).astype(np.float32), "bp")]
        nodes.append(helper.make_node("Conv", ["x", "wp", "bp"], ["xp"], kernel_shape=[1, 1]))
        cur = "xp"
    if copies == 0:
        out, oshape = conv(cur, 0), [1, M, OH, OH]
    elif copies < 0:
        nodes.append(helper.make_node("GlobalAveragePool", [cur], ["out"]))
        out, oshape = "out", [1, C, 1, 1]
    else:
        acc = None
        for i in range(copies):
            nodes.append(helper.make_node("GlobalAveragePool", [conv(cur, i)], [f"g{i}"]))
            if acc is None:
                acc = f"g{i}"
            else:
                nodes.append(helper.make_node("Add", [acc, f"g{i}"], [f"s{i}"]))
                acc = f"s{i}"
        out, oshape = acc, [1, M, 1, 1]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, oshape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(d, f"conv_{C}_{H}_{M}_{k}_{s}_{g}_{int(pre)}_{copies}.onnx")
    onnx.save(model, path)
    return path, OH


COPIES = 6


def bench_layers(args, d: str) -> None:
    """Each conv shape class in a network's context: COPIES copies of the
    conv reading one input (after a 1x1 conv that puts it in the engine's
    layout; each copy's output read by a GlobalAveragePool) minus the file
    without them, divided by COPIES, per engine, the fastest of interleaved
    runs.  The stem reads the image as it comes (no 1x1 before it).  The
    figure includes one pass of the pool over the conv's output."""
    from peregrine_nb import kernels
    from peregrine_nb.onnx_import import OnnxModel
    peak = kernels.measure_peak(1)["fma_gflops"]
    print(f"\nconv layers in a network (batch 1, 1 thread); measured FMA peak {peak:.1f} GFLOP/s")
    print("(GFLOP/s: the direct conv's 2 M C k k per output pixel over the time; for wino_f23 rows,"
          " 'of peak' is the products' own rate, 2 x 16 M C per 2x2 tile)")
    print(f"{'layer':>22} {'kernel':>28} {'GFLOP/s':>8} {'of peak':>8} {'ORT GF/s':>9} {'vs ORT':>7}")
    for label, C, H, M, k, s, p, g, act in LAYERS:
        pre = C > 3
        x = np.random.default_rng(0).standard_normal((1, C, H, H)).astype(np.float32)
        fns, kern, wino = {}, "reference", False
        for copies in (COPIES, -1):
            path, OH = conv_file(C, H, M, k, s, p, g, act, d, pre=pre, copies=copies)
            m = OnnxModel(path, level=3, threads=1).compiled({"x": x.shape})
            if copies > 0:
                convs = [kk for kk in m.kernels if kk["op_type"] in ("Conv", "FusedConv")]
                names = (convs[-1]["kernels"] or ["reference"]) if convs else ["reference"]
                wino = any(nm.startswith("f32_wino") for nm in names)
                kern = ("wino_f23 + " + names[0].replace("f32_conv_nchwc_", "")) if wino else names[0]
            sess = ort_session(path, 1)
            fns[("pg", copies)] = (lambda m=m: m.run({"x": x}))
            fns[("ort", copies)] = (lambda sess=sess: sess.run(None, {"x": x}))
        # the fastest of many interleaved calls: a difference of two files,
        # where the other processes' noise (which only ever adds) would swamp
        # a median
        med = race(fns, args.rounds * 3, 0, stat=min)
        tp = max(med[("pg", COPIES)] - med[("pg", -1)], 1e-9) / COPIES
        to = max(med[("ort", COPIES)] - med[("ort", -1)], 1e-9) / COPIES
        flops = 2.0 * M * (C // g) * k * k * OH * OH
        gp, go = flops / tp / 1e9, flops / to / 1e9
        # Winograd: the products' own rate (16 per 2x2 tile, per input and
        # output channel) against the peak; GFLOP/s stays the direct count
        done = 2.0 * 16 * ((OH + 1) // 2) ** 2 * C * M / tp / 1e9 if wino else gp
        print(f"{label:>22} {kern:>28} {gp:8.1f} {done / peak:7.0%} {go:9.1f} {tp / to:6.2f}x", flush=True)


def conv_class(kh: int, stride: int, depthwise: bool, C: int, M: int, OH: int) -> str:
    """A conv's shape class: "3x3/2 64->128 @28", "dw3x3 144 @56"."""
    k = f"{'dw' if depthwise else ''}{kh}x{kh}{f'/{stride}' if stride > 1 else ''}"
    return f"{k} {C} @{OH}" if depthwise else f"{k} {C}->{M} @{OH}"


def ort_conv_times(path: str, feeds: dict, runs: int) -> dict:
    """ORT's own profiler on ``runs`` runs (after one untimed): per conv
    node, keyed by its output tensor (ORT names a node after it), the mean
    microseconds, the exact FLOPs (2 M C/g kh kw per output pixel, from its
    input shapes) and the shape class."""
    import json
    sess = ort_session(path, 1, quiet=True, profile_prefix=os.path.join(tempfile.gettempdir(), "bench_cnn_ort"))
    for _ in range(runs + 1):
        sess.run(None, feeds)
    prof = sess.end_profiling()
    with open(prof) as f:
        events = [e for e in json.load(f) if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    os.remove(prof)
    out = {}
    for e in events:
        a = e["args"]
        if a.get("op_name") not in ("Conv", "FusedConv"):
            continue
        key = e["name"][:-len("_kernel_time")].removesuffix("_nchwc")
        (x,), (w,), (y,) = a["input_type_shape"][0].values(), a["input_type_shape"][1].values(), \
            a["output_type_shape"][0].values()
        r = out.setdefault(key, {"us": [], "flops": 2.0 * float(np.prod(y)) * w[1] * w[2] * w[3],
                                 "class": conv_class(w[2], round(x[2] / y[2]), w[1] == 1 and x[1] > 1,
                                                     x[1], y[1], y[2])})
        r["us"].append(float(e["dur"]))
    for r in out.values():
        r["us"] = float(np.mean(r["us"][1:] or r["us"]))   # the first run is the untimed one
    return out


def conv_sources(path: str) -> dict:
    """Per tensor of the ONNX file made by a Relu / Clip / Add / Sum: the
    Conv outputs it is made from through those ops (the conv a fused
    residual epilogue belongs to is one of them)."""
    import onnx
    nodes = onnx.load(path, load_external_data=False).graph.node
    producer = {o: n for n in nodes for o in n.output}
    out: dict = {}
    for n in nodes:
        if n.op_type in ("Relu", "Clip"):
            src = n.input[0]
            out[n.output[0]] = out.get(src, [src] if src in producer and producer[src].op_type == "Conv" else [])
        elif n.op_type in ("Add", "Sum"):
            out[n.output[0]] = [i for i in n.input if i in producer and producer[i].op_type == "Conv"]
    return out


def bench_profile(args, d: str) -> None:
    """Every conv of the two networks as it runs in them (batch 1, 1 thread):
    Peregrine's step profile (CompiledModel.profile) and ORT's profiler on
    the same file, matched conv by conv through the output tensor both name
    their nodes after, summed per shape class; GFLOP/s on ORT's exact count
    (2 M C/g k k per output pixel) for both, against the FMA peak."""
    from peregrine_nb import kernels
    from peregrine_nb.onnx_import import OnnxModel
    peak = kernels.measure_peak(1)["fma_gflops"]
    runs = args.rounds * 3
    print(f"\nconvs in the networks, by shape class (batch 1, 1 thread, mean of {runs} runs each; "
          f"Peregrine's step profile, ORT's profiler); FMA peak {peak:.1f} GFLOP/s\n"
          "(GFLOP/s: the direct conv's count for both engines; a Winograd conv (wino) does 16 products "
          "per 2x2 tile where the direct form does 36, so its share of the peak can pass 100%)")
    for name in args.models:
        path, inp = export_model(name, d)
        x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
        m = OnnxModel(path, level=3, threads=1).compiled({inp: x.shape})
        prof = m.profile({inp: x}, runs=runs)
        ort_t = ort_conv_times(path, {inp: x}, runs)
        steps, sources = m.steps, conv_sources(path)
        classes, unmatched, taken = {}, [], set()
        for row, st in zip(prof.rows, steps):
            if row["op_type"] not in ("Conv", "FusedConv"):
                continue
            key = st["outputs"].split(":")[0].removesuffix("_nchw16c")
            if key not in ort_t or key in taken:
                # a conv with the residual Add (+ Relu) in its epilogue is
                # named after the Add's (Relu's) output: the ONNX conv of its
                # window among those the Add reads
                det = dict(w.split("=", 1) for w in st["detail"].split() if "=" in w)
                k = det.get("kernel_shape", "").split("x")[0]
                kind = f"{'dw' if det.get('group') else ''}{k}x{k}" + (f"/{det['stride']}" if "stride" in det else "")
                cands = [c for c in sources.get(key, []) if c in ort_t and c not in taken
                         and ort_t[c]["class"].split()[0] == kind]
                if not cands:
                    unmatched.append(key)
                    continue
                key = cands[0]
            taken.add(key)
            o = ort_t[key]
            c = classes.setdefault(o["class"], {"n": 0, "pg": 0.0, "ort": 0.0, "flops": 0.0, "kern": set()})
            c["n"] += 1
            c["pg"] += row["ms"] * 1e3
            c["ort"] += o["us"]
            c["flops"] += o["flops"]
            c["kern"].add("wino" if any(k.startswith("f32_wino") for k in row["kernels"])
                          else (row["kernels"] or ["ref"])[0].replace("f32_", "").replace("_avx512f", "")
                          .replace("_avx2_fma3", ""))
        print(f"\n{name}: steps {prof.step_ms:.2f} ms, convs matched {sum(c['n'] for c in classes.values())}"
              + (f", unmatched {unmatched}" if unmatched else ""))
        print(f"{'class':>22} {'n':>3} {'kernel':>22} {'ms':>7} {'GFLOP/s':>8} {'of peak':>8} {'ORT ms':>7} "
              f"{'ORT GF/s':>8} {'vs ORT':>7}")
        for cls, c in sorted(classes.items(), key=lambda kv: -kv[1]["pg"]):
            gp, go = c["flops"] / c["pg"] / 1e3, c["flops"] / c["ort"] / 1e3
            print(f"{cls:>22} {c['n']:3d} {'+'.join(sorted(c['kern'])):>22} {c['pg'] / 1e3:7.3f} {gp:8.1f} "
                  f"{gp / peak:7.0%} {c['ort'] / 1e3:7.3f} {go:8.1f} {c['pg'] / c['ort']:6.2f}x", flush=True)
        tp, to = sum(c["pg"] for c in classes.values()), sum(c["ort"] for c in classes.values())
        print(f"{'all convs':>22} {'':>3} {'':>22} {tp / 1e3:7.3f} {'':>8} {'':>8} {to / 1e3:7.3f} {'':>8} "
              f"{tp / to:6.2f}x")


def bench_layouts(args, d: str) -> None:
    """NCHW (the GEMM form: im2col into B panels, W as A in place; what
    runs where nchwc_layout does not - it is switched off here)
    against the NHWC form's product alone (im2col rows as A, W packed as
    B, the SGEMM kernel) plus the NCHW<->NHWC transposes at a graph edge,
    per GEMM-form layer shape, 1 thread."""
    from peregrine_nb import kernels
    from peregrine_nb.onnx_import import OnnxModel
    print("\nlayouts, 1 thread (ms): NCHW conv step | NHWC product alone | + transposes in and out")
    for label, C, H, M, k, s, p, g, act in LAYERS:
        if g != 1:
            continue
        path, OH = conv_file(C, H, M, k, s, p, g, None, d)
        x = np.random.default_rng(0).standard_normal((1, C, H, H)).astype(np.float32)
        m = OnnxModel(path, level=3, threads=1, disable=("nchwc_layout",)).compiled({"x": x.shape})
        K, P = C * k * k, OH * OH
        a = np.random.default_rng(1).standard_normal((P, K)).astype(np.float32)
        wb = kernels.pack(np.random.default_rng(2).standard_normal((K, M)).astype(np.float32))
        c = np.empty((P, M), np.float32)
        xt = np.empty((1, H, H, C), np.float32)
        yt = np.empty((1, M, OH, OH), np.float32)
        y = np.random.default_rng(3).standard_normal((1, OH, OH, M)).astype(np.float32)

        def nhwc():
            kernels.sgemm(a, wb, threads=1, out=c)

        def edges():
            np.copyto(xt, x.transpose(0, 2, 3, 1))
            np.copyto(yt, y.transpose(0, 3, 1, 2))
        med = race({"nchw": lambda: m.run({"x": x}), "nhwc": nhwc, "edges": edges}, args.rounds * 3, 0)
        print(f"{label:>22} {med['nchw'] * 1e3:8.3f} {med['nhwc'] * 1e3:8.3f} "
              f"{(med['nhwc'] + med['edges']) * 1e3:8.3f}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=["resnet18", "mobilenetv2"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--layers", action="store_true")
    ap.add_argument("--layouts", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = args.dir or tmp
        os.makedirs(d, exist_ok=True)
        if args.models:
            bench_models(args, d)
        if not args.no_profile:
            bench_profile(args, d)
        if args.layers:
            bench_layers(args, d)
        if args.layouts:
            bench_layouts(args, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
