"""Saved compiled models: CompiledModel.save / pg.load_compiled / pg.save_compiled,
MiniLM.save / minilm(compiled_dir=...).

Round trips at levels 0 and 3 give the same bits; the loaded weights are the
file's pages (the load info says so, and loading adds almost nothing to the
RSS); a load under a lower CPU mask rebinds and re-packs; files from another
engine version or format, truncated or damaged files are FormatErrors saying
what is wrong.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import peregrine_nb as pg
from peregrine_nb.errors import FormatError, InvalidArgumentError

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

SENTENCES = ["A peregrine falcon dives at over 300 km/h.", "GEMM kernels are the heart of an engine.",
             "short", "Matrix multiplication dominates transformer inference on every CPU we tried."]


@pytest.fixture(scope="module")
def enc():
    try:
        return pg.models.minilm(threads=1)
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def feeds(enc):
    ids, mask = enc.tokenize(SENTENCES)
    return {"input_ids": ids, "attention_mask": mask}


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.mark.parametrize("level", [0, 3])
def test_round_trip_gives_the_same_bits(enc, feeds, tmp_path, level):
    ids = feeds["input_ids"]
    m = pg.compile(enc.graph(*ids.shape), level=level, threads=1)
    ref = m.run(feeds)["last_hidden_state"]
    path = m.save(tmp_path / "m.pgm")
    info = pg.compiled_file_info(path)
    assert info["engine_version"] == pg.__version__ and info["format_version"] == 2
    assert info["level"] == level and info["threads"] == 1 and info["models"] == 1
    assert info["bound_level"] == pg.cpu_info().level
    assert (info["pack_nr"] > 0) == (level == 3)
    loaded = pg.load_compiled(path)
    assert loaded.graph is None and loaded.level == level and loaded.path == os.fspath(path)
    assert np.array_equal(loaded.run(feeds)["last_hidden_state"], ref)
    assert [s["detail"] for s in loaded.steps] == [s["detail"] for s in m.steps]
    assert loaded.graph_text == m.graph_text
    assert loaded.inputs == m.inputs and loaded.outputs == m.outputs
    assert loaded.memory_stats == m.memory_stats
    li = loaded.load_info
    # every constant is read in place from the file: zero copy
    assert li["loaded"] and li["owned_bytes"] == 0 and li["mapped_bytes"] >= 80_000_000, li
    assert not li["rebound"] and li["repacked"] == 0
    assert not m.load_info["loaded"] and m.load_info["mapped_bytes"] == 0
    assert "loaded from" in loaded.report() and "from m.pgm" in repr(loaded)


def test_loading_maps_the_weights_instead_of_copying_them(enc, feeds, tmp_path):
    ids = feeds["input_ids"]
    path = pg.compile(enc.graph(*ids.shape), level=3, threads=1).save(tmp_path / "m.pgm")
    size_kib = os.path.getsize(path) // 1024
    before = rss_kib()
    models = [pg.load_compiled(path) for _ in range(4)]
    grown = rss_kib() - before
    # four loads of a 90 MB file: a copy each would be 350 MB; the mapping is
    # only read when a run touches it (and then it is the page cache's, shared)
    assert grown < size_kib // 4, (grown, size_kib)
    outs = [m.run(feeds)["last_hidden_state"] for m in models]
    assert all(np.array_equal(o, outs[0]) for o in outs)


def test_threads_and_planner_overrides(enc, feeds, tmp_path):
    ids = feeds["input_ids"]
    m = pg.compile(enc.graph(*ids.shape), level=3, threads=1)
    path = m.save(tmp_path / "m.pgm")
    naive = pg.load_compiled(path, planner="naive", threads=2)
    assert naive.memory_stats["planner"] == "naive"
    assert naive.memory_stats["arena"] > m.memory_stats["arena"]
    np.testing.assert_allclose(naive.run(feeds)["last_hidden_state"], m.run(feeds)["last_hidden_state"],
                               atol=1e-5)
    with pytest.raises(InvalidArgumentError, match="planner"):
        pg.load_compiled(path, planner="no_such")


def _higher_than_avx2() -> bool:
    levels = pg.cpu_levels()
    return "avx2" in levels and levels.index(pg.cpu_info().level) > levels.index("avx2")


@pytest.mark.skipif(not _higher_than_avx2(), reason="needs a CPU with a level above avx2")
def test_loading_under_a_lower_mask_rebinds_and_repacks(enc, feeds, tmp_path):
    ids = feeds["input_ids"]
    m = pg.compile(enc.graph(*ids.shape), level=3, threads=1)
    ref = m.run(feeds)["last_hidden_state"]
    high = pg.compiled_file_info(m.save(tmp_path / "high.pgm"))["pack_nr"]
    with pg.cpu_mask("avx2"):
        low = pg.load_compiled(tmp_path / "high.pgm")
        li = low.load_info
        assert li["rebound"] and li["repacked"] > 0 and li["owned_bytes"] > 0 and li["mapped_bytes"] > 0
        assert "rebound for avx2" in low.load_note and "re-packed" in low.load_note
        sgemm = {k for s in low.kernels for k in s["kernels"] if "gemm" in k}
        assert sgemm and all("avx2" in k for k in sgemm), sgemm
        out = low.run(feeds)["last_hidden_state"]
        np.testing.assert_allclose(out, ref, atol=2e-4)
        # and the other way: saved under avx2, loaded with everything allowed
        m2 = pg.compile(enc.graph(*ids.shape), level=3, threads=1)
        low_nr = pg.compiled_file_info(m2.save(tmp_path / "low.pgm"))["pack_nr"]
    assert low_nr != high
    up = pg.load_compiled(tmp_path / "low.pgm")
    assert up.load_info["rebound"] and up.load_info["repacked"] > 0
    np.testing.assert_allclose(up.run(feeds)["last_hidden_state"], ref, atol=2e-4)


def test_several_models_in_one_file_share_their_weights(enc, tmp_path):
    models = [pg.compile(enc.graph(2, L), level=3, threads=1) for L in (16, 32)]
    path = pg.save_compiled(models, tmp_path / "two.pgm")
    one = pg.compile(enc.graph(2, 16), level=3, threads=1).save(tmp_path / "one.pgm")
    # the weights once: the second shape adds its graph and a few small constants
    assert os.path.getsize(path) < os.path.getsize(one) * 1.01
    info = pg.compiled_file_info(path, index=1)
    assert info["models"] == 2
    for i, L in enumerate((16, 32)):
        m = pg.load_compiled(path, index=i)
        assert m.inputs["input_ids"][0] == (2, L)
        feeds = {"input_ids": np.full((2, L), 1000, np.int64), "attention_mask": np.ones((2, L), np.int64)}
        assert np.array_equal(m.run(feeds)["last_hidden_state"], models[i].run(feeds)["last_hidden_state"])
    with pytest.raises(InvalidArgumentError, match="2 model"):
        pg.load_compiled(path, index=2)


# ---- rejected files --------------------------------------------------------

@pytest.fixture(scope="module")
def saved(enc, tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "m.pgm"
    pg.compile(enc.graph(1, 16), level=3, threads=1).save(path)
    return path.read_bytes()


def _write(tmp_path, data: bytes):
    p = tmp_path / "bad.pgm"
    p.write_bytes(data)
    return p


def test_another_engine_version_is_rejected(saved, tmp_path):
    b = bytearray(saved)
    b[16:48] = b"9.9.9".ljust(32, b"\0")
    with pytest.raises(FormatError, match=r"saved by Peregrine 9\.9\.9; this is Peregrine .*compile the model again"):
        pg.load_compiled(_write(tmp_path, bytes(b)))
    with pytest.raises(FormatError, match="9.9.9"):
        pg.compiled_file_info(tmp_path / "bad.pgm")


def test_another_format_version_is_rejected(saved, tmp_path):
    b = bytearray(saved)
    b[8] = 7
    with pytest.raises(FormatError, match="format version 7.*reads version 2"):
        pg.load_compiled(_write(tmp_path, bytes(b)))


def test_not_a_model(tmp_path):
    p = tmp_path / "x.pgm"
    p.write_text("hello, I am text\n" * 40)
    with pytest.raises(FormatError, match="not a Peregrine compiled model"):
        pg.load_compiled(p)
    p.write_bytes(b"PG")
    with pytest.raises(FormatError, match="header"):
        pg.load_compiled(p)
    with pytest.raises(Exception, match="cannot open"):
        pg.load_compiled(tmp_path / "missing.pgm")


@pytest.mark.parametrize("cut", [0, 100, 255, 300, 4096, -1])
def test_truncated_files_are_rejected(saved, tmp_path, cut):
    n = len(saved) - 1 if cut == -1 else cut
    with pytest.raises(FormatError, match="truncated|header|not a Peregrine"):
        pg.load_compiled(_write(tmp_path, saved[:n]))


def test_damaged_graph_is_rejected_by_its_checksum(saved, tmp_path):
    b = bytearray(saved)
    b[600] ^= 0x20
    with pytest.raises(FormatError, match="checksum"):
        pg.load_compiled(_write(tmp_path, bytes(b)))
    b = bytearray(saved)
    b[130] ^= 0x01          # the header's own checksum
    with pytest.raises(FormatError, match="header's checksum"):
        pg.load_compiled(_write(tmp_path, bytes(b)))


def test_damaged_weights_are_found_with_verify(saved, tmp_path):
    b = bytearray(saved)
    b[-1000] ^= 0x01
    p = _write(tmp_path, bytes(b))
    with pytest.raises(FormatError, match="weights are damaged"):
        pg.load_compiled(p, verify=True)
    pg.load_compiled(p)     # not read by default: the load stays zero-copy
    pg.load_compiled(_write(tmp_path, saved), verify=True)


# ---- MiniLM folders -------------------------------------------------------

def test_minilm_folder_round_trip(enc, tmp_path):
    folder = enc.save(tmp_path / "minilm", buckets=(16, 32), batch_size=4)
    assert {"config.json", "minilm.pgm", "peregrine_minilm.json", "tokenizer.json"} <= set(os.listdir(folder))
    ref, st = enc.encode_bucketed(SENTENCES, buckets=(16, 32), batch_size=4)
    back = pg.models.minilm(compiled_dir=folder, threads=1)
    # every bucket at every row count a batch may have (4, 2, 1)
    assert back.saved_shapes == sorted((b, L) for b in (1, 2, 4) for L in (16, 32, 256))
    got, st2 = back.encode_bucketed(SENTENCES, buckets=(16, 32), batch_size=4)
    assert np.array_equal(got, ref) and st == st2
    assert not back.weights_loaded            # nothing compiled: the weights file was never read
    assert all(m.path for m in back._compiled.values())
    np.testing.assert_allclose(got, enc.encode(SENTENCES), atol=1e-5)
    # a shape the folder lacks is compiled from the weights
    np.testing.assert_allclose(back.encode(SENTENCES[:3]), enc.encode(SENTENCES[:3]), atol=1e-6)
    assert back.weights_loaded
    # the folder is all it needs: moved elsewhere, it still loads
    moved = shutil.copytree(folder, tmp_path / "moved")
    assert np.array_equal(pg.models.minilm(compiled_dir=moved).encode_bucketed(
        SENTENCES, buckets=(16, 32), batch_size=4)[0], ref)


def test_minilm_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="MiniLM.save"):
        pg.models.minilm(compiled_dir=tmp_path)


def test_bucketed_stats(enc):
    emb, st = enc.encode_bucketed(SENTENCES * 3, buckets=(16, 32), batch_size=4)
    assert emb.shape == (12, 384)
    assert st["sentences"] == 12 and sum(st["buckets"].values()) == 12
    # sorted by length, grouped by bucket, each group cut into batches of 4
    # and its remainder into 2s and 1s: no empty rows, no batch straddling
    # a bucket
    assert st["padded_rows"] == 0
    assert st["batches"] == sum(n // 4 + bin(n % 4).count("1") for n in st["buckets"].values())
    assert st["slots"] == sum(L * n for L, n in st["buckets"].items())
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)
    assert enc.encode_bucketed([])[0].shape == (0, 384)


def test_split_rows_has_no_empty_rows():
    from peregrine_nb.models.minilm import batch_sizes, split_rows
    assert batch_sizes(32) == [32, 16, 8, 4, 2, 1] and batch_sizes(24) == [24, 16, 8, 4, 2, 1]
    for n in range(0, 80):
        parts = split_rows(np.arange(n), 24)
        assert np.array_equal(np.concatenate(parts) if parts else np.arange(0), np.arange(n))
        sizes = [len(p) for p in parts]
        assert all(b in batch_sizes(24) for b in sizes) and sizes == sorted(sizes, reverse=True)
        # full batches, then each smaller row count at most once
        small = [b for b in sizes if b < 24]
        assert len(small) == len(set(small)) and sizes.count(24) == n // 24
