"""Quantised ONNX models as ONNX Runtime's tools write them, run by
Peregrine against ONNX Runtime and against the float model.

tests/models/make_quant_models.py builds an MLP and a BERT-style encoder
(make_models.py's builder) with random weights, quantises each with
quantize_dynamic (QInt8 and QUInt8 weights, QInt8 per channel) and quantize_static in the QDQ
format (int8 per tensor, int8 per channel, uint8), and writes ORT's outputs
(ORT_DISABLE_ALL: op by op as the file says) of every variant on 3 input
sets.  A session fixture runs it once into a temporary folder
(PEREGRINE_QUANT_MODELS_DIR keeps them between runs).

Each variant is loaded with load_onnx (OnnxModel) and run at level 0 (the
graph as imported: DynamicQuantizeLinear, MatMulInteger, QuantizeLinear,
DequantizeLinear executed one by one) and level 3 (quant_fusion has made
every quantised product one int8 QuantMatMul step).  With

    rel_err(a, b) = max|a - b| / max(max|b|, 1e-6)

the bounds are:

* against ORT on the same file: rel_err <= 2e-2 (fp32: 1e-4, as in
  test_onnx_models.py).  Integer accumulation is exact, and the dequantising
  epilogue does the float32 operations of the chain it replaces in the same
  order, so most outputs agree to float32 rounding.  What may differ is a
  rounding decision: an activation whose x / scale lies within an ulp of
  .5 rounds to the other integer when an upstream float (LayerNorm, Erf,
  Softmax, the float product of a QDQ MatMul) differs by one ulp - one
  quantisation step, 1/255 of that tensor's range (0.4%).  A few such flips
  feeding one output, through the layers after them, stay within a few
  steps: 2% of the output's range.  The mean error must be much smaller
  (<= 2e-3 of the range): flips are rare, not systematic.
* against the float model: rel_err(peregrine, fp32) <= 1.25 *
  rel_err(ORT, fp32) + 2e-2 - Peregrine's quantised result is as close to
  the float one as ORT's own, up to the same allowance.  (The quantisation
  error itself is the model's: ORT's QDQ encoder here is ~20% off its float
  model, since static quantisation with a random calibration quantises
  every LayerNorm and Softmax output.)

Beyond the numbers: at level 3 no MatMulInteger remains and there are as
many QuantMatMul steps as quantised products, bound to the best gemm_u8s8
kernel; under the C-only CPU mask (the kernels' reference) the results are
the same to the bit; the level-3 model saves and loads with the same
results.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import peregrine_nb as pg

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE = os.path.join(HERE, "models", "make_quant_models.py")
_spec = importlib.util.spec_from_file_location("make_quant_models", MAKE)
mq = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mq)     # plain data at import

LEVELS = (0, 3)
TOL_ORT_Q = 2e-2
TOL_ORT_MEAN = 2e-3
TOL_ORT_FP32 = 1e-4
FP32_FACTOR, FP32_SLACK = 1.25, 2e-2


def rel_err(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-6))


def mean_err(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(got - ref).mean() / max(np.abs(ref).max(), 1e-6))


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory):
    d = os.environ.get("PEREGRINE_QUANT_MODELS_DIR")
    if d and os.path.exists(os.path.join(d, "manifest.json")):
        return d
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    d = d or str(tmp_path_factory.mktemp("quant_models"))
    r = subprocess.run([sys.executable, MAKE, "--out", d], capture_output=True, text=True, timeout=900)
    if r.returncode:
        pytest.fail(f"make_quant_models.py failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return d


@pytest.fixture(scope="session")
def manifest(models_dir):
    with open(os.path.join(models_dir, "manifest.json")) as f:
        return json.load(f)


def _load(models_dir, manifest, model, variant, level):
    e = manifest["models"][model]
    refs = np.load(os.path.join(models_dir, f"{model}.npz"))
    m = pg.OnnxModel(os.path.join(models_dir, e["files"][variant]), level=level)
    return e, refs, m


def _feeds(e, refs, k):
    return {n: refs[f"set{k}.in.{n}"] for n in e["inputs"]}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("variant", mq.VARIANTS)
@pytest.mark.parametrize("model", mq.MODELS)
def test_matches_ort_and_float(models_dir, manifest, model, variant, level):
    e, refs, m = _load(models_dir, manifest, model, variant, level)
    for k in range(e["sets"]):
        got = m.run(_feeds(e, refs, k))
        for o in e["outputs"]:
            ort_q, ort_f = refs[f"set{k}.{variant}.{o}"], refs[f"set{k}.fp32.{o}"]
            assert got[o].shape == ort_q.shape and got[o].dtype == ort_q.dtype
            err = rel_err(got[o], ort_q)
            if variant == "fp32":
                assert err <= TOL_ORT_FP32, f"set {k} {o}: rel_err {err:.2e} against ORT"
                continue
            assert err <= TOL_ORT_Q, f"set {k} {o}: rel_err {err:.2e} against ORT's {variant}"
            assert mean_err(got[o], ort_q) <= TOL_ORT_MEAN
            ours, theirs = rel_err(got[o], ort_f), rel_err(ort_q, ort_f)
            assert ours <= FP32_FACTOR * theirs + FP32_SLACK, (
                f"set {k} {o}: {ours:.2e} from the float model; ORT's {variant} is {theirs:.2e} from it")


def _op_counts(m):
    out: dict[str, int] = {}
    for op in m.op_types:
        out[op] = out.get(op, 0) + 1
    return out


@pytest.mark.parametrize("variant", [v for v in mq.VARIANTS if v != "fp32"])
@pytest.mark.parametrize("model", mq.MODELS)
def test_quantised_products_become_quant_matmul(models_dir, manifest, model, variant):
    e, refs, _ = _load(models_dir, manifest, model, variant, 0)
    shapes = {n: refs[f"set2.in.{n}"].shape for n in e["inputs"]}
    g0 = pg.OnnxModel(os.path.join(models_dir, e["files"][variant]), level=0).compiled(shapes)
    g3 = pg.OnnxModel(os.path.join(models_dir, e["files"][variant]), level=3).compiled(shapes)
    c0, c3 = _op_counts(g0), _op_counts(g3)
    if variant.startswith("dyn"):
        products = c0.get("MatMulInteger", 0)
        assert products > 0 and c0.get("DynamicQuantizeLinear", 0) > 0
        assert "MatMulInteger" not in c3
        # one quantisation of an activation serves every product reading it
        assert c3.get("DynamicQuantizeLinear", 0) <= c0["DynamicQuantizeLinear"]
        if model == "bert":
            # quant_epilogue_fusion: the FFN's GELU in the first product's
            # epilogue, its DynamicQuantizeLinear inside the second
            assert "Gelu" not in c3 and "Erf" not in c3
            assert c3["DynamicQuantizeLinear"] < c0["DynamicQuantizeLinear"]
    else:
        products = c0.get("MatMul", 0) - c3.get("MatMul", 0)   # the attention products stay float
        assert products > 0
    assert c3.get("QuantMatMul", 0) == products, (c0, c3)


def test_fused_model_saves_and_loads(models_dir, manifest, tmp_path):
    e, refs, m = _load(models_dir, manifest, "bert", "dyn-s8", 3)
    feeds = _feeds(e, refs, 1)
    cm = m.compiled({k: v.shape for k, v in feeds.items()})
    want = cm.run(feeds)
    path = cm.save(str(tmp_path / "bert-dyn-s8.pgm"))
    back = pg.load_compiled(path)
    got = back.run(feeds)
    for o in e["outputs"]:
        np.testing.assert_array_equal(got[o], want[o])


def test_quant_fusion_can_be_disabled(models_dir, manifest):
    e, refs, _ = _load(models_dir, manifest, "mlp", "dyn-u8", 3)
    feeds = _feeds(e, refs, 1)
    m = pg.OnnxModel(os.path.join(models_dir, e["files"]["dyn-u8"]), level=3, disable=["quant_fusion"])
    assert "QuantMatMul" not in m.compiled({k: v.shape for k, v in feeds.items()}).op_types
    got = m.run(feeds)["y"]
    assert rel_err(got, refs["set1.dyn-u8.y"]) <= TOL_ORT_Q


@pytest.mark.parametrize("variant", ["dyn-s8", "dyn-u8", "qdq-pc", "qdq-u8"])
def test_kernel_variants_agree_with_the_c_reference(models_dir, manifest, variant):
    """The int8 product on the best gemm_u8s8 variant (VNNI where the CPU
    has it) and on the C reference give the same bits: integer sums are
    exact and the epilogue's float operations are the same.  (The MLP: its
    other ops, Add and Relu, are plain loops at every CPU level.)"""
    e, refs, _ = _load(models_dir, manifest, "mlp", variant, 3)
    feeds = _feeds(e, refs, 2)
    shapes = {k: v.shape for k, v in feeds.items()}
    path = os.path.join(models_dir, e["files"][variant])
    best = pg.OnnxModel(path, level=3).compiled(shapes)
    names = {v for k in best.kernels if k["op_type"] == "QuantMatMul" for v in k["kernels"]}
    kern = {v for v in names if v.startswith("u8s8_gemm_")}   # beside it: the A quantiser's two
    assert len(kern) == 1 and all(v.startswith(("quant_u8_span_", "minmax_keys_")) for v in names - kern), names
    want = best.run(feeds)
    with pg.cpu_mask("c"):
        ref = pg.OnnxModel(path, level=3).compiled(shapes)
        got = ref.run(feeds)
    assert {v for k in ref.kernels if k["op_type"] == "QuantMatMul" for v in k["kernels"]} == \
        {"u8s8_gemm_4x32_c", "quant_u8_span_c", "minmax_keys_c"}
    for o in e["outputs"]:
        np.testing.assert_array_equal(got[o], want[o])


@pytest.mark.parametrize("model", mq.MODELS)
def test_two_threads_give_the_same_bits(models_dir, manifest, model):
    """Dynamic quantisation splits its min / max over fixed chunks and the
    int8 sums are exact: the thread count changes no bit of a quantised
    product."""
    e, refs, _ = _load(models_dir, manifest, model, "dyn-s8", 3)
    feeds = _feeds(e, refs, 2)
    path = os.path.join(models_dir, e["files"]["dyn-s8"])
    one = pg.OnnxModel(path, level=3, threads=1).run(feeds)
    two = pg.OnnxModel(path, level=3, threads=2).run(feeds)
    for o in e["outputs"]:
        np.testing.assert_array_equal(one[o], two[o])


@pytest.mark.parametrize("variant", ["dyn-s8", "dyn-u8"])
def test_epilogue_fusion_keeps_the_bits(models_dir, manifest, variant):
    """The GELU in the product's epilogue and the min / max handed to the
    next product give the same bits as the separate Gelu and
    DynamicQuantizeLinear steps."""
    e, refs, _ = _load(models_dir, manifest, "bert", variant, 3)
    feeds = _feeds(e, refs, 2)
    path = os.path.join(models_dir, e["files"][variant])
    fused = pg.OnnxModel(path, level=3).run(feeds)
    plain = pg.OnnxModel(path, level=3, disable=["quant_epilogue_fusion"]).run(feeds)
    for o in e["outputs"]:
        np.testing.assert_array_equal(fused[o], plain[o])
