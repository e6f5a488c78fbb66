"""Hugging Face transformers models, exported to ONNX by torch as a new user
would export them, run by Peregrine against ONNX Runtime.

tests/models/make_models.py builds each model from a transformers config
(random weights, fixed seeds, no hub download) and exports it with the
TorchScript exporter (opset 17) and the dynamo exporter (opset 18), together
with ORT's outputs (ORT_DISABLE_ALL) on 3 input sets: batch 1 sequence 1,
batch 2 sequence 7 with the second row padded, batch 3 sequence 16 (image
and audio models: batch 1, 2, 3).  A session fixture runs it once into a
temporary folder; set PEREGRINE_MODELS_DIR to a folder to keep the exports
between runs (they are made there when its manifest.json is missing).

For every model x exporter x level (0, 3) x input set each output must match
ORT's:

    rel_err(out) = max|peregrine - ort| / max(max|ort|, 1e-6)  <=  1e-4

(max over all elements of that output, padded positions included).

A case that stops at pg.UnsupportedError (an op or attribute the engine does
not implement yet) is an expected failure, made so by one helper,
`unsupported_is_xfail`, which prints the missing ops; when the ops land the
case passes by itself.  Any other error, and wrong numbers, fail.

    python3 tests/test_onnx_models.py [DIR]

prints a report instead: per model and exporter, whether it loads (the
missing ops when not) and the op types left at level 3.
"""
from __future__ import annotations

import collections
import contextlib
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import peregrine_nb as pg

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_MODELS = os.path.join(HERE, "models", "make_models.py")
_spec = importlib.util.spec_from_file_location("make_models", MAKE_MODELS)
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)     # plain data only: no torch import at collection

TOL = 1e-4
LEVELS = (0, 3)


def rel_err(got: np.ndarray, ref: np.ndarray) -> float:
    """max|got - ref| / max(max|ref|, 1e-6), in float64."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if ref.size == 0:
        return 0.0
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-6))


# ---------------------------------------------------------------------------
# the one place an UnsupportedError becomes an expected failure
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def unsupported_is_xfail(what: str):
    """Run the body; pg.UnsupportedError (an op or attribute not implemented
    yet) turns the test into an xfail that prints the missing ops - the same
    as xfail(raises=pg.UnsupportedError, strict=False), except that a case
    whose ops have landed reports as a plain pass.  Nothing else is caught."""
    try:
        yield
    except pg.UnsupportedError as e:
        print(f"{what}: UNSUPPORTED: {e}")
        pytest.xfail(f"{what}: not implemented yet: {e}")


# ---------------------------------------------------------------------------
# the exported models
# ---------------------------------------------------------------------------

def _missing_export_deps() -> str | None:
    for mod in ("torch", "transformers", "onnx", "onnxruntime"):
        if importlib.util.find_spec(mod) is None:
            return (f"exporting the models needs `{mod}` (pip install torch transformers onnx onnxruntime; "
                    "the `test` extra of pyproject.toml lists them)")
    return None


def model_files(tmp_path_factory, script: str, env_var: str, name: str, missing: str | None) -> str:
    """The folder a model-making script wrote (its manifest.json and the
    files), made once per session into a temporary folder, or the folder
    ``$env_var`` names when it holds a manifest already.  ``missing``: why
    the script cannot run here (a skip), or None."""
    if (script, name) in _made:   # another test file of this session made them already
        return _made[(script, name)]
    out = os.environ.get(env_var) or str(tmp_path_factory.mktemp(name))
    if os.path.exists(os.path.join(out, "manifest.json")):
        _made[(script, name)] = out
        return out
    if missing:
        pytest.skip(missing)
    r = subprocess.run([sys.executable, script, "--out", out], capture_output=True, text=True, timeout=1200)
    print(r.stdout[-4000:])
    if r.returncode != 0:
        pytest.fail(f"{os.path.basename(script)} failed (exit {r.returncode}):\n{r.stdout[-2000:]}\n"
                    f"{r.stderr[-4000:]}")
    _made[(script, name)] = out
    return out


_made: dict = {}   # (script, name) -> the folder model_files gave this session


def read_manifest(folder: str) -> dict:
    """{(model, exporter): entry} of a folder's manifest.json."""
    with open(os.path.join(folder, "manifest.json")) as f:
        m = json.load(f)
    return {(e["model"], e["exporter"]): e for e in m["models"]}


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> str:
    return model_files(tmp_path_factory, MAKE_MODELS, "PEREGRINE_MODELS_DIR", "onnx_models", _missing_export_deps())


@pytest.fixture(scope="session")
def manifest(models_dir) -> dict:
    return read_manifest(models_dir)


def _entry(manifest, name, exporter) -> dict:
    e = manifest.get((name, exporter))
    if e is None:
        pytest.skip(f"{name}-{exporter} is not in the manifest (made with --only?)")
    if not e["exported"]:
        pytest.skip(f"{name} does not export with the {exporter} exporter: {e['reason']}")
    if not e.get("refs", False):
        pytest.skip(f"{name}-{exporter}: no ORT reference: {e.get('reason', '')}")
    return e


_loaded: dict = {}     # (path, level) -> OnnxModel, or the exception loading it raised


def onnx_model(path: str, level: int) -> pg.OnnxModel:
    key = (path, level)
    if key not in _loaded:
        try:
            _loaded[key] = pg.OnnxModel(path, level=level)
        except Exception as e:   # kept, so every case of this file reports it, not only the first
            _loaded[key] = e
    m = _loaded[key]
    if isinstance(m, Exception):
        raise m
    return m


_refs: dict = {}


def references(models_dir: str, e: dict) -> dict:
    path = os.path.join(models_dir, mm.file_stem(e["model"], e["exporter"]) + ".npz")
    if path not in _refs:
        with np.load(path) as z:
            _refs[path] = {k: z[k] for k in z.files}
    return _refs[path]


CASES = [pytest.param(name, exporter, level, k, id=f"{name}-{exporter}-L{level}-{mm.SHAPE_IDS[k]}")
         for name in mm.MODELS for exporter in mm.EXPORTERS for level in LEVELS for k in range(3)]


@pytest.mark.parametrize("name, exporter, level, k", CASES)
def test_against_onnxruntime(models_dir, manifest, name, exporter, level, k):
    check_against_ort(models_dir, manifest, name, exporter, level, k)


def check_against_ort(models_dir, manifest, name, exporter, level, k):
    """Input set k of a made model at this level against ORT's outputs
    (test_onnx_zoo.py runs it on the zoo's models)."""
    e = _entry(manifest, name, exporter)
    refs = references(models_dir, e)
    feeds = {key.split(".", 2)[2]: a for key, a in refs.items() if key.startswith(f"set{k}.in.")}
    want = {key.split(".", 2)[2]: a for key, a in refs.items() if key.startswith(f"set{k}.out.")}
    what = f"{name}-{exporter} level {level} {mm.SHAPE_IDS[k]}"
    with unsupported_is_xfail(what):
        got = onnx_model(os.path.join(models_dir, e["file"]), level).run(feeds)
    assert set(got) == set(want), f"{what}: outputs {sorted(got)}, ORT gives {sorted(want)}"
    errs = {}
    for out_name, ref in want.items():
        assert got[out_name].shape == ref.shape, f"{what}: {out_name} shape {got[out_name].shape} != {ref.shape}"
        errs[out_name] = rel_err(got[out_name], ref)
    print(f"{what}: " + ", ".join(f"{n} {v:.2e}" for n, v in errs.items()))
    bad = {n: v for n, v in errs.items() if not v <= TOL}
    assert not bad, f"{what}: relative error above {TOL}: {bad}"


# ---------------------------------------------------------------------------
# fusion at level 3
# ---------------------------------------------------------------------------

def _feeds_of_set(models_dir, e, k=2):
    refs = references(models_dir, e)
    return {key.split(".", 2)[2]: a for key, a in refs.items() if key.startswith(f"set{k}.in.")}


def level3_op_types(models_dir: str, e: dict, k: int = 2) -> collections.Counter:
    """Op type counts of the level-3 compile for input set k (batch 3, seq 16)."""
    feeds = _feeds_of_set(models_dir, e, k)
    m = onnx_model(os.path.join(models_dir, e["file"]), 3)
    return collections.Counter(m.compiled({n: a.shape for n, a in feeds.items()},
                                          {n: feeds[n] for n in m._parsed.value_inputs}).op_types)


@pytest.mark.parametrize("exporter", mm.EXPORTERS)
def test_bert_level3_fuses_like_minilm(models_dir, manifest, exporter):
    """The hand-built MiniLM at level 3 is only FusedMatMul, QKVMatMul,
    FusedAttention and LayerNormalization per layer (tests/test_minilm.py);
    an exported BERT should come out the same: one FusedAttention per layer,
    2 LayerNormalization per layer + the embeddings', no Softmax / Erf /
    ReduceMean left."""
    e = _entry(manifest, "bert", exporter)
    with unsupported_is_xfail(f"bert-{exporter}"):
        ops = level3_op_types(models_dir, e)
    layers = 2
    print(f"bert-{exporter} level 3 op types: {dict(ops.most_common())}")
    assert ops["FusedAttention"] == layers, dict(ops)
    assert ops["LayerNormalization"] == 2 * layers + 1, dict(ops)
    assert ops["FusedMatMul"] >= 2 * layers, dict(ops)
    assert not {"Softmax", "Erf", "ReduceMean"} & set(ops), dict(ops)


LAYERS = mm.SIZES["tiny"]["layers"]

# What level 3 must make of each family (tiny size, LAYERS layers): exact
# counts of the fused ops, and op types that must not be left over (each
# of them means a pattern the passes missed).
_ENC = {"FusedAttention": LAYERS, "LayerNormalization": 2 * LAYERS + 1, "QKVMatMul": LAYERS}
_ENC_GONE = {"Softmax", "IsNaN", "Erf", "Gelu", "ReduceMean", "Pow", "Sqrt", "Transpose", "MatMul"}
_DEC_GONE = {"Softmax", "IsNaN", "Erf", "Tanh", "Gelu", "ReduceMean", "Pow", "Sqrt", "Split", "Sigmoid", "SiLU"}
LEVEL3_EXPECT = {
    "bert": (_ENC, _ENC_GONE),
    "distilbert": (_ENC, _ENC_GONE),
    "roberta": (_ENC, _ENC_GONE),
    # GPT-2: c_attn (one Conv1D + Split) -> QKVMatMul, tanh-GELU in the c_fc epilogue, the
    # head split/merge absorbed (bshd); the one MatMul left is the LM head (no bias, no activation)
    "gpt2": ({"FusedAttention": LAYERS, "LayerNormalization": 2 * LAYERS + 1, "QKVMatMul": LAYERS,
              "MatMul": 1}, _DEC_GONE | {"Transpose"}),
    # with past key values K and V are Concats in the head layout: the head split stays
    "gpt2-past": ({"FusedAttention": LAYERS, "LayerNormalization": 2 * LAYERS + 1, "QKVMatMul": LAYERS,
                   "MatMul": 1}, _DEC_GONE),
    # Llama / Qwen2: RMSNorm (TorchScript's Pow/ReduceMean/Add/Sqrt/Div(1, .)/Mul/Mul), SiLU in the gate's epilogue
    # and the rotary embeddings of Q and K (Slice/Neg/Concat/Mul/Add) -> Rotary; repeat_kv's
    # Unsqueeze/Expand/Reshape absorbed (FusedAttention reads the K/V heads); the rotation runs on
    # the projected rows, so the head split/merge Transposes go too (bshd)
    "llama": ({"FusedAttention": LAYERS, "RMSNorm": 2 * LAYERS + 1, "QKVMatMul": LAYERS, "Rotary": 2 * LAYERS},
              _DEC_GONE | {"Slice", "Neg", "Concat", "Unsqueeze", "Transpose"}),
    "qwen2": ({"FusedAttention": LAYERS, "RMSNorm": 2 * LAYERS + 1, "QKVMatMul": LAYERS, "Rotary": 2 * LAYERS},
              _DEC_GONE | {"Slice", "Neg", "Concat", "Unsqueeze", "Transpose"}),
    "t5-encoder": ({"FusedAttention": LAYERS, "RMSNorm": 2 * LAYERS + 1}, _DEC_GONE),
    # self- and cross-attention per layer, three RMSNorms per layer + the final one
    "t5-decoder": ({"FusedAttention": 2 * LAYERS, "RMSNorm": 3 * LAYERS + 1}, _DEC_GONE),
    "vit": ({"FusedAttention": LAYERS, "LayerNormalization": 2 * LAYERS + 1}, _ENC_GONE - {"Transpose", "MatMul"}),
    # the GELUs after the two convolutions of the front end stay Gelu
    "whisper-encoder": ({"FusedAttention": LAYERS, "LayerNormalization": 2 * LAYERS + 1},
                        _ENC_GONE - {"Transpose", "MatMul", "Gelu"}),
}


@pytest.mark.parametrize("name, exporter", [pytest.param(n, x, id=f"{n}-{x}")
                                            for n in mm.MODELS for x in mm.EXPORTERS])
def test_level3_op_types(models_dir, manifest, name, exporter):
    """The op types left at level 3: each family's attention, norms and
    activations fused (LEVEL3_EXPECT: exact counts of the fused ops, and the
    op types that must be gone)."""
    e = _entry(manifest, name, exporter)
    with unsupported_is_xfail(f"{name}-{exporter}"):
        ops = level3_op_types(models_dir, e)
    print(f"{name}-{exporter} level 3: {dict(ops.most_common())}")
    want, gone = LEVEL3_EXPECT[name]
    got = {op: ops[op] for op in want}
    assert got == want, f"{name}-{exporter}: fused op counts {got}, want {want}; all: {dict(ops)}"
    left = sorted(gone & set(ops))
    assert not left, f"{name}-{exporter}: unfused {left} left at level 3: {dict(ops)}"


# ---------------------------------------------------------------------------
# bad input: what a new user sees
# ---------------------------------------------------------------------------

def _model(nodes, inputs, outputs, extra_opsets=()):
    onnx = pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import helper as h
    g = h.make_graph(nodes, "g", inputs, outputs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)] + [h.make_opsetid(d, 1) for d in extra_opsets]
                        ).SerializeToString()


def test_unsupported_model_lists_every_missing_op_with_its_nodes():
    """One UnsupportedError names every op type the engine lacks - standard
    ops, ops of another domain, an attribute value it does not take (Cast to string) - with the
    nodes that use each."""
    pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import TensorProto as T
    from onnx import helper as h
    from peregrine_nb.onnx_import import SUPPORTED_OPS
    # unary float ops of the standard domain, two the engine does not have (chosen
    # at run time, so that the test still means something as ops land)
    std = [op for op in ("Hardmax", "Softsign", "Round", "Acosh", "Asinh", "Atanh", "Sinh", "Cosh", "Mish",
                         "HardSwish", "Selu", "Celu", "ThresholdedRelu", "Shrink") if op not in SUPPORTED_OPS][:2]
    nodes, prev = [], "x"
    for i, op in enumerate(std):
        nodes.append(h.make_node(op, [prev], [f"s{i}"], name=f"std_{op.lower()}_{i}"))
        prev = f"s{i}"
    nodes += [h.make_node("Frobnicate", [prev], ["f1"], name="frob_first", domain="com.example"),
              h.make_node("Frobnicate", ["f1"], ["f2"], name="frob_second", domain="com.example"),
              h.make_node("Relu", ["f2"], ["r"], name="a_supported_relu"),
              h.make_node("Cast", ["r"], ["y"], to=T.STRING, name="cast_to_string")]
    data = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                  [h.make_tensor_value_info("y", T.STRING, [2, 3])], extra_opsets=["com.example"])
    for load in (lambda: pg.load_onnx(data), lambda: pg.OnnxModel(data)):
        with pytest.raises(pg.UnsupportedError) as ei:
            load()
        msg = str(ei.value)
        print(msg)
        for op in std:
            assert op in msg and f"std_{op.lower()}_" in msg, msg
        for s in ("com.example.Frobnicate", "frob_first", "frob_second", "Cast", "to=string", "cast_to_string"):
            assert s in msg, f"{s!r} missing from: {msg}"
        assert "a_supported_relu" not in msg, msg
        assert f"{len(std) + 2} unsupported" in msg, msg


def test_shape_from_data_names_the_node():
    """A Reshape whose target shape is computed from an input's values: the
    engine compiles for concrete shapes, so it must say the shape depends on
    data and which node."""
    pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import TensorProto as T
    from onnx import helper as h
    data = _model([h.make_node("Cast", ["s"], ["si"], to=T.INT64, name="shape_from_data"),
                   h.make_node("Reshape", ["x", "si"], ["y"], name="reshape_by_data")],
                  [h.make_tensor_value_info("x", T.FLOAT, [6]), h.make_tensor_value_info("s", T.FLOAT, [2])],
                  [h.make_tensor_value_info("y", T.FLOAT, ["a", "b"])])
    with pytest.raises(pg.PeregrineError) as ei:
        pg.OnnxModel(data).run({"x": np.arange(6, dtype=np.float32), "s": np.array([2, 3], np.float32)})
    msg = str(ei.value)
    print(msg)
    assert "reshape_by_data" in msg, msg
    assert any(w in msg for w in ("compile time", "run time", "depends on data", "data-dependent")), msg


def test_data_dependent_output_shape_names_the_node():
    """NonZero of a computed tensor: its output shape depends on data at run
    time, which the engine (compiling for concrete shapes) must say, naming
    the node."""
    pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import TensorProto as T
    from onnx import helper as h
    data = _model([h.make_node("Relu", ["x"], ["r"], name="relu_first"),
                   h.make_node("NonZero", ["r"], ["y"], name="nonzero_of_data")],
                  [h.make_tensor_value_info("x", T.FLOAT, [6])], [h.make_tensor_value_info("y", T.INT64, [1, "n"])])
    with pytest.raises(pg.PeregrineError) as ei:
        pg.OnnxModel(data).run({"x": np.array([0, 1, 0, 2, 3, 0], np.float32)})
    msg = str(ei.value)
    print(msg)
    assert "nonzero_of_data" in msg, msg
    assert any(w in msg for w in ("run time", "depends on data", "data-dependent")), msg


def test_nonzero_of_an_input_is_compiled_for_its_value():
    """NonZero of a graph input: OnnxModel binds the input's value at
    compile time (one compile per distinct value) and gets it right."""
    pytest.importorskip("onnx", reason="needs the onnx package (test extra)")
    from onnx import TensorProto as T
    from onnx import helper as h
    data = _model([h.make_node("NonZero", ["x"], ["y"], name="nonzero_of_input")],
                  [h.make_tensor_value_info("x", T.FLOAT, [6])], [h.make_tensor_value_info("y", T.INT64, [1, "n"])])
    for x in (np.array([0, 1, 0, 2, 3, 0], np.float32), np.ones(6, np.float32)):
        with unsupported_is_xfail("NonZero"):
            got = pg.OnnxModel(data).run({"x": x})["y"]
        np.testing.assert_array_equal(got, np.stack(np.nonzero(x)))


# ---------------------------------------------------------------------------
# python3 tests/test_onnx_models.py [DIR]: the report
# ---------------------------------------------------------------------------

def report(models_dir: str) -> None:
    with open(os.path.join(models_dir, "manifest.json")) as f:
        entries = json.load(f)["models"]
    for e in entries:
        tag = f"{e['model']}-{e['exporter']}"
        if not e["exported"]:
            print(f"{tag:<28} does not export: {e['reason']}")
            continue
        if not e.get("refs"):
            print(f"{tag:<28} no reference inputs to compile for")
            continue
        try:
            ops = level3_op_types(models_dir, e)
            print(f"{tag:<28} level 3: " + ", ".join(f"{k} {v}" for k, v in ops.most_common()))
        except pg.UnsupportedError as ex:
            print(f"{tag:<28} UNSUPPORTED: {ex}")
        except Exception as ex:
            print(f"{tag:<28} ERROR {type(ex).__name__}: {ex}")


if __name__ == "__main__":
    report(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PEREGRINE_MODELS_DIR", "."))
