"""SentencePiece GGUF files (tokenizer.ggml.model "llama": Llama 2, Mistral,
Gemma, Phi-3), against llama-cpp-python on the same files.

The files are written by tests/llm/make_gguf_models.py with an spm
vocabulary (make_spm_vocab: the flavour's specials, the 256 <0xNN> byte
tokens, every character of its corpus and a few more, and pieces learnt by
BPE and scored by merge order, some scores tied) in three flavours as the
real files have them (SPM_FLAVOURS): llama (Llama 2: <unk> <s> </s> as
llama.cpp's defaults, a space prefix, [INST] template), gemma (<bos> = 2,
<eos> = 1, no space prefix, <start_of_turn> template) and phi3 (<|user|>
markers; the file named "phi3", so llama.cpp drops the white space after
its special tokens).

- Tokenization: the ids of many strings (unicode, emoji, leading, trailing
  and repeated spaces, tabs and newlines, special tokens, U+2581 itself,
  invalid UTF-8, the empty string) with and without parse_special and BOS
  equal llama.cpp's; decoding equals llama_detokenize and every token's
  piece llama_token_to_piece.
- The architectures that ship spm vocabularies (llama, gemma, gemma2, phi3)
  load and run: logits and greedy tokens within test_llm_archs.py's
  tolerances, the chat template from the file rendered as
  llama-cpp-python's Jinja2ChatFormatter renders it.
"""
from __future__ import annotations

import ctypes
import random

import numpy as np
import pytest

import peregrine_nb
from peregrine_nb import InvalidArgumentError
from peregrine_nb import gguf as gg
from test_llm_archs import (NEAR_TIE, N_GREEDY, PROMPT, assert_close, load_ours, load_ref, mk,
                            ref_greedy, ref_logits)

llama_cpp = pytest.importorskip("llama_cpp")

FLAVOURS = list(mk.SPM_FLAVOURS)
TEXTS = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "Hello", "Hello world", " Hello world",
    "Hello world ", "Hello  world", "  leading two", "trailing three   ", "a   b    c",
    "The quick brown fox jumps over the lazy dog.", "Hello, world! What is the capital of France?",
    "naïve café résumé", "你好世界 日本語", "αβγ ЖЯ", "😀 👍🏽 🎉", "emoji😀inside",
    "tabs\tand\nnew\r\nlines", "\u2581already marked", "x\u2581y", "<0x41> is not a byte", "é",
    "1234567890 3.14159", "don't I'LL we're", "<s>", "</s>", "<unk>", "<s>Hello</s>",
    "a<s>b", "<s> spaced </s>", "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
    "<|user|>\nHi there<|end|>\n<|assistant|>\n", "<|user|>   spaced<|end|>", "x<|placeholder1|>y",
    "<|endoftext|>", "<pad><eos>", "[INST] Hi [/INST]",
]
POOLS = ["abcdefghijklmnopqrstuvwxyz", "THEQUICK", "0123456789", " \t\n\r  ", "!\"#$%&'()*+,-./:;<=>?@",
         "éüßçøåæœ", "你好世界中文字", "😀👍🏽🎉", "αβγδЖЯ", "\u00a0\u2009\u3000\u2581"]


@pytest.fixture(scope="module")
def spm_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf_spm")


def spm_file(d, arch, flavour, wtype="q8_0"):
    """An spm file of an architecture (the phi3 flavour named "phi3": llama.cpp
    gives its specials the RSTRIP attribute by the name)."""
    p = d / f"{arch}-{flavour}-{wtype}.gguf"
    if not p.exists():
        mk.write_model(d, arch, wtype, spm=flavour, path=p,
                       model_name="phi3 tiny spm test" if flavour == "phi3" else None)
    return p


@pytest.fixture(scope="module", params=FLAVOURS)
def pair(request, spm_dir):
    """(ours, llama.cpp's) tokenizers of one flavour's vocabulary."""
    p = spm_file(spm_dir, "llama", request.param)
    return request.param, gg.load_gguf(p).tokenizer, llama_cpp.Llama(model_path=str(p),
                                                                    vocab_only=True, verbose=False)


def _random_texts(flavour, n, seed):
    rng = random.Random(seed)
    words = [t for t, _ in mk.SPM_FLAVOURS[flavour]["specials"]] + ["the", " quick", "  ", "fox."]
    out = []
    for k in range(n):
        parts = []
        for _ in range(rng.randint(0, 20)):
            if rng.random() < 0.15:
                parts.append(rng.choice(words))
            else:
                pool = rng.choice(POOLS)
                parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
        t = "".join(parts).encode()
        if k % 4 == 0:  # invalid UTF-8 too (below 0xF4: llama.cpp aborts past U+10FFFF)
            t = bytes(rng.randrange(0x80, 0xF4) if rng.random() < 0.1 else c for c in t)
        out.append(t)
    return out


def _texts(flavour):
    return [t.encode() for t in TEXTS] + _random_texts(flavour, 400, 7)


def test_tokenize_matches_llama_cpp(pair):
    flavour, ours, ref = pair
    for text in _texts(flavour):
        for special in (True, False):
            for bos in (False, True):
                assert ours.encode(text, add_bos=bos, special=special) == \
                    ref.tokenize(text, add_bos=bos, special=special), (flavour, text, special, bos)


def _ref_detokenize(ref, ids, special):
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    buf = ctypes.create_string_buffer(1 << 16)
    n = llama_cpp.llama_detokenize(ref._model.vocab, arr, len(ids), buf, len(buf), False, special)
    assert n >= 0
    return buf.raw[:n]


def _ref_piece(ref, token, special):
    buf = ctypes.create_string_buffer(256)
    n = llama_cpp.llama_token_to_piece(ref._model.vocab, token, buf, len(buf), 0, special)
    assert n >= 0
    return buf.raw[:n]


def test_detokenize_matches_llama_cpp(pair):
    flavour, ours, ref = pair
    for text in _texts(flavour)[:150]:
        ids = ours.encode(text)
        for seq in (ids, [ours.bos_id] + ids):
            for special in (False, True):
                assert ours.decode_bytes(seq, special=special) == \
                    _ref_detokenize(ref, seq, special), (flavour, text, special)
    for i in range(ours.vocab_size):
        for special in (False, True):
            assert ours.token_to_piece(i, special) == _ref_piece(ref, i, special), (flavour, i)


def test_vocabulary_metadata(pair):
    """BOS / EOS / UNK as the file says (llama: llama.cpp's defaults 1 / 2 /
    0), a BOS by default, the space prefix per flavour (Gemma's files have
    none); the texts round-trip."""
    flavour, ours, ref = pair
    assert (ours.bos_id, ours.eos_id) == (ref.token_bos(), ref.token_eos())
    assert ours.wants_bos and ours.pre == "default"
    first = ours.id_to_token(ours.encode("Hello")[0])
    assert first.startswith("\u2581") == mk.SPM_FLAVOURS[flavour]["space_prefix"], first
    for text in ("Hello world", "  two  spaces  ", "naïve 😀 你好"):
        assert ours.decode(ours.encode(text)) == text


def test_scores_decide_the_merges(spm_dir, tmp_path):
    """The same tokens with the scores reversed tokenize differently, and
    still as llama.cpp does (the merges follow the scores, not the ids)."""
    saved = mk.make_spm_vocab

    def reversed_scores(flavour="llama"):
        tokens, scores, types = saved(flavour)
        return tokens, [-s if t == 1 else s for s, t in zip(scores, types)], types
    mk.make_spm_vocab = reversed_scores
    try:
        p = mk.write_model(tmp_path, "llama", "q8_0", spm="llama", path=tmp_path / "rev.gguf")
    finally:
        mk.make_spm_vocab = saved
    base = gg.load_gguf(spm_file(spm_dir, "llama", "llama")).tokenizer
    ours = gg.load_gguf(p).tokenizer
    ref = llama_cpp.Llama(model_path=str(p), vocab_only=True, verbose=False)
    texts = [t.encode() for t in TEXTS + mk.CORPUS.split(".")] + _random_texts("llama", 100, 11)
    assert sum(ours.encode(t) != base.encode(t) for t in texts) >= 5
    for t in texts:
        assert ours.encode(t) == ref.tokenize(t, add_bos=False, special=True), t


def test_refusals(tmp_path):
    """A scores array of the wrong length is a FormatError naming it."""
    saved = mk.make_spm_vocab

    def short_scores(flavour="llama"):
        tokens, scores, types = saved(flavour)
        return tokens, scores[:-1], types
    mk.make_spm_vocab = short_scores
    try:
        p = mk.write_model(tmp_path, "llama", "q8_0", spm="llama", path=tmp_path / "short.gguf")
    finally:
        mk.make_spm_vocab = saved
    with pytest.raises(peregrine_nb.FormatError, match="scores"):
        gg.load_gguf(p).tokenizer


# ---- the architectures, end to end ------------------------------------------

ARCH_CASES = [("llama", "llama", "q8_0"), ("llama", "llama", "q4_k"), ("gemma", "gemma", "q8_0"),
              ("gemma2", "gemma", "q8_0"), ("phi3", "phi3", "q8_0"), ("phi3", "phi3", "f16")]


def _ref_chat(ref, messages):
    """llama-cpp-python's rendering of the file's template (its Jinja2
    formatter, with the vocabulary's BOS / EOS texts, as Llama does when the
    file has a template)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    v = ref._model
    fmt = Jinja2ChatFormatter(template=ref.metadata["tokenizer.chat_template"],
                              eos_token=v.token_get_text(ref.token_eos()),
                              bos_token=v.token_get_text(ref.token_bos()))
    return fmt(messages=messages).prompt


@pytest.mark.parametrize("arch,flavour,wtype", ARCH_CASES)
def test_archs_with_spm_vocab_match_llama_cpp(spm_dir, arch, flavour, wtype):
    path = spm_file(spm_dir, arch, flavour, wtype)
    ours, ref = load_ours(path), load_ref(path)
    assert ref.chat_format == "chat_template.default"   # llama-cpp-python uses the file's template
    chat = _ref_chat(ref, [{"role": "user", "content": "Name a fruit."}])
    assert ours.format_chat("Name a fruit.") == chat
    for text in (PROMPT, chat):
        # the files want a BOS: llama-cpp-python's add_bos=True adds it
        ids = ref.tokenize(text.encode(), add_bos=True, special=True)
        assert ours.tokenize(text, add_bos=ours.tokenizer.wants_bos) == ids
        want = ref_logits(ref, ids).copy()
        ours.reset()
        assert_close(ours.eval(ids, logits_all=True), want, (arch, flavour, wtype, text[:20]))
        tokens, rows = ref_greedy(ref, ids, N_GREEDY)
        scale = float(np.abs(want).max())
        got = list(ours.generate_ids(ids, max_new_tokens=N_GREEDY, temperature=0.0,
                                     stop_at_eos=False))
        n = next((i for i in range(N_GREEDY) if got[i] != tokens[i]), N_GREEDY)
        if n < N_GREEDY:
            gap = float(rows[n][tokens[n]] - rows[n][got[n]])
            assert gap < NEAR_TIE * scale, (arch, flavour, wtype, n, gap, got, tokens)
        # what we generate reads as llama.cpp's text of the same ids
        assert ours.tokenizer.decode_bytes(got) == _ref_detokenize(ref, got, False)
    # the decoder as a graph runs the same file
    g = load_ours(path)
    ids = ref.tokenize(PROMPT.encode(), add_bos=True, special=True)
    ours.reset()
    np.testing.assert_allclose(g.eval(ids, logits_all=True), ours.eval(ids, logits_all=True),
                               atol=1e-3 * float(np.abs(want).max()))


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_chat_templates_render_like_llama_cpp_python(spm_dir, flavour):
    """Longer conversations (a system turn, two user turns), with and without
    the generation prompt; Gemma's template refuses a system turn, here as
    there."""
    path = spm_file(spm_dir, "llama", flavour)
    f, ref = gg.load_gguf(path), load_ref(path)
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    v = ref._model
    tmpl = f.chat_template
    convs = [
        [{"role": "user", "content": "Hi"}],
        [{"role": "user", "content": "  padded  "}, {"role": "assistant", "content": "Hello!"},
         {"role": "user", "content": "Bye\nnow"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    ]
    for gen in (True, False):
        fmt = Jinja2ChatFormatter(template=tmpl, eos_token=v.token_get_text(ref.token_eos()),
                                  bos_token=v.token_get_text(ref.token_bos()),
                                  add_generation_prompt=gen)
        for msgs in convs:
            try:
                want = fmt(messages=msgs).prompt
            except ValueError as e:
                with pytest.raises(InvalidArgumentError, match=str(e)):
                    f.apply_chat_template(msgs, gen)
                continue
            assert f.apply_chat_template(msgs, gen) == want, (flavour, msgs, gen)


# ---- a Q4_K_M-style file: q4_K weights, a q6_K token embedding -------------

def test_q4_k_with_q6_k_embedding_is_summation_order(tmp_path):
    """The one mismatch left from the last session: q4_K weights with a q6_K
    token embedding (the tied head), tokens [40, 41], 1.4-1.9% of the logit
    range at the AVX-512 VNNI level while other sequences match to 1e-6.

    Not a wrong value on either side.  Token 40's q6_K embedding row
    dequantises to gguf-py's values exactly (checked below), and with the C
    reference kernels (and the AVX2 ones) the same file and tokens match
    llama.cpp to ~1e-7 of the range.  What differs at the VNNI level is the
    order of the fp32 sums in the q4_K / q6_K GEMV kernels: measured on this
    file's blk.0.attn_q, each variant's output is within 1 eps * sum|w x| of
    the exact (float64) dot product (VNNI 0.8, AVX2 0.9, C 0.3), but they
    differ from each other in the last bits of most rows; one such bit moved
    one activation across a rounding boundary of the next q8_K quantiser
    (which llama.cpp's AVX2 dot, summing in our AVX2 kernel's order, did
    not), and that step of 1/127 of a block's range spreads to a 1-2%
    logit change.  Other types show the same flips at the same rate (q8_0
    weights with a q6_K embedding: 3 of 60 single tokens, q6_K: 1 of 60),
    which is what test_llm_archs' tolerances allow for."""
    import gguf
    from gguf import quants
    from peregrine_nb import cpu
    path = mk.write_model(tmp_path, "llama", "q4_k", path=tmp_path / "q4k-q6kembd.gguf",
                          embd_type="q6_k")
    t = next(t for t in gguf.GGUFReader(str(path)).tensors if t.name == "token_embd.weight")
    assert int(t.tensor_type) == 14  # q6_K
    np.testing.assert_array_equal(gg.load_gguf(path).tensor("token_embd.weight"),
                                  quants.dequantize(t.data, t.tensor_type))
    ref = load_ref(path)
    seqs = ([40, 41], [41, 40], [40], [40, 41, 42], [1, 2, 3, 4])
    want = {tuple(s): ref_logits(ref, s).copy() for s in seqs}
    with cpu.cpu_mask("c"):
        ours = load_ours(path)
        for s in seqs:
            ours.reset()
            w = want[tuple(s)]
            err = np.abs(ours.eval(s, logits_all=True) - w).max() / np.abs(w).max()
            assert err < 1e-4, (s, err)
    ours = load_ours(path)  # the best kernels: within the flip tolerance
    for s in seqs:
        ours.reset()
        assert_close(ours.eval(s, logits_all=True), want[tuple(s)], s)


@pytest.mark.parametrize("arch,flavour", [("llama", "llama"), ("gemma", "gemma"), ("phi3", "phi3")])
def test_cli_run_chat(spm_dir, arch, flavour):
    """`peregrine run --chat` on an spm file: the file's template (the CLI
    knows the Gemma, Phi-3 and Llama 2 forms) and the BOS the vocabulary
    asks for give the ids llama.cpp's tokenizer makes of llama-cpp-python's
    rendering, and the same text as generate(chat=True)."""
    import subprocess
    from test_llm_archs import find_cli
    cli = find_cli()
    if cli is None:
        pytest.skip("the peregrine CLI is not on PATH (set PEREGRINE_CLI)")
    path = spm_file(spm_dir, arch, flavour)
    ours, ref = load_ours(path), load_ref(path)
    prompt = " Name a fruit. "
    want_ids = ref.tokenize(_ref_chat(ref, [{"role": "user", "content": prompt}]).encode(),
                            add_bos=True, special=True)
    if want_ids[:2] == [ref.token_bos()] * 2:   # a template that writes bos_token itself
        want_ids = want_ids[1:]
    got = list(ours.generate_ids(prompt, max_new_tokens=6, temperature=0.0, chat=True,
                                 stop_at_eos=False))
    want = list(ours.generate_ids(want_ids, max_new_tokens=6, temperature=0.0, stop_at_eos=False))
    assert got == want
    r = subprocess.run([cli, "run", "-m", str(path), "-p", prompt, "-n", "6", "-t", "1", "--chat",
                        "--ignore-eos"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    pieces = b"".join(ours.tokenizer.token_to_piece(t) for t in want)
    assert r.stdout == pieces + b"\n"   # the CLI ends with a newline
