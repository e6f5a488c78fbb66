"""Quantised ONNX models as ONNX Runtime's quantisation tools write them,
with ORT reference outputs, for tests/test_quant_models.py and
benchmarks/bench_quant_onnx.py.

    python3 tests/models/make_quant_models.py --out DIR [--only mlp bert] [--size tiny|bench]
                                              [--no-refs]

Two float models with random weights (fixed seeds):

- ``mlp``: three MatMul + Add layers with Relu between them, written with
  onnx.helper (opset 17), input ``x`` [batch, 32] (``--size bench``: 768
  wide);
- ``bert``: the BERT-style encoder of tests/models/make_models.py (its
  builder and exporter, imported from there: 2 layers, hidden 64 at
  ``--size tiny``; BERT-base-shaped layers, hidden 768, FFN 3072, at
  ``--size bench``), TorchScript export, opset 17.

Each is written as ``DIR/<model>-fp32.onnx`` and quantised into

- ``<model>-dyn-s8``: quantize_dynamic, QInt8 weights (DynamicQuantizeLinear
  + MatMulInteger + Cast + Mul chains; embeddings as uint8 Gather +
  DequantizeLinear);
- ``<model>-dyn-u8``: quantize_dynamic, QUInt8 weights;
- ``<model>-dyn-pc``: quantize_dynamic, QInt8 weights with per-channel
  scales and reduce_range (7-bit weights): at full 8 bits every channel's
  largest weight is +-127, and ORT's u8s8 kernel on an x86 CPU without VNNI
  (vpmaddubsw: two u8 x s8 products summed in a saturating int16) clips
  such pairs - seen on AMD Zen 3: ORT's MLP output 0.05 - 0.16 (rel_err)
  from the float model's, Peregrine's exact int32 sums 0.01.  ORT's
  documentation asks for reduce_range there; with it the sums fit;
- ``<model>-qdq``: quantize_static in the QDQ format (QuantizeLinear /
  DequantizeLinear pairs around every quantised op, int8 weights per
  tensor, int32 biases), calibrated on random inputs (MinMax);
- ``<model>-qdq-pc``: the same with per-channel weight scales;
- ``<model>-qdq-u8``: QDQ with uint8 activations and (asymmetric) uint8
  weights.

``DIR/<model>.npz`` holds, for each input set (``set<k>.in.<name>``), ORT's
outputs of every variant (``set<k>.<variant>.<output>``), computed with
ORT_DISABLE_ALL: the graph as the file writes it, op by op (ORT's own QDQ
fusions would compute something else).  Input sets: mlp batch 1, 4, 16;
bert those of make_models.SHAPE_SETS["text"] (batch 1 sequence 1; batch 2
sequence 7, the second row padded; batch 3 sequence 16).  The calibration
inputs are other random inputs of the same kinds (seeded separately).
``DIR/manifest.json`` lists models, variants, inputs and outputs.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_models", os.path.join(HERE, "make_models.py"))
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)     # plain data at import; torch only inside build()

MODELS = ("mlp", "bert")
VARIANTS = ("fp32", "dyn-s8", "dyn-u8", "dyn-pc", "qdq", "qdq-pc", "qdq-u8")
MLP_BATCHES = (1, 4, 16)
OPSET = 17


def file_name(model: str, variant: str) -> str:
    return f"{model}-{variant}.onnx"


# ---------------------------------------------------------------------------
# the float models
# ---------------------------------------------------------------------------

def mlp_sizes(size: str) -> list[int]:
    return [32, 64, 48, 16] if size == "tiny" else [768, 3072, 768, 768]


def make_mlp(path: str, size: str, seed: int = 4321) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    dims = mlp_sizes(size)
    nodes, inits = [], []
    x = "x"
    for i in range(len(dims) - 1):
        w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
        b = (0.1 * rng.standard_normal(dims[i + 1])).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"], name=f"matmul{i}"))
        last = i == len(dims) - 2
        nodes.append(helper.make_node("Add", [f"mm{i}", f"b{i}"], ["y" if last else f"pre{i}"], name=f"add{i}"))
        if not last:
            nodes.append(helper.make_node("Relu", [f"pre{i}"], [f"h{i}"], name=f"relu{i}"))
            x = f"h{i}"
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", dims[0]])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", dims[-1]])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def mlp_inputs(size: str, k: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((MLP_BATCHES[k], mlp_sizes(size)[0])).astype(np.float32)}


def make_bert(path: str, size: str):
    """The encoder of make_models.py (its builder and exporter), and its
    input maker."""
    import torch
    seed = 1234 + sorted(mm.MODELS).index("bert")   # the seed make_models uses
    torch.manual_seed(seed)
    module, ins, outs, make_inputs = mm.build("bert", size)
    module.eval()
    sample = make_inputs(2, 7, True, 1, np.random.default_rng(seed * 10 + 1))
    mm.export(module, ins, outs, sample, path, "torchscript", "bert")
    return make_inputs


def bert_inputs(make_inputs, k: int, seed: int) -> dict:
    batch, seq, padded = mm.SHAPE_SETS["text"][k]
    return make_inputs(batch, seq, padded, k, np.random.default_rng(seed))


# ---------------------------------------------------------------------------
# quantising
# ---------------------------------------------------------------------------

class _Calibration:
    """A CalibrationDataReader over a list of feed dicts."""

    def __init__(self, feeds: list[dict]):
        self._it = iter(feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):   # pragma: no cover - used by some ORT calibrators
        pass


def quantise(src: str, out_dir: str, model: str, calib: list[dict]) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(_Calibration, CalibrationDataReader):
        pass

    logging.getLogger().setLevel(logging.ERROR)   # ORT's "consider pre-processing" advice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_dynamic(src, os.path.join(out_dir, file_name(model, "dyn-s8")), weight_type=QuantType.QInt8)
        quantize_dynamic(src, os.path.join(out_dir, file_name(model, "dyn-u8")), weight_type=QuantType.QUInt8)
        quantize_dynamic(src, os.path.join(out_dir, file_name(model, "dyn-pc")), weight_type=QuantType.QInt8,
                         per_channel=True, reduce_range=True)
        for variant, per_channel, qt in (("qdq", False, QuantType.QInt8), ("qdq-pc", True, QuantType.QInt8),
                                         ("qdq-u8", False, QuantType.QUInt8)):
            quantize_static(src, os.path.join(out_dir, file_name(model, variant)), Reader(list(calib)),
                            quant_format=QuantFormat.QDQ, per_channel=per_channel,
                            activation_type=qt, weight_type=qt)


def ort_session(path: str, optimized: bool = False, threads: int = 1):
    return mm.ort_session(path, optimized=optimized, threads=threads)


def make_one(model: str, out: str, size: str, refs: bool, log) -> dict:
    t0 = time.perf_counter()
    src = os.path.join(out, file_name(model, "fp32"))
    if model == "mlp":
        make_mlp(src, size)
        sets = [mlp_inputs(size, k, 100 + k) for k in range(len(MLP_BATCHES))]
        calib = [mlp_inputs(size, k % 3, 900 + k) for k in range(8)]
    else:
        make_inputs = make_bert(src, size)
        sets = [bert_inputs(make_inputs, k, 200 + k) for k in range(3)]
        calib = [bert_inputs(make_inputs, k % 3, 800 + k) for k in range(8)]
    quantise(src, out, model, calib)
    entry = {"model": model, "size": size, "variants": list(VARIANTS),
             "files": {v: file_name(model, v) for v in VARIANTS}}
    sess = ort_session(src)
    entry["inputs"] = [i.name for i in sess.get_inputs()]
    entry["outputs"] = [o.name for o in sess.get_outputs()]
    entry["bytes"] = {v: os.path.getsize(os.path.join(out, file_name(model, v))) for v in VARIANTS}
    if refs:
        arrays = {}
        for k, feeds in enumerate(sets):
            feeds = {n: feeds[n] for n in entry["inputs"]}
            for n, a in feeds.items():
                arrays[f"set{k}.in.{n}"] = a
            for v in VARIANTS:
                s = ort_session(os.path.join(out, file_name(model, v)))
                for n, a in zip(entry["outputs"], s.run(None, feeds)):
                    arrays[f"set{k}.{v}.{n}"] = a
        np.savez_compressed(os.path.join(out, f"{model}.npz"), **arrays)
        entry["sets"] = len(sets)
    entry["s"] = round(time.perf_counter() - t0, 2)
    log(f"{model:>6} ({size}): " + ", ".join(f"{v} {entry['bytes'][v] / 1e3:.0f} kB" for v in VARIANTS)
        + f"  {entry['s']:.1f} s")
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the .onnx / .npz files and manifest.json")
    ap.add_argument("--only", nargs="+", choices=MODELS, help="only these models")
    ap.add_argument("--size", choices=("tiny", "bench"), default="tiny")
    ap.add_argument("--no-refs", action="store_true", help="skip the ORT reference outputs")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    manifest = {"size": a.size, "variants": list(VARIANTS), "models": {}}
    for model in a.only or MODELS:
        manifest["models"][model] = make_one(model, a.out, a.size, not a.no_refs,
                                             lambda s: print(s, flush=True))
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
