"""A decoder from a GGUF file (llama, qwen2, qwen3, gemma, gemma2, phi3), run
by the C engine.

>>> m = peregrine_nb.models.smollm2()                                  # doctest: +SKIP
>>> "".join(m.generate("What is 2+2?", max_new_tokens=16))            # doctest: +SKIP
'2 + 2 = 4.'
>>> m.last_stats                                                       # doctest: +SKIP
{'prompt_tokens': 31, 'new_tokens': 9, 'prefill_tps': 1650.2, 'decode_tps': 212.4, ...}

The weights are used in place from the mapped file; the KV cache and every
activation live in one arena allocated at load, so generating allocates
nothing in C.  Sampling follows llama.cpp's chain (repetition penalty,
top-k, top-p, temperature); temperature 0 is greedy.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ._lib import check, ffi, lib
from .errors import InvalidArgumentError
from .gguf import GGUFFile, load_gguf


@dataclass(frozen=True)
class LLMInfo:
    arch: str
    name: str
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_vocab: int
    n_ctx: int
    n_ctx_train: int
    max_batch: int
    threads: int
    rope_base: float
    norm_eps: float
    bos: int
    eos: int
    weight_bytes: int
    arena_bytes: int
    n_steps: int


class LLM:
    """A decoder loaded from ``path`` (architectures llama, qwen2, qwen3, gemma,
    gemma2, phi3; what the file has that is not supported raises
    UnsupportedError naming it).

    ``threads``: 0/None = the engine default; ``n_ctx``: KV-cache positions
    (default min(2048, trained)); ``max_batch``: tokens per forward pass;
    ``kv_cache``: "f32" (default) or "f16" (half the memory, the same values:
    they are rounded to f16 either way).  The decoder runs as a compiled
    Peregrine graph (the same kernels, through the passes and the planner,
    the KV cache a persistent buffer of the plan): :meth:`model` gives it,
    for ``%peregrine passes`` and the memory viewer.
    """

    def __init__(self, path: str | os.PathLike, threads: int | None = None,
                 n_ctx: int | None = None, max_batch: int | None = None,
                 kv_cache: str = "f32"):
        self.path = os.fspath(path)
        opts = ffi.new("pg_llm_options *")
        opts.threads = int(threads or 0)
        opts.n_ctx = int(n_ctx or 0)
        opts.max_batch = int(max_batch or 0)
        if kv_cache not in ("f32", "f16"):
            raise InvalidArgumentError(f"kv_cache must be 'f32' or 'f16', not {kv_cache!r}")
        opts.kv_f16 = int(kv_cache == "f16")
        out = ffi.new("pg_llm **")
        check(lib.pg_llm_load(os.fsencode(self.path), opts, out))
        self._h = ffi.gc(out[0], lib.pg_llm_free)
        # the KV cache is one state: one thread at a time evaluates or
        # generates (another gets an error, never a mixed cache)
        self._lock = threading.RLock()
        self.gguf: GGUFFile = load_gguf(self.path)
        self.tokenizer = self.gguf.tokenizer
        self.n_vocab: int = lib.pg_llm_vocab(self._h)
        self.last_stats: dict = {}
        # the ends of a turn the chat templates write (as the CLI's)
        self._stop = {t for t in [self.tokenizer.eos_id] +
                      [self.tokenizer.token_to_id(s) for s in (
                          "<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|end|>", "<|eot_id|>")]
                      if t is not None and t >= 0}

    # -- the model --

    @property
    def info(self) -> LLMInfo:
        i = ffi.new("pg_llm_info *")
        check(lib.pg_llm_get_info(self._h, i))
        return LLMInfo(ffi.string(i.arch).decode(), ffi.string(i.name).decode(), i.n_layer,
                       i.n_embd, i.n_ff, i.n_head, i.n_head_kv, i.head_dim, i.n_vocab, i.n_ctx,
                       i.n_ctx_train, i.max_batch, i.threads, i.rope_base, i.norm_eps, i.bos,
                       i.eos, i.weight_bytes, i.arena_bytes, i.n_steps)

    @property
    def n_past(self) -> int:
        i = ffi.new("pg_llm_info *")
        check(lib.pg_llm_get_info(self._h, i))
        return i.n_past

    def _claim(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise InvalidArgumentError("this LLM is evaluating or generating on another thread "
                                       "(load one per thread, or serialise the calls)")

    def reset(self) -> None:
        """Empty the KV cache."""
        self._claim()
        try:
            check(lib.pg_llm_reset(self._h))
        finally:
            self._lock.release()

    # -- the kernels it is bound to --

    @property
    def stale(self) -> bool:
        """True when the CPU mask has changed since the decoder was bound to its
        kernels (it keeps running those until :meth:`rebind`)."""
        return bool(lib.pg_llm_is_stale(self._h))

    def rebind(self) -> "LLM":
        """Bind the decoder's kernels again under the current CPU mask."""
        check(lib.pg_llm_rebind(self._h))
        return self

    def model(self, prefill: bool = False):
        """The compiled graph the decoder runs: a
        :class:`~peregrine_nb.compiled.CompiledModel` view of the decode shape
        (one token) or, ``prefill=True``, of the prefill shape (``max_batch``
        tokens), for ``passes``, ``steps``, ``memory_plan`` and the viewers.
        It stays owned by this LLM (running it directly is refused: feed the
        LLM instead)."""
        from .compiled import CompiledModel
        h = lib.pg_llm_model(self._h, int(bool(prefill)))
        if h == ffi.NULL:
            check(lib.pg_last_status())
        return CompiledModel._borrowed(h, self)

    def bound_kernel(self, family: str) -> str:
        """The variant the decoder runs for a kernel family ("qgemv_q4_1")."""
        name = lib.pg_llm_bound_kernel(self._h, family.encode())
        if name == ffi.NULL:
            check(lib.pg_last_status())
        return ffi.string(name).decode()

    def eval(self, ids: Sequence[int], logits_all: bool = False) -> np.ndarray:
        """Append ids to the cache; the logits of the last token ([n_vocab]),
        or of every token ([len(ids), n_vocab]) with logits_all."""
        arr = np.ascontiguousarray(ids, dtype=np.int32)
        rows = len(arr) if logits_all else 1
        out = np.empty((rows, self.n_vocab), dtype=np.float32)
        self._claim()
        try:
            check(lib.pg_llm_eval(self._h, ffi.from_buffer("int32_t[]", arr), len(arr),
                                  ffi.from_buffer("float[]", out), int(logits_all)))
        finally:
            self._lock.release()
        return out if logits_all else out[0]

    # -- text --

    def tokenize(self, text: str | bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return self.tokenizer.encode(text, add_bos=add_bos, special=special)

    def detokenize(self, ids: Sequence[int], special: bool = False) -> str:
        return self.tokenizer.decode(ids, special=special)

    def format_chat(self, prompt: str, system: str | None = None) -> str:
        """The prompt as one user turn in the file's chat template (GGUFFile.apply_chat_template)."""
        msgs = ([{"role": "system", "content": system}] if system else []) + \
               [{"role": "user", "content": prompt}]
        return self.gguf.apply_chat_template(msgs, add_generation_prompt=True)

    # -- generation --

    def generate_ids(self, prompt: str | Sequence[int], max_new_tokens: int = 128,
                     temperature: float = 0.0, top_k: int = 40, top_p: float = 0.95,
                     repeat_penalty: float = 1.0, repeat_last_n: int = 64, seed: int = 0,
                     chat: bool = False, stop_at_eos: bool = True) -> Iterator[int]:
        """The generated token ids, one at a time (the prompt is text, or ids as given).
        At most what the context leaves after the prompt (n_ctx - prompt
        tokens + 1) are generated, however large ``max_new_tokens``; a prompt
        of more than n_ctx tokens is a ShapeError."""
        self._claim()
        try:
            yield from self._generate_ids(prompt, max_new_tokens, temperature, top_k, top_p,
                                          repeat_penalty, repeat_last_n, seed, chat, stop_at_eos)
        finally:
            self._lock.release()

    def _generate_ids(self, prompt, max_new_tokens, temperature, top_k, top_p, repeat_penalty,
                      repeat_last_n, seed, chat, stop_at_eos) -> Iterator[int]:
        if isinstance(prompt, str):
            text = self.format_chat(prompt) if chat else prompt
            ids = self.tokenize(text)
            tok = self.tokenizer
            if tok.wants_bos and ids[:1] != [tok.bos_id]:  # the BOS the vocabulary asks for
                ids = [tok.bos_id] + ids
        else:
            ids = [int(t) for t in prompt]
        if not ids:
            raise ValueError("the prompt has no tokens")
        p = ffi.new("pg_sampler_params *")
        p.temperature = float(temperature)
        p.top_k = int(top_k)
        p.top_p = float(top_p)
        p.repeat_penalty = float(repeat_penalty)
        p.repeat_last_n = int(repeat_last_n)
        p.seed = int(seed) & (2**64 - 1)
        sp = ffi.new("pg_sampler **")
        check(lib.pg_sampler_new(p, self.n_vocab, sp))
        sampler = ffi.gc(sp[0], lib.pg_sampler_free)
        self.reset()
        for t in ids:
            check(lib.pg_sampler_accept(sampler, t))
        stats = {"prompt_tokens": len(ids), "new_tokens": 0, "prefill_s": 0.0, "decode_s": 0.0,
                 "prefill_tps": 0.0, "decode_tps": 0.0}
        self.last_stats = stats
        arr = np.asarray(ids, dtype=np.int32)
        t0 = time.perf_counter()
        check(lib.pg_llm_eval(self._h, ffi.from_buffer("int32_t[]", arr), len(arr), ffi.NULL, 0))
        stats["prefill_s"] = time.perf_counter() - t0
        stats["prefill_tps"] = len(ids) / stats["prefill_s"]
        tok = ffi.new("int32_t *")
        room = self.info.n_ctx - len(ids)
        for i in range(min(max_new_tokens, room + 1)):
            t0 = time.perf_counter()
            if i == max_new_tokens - 1 or i == room:
                # the last token: sample it, no need to evaluate it
                check(lib.pg_sample(sampler, lib.pg_llm_logits(self._h), tok))
                check(lib.pg_sampler_accept(sampler, tok[0]))
            else:
                check(lib.pg_llm_decode_next(self._h, sampler, tok))
            stats["decode_s"] += time.perf_counter() - t0
            stats["new_tokens"] += 1
            stats["decode_tps"] = stats["new_tokens"] / stats["decode_s"]
            t = int(tok[0])
            if stop_at_eos and t in self._stop:
                return
            yield t

    def generate(self, prompt: str, max_new_tokens: int = 128, temperature: float = 0.0,
                 top_k: int = 40, top_p: float = 0.95, repeat_penalty: float = 1.0,
                 repeat_last_n: int = 64, seed: int = 0, chat: bool = True) -> Iterator[str]:
        """Text pieces as they are generated (streaming).  A piece is only
        handed out once its UTF-8 characters are complete.  ``chat`` wraps
        the prompt in the file's chat template as one user turn.  Speeds of
        the run: ``last_stats``."""
        dec = self.tokenizer.stream()
        for t in self.generate_ids(prompt, max_new_tokens, temperature, top_k, top_p,
                                   repeat_penalty, repeat_last_n, seed, chat):
            piece = dec.feed(t)
            if piece:
                yield piece
        tail = dec.flush()
        if tail:
            yield tail

    def __call__(self, prompt: str, **kw) -> str:
        """The whole generated text (``generate`` joined)."""
        return "".join(self.generate(prompt, **kw))

    def __repr__(self) -> str:
        i = self.info
        return (f"LLM({i.name!r}, layers={i.n_layer}, width={i.n_embd}, heads={i.n_head}/"
                f"{i.n_head_kv}, vocab={i.n_vocab}, ctx={i.n_ctx}, threads={i.threads})")
