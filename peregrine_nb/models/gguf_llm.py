"""Any supported GGUF decoder file as an :class:`~peregrine_nb.llm.LLM`.

>>> m = peregrine_nb.models.load_llm("qwen2.5-0.5b-instruct-q8_0.gguf")  # doctest: +SKIP
>>> m.info.arch, m.info.head_dim                                       # doctest: +SKIP
('qwen2', 64)

Architectures: llama (Llama 2/3, SmolLM), qwen2, qwen3, gemma, gemma2, phi3.
What a file has that the decoder does not run (another architecture, a RoPE
scaling other than linear, a tensor no architecture reads, a weight type)
raises :class:`~peregrine_nb.UnsupportedError` naming it.
"""
from __future__ import annotations

import os

from ..llm import LLM


def load_llm(path: str | os.PathLike, threads: int | None = None, n_ctx: int | None = None,
             max_batch: int | None = None, kv_cache: str = "f32") -> LLM:
    """The decoder in the GGUF file at ``path`` (weights mapped, not copied);
    ``kv_cache="f16"`` halves the KV cache's memory; it runs as a compiled
    Peregrine graph (``LLM.model()``)."""
    return LLM(path, threads=threads, n_ctx=n_ctx, max_batch=max_batch, kv_cache=kv_cache)
