"""all-MiniLM-L6-v2 sentence embeddings: Peregrine against
sentence-transformers (torch), against a stored reference, and the ONNX path
(a torch export run through load_onnx) against ONNX Runtime."""
from __future__ import annotations

import os

import numpy as np
import pytest

import peregrine_nb as pg

pytest.importorskip("tokenizers", reason="MiniLM needs the `tokenizers` package (test extra)")
pytest.importorskip("safetensors", reason="MiniLM needs the `safetensors` package (test extra)")

DATA = os.path.join(os.path.dirname(__file__), "data", "minilm_reference.npz")

# different lengths in one batch (so most rows are padded), an empty string,
# punctuation and accents, and one sentence past the 256-token truncation
SENTENCES = [
    "This is an example sentence.",
    "Each sentence is converted into a 384-dimensional vector.",
    "short",
    "",
    "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun!",
    "Café, naïve, façade: accents are stripped by the uncased tokenizer?",
    "Peregrine falcons are the fastest animals on earth. " * 30,
]


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def assert_close_embeddings(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert got.shape == ref.shape, what
    cos = cosine(got.astype(np.float64), ref.astype(np.float64))
    diff = np.abs(got - ref).max()
    print(f"{what}: min cosine {cos.min():.9f}, max abs diff {diff:.3g}")
    assert cos.min() >= 0.99999, f"{what}: cosine {cos}"
    assert diff <= 1e-4, f"{what}: max abs diff {diff}"


@pytest.fixture(scope="module")
def model_dir():
    try:
        return pg.models.find_minilm_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module", params=[0, 3], ids=["level0", "level3"])
def encoder(request, model_dir):
    return pg.models.minilm(level=request.param, model_dir=model_dir)


@pytest.fixture(scope="module")
def st_reference(model_dir):
    torch = pytest.importorskip("torch", reason="the live reference needs torch (test extra)")
    st = pytest.importorskip("sentence_transformers", reason="needs sentence-transformers (test extra)")
    torch.manual_seed(0)
    model = st.SentenceTransformer(model_dir, device="cpu")
    return model.encode(SENTENCES, batch_size=len(SENTENCES), convert_to_numpy=True)


def test_embeddings_shape_and_norm(encoder):
    emb = encoder.encode(SENTENCES)
    assert emb.shape == (len(SENTENCES), 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert encoder.encode("one sentence").shape == (384,)


def test_against_sentence_transformers(encoder, st_reference):
    assert_close_embeddings(encoder.encode(SENTENCES), st_reference,
                            f"level {encoder.level} vs sentence-transformers")


def test_against_stored_reference(encoder):
    ref = np.load(DATA)
    assert list(ref["sentences"]) == SENTENCES, "tests/data/minilm_reference.npz is stale: regenerate it"
    assert_close_embeddings(encoder.encode(SENTENCES), ref["embeddings"],
                            f"level {encoder.level} vs stored reference")


def test_padding_does_not_change_embeddings(encoder):
    batch = encoder.encode(SENTENCES)
    alone = np.stack([encoder.encode(s) for s in SENTENCES])
    assert_close_embeddings(batch, alone, "batched (padded) vs one at a time")


def test_long_input_is_truncated(encoder):
    ids, mask = encoder.tokenize([SENTENCES[-1]])
    assert ids.shape == (1, 256) and mask.all()


def test_level0_and_level3_agree(model_dir):
    e0 = pg.models.minilm(level=0, model_dir=model_dir).encode(SENTENCES[:5])
    e3 = pg.models.minilm(level=3, model_dir=model_dir).encode(SENTENCES[:5])
    np.testing.assert_allclose(e3, e0, atol=2e-6)


def test_level3_fuses_the_exported_patterns(model_dir):
    enc = pg.models.minilm(level=3, model_dir=model_dir)
    ops = enc.compiled(2, 16).op_types
    assert ops.count("FusedAttention") == 6
    assert ops.count("LayerNormalization") == 13
    assert "Erf" not in ops and "ReduceMean" not in ops and "Softmax" not in ops


# ---------------------------------------------------------------------------
# the ONNX path: a torch export of the Hugging Face model
# ---------------------------------------------------------------------------

def export_minilm_onnx(model_dir: str, path: str, opset: int) -> None:
    """Exports BertModel's last_hidden_state with the TorchScript exporter.
    The additive attention mask is built in the wrapper, as transformers 4
    did, so the file does not depend on transformers 5's mask utilities
    (Range, GatherElements); token_type_ids are zeros, as
    sentence-transformers feeds them."""
    torch = pytest.importorskip("torch", reason="the ONNX export needs torch (test extra)")
    transformers = pytest.importorskip("transformers", reason="the export needs transformers")
    bert = transformers.AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
            h = self.m.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))
            return self.m.encoder(h, attention_mask=ext).last_hidden_state

    ids = torch.tensor([[101, 2023, 2003, 1037, 7099, 102, 0, 0]])
    mask = (ids != 0).to(torch.int64)
    dyn = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Encoder(bert), (ids, mask), path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn},
                          opset_version=opset, dynamo=False)


@pytest.fixture(scope="module", params=[14, 17], ids=["opset14", "opset17"])
def onnx_file(request, model_dir, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("minilm") / f"minilm_opset{request.param}.onnx")
    export_minilm_onnx(model_dir, path, request.param)
    return path


def test_onnx_export_against_onnxruntime(onnx_file, model_dir):
    ort = pytest.importorskip("onnxruntime", reason="needs onnxruntime (test extra)")
    enc = pg.models.minilm(onnx_path=onnx_file, model_dir=model_dir)
    sess = ort.InferenceSession(onnx_file, providers=["CPUExecutionProvider"])
    for batch in (SENTENCES[:1], SENTENCES[:6], SENTENCES):
        ids, mask = enc.tokenize(batch)
        got = enc.forward(ids, mask)
        ref = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        keep = mask.astype(bool)   # padded rows are never pooled
        diff = np.abs(got - ref)[keep].max()
        print(f"{os.path.basename(onnx_file)} batch {ids.shape}: max abs diff vs ORT {diff:.3g}")
        assert diff <= 1e-4
        from peregrine_nb.models.minilm import mean_pool_normalise
        assert_close_embeddings(mean_pool_normalise(got, mask), mean_pool_normalise(ref, mask),
                                f"{os.path.basename(onnx_file)} embeddings vs ORT")
    # one compile per distinct (batch, sequence), reused afterwards
    n = enc._onnx.compiles
    enc.encode(SENTENCES)
    assert enc._onnx.compiles == n


def test_onnx_path_matches_the_builder(onnx_file, model_dir):
    a = pg.models.minilm(onnx_path=onnx_file, model_dir=model_dir).encode(SENTENCES[:6])
    b = pg.models.minilm(model_dir=model_dir).encode(SENTENCES[:6])
    assert_close_embeddings(a, b, "ONNX import vs graph builder")


def test_onnx_export_fuses_like_the_builder(onnx_file):
    model = pg.OnnxModel(onnx_file, level=3)
    ops = model.compiled({"input_ids": (2, 16), "attention_mask": (2, 16)}).op_types
    assert ops.count("FusedAttention") == 6
    assert ops.count("LayerNormalization") == 13


def export_bertmodel_onnx(model_dir: str, path: str) -> None:
    """The plain transformers BertModel, built from the package's config.json
    with its safetensors weights, exported as a user would (TorchScript
    exporter, opset 17): transformers' own attention-mask code, no wrapper
    building the mask."""
    torch = pytest.importorskip("torch", reason="the ONNX export needs torch (test extra)")
    transformers = pytest.importorskip("transformers", reason="the export needs transformers")
    from safetensors.torch import load_file
    cfg = transformers.BertConfig.from_pretrained(model_dir)
    cfg._attn_implementation = "eager"
    bert = transformers.BertModel(cfg, add_pooling_layer=False).eval()
    weights = load_file(os.path.join(model_dir, "model.safetensors"))
    res = bert.load_state_dict({k.removeprefix("bert."): v for k, v in weights.items()}, strict=False)
    assert not res.missing_keys, res.missing_keys

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.tensor([[101, 2023, 2003, 1037, 7099, 102, 0, 0]])
    mask = (ids != 0).to(torch.int64)
    dyn = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Hidden(bert), (ids, mask), path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn},
                          opset_version=17, dynamo=False)


def test_bertmodel_export_runs_the_builders_plan(model_dir, tmp_path):
    """minilm(onnx_path=) on a plain BertModel export of the same weights:
    the same embeddings as the hand-built graph, and at level 3 the same
    plan - the same number of QKVMatMul, FusedAttention, FusedMatMul and
    LayerNormalization steps, so the same kernels on the same shapes (the
    speed comparison is benchmarks/bench_onnx_models.py --minilm)."""
    path = str(tmp_path / "bertmodel.onnx")
    export_bertmodel_onnx(model_dir, path)
    a = pg.models.minilm(onnx_path=path, model_dir=model_dir)
    b = pg.models.minilm(model_dir=model_dir)
    assert_close_embeddings(a.encode(SENTENCES), b.encode(SENTENCES), "BertModel export vs graph builder")
    import collections
    oa = collections.Counter(pg.OnnxModel(path, level=3).compiled(
        {"input_ids": (2, 16), "attention_mask": (2, 16)}).op_types)
    ob = collections.Counter(b.compiled(2, 16).op_types)
    print("export:", dict(oa), "\nbuilder:", dict(ob))
    for op in ("QKVMatMul", "FusedAttention", "FusedMatMul", "LayerNormalization"):
        assert oa[op] == ob[op], (op, dict(oa), dict(ob))
    assert not {"MatMul", "Softmax", "Transpose", "Erf", "ReduceMean"} & set(oa), dict(oa)


def regenerate_reference() -> None:   # python tests/test_minilm.py
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(pg.models.find_minilm_dir(), device="cpu")
    emb = model.encode(SENTENCES, batch_size=len(SENTENCES), convert_to_numpy=True)
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    np.savez_compressed(DATA, sentences=np.array(SENTENCES), embeddings=emb.astype(np.float32))
    print(f"wrote {DATA}: {emb.shape}")


if __name__ == "__main__":
    regenerate_reference()
