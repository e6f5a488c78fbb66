"""Export small Hugging Face transformers models to ONNX, with ONNX Runtime
reference outputs, for tests/test_onnx_models.py and
benchmarks/bench_onnx_models.py.

    python3 tests/models/make_models.py --out DIR [--only NAME ...]
                                        [--exporters torchscript dynamo] [--size tiny|bench]

Every model is built from a transformers config written out here (no hub
download), with random weights (torch.manual_seed fixed per model), in eval
mode, and exported twice where each exporter manages it:

- ``torchscript``: torch.onnx.export(..., dynamo=False), opset 17;
- ``dynamo``: torch.onnx.export(..., dynamo=True), opset 18 (needs the
  ``onnxscript`` package).

Batch and sequence axes are dynamic.  For each model and exporter the script
writes ``DIR/<name>-<exporter>.onnx`` and ``DIR/<name>-<exporter>.npz``: for
the 3 input sets of the model (``SHAPE_SETS``: batch 1 sequence 1; batch 2
sequence 7 with the second row padded; batch 3 sequence 16; image and audio
models: batch 1, 2, 3) the inputs (``set<k>.in.<name>``) and ONNX Runtime's
outputs (``set<k>.out.<name>``).  ``DIR/manifest.json`` records, per model and
exporter, whether it exported (the reason when it did not), the input and
output names, the maximum difference between ORT and torch on each set (a
check of the exporter, not of Peregrine) and the export time.

The references come from ORT with ORT_DISABLE_ALL: the unoptimised graph,
computed op by op as the ONNX file says.  ORT_ENABLE_ALL would rewrite it
first into ORT's own fused kernels (Attention, SkipLayerNormalization,
FastGelu, ...), some of which use approximations or another order of
summation; the tests want the numbers the file itself defines, so that a
difference is Peregrine's and not a fused ORT kernel's.  (The benchmark, which
measures speed, runs ORT with ORT_ENABLE_ALL.)

``--size tiny`` (default): 2 layers, hidden 64, 4 heads, intermediate 128,
vocabulary 1000, 128 positions - a few hundred KB a file, the whole run about
2 minutes on 2 cores.  ``--size bench``: sizes for the benchmark (BERT-base
shaped layers: hidden 768, 12 heads, FFN 3072, 2 layers; the others hidden
256-512, 2-4 layers) and no references (``--refs`` to write them anyway).

``--only`` also takes the architectures of zoo_models.py (ALBERT, ELECTRA,
OPT, GPT-NeoX, Phi, Mistral, Gemma, BLOOM, Falcon, Swin, ConvNeXt, wav2vec2,
...; make_zoo_models.py makes all of them): ALL_MODELS is both lists.

The module can be imported without torch: MODELS, ALL_MODELS, EXPORTERS and
SHAPE_SETS are plain data the tests parametrise over.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_models  # noqa: E402

EXPORTERS = ("torchscript", "dynamo")
OPSET = {"torchscript": 17, "dynamo": 18}

# model name -> kind of input ("text": input_ids (+ mask); "image"; "audio")
MODELS = {
    "bert": "text", "distilbert": "text", "roberta": "text",
    "gpt2": "text", "gpt2-past": "text", "llama": "text", "qwen2": "text",
    "t5-encoder": "text", "t5-decoder": "text",
    "vit": "image", "whisper-encoder": "audio",
}
ALL_MODELS = {**MODELS, **zoo_models.KINDS}

# (batch, sequence, padded): padded = the second row's tail is padding
SHAPE_SETS = {
    "text": [(1, 1, False), (2, 7, True), (3, 16, False)],
    "image": [(1, None, False), (2, None, False), (3, None, False)],
    "audio": [(1, None, False), (2, None, False), (3, None, False)],
}
SHAPE_IDS = ["b1s1", "b2s7pad", "b3s16"]
PAST = [3, 5, 8]                 # gpt2-past: past length per shape set (> 0: see gpt2_past)
VOCAB = 1000

SIZES = {
    "tiny": dict(hidden=64, heads=4, kv_heads=2, ffn=128, layers=2, positions=128, image=32, patch=8,
                 mel_frames=32),
    # benchmark sizes: BERT-base-shaped layers for the encoders, 256-512 for the rest
    "bench": dict(hidden=768, heads=12, kv_heads=12, ffn=3072, layers=2, positions=512, image=224, patch=16,
                  mel_frames=256),
}
BENCH_OVERRIDES = {   # per model, on top of SIZES["bench"]
    "distilbert": dict(hidden=768, heads=12, ffn=3072, layers=2),
    "roberta": dict(hidden=768, heads=12, ffn=3072, layers=2),
    "gpt2": dict(hidden=512, heads=8, ffn=2048, layers=4),
    "gpt2-past": dict(hidden=512, heads=8, ffn=2048, layers=4),
    "llama": dict(hidden=512, heads=8, kv_heads=4, ffn=1408, layers=4),
    "qwen2": dict(hidden=512, heads=8, kv_heads=4, ffn=1408, layers=4),
    "t5-encoder": dict(hidden=512, heads=8, ffn=1024, layers=4),
    "t5-decoder": dict(hidden=512, heads=8, ffn=1024, layers=4),
    "vit": dict(hidden=384, heads=6, ffn=1536, layers=4),
    "whisper-encoder": dict(hidden=384, heads=6, ffn=1536, layers=4),
}


def size_of(name: str, size: str) -> dict:
    s = dict(SIZES[size])
    if size == "bench":
        s.update(BENCH_OVERRIDES.get(name, {}))
    return s


def file_stem(name: str, exporter: str) -> str:
    return f"{name}-{exporter}"


# ---------------------------------------------------------------------------
# models: each builder returns (module, input_names, output_names, make_inputs)
# make_inputs(batch, seq, padded, k, rng) -> dict of numpy arrays
# ---------------------------------------------------------------------------

def _ids(rng, batch, seq, padded, low=3, pad_id=0):
    ids = rng.integers(low, VOCAB, size=(batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), np.int64)
    if padded and batch > 1:
        keep = max(1, seq - 3)         # second row: the last 3 positions are padding
        mask[1, keep:] = 0
        ids[1, keep:] = pad_id
    return ids, mask


def _text_inputs(with_types=False, pad_id=0):
    def make(batch, seq, padded, k, rng):
        ids, mask = _ids(rng, batch, seq, padded, pad_id=pad_id)
        d = {"input_ids": ids, "attention_mask": mask}
        if with_types:
            tt = np.zeros_like(ids)
            tt[:, seq // 2:] = 1
            d["token_type_ids"] = tt * mask
        return d
    return make


def build(name: str, size: str):
    import torch
    import transformers as tf

    s = size_of(name, size)
    h, nh, ffn, nl, npos = s["hidden"], s["heads"], s["ffn"], s["layers"], s["positions"]
    common = dict(vocab_size=VOCAB)
    special = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)

    class Wrap(torch.nn.Module):
        """Calls the model with named inputs, returns the listed outputs."""

        def __init__(self, m, inputs, fn):
            super().__init__()
            self.m, self.inputs, self.fn = m, inputs, fn

        def forward(self, *args):
            return self.fn(self.m, **dict(zip(self.inputs, args)))

    if name in zoo_models.KINDS:
        return zoo_models.build(name, size, Wrap, _text_inputs)
    if name == "bert":
        cfg = tf.BertConfig(hidden_size=h, num_hidden_layers=nl, num_attention_heads=nh,
                            intermediate_size=ffn, max_position_embeddings=npos, type_vocab_size=2,
                            **common, pad_token_id=0)
        m = tf.AutoModel.from_config(cfg, add_pooling_layer=False)
        ins = ["input_ids", "attention_mask", "token_type_ids"]
        return (Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"],
                _text_inputs(with_types=True))
    if name == "distilbert":
        cfg = tf.DistilBertConfig(dim=h, n_layers=nl, n_heads=nh, hidden_dim=ffn, max_position_embeddings=npos,
                                  **common, pad_token_id=0)
        m = tf.AutoModel.from_config(cfg)
        ins = ["input_ids", "attention_mask"]
        return (Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"],
                _text_inputs())
    if name == "roberta":
        # position ids count from padding_idx + 1 over the non-pad tokens (a CumSum)
        cfg = tf.RobertaConfig(hidden_size=h, num_hidden_layers=nl, num_attention_heads=nh,
                               intermediate_size=ffn, max_position_embeddings=npos + 2, type_vocab_size=1,
                               **common, pad_token_id=1, bos_token_id=0, eos_token_id=2)
        m = tf.AutoModel.from_config(cfg, add_pooling_layer=False)
        ins = ["input_ids", "attention_mask"]
        return (Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"],
                _text_inputs(pad_id=1))
    if name in ("gpt2", "gpt2-past"):
        cfg = tf.GPT2Config(n_embd=h, n_layer=nl, n_head=nh, n_inner=ffn, n_positions=npos, **common, **special)
        m = tf.AutoModelForCausalLM.from_config(cfg)
        if name == "gpt2":
            ins = ["input_ids", "attention_mask"]
            return (Wrap(m, ins, lambda m, **kw: m(**kw, use_cache=False).logits), ins, ["logits"],
                    _text_inputs())
        return gpt2_past(m, cfg, nl, nh, h)
    if name in ("llama", "qwen2"):
        Cfg = tf.LlamaConfig if name == "llama" else tf.Qwen2Config
        cfg = Cfg(hidden_size=h, intermediate_size=ffn, num_hidden_layers=nl, num_attention_heads=nh,
                  num_key_value_heads=s["kv_heads"], max_position_embeddings=npos, tie_word_embeddings=False,
                  **common, **special)
        m = tf.AutoModelForCausalLM.from_config(cfg)
        ins = ["input_ids", "attention_mask"]
        return (Wrap(m, ins, lambda m, **kw: m(**kw, use_cache=False).logits), ins, ["logits"],
                _text_inputs())
    if name in ("t5-encoder", "t5-decoder"):
        cfg = tf.T5Config(d_model=h, d_kv=h // nh, d_ff=ffn, num_layers=nl, num_decoder_layers=nl, num_heads=nh,
                          relative_attention_num_buckets=32, relative_attention_max_distance=npos,
                          decoder_start_token_id=0, **common, pad_token_id=0, eos_token_id=1)
        if name == "t5-encoder":
            m = tf.T5EncoderModel(cfg)
            ins = ["input_ids", "attention_mask"]
            return (Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"],
                    _text_inputs())
        dec = tf.T5Model(cfg).decoder
        ins = ["decoder_input_ids", "encoder_hidden_states", "encoder_attention_mask"]

        def run_dec(m, decoder_input_ids, encoder_hidden_states, encoder_attention_mask):
            return m(input_ids=decoder_input_ids, encoder_hidden_states=encoder_hidden_states,
                     encoder_attention_mask=encoder_attention_mask, use_cache=False).last_hidden_state

        def make(batch, seq, padded, k, rng):
            ids, _ = _ids(rng, batch, seq, False)
            enc_len = [5, 9, 12][k]                # the encoder's sequence: another length
            _, emask = _ids(rng, batch, enc_len, padded)
            hs = rng.standard_normal((batch, enc_len, h)).astype(np.float32)
            return {"decoder_input_ids": ids, "encoder_hidden_states": hs, "encoder_attention_mask": emask}
        return Wrap(dec, ins, run_dec), ins, ["last_hidden_state"], make
    if name == "vit":
        cfg = tf.ViTConfig(image_size=s["image"], patch_size=s["patch"], num_channels=3, hidden_size=h,
                           num_hidden_layers=nl, num_attention_heads=nh, intermediate_size=ffn)
        m = tf.ViTModel(cfg, add_pooling_layer=False)
        ins = ["pixel_values"]

        def make(batch, seq, padded, k, rng):
            return {"pixel_values": rng.standard_normal((batch, 3, s["image"], s["image"])).astype(np.float32)}
        return Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"], make
    if name == "whisper-encoder":
        frames = s["mel_frames"]           # the encoder takes exactly 2 * max_source_positions frames
        cfg = tf.WhisperConfig(vocab_size=VOCAB, num_mel_bins=80, d_model=h, encoder_layers=nl,
                               encoder_attention_heads=nh, encoder_ffn_dim=ffn, decoder_layers=1,
                               decoder_attention_heads=nh, decoder_ffn_dim=ffn, max_source_positions=frames // 2,
                               max_target_positions=npos, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                               decoder_start_token_id=1)
        m = tf.WhisperModel(cfg).encoder
        ins = ["input_features"]

        def make(batch, seq, padded, k, rng):
            return {"input_features": rng.standard_normal((batch, 80, frames)).astype(np.float32)}
        return Wrap(m, ins, lambda m, **kw: m(**kw).last_hidden_state), ins, ["last_hidden_state"], make
    raise KeyError(name)


def gpt2_past(m, cfg, nl, nh, h):
    """GPT-2 with the KV cache as plain tensors: inputs input_ids,
    attention_mask (past + new positions), past_key_<i>, past_value_<i>
    ([batch, heads, past, head_dim]); outputs logits, present_key_<i>,
    present_value_<i>.  Past length 0 would be a zero-sized input, which the
    TorchScript exporter specialises away: the shape sets use 3 / 5 / 8."""
    import torch
    from transformers import DynamicCache

    past_names = [f"past_{kv}_{i}" for i in range(nl) for kv in ("key", "value")]
    ins = ["input_ids", "attention_mask"] + past_names
    outs = ["logits"] + [n.replace("past_", "present_") for n in past_names]

    class Past(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *args):    # (*args: the dynamo exporter's dynamic_shapes are {"args": ...})
            input_ids, attention_mask, past = args[0], args[1], args[2:]
            cache = DynamicCache([(past[2 * i], past[2 * i + 1]) for i in range(nl)], config=cfg)
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, cache=cache, use_cache=True)
            pk = out.past_key_values
            flat = []
            for i in range(nl):
                flat += [pk.layers[i].keys, pk.layers[i].values]
            return (out.logits, *flat)

    def make(batch, seq, padded, k, rng):
        past = PAST[k] if k < len(PAST) else 8
        ids, mask = _ids(rng, batch, seq + past, padded)
        d = {"input_ids": ids[:, past:], "attention_mask": mask}
        for n in past_names:
            d[n] = rng.standard_normal((batch, nh, past, h // nh)).astype(np.float32)
        return d
    return Past(m), ins, outs, make


# ---------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------

def dynamic_axes(name: str, ins, outs) -> dict:
    kind = ALL_MODELS[name]
    ax = {}
    for n in ins + outs:
        if kind != "text":
            ax[n] = {0: "batch"}
        elif n.startswith(("past_", "present_")):
            ax[n] = {0: "batch", 2: "past" if n.startswith("past_") else "total"}
        elif name == "gpt2-past" and n == "attention_mask":
            ax[n] = {0: "batch", 1: "total"}
        elif n in ("encoder_hidden_states", "encoder_attention_mask"):
            ax[n] = {0: "batch", 1: "enc_sequence"}
        else:
            ax[n] = {0: "batch", 1: "sequence"}
    return ax


def dynamic_shapes(name: str, ins) -> dict:
    """The dynamo exporter's form of dynamic_axes: one torch.export.Dim per
    axis name.  The total length of gpt2-past (past + sequence) cannot be
    written as a Dim (only Dim + int is): Dim.AUTO lets torch.export find it."""
    from torch.export import Dim
    batch, seq = Dim("batch", min=1, max=1024), Dim("sequence", min=1, max=1024)
    past, enc = Dim("past", min=1, max=1024), Dim("enc_sequence", min=1, max=1024)
    kind = ALL_MODELS[name]
    out = []
    for n in ins:
        if kind != "text":
            out.append({0: batch})
        elif n.startswith("past_"):
            out.append({0: batch, 2: past})
        elif name == "gpt2-past" and n == "attention_mask":
            out.append({0: batch, 1: Dim.AUTO})
        elif n in ("encoder_hidden_states", "encoder_attention_mask"):
            out.append({0: batch, 1: enc})
        else:
            out.append({0: batch, 1: seq})
    return {"args": tuple(out)}


def export(module, ins, outs, sample: dict, path: str, exporter: str, name: str) -> None:
    import torch
    args = tuple(torch.from_numpy(sample[n]) for n in ins)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "torchscript":
            torch.onnx.export(module, args, path, input_names=ins, output_names=outs,
                              dynamic_axes=dynamic_axes(name, ins, outs), opset_version=OPSET[exporter],
                              dynamo=False, do_constant_folding=True)
        else:
            try:
                import onnxscript  # noqa: F401
            except ImportError:
                raise RuntimeError("the dynamo exporter needs the `onnxscript` package (pip install onnxscript)")
            prog = torch.onnx.export(module, args, None, input_names=ins, output_names=outs,
                                     dynamic_shapes=dynamic_shapes(name, ins), opset_version=OPSET[exporter],
                                     dynamo=True, external_data=False, optimize=True, verbose=False,
                                     report=False)
            prog.save(path, external_data=False)


def ort_session(path: str, optimized: bool = False, threads: int = 1):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _reason(e: BaseException) -> str:
    """One line for an export failure: the dynamo exporter wraps the real
    error in a page of advice; its '## Exception summary' names it."""
    msg = str(e).strip()
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if ln.startswith("## Exception summary") and i + 1 < len(lines):
            return lines[i + 1][:500]
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:500]


def make_one(name: str, exporter: str, out: str, size: str, refs: bool, log) -> dict:
    import torch
    entry: dict = {"model": name, "exporter": exporter, "opset": OPSET[exporter], "size": size,
                   "file": file_stem(name, exporter) + ".onnx"}
    t0 = time.perf_counter()
    seed = 1234 + sorted(ALL_MODELS).index(name)
    torch.manual_seed(seed)
    module, ins, outs, make_inputs = build(name, size)
    module.eval()
    entry["inputs"], entry["outputs"] = ins, outs
    kind = ALL_MODELS[name]
    sets = []
    for k, (batch, seq, padded) in enumerate(SHAPE_SETS[kind]):
        rng = np.random.default_rng(seed * 10 + k)
        sets.append(make_inputs(batch, seq, padded, k, rng))
    path = os.path.join(out, entry["file"])
    try:
        # the exporters trace with a middle-sized sample: dims of size 1 would be specialised
        export(module, ins, outs, sets[1], path, exporter, name)
    except Exception as e:
        entry["exported"] = False
        entry["reason"] = _reason(e)
        entry["traceback"] = traceback.format_exc()[-3000:]
        if os.path.exists(path):
            os.remove(path)
        log(f"{name:>16} {exporter:<11} export FAILED: {entry['reason']}")
        return entry
    entry["exported"] = True
    entry["bytes"] = os.path.getsize(path)
    entry["export_s"] = round(time.perf_counter() - t0, 2)
    if refs:
        arrays = {}
        entry["torch_vs_ort"] = []
        try:
            sess = ort_session(path)
            onnx_ins = [i.name for i in sess.get_inputs()]
            onnx_outs = [o.name for o in sess.get_outputs()]
            if onnx_outs != outs:
                raise RuntimeError(f"the file's outputs are {onnx_outs}, expected {outs}")
            for k, feeds in enumerate(sets):
                # an exporter may drop an input the graph does not read
                feeds_used = {n: feeds[n] for n in onnx_ins}
                res = sess.run(None, feeds_used)
                with torch.no_grad():
                    ref = module(*[torch.from_numpy(feeds[n]) for n in ins])
                ref = ref if isinstance(ref, (tuple, list)) else (ref,)
                diffs = [float(np.abs(r - t.numpy()).max() / max(np.abs(t.numpy()).max(), 1e-6))
                         for r, t in zip(res, ref)]
                entry["torch_vs_ort"].append(max(diffs))
                for n, a in feeds_used.items():
                    arrays[f"set{k}.in.{n}"] = a
                for n, a in zip(onnx_outs, res):
                    arrays[f"set{k}.out.{n}"] = a
            entry["inputs"] = onnx_ins
            np.savez_compressed(os.path.join(out, file_stem(name, exporter) + ".npz"), **arrays)
            entry["refs"] = True
        except Exception as e:
            # the file exported but ORT cannot run it: the tests have no reference
            entry["refs"] = False
            entry["reason"] = f"ORT cannot run the export: {type(e).__name__}: {str(e).strip()[:400]}"
            log(f"{name:>16} {exporter:<11} {entry['reason']}")
            return entry
    entry["s"] = round(time.perf_counter() - t0, 2)
    log(f"{name:>16} {exporter:<11} {entry['bytes'] / 1e3:8.0f} kB  opset {entry['opset']}  "
        + (f"torch vs ORT {max(entry['torch_vs_ort']):.1e}  " if refs else "") + f"{entry['s']:.1f} s")
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the .onnx / .npz files and manifest.json")
    ap.add_argument("--only", nargs="+", choices=sorted(ALL_MODELS),
                    help="only these models (default: MODELS, the issue's families)")
    ap.add_argument("--exporters", nargs="+", choices=EXPORTERS, default=list(EXPORTERS))
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--refs", action="store_true", help="write ORT references at --size bench too")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    refs = args.size == "tiny" or args.refs

    import torch
    import transformers
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    try:
        transformers.logging.set_verbosity_error()
    except Exception:
        pass
    import logging
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    os.makedirs(args.out, exist_ok=True)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}
    for mod in ("onnx", "onnxruntime", "onnxscript"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    log("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    manifest_path = os.path.join(args.out, "manifest.json")
    entries = {}
    if os.path.exists(manifest_path):      # --only adds to (replaces in) an existing manifest
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("size") == args.size:
            entries = {f"{e['model']}-{e['exporter']}": e for e in old["models"]}
    t0 = time.perf_counter()
    for name in (args.only or list(MODELS)):
        for exporter in args.exporters:
            entries[f"{name}-{exporter}"] = make_one(name, exporter, args.out, args.size, refs, log)
    manifest = {"size": args.size, "versions": versions, "refs": refs, "shape_sets": SHAPE_SETS,
                "shape_ids": SHAPE_IDS, "models": list(entries.values())}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    n_ok = sum(e["exported"] for e in entries.values())
    log(f"{n_ok}/{len(entries)} exported in {time.perf_counter() - t0:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
