"""Time one BERT encoder layer (peregrine_nb.examples.transformer_block)
compiled at level 0 and 3, at 1 and 2 threads, against ONNX Runtime
(ORT_ENABLE_ALL) running the same layer built as ONNX with the same weights.

    PEREGRINE_LIBRARY=.../libperegrine.so python benchmarks/bench_block.py \
        [--hidden 384 --heads 12 --ffn 1536 --seq 128 --batch 1 8 --threads 1 2]

Prints median milliseconds per forward and the GFLOP/s of the matrix
products (2*M*N*K of the six projections + 4*S*S*hidden for attention)."""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import peregrine_nb as pg
from peregrine_nb.examples import transformer_block


def layer_flops(batch, seq, hidden, ffn):
    m = batch * seq
    return 2 * m * hidden * (4 * hidden + 2 * ffn) + 4 * batch * seq * seq * hidden


def onnx_layer(w, batch, seq, hidden, heads, ffn):
    """The same layer in ONNX, decomposed as torch exports it (ORT fuses it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    dh = hidden // heads
    inits, nodes = [], []

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def n(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    def lin(x, k):
        return n("Add", [n("MatMul", [x, c(k + "_w", w[k + "_w"])], k + "_mm"), c(k + "_b", w[k + "_b"])], k)

    def ln(x, k):
        mu = n("ReduceMean", [x], k + "_mu", axes=[-1])
        d = n("Sub", [x, mu], k + "_d")
        var = n("ReduceMean", [n("Pow", [d, c(k + "_two", np.float32(2))], k + "_sq")], k + "_var", axes=[-1])
        s = n("Sqrt", [n("Add", [var, c(k + "_eps", np.float32(1e-12))], k + "_ve")], k + "_s")
        y = n("Mul", [n("Div", [d, s], k + "_n"), c(k + "_g", w[k + "_gamma"])], k + "_y")
        return n("Add", [y, c(k + "_bb", w[k + "_beta"])], k + "_ln")

    c("shp4", np.array([batch, seq, heads, dh], np.int64))
    c("shp3", np.array([batch, seq, hidden], np.int64))
    hd = {}
    for k in "qkv":
        r = n("Reshape", [lin("x", k), "shp4"], k + "_r")
        hd[k] = n("Transpose", [r], k + "_t", perm=[0, 2, 1, 3])
    kt = n("Transpose", [hd["k"]], "kT", perm=[0, 1, 3, 2])
    s = n("Div", [n("MatMul", [hd["q"], kt], "sc"), c("sqrt_dh", np.float32(math.sqrt(dh)))], "scs")
    s = n("Add", [s, "mask"], "scm")
    p = n("Softmax", [s], "p", axis=-1)
    ctx = n("Reshape", [n("Transpose", [n("MatMul", [p, hd["v"]], "ctx")], "ctxt", perm=[0, 2, 1, 3]), "shp3"],
            "ctxm")
    h1 = ln(n("Add", [lin(ctx, "attn_out"), "x"], "r1"), "ln1")
    f = lin(h1, "ffn1")
    e = n("Erf", [n("Div", [f, c("sqrt2", np.float32(math.sqrt(2)))], "gd")], "ge")
    gl = n("Mul", [n("Mul", [f, n("Add", [e, c("one", np.float32(1))], "ga")], "gm"), c("half", np.float32(0.5))], "gl")
    out = ln(n("Add", [lin(gl, "ffn2"), h1], "r2"), "ln2")
    graph = helper.make_graph(
        nodes, "bert_layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [batch, 1, 1, seq])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def timeit(fn, reps):
    """(median wall ms, median process-CPU ms): on a shared, busy machine the
    CPU time of a one-thread run is the steadier figure."""
    fn()
    ts, cs = [], []
    end = time.perf_counter() + 3.0
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
        if time.perf_counter() > end and len(ts) >= 5:
            break
    return float(np.median(ts)) * 1e3, float(np.median(cs)) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ffn", type=int, default=1536)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--levels", type=int, nargs="+", default=[0, 3])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    print(f"layer hidden={a.hidden} heads={a.heads} ffn={a.ffn} seq={a.seq}")
    print(f"{'batch':>5} {'thr':>3} {'engine':>10} {'wall ms':>8} {'cpu ms':>8} {'GFLOP/s':>8} {'max err':>9}")
    for b in a.batch:
        g = transformer_block(seq=a.seq, hidden=a.hidden, heads=a.heads, ffn=a.ffn, batch=b)
        feeds = g.make_feeds()
        ref = g.reference(feeds)["out"]
        fl = layer_flops(b, a.seq, a.hidden, a.ffn)
        for t in a.threads:
            rows = []
            for lv in a.levels:
                m = pg.compile(g, level=lv, threads=t)
                err = float(abs(m.run(feeds)["out"] - ref).max())
                rows.append((f"pg L{lv}", timeit(lambda: m.run(feeds), a.reps), err))
            if ort and not a.no_ort:
                so = ort.SessionOptions()
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                so.intra_op_num_threads = t
                so.inter_op_num_threads = 1
                s = ort.InferenceSession(onnx_layer(g.weights, b, a.seq, a.hidden, a.heads, a.ffn), so,
                                         providers=["CPUExecutionProvider"])
                err = float(abs(s.run(None, feeds)[0] - ref).max())
                rows.append(("ort ALL", timeit(lambda: s.run(None, feeds), a.reps), err))
            for name, (ms, cpu), err in rows:
                print(f"{b:>5} {t:>3} {name:>10} {ms:8.3f} {cpu:8.3f} {fl / ms / 1e6:8.1f} {err:9.2e}")


if __name__ == "__main__":
    main()
