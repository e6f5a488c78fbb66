"""Ready-made models built on the Graph builder.

>>> enc = peregrine_nb.models.minilm()           # doctest: +SKIP
>>> enc.encode(["a sentence", "another one"]).shape  # doctest: +SKIP
(2, 384)
"""
from __future__ import annotations

from .minilm import DEFAULT_BUCKETS, MiniLM, bert_graph, find_minilm_dir, minilm
from .gguf_llm import load_llm
from .smollm2 import smollm2

__all__ = ["MiniLM", "minilm", "DEFAULT_BUCKETS", "bert_graph", "find_minilm_dir", "smollm2",
           "load_llm"]
