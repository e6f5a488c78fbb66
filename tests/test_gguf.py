"""The GGUF reader: a synthetic file with every metadata type, the real
SmolLM2-135M file (metadata, tensors, dequantisation against an independent
numpy decoding of the packed blocks), and truncated / corrupted files, which
must raise FormatError naming the offset."""
import struct
from pathlib import Path

import numpy as np
import pytest

from peregrine_nb import FormatError, InvalidArgumentError, PeregrineError, ShapeError
from peregrine_nb import gguf as gg


# ---- a small GGUF writer ---------------------------------------------------

def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key: str, type_: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", type_) + payload


def synthetic(alignment: int = 32) -> bytes:
    """GGUF v3: every scalar type, arrays, an f32 [3, 2] and a q8_0 [32] tensor."""
    kvs = [
        _kv("u8", 0, struct.pack("<B", 250)), _kv("i8", 1, struct.pack("<b", -7)),
        _kv("u16", 2, struct.pack("<H", 65000)), _kv("i16", 3, struct.pack("<h", -1234)),
        _kv("u32", 4, struct.pack("<I", 4_000_000_000)), _kv("i32", 5, struct.pack("<i", -99)),
        _kv("f32", 6, struct.pack("<f", 0.25)), _kv("bool", 7, b"\x01"),
        _kv("str", 8, _s("héllo")), _kv("u64", 10, struct.pack("<Q", 2**40)),
        _kv("i64", 11, struct.pack("<q", -(2**40))), _kv("f64", 12, struct.pack("<d", 1e-3)),
        _kv("arr.i32", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, -2, 3)),
        _kv("arr.str", 9, struct.pack("<IQ", 8, 2) + _s("ab") + _s("")),
        _kv("arr.f32", 9, struct.pack("<IQ", 6, 2) + struct.pack("<2f", 0.5, -1.5)),
        _kv("general.alignment", 4, struct.pack("<I", alignment)),
    ]
    tensors = [("w.f32", [3, 2], 0, 24), ("w.q8_0", [32], 8, 34)]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    off, infos = 0, b""
    for name, dims, t, nbytes in tensors:
        infos += _s(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        infos += struct.pack("<IQ", t, off)
        off += -(-nbytes // alignment) * alignment
    body = head + infos
    body += b"\0" * (-len(body) % alignment)
    data = struct.pack("<6f", *[0.5 * k for k in range(6)]) + b"\0" * (alignment - 24 % alignment)
    data += struct.pack("<e", 0.5) + bytes((k - 16) & 0xFF for k in range(32))
    return body + data


def test_synthetic_metadata_and_tensors(tmp_path):
    p = tmp_path / "s.gguf"
    p.write_bytes(synthetic(64))
    f = gg.load_gguf(p)
    md = f.metadata
    assert (md["u8"], md["i8"], md["u16"], md["i16"], md["u32"], md["i32"]) == (250, -7, 65000, -1234, 4_000_000_000, -99)
    assert md["f32"] == 0.25 and md["bool"] is True and md["str"] == "héllo"
    assert md["u64"] == 2**40 and md["i64"] == -(2**40) and md["f64"] == 1e-3
    assert md["arr.i32"].tolist() == [1, -2, 3] and md["arr.str"] == ["ab", ""]
    assert md["arr.f32"].tolist() == [0.5, -1.5]
    assert f.alignment == 64 and f.version == 3
    assert [t.name for t in f.tensors] == ["w.f32", "w.q8_0"]
    assert f.tensors[0].shape == (2, 3) and f.tensors[0].dims == (3, 2)
    np.testing.assert_array_equal(f.tensor("w.f32"), np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5)
    np.testing.assert_array_equal(f.tensor("w.q8_0"), (np.arange(32) - 16) * 0.5)
    assert f.get("missing", 7) == 7
    with pytest.raises(InvalidArgumentError, match="no tensor named"):
        f.tensor("nope")


def test_every_truncation_is_a_format_error(tmp_path):
    img = synthetic()
    p = tmp_path / "t.gguf"
    for n in range(0, len(img)):
        p.write_bytes(img[:n])
        with pytest.raises(PeregrineError) as e:
            gg.load_gguf(p)
        assert e.value.status == "PG_ERR_FORMAT", (n, str(e.value))


@pytest.mark.parametrize("at,patch,message", [
    (0, b"GGML", "not a GGUF file"),
    (4, struct.pack("<I", 7), "version 7"),
    (8, struct.pack("<Q", 2**62), "tensors"),
    (16, struct.pack("<Q", 2**62), "metadata entries"),
    (24, struct.pack("<Q", 2**50), "offset 24"),
])
def test_corrupt_header_fields(tmp_path, at, patch, message):
    img = bytearray(synthetic())
    img[at:at + len(patch)] = patch
    p = tmp_path / "c.gguf"
    p.write_bytes(bytes(img))
    with pytest.raises(FormatError, match=message):
        gg.load_gguf(p)


def test_missing_file_and_bad_alignment(tmp_path):
    with pytest.raises(PeregrineError, match="cannot open"):
        gg.load_gguf(tmp_path / "none.gguf")
    p = tmp_path / "a.gguf"
    p.write_bytes(synthetic(24))  # not a power of two
    with pytest.raises(FormatError, match="power of two"):
        gg.load_gguf(p)


# ---- the real file -----------------------------------------------------------

@pytest.fixture(scope="module")
def smollm2():
    try:
        path = gg.smollm2_path()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    return gg.load_gguf(path)


def test_smollm2_metadata(smollm2):
    md = smollm2.metadata
    assert md["general.architecture"] == "llama"
    assert (md["llama.block_count"], md["llama.embedding_length"], md["llama.feed_forward_length"]) == (30, 576, 1536)
    assert (md["llama.attention.head_count"], md["llama.attention.head_count_kv"]) == (9, 3)
    assert md["llama.rope.freq_base"] == 100000.0
    assert abs(md["llama.attention.layer_norm_rms_epsilon"] - 1e-5) < 1e-12
    assert md["tokenizer.ggml.model"] == "gpt2" and md["tokenizer.ggml.pre"] == "smollm"
    assert len(md["tokenizer.ggml.tokens"]) == 49152 and md["tokenizer.ggml.tokens"][2] == "<|im_end|>"
    assert md["tokenizer.ggml.token_type"].dtype == np.int32 and (md["tokenizer.ggml.token_type"] == 3).sum() == 17
    assert len(md["tokenizer.ggml.merges"]) == 48900
    assert "<|im_start|>" in smollm2.chat_template


def test_smollm2_tensors(smollm2):
    ts = {t.name: t for t in smollm2.tensors}
    assert len(ts) == 272 and smollm2.alignment == 32
    assert ts["token_embd.weight"].type == "q8_0" and ts["token_embd.weight"].shape == (49152, 576)
    assert ts["blk.0.ffn_down.weight"].type == "q4_1" and ts["blk.0.ffn_down.weight"].shape == (576, 1536)
    assert ts["output_norm.weight"].type == "f32"
    assert sum(t.n_elements for t in ts.values()) == 134_515_008
    for t in ts.values():
        assert t.offset % 32 == 0 and t.offset + t.bytes <= smollm2.file_size


def _q8_0_numpy(raw: bytes, shape) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)
    q = blocks[:, 2:].view(np.int8).astype(np.float32)
    return (q * d).reshape(shape)


def _q4_1_numpy(raw: bytes, shape) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 20)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
    m = blocks[:, 2:4].copy().view("<f2").astype(np.float32)
    qs = blocks[:, 4:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)
    return (q * d + m).reshape(shape)


def test_dequantize_matches_numpy_decoding(smollm2):
    name = "blk.3.ffn_up.weight"
    t = next(t for t in smollm2.tensors if t.name == name)
    np.testing.assert_array_equal(smollm2.tensor(name), _q4_1_numpy(bytes(smollm2.raw(name)), t.shape))
    raw = bytes(smollm2.raw("token_embd.weight"))
    row_bytes = 576 // 32 * 34
    want = _q8_0_numpy(raw[100 * row_bytes: 104 * row_bytes], (4, 576))
    np.testing.assert_array_equal(smollm2.rows("token_embd.weight", 100, 4), want)
    norm = smollm2.tensor("output_norm.weight")
    np.testing.assert_array_equal(norm, np.frombuffer(bytes(smollm2.raw("output_norm.weight")), "<f4"))
    with pytest.raises(ShapeError):
        smollm2.rows("token_embd.weight", 49150, 3)


def test_truncated_real_file(smollm2, tmp_path):
    data = smollm2.path.read_bytes()
    for cut in (3, 20, 1000, 200_000, smollm2.data_offset - 1, smollm2.data_offset + 4096, len(data) - 1):
        p = tmp_path / "cut.gguf"
        p.write_bytes(data[:cut])
        with pytest.raises(PeregrineError, match="offset|too short") as e:
            gg.load_gguf(p)
        assert e.value.status == "PG_ERR_FORMAT"


# ---- dequantisation against ggml -------------------------------------------

DEQUANT = np.load(Path(__file__).parent / "data" / "dequant_golden.npz")


@pytest.mark.parametrize("type_", sorted({k.rsplit("_", 1)[0] for k in DEQUANT.files if k.endswith("_y")}))
def test_dequantize_matches_ggml(type_):
    """tests/data/dequant_golden.npz: ggml's own quantize_row_*_ref and
    dequantize_row_* (tests/data/make_dequant_golden.py)."""
    want = DEQUANT[f"{type_}_y"]
    got = gg.dequantize(type_, DEQUANT[f"{type_}_blocks"], len(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * float(np.abs(want).max()))
    # and the quantisation really was lossy but close (sanity of the golden data)
    x = DEQUANT[f"{type_}_x"]
    assert np.abs(got - x).max() < 0.6 * np.abs(x).max()


def test_dequantize_argument_errors():
    with pytest.raises(ShapeError, match="whole number"):
        gg.dequantize("q4_1", bytes(20), 31)
    with pytest.raises(ValueError):
        gg.dequantize("q4_1", bytes(20), 64)
    assert gg.ggml_types()["q6_K"] == 14


# ---- quantised dot products (C references) ---------------------------------

@pytest.mark.parametrize("type_", ["q8_0", "q8_1"])
def test_activation_quantisers_match_ggml_bytes(type_):
    got = gg.quantize_activations(type_, DEQUANT[f"{type_}_x"])
    np.testing.assert_array_equal(got, DEQUANT[f"{type_}_blocks"])


def _f16(b: np.ndarray, at: int) -> np.ndarray:
    return b[:, at:at + 2].copy().view("<f2").astype(np.float64).ravel()


@pytest.mark.parametrize("wtype", ["q8_0", "q4_1"])
def test_qdot_matches_block_formula(wtype):
    rng = np.random.default_rng(7)
    n = len(DEQUANT[f"{wtype}_x"])
    w = DEQUANT[f"{wtype}_blocks"]
    y = rng.standard_normal(n).astype(np.float32)
    atype = "q8_0" if wtype == "q8_0" else "q8_1"
    a = gg.quantize_activations(atype, y)
    got = gg.qdot(wtype, w, a, n)
    # the formula, from the bytes, in float64
    ab = a.reshape(n // 32, -1)
    aq = ab[:, -32:].view(np.int8).astype(np.float64)
    wb = w.reshape(n // 32, -1)
    if wtype == "q8_0":
        wq = wb[:, 2:].view(np.int8).astype(np.float64)
        want = np.sum(_f16(wb, 0) * _f16(ab, 0) * (wq * aq).sum(1))
    else:
        q = np.concatenate([wb[:, 4:] & 15, wb[:, 4:] >> 4], axis=1).astype(np.float64)
        want = np.sum(_f16(wb, 0) * _f16(ab, 0) * (q * aq).sum(1) + _f16(wb, 2) * _f16(ab, 2))
    assert abs(got - want) <= 1e-5 * np.sum(np.abs(gg.dequantize(wtype, w, n) * y)) + 1e-6
    # and close to the float dot product of what the blocks stand for
    exact = float(np.dot(gg.dequantize(wtype, w, n).astype(np.float64), y))
    assert abs(got - exact) < 0.02 * np.sum(np.abs(gg.dequantize(wtype, w, n) * y))


def test_qdot_errors():
    with pytest.raises(ShapeError):
        gg.qdot("q8_0", bytes(34), bytes(34), 31)
    with pytest.raises(PeregrineError, match="not q8_0 or q4_1"):
        gg.qdot("q4_0", bytes(18), bytes(36), 32)
