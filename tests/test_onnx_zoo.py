"""The architectures users bring beyond the issue's families (ALBERT,
ELECTRA, MPNet, DeBERTa-v2, XLM-R, MobileBERT, BART's encoder, CLIP, OPT,
GPT-Neo, GPT-NeoX, Phi, Mistral, Gemma, Gemma 2, Qwen3, StableLM, BLOOM,
Falcon, GPT-J, CodeGen, DeiT, Swin, ConvNeXt, SegFormer, wav2vec2),
exported by both torch exporters and run against ONNX Runtime exactly as
tests/test_onnx_models.py runs the families: tests/models/make_zoo_models.py
makes them (zoo_models.py has the configs: random weights, fixed seeds, no
hub download) with ORT's outputs on batch 1 sequence 1, batch 2 sequence 7
with the second row padded, batch 3 sequence 16 (image and audio models:
batch 1, 2, 3); every output within 1e-4 relative error at levels 0 and 3.
Set PEREGRINE_ZOO_MODELS_DIR to keep the exports between runs.

At level 3 the attention of every model whose exporter writes plain scaled
dot-product attention must become FusedAttention; the ones left unfused are
listed with the reason."""
from __future__ import annotations

import collections
import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import zoo_models  # noqa: E402  (plain data: no torch import at collection)
from test_onnx_models import (LEVELS, _entry, _feeds_of_set, _missing_export_deps, check_against_ort,  # noqa: E402
                              mm, model_files, onnx_model, read_manifest, unsupported_is_xfail)

MAKE_ZOO = os.path.join(HERE, "models", "make_zoo_models.py")
LAYERS = 2          # every tiny text config

# attention the exporters write in a form FusedAttention does not take (the
# scores get more than a scale and an additive mask), run op by op
UNFUSED = {
    "deberta-v2": "disentangled attention: content-to-position and position-to-content scores added",
    "bloom": "ALiBi: a per-head linear bias built from the mask, added through baddbmm",
    "gemma2": "logit soft-capping: tanh(scores / cap) * cap before the softmax",
    "gpt-neo": "no 1/sqrt(d) scale and a local-window mask selected per layer by Where",
}


@pytest.fixture(scope="session")
def zoo_dir(tmp_path_factory) -> str:
    return model_files(tmp_path_factory, MAKE_ZOO, "PEREGRINE_ZOO_MODELS_DIR", "zoo_models", _missing_export_deps())


@pytest.fixture(scope="session")
def zoo_manifest(zoo_dir) -> dict:
    return read_manifest(zoo_dir)


CASES = [pytest.param(name, exporter, level, k, id=f"{name}-{exporter}-L{level}-{mm.SHAPE_IDS[k]}")
         for name in zoo_models.KINDS for exporter in mm.EXPORTERS for level in LEVELS for k in range(3)]


@pytest.mark.parametrize("name, exporter, level, k", CASES)
def test_against_onnxruntime(zoo_dir, zoo_manifest, name, exporter, level, k):
    check_against_ort(zoo_dir, zoo_manifest, name, exporter, level, k)


TEXT = [n for n, kind in zoo_models.KINDS.items() if kind == "text"]


@pytest.mark.parametrize("name", TEXT)
def test_level3_fuses_the_attention(zoo_dir, zoo_manifest, name):
    """One FusedAttention per layer (TorchScript export, batch 3 sequence 16),
    except where UNFUSED says why not; there the Softmax stays."""
    e = _entry(zoo_manifest, name, "torchscript")
    feeds = _feeds_of_set(zoo_dir, e, 2)
    with unsupported_is_xfail(f"{name}-torchscript"):
        m = onnx_model(os.path.join(zoo_dir, e["file"]), 3)
        ops = collections.Counter(m.compiled({n: a.shape for n, a in feeds.items()}).op_types)
    print(f"{name}: level 3 op types {dict(ops.most_common())}")
    if name in UNFUSED:
        assert ops["Softmax"] == LAYERS and not ops["FusedAttention"], dict(ops)
    else:
        assert ops["FusedAttention"] == LAYERS and not ops["Softmax"], dict(ops)
