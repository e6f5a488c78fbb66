"""Tiny random-weight GGUF decoders, one per architecture and weight type, for
tests/test_llm_archs.py and benchmarks/bench_llm_archs.py.

    python3 tests/llm/make_gguf_models.py --out DIR [--only ARCH ...] [--types T ...]
                                          [--size tiny|bench]

Written with the ``gguf`` package (llama.cpp's own writer), so llama-cpp-python
loads the same files.  Each file has

- a small byte-level BPE vocabulary (the 256 byte symbols, merges learnt by a
  few rounds of BPE over CORPUS below, and the ChatML specials
  <|endoftext|> <|im_start|> <|im_end|>), pre-tokenizer "gpt-2" (qwen2 and
  qwen3: "qwen2", as their real files), and a ChatML
  chat template with a default system message;
- the architecture's hyper-parameters and tensors as llama.cpp's converter
  writes them (ARCHS: head sizes 64, 80, 96 and 128 between them, GQA and
  MQA, the features each architecture has: Llama 3 rope_freqs, linear RoPE
  scaling, Q/K/V biases, Q/K norms, fused QKV and gate|up, partial rotary,
  post-norms, soft-capping, sliding windows);
- random weights (numpy Generator, seed fixed per architecture and type)
  in one of TYPES for every matrix (the norms, biases and RoPE factors stay
  f32, as in real files).  f32 / f16 / bf16 / q8_0 / q4_0 / q4_1 are
  quantised from normal values by gguf.quants; the k-quants (which gguf-py
  cannot quantise) are random quants with sub-block scales and minima that
  centre them on 0 and f16 super-block scales chosen so the dequantised rows
  have the same spread.

Widths are multiples of 256 so that every type's blocks fit.  The module can
be imported without writing anything: ARCHS, TYPES and path_for() are what
the tests parametrise over.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q4_k", "q5_k", "q6_k")

# name -> hyper-parameters.  E: n_embd, H: heads, KV: KV heads, HD: head size
# (written as key_length where it is not E / H), F: FFN width, L: layers.
ARCHS = {
    # Llama 3 style: rope_freqs divisors, MQA, head 128
    "llama": dict(arch="llama", E=256, H=2, KV=1, HD=128, F=512, L=2, rope_base=500000.0,
                  rope_freqs=True),
    # Qwen2: Q/K/V biases, GQA, head 64, linear RoPE scaling x2, untied head
    "qwen2": dict(arch="qwen2", E=256, H=4, KV=2, HD=64, F=512, L=2, rope_base=1000000.0,
                  bias=True, linear_rope=2.0, untied=True, pre="qwen2"),
    # Qwen3: per-head Q/K norms, head 80 (key_length: 16 x 80 = 1280 != 256), GQA
    "qwen3": dict(arch="qwen3", E=256, H=16, KV=4, HD=80, F=512, L=2, rope_base=1000000.0,
                  qk_norm=True, pre="qwen2"),
    # Gemma: head 96 (8 x 96 = 768), MQA, GELU, sqrt(E) embedding scale, tied
    "gemma": dict(arch="gemma", E=256, H=8, KV=1, HD=96, F=512, L=2, rope_base=10000.0,
                  eps=1e-6),
    # Gemma 2: head 128, GQA, post-norms, soft-capping, a window of 5 on even layers
    "gemma2": dict(arch="gemma2", E=256, H=4, KV=2, HD=128, F=512, L=3, rope_base=10000.0,
                   eps=1e-6, post_norms=True, softcap=(50.0, 30.0), swa=5),
    # Phi-3: fused QKV and gate|up, head 64 with 48 rotary dims, GQA, window 2047
    "phi3": dict(arch="phi3", E=256, H=4, KV=2, HD=64, F=512, L=2, rope_base=10000.0,
                 n_rot=48, fused=True, swa=2047, untied=True),
}

# bench sizes (--size bench, benchmarks/bench_llm_archs.py): the same
# architectures and head sizes at width 1024, FFN 2816, 6 layers, where decode
# reads ~70 MB of q8_0 weights a token (memory-bound, as real models are)
BENCH = {
    "llama": dict(E=1024, H=8, KV=2, HD=128, F=2816, L=6),
    "qwen2": dict(E=1024, H=16, KV=2, HD=64, F=2816, L=6),
    "qwen3": dict(E=1024, H=16, KV=4, HD=80, F=2816, L=6),
    "gemma": dict(E=1024, H=8, KV=1, HD=96, F=2816, L=6),
    "gemma2": dict(E=1024, H=8, KV=4, HD=128, F=2816, L=6, swa=64),
    "phi3": dict(E=1024, H=16, KV=4, HD=64, F=2816, L=6),
}

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a tiny random test model.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

CORPUS = """The quick brown fox jumps over the lazy dog. A tiny model reads a short text and
writes the next word. Hello, world! What is the capital of France? Paris is the capital of
France. Numbers: 1 2 3 10 42 100 2026. The weather today is sunny with a light breeze; the
river runs past the old mill and the children play in the garden near the house. Name a
fruit: apple, banana, cherry, orange. Once upon a time there was a little engine that could.
""" + "In 2026 and 2025, 1000 of 1234 were 100 or 10, 12 and 123; 2020 2024 2000.\n" * 6
N_MERGES = 160
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def path_for(out: str | os.PathLike, name: str, wtype: str, size: str = "tiny") -> Path:
    return Path(out) / f"{name}-{wtype}{'' if size == 'tiny' else '-' + size}.gguf"


# ---- the vocabulary ---------------------------------------------------------

def _byte_symbols() -> list[str]:
    """GPT-2's printable stand-ins for the 256 bytes, in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, (chr(c) for c in cs)))
    return [table[b] for b in range(256)]


def make_vocab() -> tuple[list[str], list[str], list[int]]:
    """tokens, merges ("a b"), token types: deterministic BPE over CORPUS."""
    sym = _byte_symbols()
    words = re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", CORPUS)
    seqs = Counter(tuple(sym[b] for b in w.encode()) for w in words)
    tokens = list(sym)
    merges = []
    for _ in range(N_MERGES):
        pairs = Counter()
        for s, c in seqs.items():
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(f"{a} {b}")
        tokens.append(a + b)
        new = Counter()
        for s, c in seqs.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            new[tuple(out)] += c
        seqs = new
    types = [1] * len(tokens) + [3] * len(SPECIALS)
    return tokens + list(SPECIALS), merges, types


# ---- a SentencePiece vocabulary (tokenizer.ggml.model "llama") --------------

SPACE = "\u2581"
# what the spm vocabulary takes whole besides its merges: letters outside
# the corpus (a character without a token falls back to its bytes)
SPM_CHARS = "éüßçøåæœ你好世界αβγЖЯ"
# per flavour: the special tokens first (id order, types), the chat
# template, the BOS / EOS texts and whether a space goes before the text.
# gemma: <pad> <eos> <bos> <unk> (BOS 2, EOS 1), no space prefix, its turn
# markers; llama (Llama 2 / Mistral): <unk> <s> </s> (0 1 2, llama.cpp's
# defaults, so the ids are not written), [INST]; phi3: llama's three and its
# <|...|> markers (control), one user-defined token.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
    "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}"
    "{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}")
LLAMA2_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation "
    "roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + "
    "system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}"
    "{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == "
    "'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}")
PHI3_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
    "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}")
SPM_FLAVOURS = {
    "gemma": dict(specials=[("<pad>", 3), ("<eos>", 3), ("<bos>", 3), ("<unk>", 2),
                            ("<start_of_turn>", 3), ("<end_of_turn>", 3)],
                  bos="<bos>", eos="<eos>", space_prefix=False, template=GEMMA_TEMPLATE),
    "llama": dict(specials=[("<unk>", 2), ("<s>", 3), ("</s>", 3)],
                  bos="<s>", eos="</s>", space_prefix=True, template=LLAMA2_TEMPLATE),
    "phi3": dict(specials=[("<unk>", 2), ("<s>", 3), ("</s>", 3), ("<|endoftext|>", 3),
                           ("<|assistant|>", 3), ("<|end|>", 3), ("<|system|>", 3),
                           ("<|user|>", 3), ("<|placeholder1|>", 4)],
                 bos="<s>", eos="<|endoftext|>", space_prefix=True, template=PHI3_TEMPLATE),
}
N_SPM_MERGES = 200


def make_spm_vocab(flavour: str = "llama"):
    """tokens, scores, token types of a SentencePiece-style vocabulary: the
    flavour's specials, the 256 <0xNN> byte tokens, every character of CORPUS
    and SPM_CHARS (with U+2581 for the space), then pieces learnt by BPE
    over CORPUS written as SentencePiece sees it (spaces as U+2581, one in
    front), each piece scored by its merge order (earlier: higher, as the
    BPE-trained Llama vocabularies are); a few pieces share a score, so the
    leftmost-first rule between equal scores is exercised."""
    fl = SPM_FLAVOURS[flavour]
    tokens = [t for t, _ in fl["specials"]]
    types = [ty for _, ty in fl["specials"]]
    scores = [0.0] * len(tokens)
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [6] * 256
    scores += [0.0] * 256
    text = CORPUS.replace("\n", " ")
    if fl["space_prefix"]:
        text = " " + text
    text = text.replace(" ", SPACE)
    chars = sorted(set(text + SPM_CHARS + SPACE))
    words = re.findall(SPACE + "?[^" + SPACE + "]+|" + SPACE + "+", text)
    seqs = Counter(tuple(w) for w in words)
    pieces = []
    for _ in range(N_SPM_MERGES):
        pairs = Counter()
        for sq, c in seqs.items():
            for a, b in zip(sq, sq[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if a + b not in pieces:
            pieces.append(a + b)
        new = Counter()
        for sq, c in seqs.items():
            out, i = [], 0
            while i < len(sq):
                if i + 1 < len(sq) and sq[i] == a and sq[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sq[i])
                    i += 1
            new[tuple(out)] += c
        seqs = new
    for i, pc in enumerate(pieces):
        tokens.append(pc)
        types.append(1)
        scores.append(-float(i - i % 3 if i % 7 == 0 else i))   # some ties
    for i, ch in enumerate(chars):
        tokens.append(ch)
        types.append(1)
        scores.append(-1000.0 - i)
    return tokens, scores, types


# ---- weights ----------------------------------------------------------------

def _qtype(wtype: str):
    from gguf import GGMLQuantizationType as T
    return {"f32": T.F32, "f16": T.F16, "bf16": T.BF16, "q8_0": T.Q8_0, "q4_0": T.Q4_0,
            "q4_1": T.Q4_1, "q4_k": T.Q4_K, "q5_k": T.Q5_K, "q6_k": T.Q6_K}[wtype]


def _pack_scales_k4(sc: np.ndarray, m: np.ndarray) -> np.ndarray:
    """q4_K / q5_K's 12 bytes of eight 6-bit scales and minima (ggml's
    get_scale_min_k4 read backwards); sc, m: (blocks, 8) in 0..63."""
    q = np.zeros((sc.shape[0], 12), dtype=np.uint8)
    q[:, 0:4] = (sc[:, 0:4] & 63) | ((sc[:, 4:8] >> 4) << 6)
    q[:, 4:8] = (m[:, 0:4] & 63) | ((m[:, 4:8] >> 4) << 6)
    q[:, 8:12] = (sc[:, 4:8] & 15) | ((m[:, 4:8] & 15) << 4)
    return q


def _kquant_random(rng, rows: int, cols: int, wtype: str, std: float) -> np.ndarray:
    """Random k-quant blocks: random quants, and per sub-block scales with
    minima that centre its values on 0 (min = mean quant x scale), the f16
    super-block scales chosen so the values have about the given std."""
    from gguf import GGMLQuantizationType as T
    from gguf import quants
    from gguf.constants import GGML_QUANT_SIZES
    qt = _qtype(wtype)
    bsz, bbytes = GGML_QUANT_SIZES[qt]
    nb = rows * cols // bsz
    raw = rng.integers(0, 256, size=(nb, bbytes), dtype=np.uint8)

    def f16(v):
        return np.frombuffer(np.float16(v).tobytes(), dtype=np.uint8)
    if qt == T.Q6_K:
        # int8 scales (signed quants q - 32 are centred already), d at the end
        raw[:, 192:208] = rng.integers(1, 32, size=(nb, 16), dtype=np.int8).view(np.uint8)
        raw[:, bbytes - 2:] = f16(1.0)
    else:
        top, mean_q = (8, 7.5) if qt == T.Q4_K else (4, 15.5)
        sc = rng.integers(1, top + 1, size=(nb, 8)).astype(np.uint8)
        m = np.rint(sc * mean_q).astype(np.uint8)
        raw[:, 4:16] = _pack_scales_k4(sc, m)
        raw[:, 0:2] = f16(1.0)
        raw[:, 2:4] = f16(1.0)
    deq = quants.dequantize(raw.reshape(rows, -1), qt)
    s = float(deq.std()) or 1.0
    if qt == T.Q6_K:
        raw[:, bbytes - 2:] = f16(std / s)
    else:
        raw[:, 0:2] = f16(std / s)
        raw[:, 2:4] = f16(std / s)
    return raw.reshape(rows, -1)


def _matrix(rng, rows: int, cols: int, wtype: str, std: float):
    """(array, raw_dtype) for GGUFWriter.add_tensor: rows x cols (GGUF dims [cols, rows])."""
    from gguf import quants
    if wtype in ("q4_k", "q5_k", "q6_k"):
        return _kquant_random(rng, rows, cols, wtype, std), _qtype(wtype)
    w = (rng.standard_normal((rows, cols)) * std).astype(np.float32)
    if wtype == "f32":
        return w, None
    if wtype == "f16":
        return w.astype(np.float16), None
    return quants.quantize(w, _qtype(wtype)), _qtype(wtype)


def _llama3_freqs(n_rot: int, base: float) -> np.ndarray:
    """Llama 3.1's rope_freqs divisors (factor 8, low 1, high 4, 8192 positions)."""
    factor, low, high, old = 8.0, 1.0, 4.0, 8192
    out = []
    for i in range(0, n_rot, 2):
        freq = 1.0 / base ** (i / n_rot)
        wavelen = 2 * np.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.asarray(out, dtype=np.float32)


def write_model(out: str | os.PathLike, name: str, wtype: str, size: str = "tiny",
                extra_kv: dict | None = None, extra_tensors: dict | None = None,
                arch: str | None = None, path: str | os.PathLike | None = None,
                pre: str | None = None, spm: str | None = None,
                model_name: str | None = None, embd_type: str | None = None) -> Path:
    """Writes one file (path_for's name unless ``path``).  For the tests of
    refusals: ``arch`` replaces general.architecture, ``extra_kv`` adds
    string / float / int keys ("{arch}." is replaced by the architecture),
    ``extra_tensors`` adds f32 arrays; ``pre`` replaces the pre-tokenizer
    name (tokenizer.ggml.pre).  ``spm`` writes a SentencePiece vocabulary
    of that flavour (SPM_FLAVOURS: gemma, llama, phi3) with its chat template
    instead of the BPE one; ``model_name`` replaces general.name;
    ``embd_type`` gives token_embd.weight a type of its own (a Q4_K_M file's
    q6_K embedding)."""
    import gguf
    cfg = dict(ARCHS[name])
    if arch:
        cfg["arch"] = arch
    if size == "bench":
        cfg.update(BENCH[name])
    arch, E, H, KV, HD, F, L = (cfg[k] for k in ("arch", "E", "H", "KV", "HD", "F", "L"))
    QD, KVD = H * HD, KV * HD
    seed = 1000 + 17 * list(ARCHS).index(name) + TYPES.index(wtype) + (500 if size != "tiny" else 0)
    rng = np.random.default_rng(seed)
    path = Path(path) if path else path_for(out, name, wtype, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(path), arch)
    # (not the architecture's name: llama.cpp changes the special tokens'
    # attributes of a model whose general.name says "phi3")
    w.add_name(model_name or f"peregrine tiny test decoder ({wtype})")
    w.add_block_count(L)
    w.add_context_length(512 if size == "tiny" else 2048)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    if HD != E // H:
        w.add_key_length(HD)
        w.add_value_length(HD)
    n_rot = cfg.get("n_rot", HD)
    w.add_rope_dimension_count(n_rot)
    w.add_rope_freq_base(cfg["rope_base"])
    w.add_layer_norm_rms_eps(cfg.get("eps", 1e-5))
    if cfg.get("linear_rope"):
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(cfg["linear_rope"])
    if cfg.get("swa"):
        w.add_sliding_window(cfg["swa"])
    if cfg.get("softcap"):
        w.add_attn_logit_softcapping(cfg["softcap"][0])
        w.add_final_logit_softcapping(cfg["softcap"][1])
    for k, v in (extra_kv or {}).items():
        k = k.replace("{arch}.", arch + ".")
        if isinstance(v, str):
            w.add_string(k, v)
        elif isinstance(v, float):
            w.add_float32(k, v)
        else:
            w.add_uint32(k, int(v))
    if spm:
        fl = SPM_FLAVOURS[spm]
        tokens, scores, types = make_spm_vocab(spm)
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre(pre or "default")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        if spm != "llama":   # llama: llama.cpp's defaults (0 1 2, BOS, a space prefix)
            w.add_bos_token_id(tokens.index(fl["bos"]))
            w.add_eos_token_id(tokens.index(fl["eos"]))
            w.add_unk_token_id(tokens.index("<unk>"))
            w.add_add_bos_token(True)
            w.add_add_eos_token(False)
            w.add_add_space_prefix(fl["space_prefix"])
        w.add_chat_template(fl["template"])
    else:
        tokens, merges, types = make_vocab()
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre or cfg.get("pre", "gpt-2"))
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(tokens.index("<|endoftext|>"))
        w.add_eos_token_id(tokens.index("<|im_end|>"))
        w.add_add_bos_token(False)
        w.add_chat_template(CHAT_TEMPLATE)
    V = len(tokens)

    def mat(tname, rows, cols, std, t=None):
        arr, raw = _matrix(rng, rows, cols, t or wtype, std)
        w.add_tensor(tname, arr, raw_dtype=raw)

    def vec(tname, n, mean=1.0, std=0.1):
        w.add_tensor(tname, (mean + std * rng.standard_normal(n)).astype(np.float32))

    # small embeddings: with a tied head, large ones make every model repeat
    # its input token (e . e dominates the logits)
    mat("token_embd.weight", V, E, 0.05, embd_type)
    vec("output_norm.weight", E)
    if cfg.get("untied"):
        mat("output.weight", V, E, 2.0 / np.sqrt(E))
    if cfg.get("rope_freqs"):
        w.add_tensor("rope_freqs.weight", _llama3_freqs(n_rot, cfg["rope_base"]))
    for l in range(L):
        p = f"blk.{l}."
        vec(p + "attn_norm.weight", E)
        vec(p + "ffn_norm.weight", E)
        if cfg.get("fused"):
            mat(p + "attn_qkv.weight", QD + 2 * KVD, E, 1.0 / np.sqrt(E))
            mat(p + "ffn_up.weight", 2 * F, E, 1.0 / np.sqrt(E))
        else:
            mat(p + "attn_q.weight", QD, E, 1.0 / np.sqrt(E))
            mat(p + "attn_k.weight", KVD, E, 1.0 / np.sqrt(E))
            mat(p + "attn_v.weight", KVD, E, 1.0 / np.sqrt(E))
            mat(p + "ffn_gate.weight", F, E, 1.0 / np.sqrt(E))
            mat(p + "ffn_up.weight", F, E, 1.0 / np.sqrt(E))
        # outputs of the layers as large as the embeddings: the tied head then
        # does not just repeat the input token
        mat(p + "attn_output.weight", E, QD, 3.0 / np.sqrt(QD))
        mat(p + "ffn_down.weight", E, F, 3.0 / np.sqrt(F))
        if cfg.get("bias"):
            vec(p + "attn_q.bias", QD, 0.0, 0.5)
            vec(p + "attn_k.bias", KVD, 0.0, 0.5)
            vec(p + "attn_v.bias", KVD, 0.0, 0.5)
        if cfg.get("qk_norm"):
            vec(p + "attn_q_norm.weight", HD)
            vec(p + "attn_k_norm.weight", HD)
        if cfg.get("post_norms"):
            vec(p + "post_attention_norm.weight", E)
            vec(p + "post_ffw_norm.weight", E)
    for tname, arr in (extra_tensors or {}).items():
        w.add_tensor(tname, np.asarray(arr, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", choices=list(ARCHS), default=list(ARCHS))
    ap.add_argument("--types", nargs="*", choices=TYPES, default=list(TYPES))
    ap.add_argument("--size", choices=("tiny", "bench"), default="tiny")
    a = ap.parse_args(argv)
    for name in a.only:
        for t in a.types:
            print(write_model(a.out, name, t, a.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
