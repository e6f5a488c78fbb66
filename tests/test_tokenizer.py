"""The BPE tokenizer against llama.cpp.

tests/data/tokenizer_golden.json holds llama.cpp's ids for a set of strings
(made by tests/data/make_tokenizer_golden.py, which names the exact call);
when llama_cpp is importable the tests also compare with it live, on the same
strings and on random ones."""
import json
import random
import struct
from pathlib import Path

import pytest

from peregrine_nb import InvalidArgumentError
from peregrine_nb import gguf as gg

GOLDEN = json.loads((Path(__file__).parent / "data" / "tokenizer_golden.json").read_text())


def _bytes(case) -> bytes:
    return case["text"].encode("utf-8") if "text" in case else bytes.fromhex(case["hex"])


def _label(case) -> str:
    return repr(case.get("text", case.get("hex")))[:40]


@pytest.fixture(scope="module")
def gguf_file():
    try:
        path = gg.smollm2_path()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    return gg.load_gguf(path)


@pytest.fixture(scope="module")
def tok(gguf_file):
    return gguf_file.tokenizer


@pytest.fixture(scope="module")
def llama():
    llama_cpp = pytest.importorskip("llama_cpp")
    return llama_cpp.Llama(model_path=str(gg.smollm2_path()), vocab_only=True, verbose=False)


def test_golden_file_is_for_this_model(gguf_file):
    assert GOLDEN["model"] == gguf_file.path.name
    assert len(GOLDEN["cases"]) >= 60


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=_label)
def test_ids_match_llama_cpp(tok, case):
    data = _bytes(case)
    assert tok.encode(data, special=True) == case["ids"]
    if "ids_no_special" in case:
        assert tok.encode(data, special=False) == case["ids_no_special"]


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=_label)
def test_decode_matches_llama_cpp(tok, case):
    assert tok.decode_bytes(case["ids"], special=True).hex() == case["detok_hex"]
    if "text" in case:  # valid UTF-8 comes back unchanged
        assert tok.decode(case["ids"], special=True) == case["text"]


def _random_text(rng: random.Random) -> str:
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " \t\n\r  ",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "éüßçøåæœ", "你好世界中文字", "😀👍🏽🎉",
        "αβγδЖЯ", "١٢٣²½", "\u00a0\u2009\u3000",
    ]
    words = ["'s", "'ll", "'t", "don't", "<|im_start|>", "<|im_end|>", "  ", "\n\n", "1234"]
    parts = []
    for _ in range(rng.randint(1, 30)):
        if rng.random() < 0.15:
            parts.append(rng.choice(words))
        else:
            pool = rng.choice(pools)
            parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
    return "".join(parts)


def test_live_llama_cpp_random_strings(tok, llama):
    rng = random.Random(1234)
    for k in range(400):
        text = _random_text(rng).encode()
        if k % 4 == 0:  # invalid UTF-8 too; llama.cpp itself aborts on sequences above
            # U+10FFFF (its unicode_cpt_to_utf8 throws), so stray bytes stay below 0xF4
            text = bytes(rng.randrange(0x80, 0xF4) if rng.random() < 0.1 else c for c in text)
        assert tok.encode(text) == llama.tokenize(text, add_bos=False, special=True), text
        assert tok.encode(text, special=False) == llama.tokenize(text, add_bos=False, special=False), text


def test_live_llama_cpp_golden_strings(tok, llama):
    for case in GOLDEN["cases"]:
        data = _bytes(case)
        assert tok.encode(data) == llama.tokenize(data, add_bos=False, special=True)


def test_chat_template_is_chatml_and_tokenizes_like_golden(gguf_file, tok):
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    text = gguf_file.apply_chat_template(msgs)
    assert gg.is_chatml(gguf_file.chat_template)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    golden = next(c for c in GOLDEN["cases"] if c.get("text") == text)
    assert tok.encode(text) == golden["ids"]
    assert golden["ids"][0] == 1 and golden["ids"].count(2) == 2


def test_chat_template_matches_jinja(gguf_file):
    jinja2 = pytest.importorskip("jinja2")
    template = jinja2.Template(gguf_file.chat_template)
    convs = [
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye\nnow"}],
    ]
    for msgs in convs:
        for gen in (True, False):
            assert gguf_file.apply_chat_template(msgs, gen) == template.render(
                messages=msgs, add_generation_prompt=gen)


def test_bos_special_ids_and_errors(tok):
    assert (tok.bos_id, tok.eos_id, tok.vocab_size, tok.pre) == (1, 2, 49152, "smollm")
    assert tok.wants_bos is False  # the file says add_bos_token = false
    assert tok.encode("Hi", add_bos=True)[0] == 1
    assert tok.token_to_id("<|im_end|>") == 2 and tok.id_to_token(2) == "<|im_end|>"
    assert tok.decode([1, 2]) == "" and tok.decode([1, 2], special=True) == "<|im_start|><|im_end|>"
    with pytest.raises(InvalidArgumentError, match="out of range"):
        tok.decode([49152])
    with pytest.raises(InvalidArgumentError):
        tok.token_to_piece(-1)


def test_stream_decoder_waits_for_whole_characters(tok):
    text = "a😀b你好 ok"
    ids = tok.encode(text)
    pieces = [tok.token_to_piece(i) for i in ids]
    assert any(p and not _is_utf8(p) for p in pieces)  # some token carries part of a character
    dec = tok.stream()
    out = "".join(dec.feed(i) for i in ids) + dec.flush()
    assert out == text


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_long_and_empty_inputs(tok):
    assert tok.encode("") == []
    ids = tok.encode("word " * 5000)
    assert 5000 <= len(ids) <= 5001 and tok.decode(ids) == "word " * 5000


# ---- the other pre-tokenizers, on this vocabulary --------------------------

_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _with_pre(data: bytes, pre: str) -> bytes:
    """A copy of a GGUF file with tokenizer.ggml.pre replaced (the header is
    rebuilt; tensor offsets are relative to the data section, so they stay)."""
    def u32(o): return struct.unpack_from("<I", data, o)[0]
    def u64(o): return struct.unpack_from("<Q", data, o)[0]

    def skip_value(o, t):
        if t == 8:
            return o + 8 + u64(o)
        if t == 9:
            et, n, o = u32(o), u64(o + 4), o + 12
            for _ in range(n):
                o = skip_value(o, et)
            return o
        return o + _SCALAR[t]
    n_tensors, n_kv = u64(8), u64(16)
    o, out, align = 24, bytearray(data[:24]), 32
    for _ in range(n_kv):
        klen = u64(o)
        key = data[o + 8:o + 8 + klen].decode()
        t = u32(o + 8 + klen)
        end = skip_value(o + 12 + klen, t)
        if key == "tokenizer.ggml.pre":
            v = pre.encode()
            out += data[o:o + 12 + klen] + struct.pack("<Q", len(v)) + v
        else:
            out += data[o:end]
        o = end
    for _ in range(n_tensors):
        nd = u32(o + 8 + u64(o))
        end = o + 8 + u64(o) + 4 + 8 * nd + 12
        out += data[o:end]
        o = end
    old_data = o + (-o % align)
    out += b"\0" * (-len(out) % align)
    return bytes(out) + data[old_data:]


@pytest.mark.parametrize("pre", ["gpt-2", "mpt", "starcoder", "llama-bpe"])
def test_other_pre_tokenizers_match_llama_cpp(tmp_path, pre):
    llama_cpp = pytest.importorskip("llama_cpp")
    try:
        src = gg.smollm2_path()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    path = tmp_path / f"{pre}.gguf"
    path.write_bytes(_with_pre(src.read_bytes(), pre))
    ours = gg.load_gguf(path).tokenizer
    assert ours.pre == pre
    theirs = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    rng = random.Random(4321)
    texts = [_bytes(c) for c in GOLDEN["cases"]] + [_random_text(rng).encode() for _ in range(300)]
    texts += [b"  \n\n  x\r\n\r\ny", b"12345678 1234 x12y", b"HELLO'S 'LL 'Re", b"a  \t\n b"]
    for text in texts:
        assert ours.encode(text) == theirs.tokenize(text, add_bos=False, special=True), text
