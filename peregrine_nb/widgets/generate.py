"""Text generation as it arrives: a prompt, a Generate button, the text
streaming into the page with prefill and decode tokens per second, and a
switch for the kernel variant the decoder's quantised products run on.

The switch lists the dispatch levels this CPU supports, each with the
``qgemv_q4_1`` variant it selects (the kernel that reads most of SmolLM2's
weights per token); generating under a lower level shows what that kernel
is worth.  The decoder is bound to its kernels when it loads, so the switch
sets the CPU mask and rebinds the decoder (and binds it back afterwards),
and the speed line names the variant the run was bound to.

>>> import peregrine_nb as pg                                   # doctest: +SKIP
>>> from peregrine_nb.widgets import GenerateWidget           # doctest: +SKIP
>>> GenerateWidget(pg.models.smollm2())                       # doctest: +SKIP
"""
from __future__ import annotations

import html
from typing import Any

from .. import kernels
from ..cpu import cpu_info, cpu_levels, cpu_mask

KERNEL_OP = "qgemv_q4_1"


def level_choices(op: str = KERNEL_OP) -> list[tuple[str, str]]:
    """(label, level) for every level this CPU supports, highest first; the
    label names the variant of ``op`` that level dispatches to."""
    out = []
    for level in reversed(cpu_levels()):
        with cpu_mask(level):
            info = cpu_info()
            if level != "c" and info.level != level:
                continue   # the CPU lacks part of this level
            df = kernels.variants(op)
            variant = df[df.selected].variant.iloc[0]
        out.append((f"{level}: {variant}", level))
    return out


class GenerateWidget:
    """``.widget`` (the live view), ``.run()`` (what the button does: stream
    one generation), ``.text`` and ``.stats`` (of the last run)."""

    def __init__(self, llm: Any, prompt: str = "Explain what a GEMM kernel does, in two sentences.",
                 max_new_tokens: int = 64, chat: bool = True) -> None:
        import ipywidgets as w

        self.llm = llm
        self.text = ""
        self.stats: dict[str, float] = {}
        choices = level_choices()
        self.prompt = w.Textarea(value=prompt, description="prompt", layout=w.Layout(width="95%"))
        self.max_tokens = w.IntSlider(value=max_new_tokens, min=1, max=512, description="new tokens")
        self.chat = w.Checkbox(value=chat, description="chat template")
        self.temperature = w.FloatSlider(value=0.0, min=0.0, max=1.5, step=0.05, description="temperature")
        self.kernel = w.Dropdown(options=choices, value=choices[0][1], description="kernel",
                                 layout=w.Layout(width="60%"))
        self.button = w.Button(description="Generate", button_style="primary")
        self.output = w.HTML(value="")
        self.speed = w.HTML(value="")
        self.button.on_click(lambda _: self.run())
        self.widget = w.VBox([self.prompt, w.HBox([self.max_tokens, self.temperature, self.chat]),
                              w.HBox([self.kernel, self.button]), self.output, self.speed])

    def _show(self) -> None:
        self.output.value = ("<pre style='white-space:pre-wrap;font-size:13px;border:1px solid #ddd;"
                             f"padding:6px'>{html.escape(self.text)}</pre>")

    def run(self) -> str:
        """Generate with the widget's settings, updating the text and the
        speeds after every piece; returns the text."""
        self.text, self.button.disabled = "", True
        level = self.kernel.value
        bound = None
        try:
            with cpu_mask(level):
                self.llm.rebind()   # the switch reaches the loaded decoder only through a rebind
                bound = self.llm.bound_kernel(KERNEL_OP)
                for piece in self.llm.generate(self.prompt.value, max_new_tokens=self.max_tokens.value,
                                               temperature=self.temperature.value, chat=self.chat.value):
                    self.text += piece
                    self._show()
                    st = self.llm.last_stats
                    self.speed.value = (f"<b>{st['new_tokens']}</b> tokens, prefill "
                                        f"{st['prefill_tps']:.0f} tok/s, decode {st['decode_tps']:.1f} tok/s "
                                        f"on <code>{html.escape(bound)}</code> (decoder rebound for "
                                        f"level {html.escape(level)})")
        finally:
            self.llm.rebind()       # back on the kernels of the mask outside the switch
            self.button.disabled = False
        self._show()
        self.stats = dict(self.llm.last_stats, level=level, kernel=self.kernel.label, bound=bound)
        return self.text

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"<GenerateWidget {self.kernel.label}>"
