"""The memory plan drawn as text, in the spirit of TFLite-micro's
PrintMemoryPlan: one row per execution step, the arena across the page, one
letter per buffer live at that step, '.' for free bytes.

>>> import pandas as pd
>>> plan = pd.DataFrame({"tensor": ["a", "b"], "bytes": [64, 64], "offset": [0, 64],
...                      "first": [0, 1], "last": [1, 2]})
>>> print(draw_memory_plan(plan, arena_bytes=128, width=8))
step 0 |AAAA....|  64 B
step 1 |AAAABBBB| 128 B
step 2 |....BBBB|  64 B
A=a B=b
"""
from __future__ import annotations

import string

LETTERS = string.ascii_uppercase + string.ascii_lowercase + string.digits


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def draw_memory_plan(plan, arena_bytes: int, width: int = 64, legend: bool = True) -> str:
    """plan: rows with tensor, bytes, offset, first, last (arena tensors only:
    rows with a negative offset, or a kind other than arena, are skipped)."""
    rows = [r for r in plan.to_dict("records")
            if r["offset"] >= 0 and r.get("kind", "arena") in ("arena", 0) and r["bytes"] > 0]
    if not rows or arena_bytes <= 0:
        return "(no activation arena)"
    letter = {r["tensor"]: LETTERS[i % len(LETTERS)] for i, r in enumerate(rows)}
    first = min(max(r["first"], 0) for r in rows)
    last = max(r["last"] for r in rows)
    scale = arena_bytes / width
    lines = []
    step_w = len(str(last))
    bytes_w = len(_fmt_bytes(arena_bytes))
    for step in range(first, last + 1):
        cells = ["."] * width
        live = 0
        for r in rows:
            if max(r["first"], 0) <= step <= r["last"]:
                live += r["bytes"]
                lo = int(r["offset"] / scale)
                hi = max(lo + 1, int(-(-(r["offset"] + r["bytes"]) // scale)))
                for c in range(lo, min(hi, width)):
                    cells[c] = letter[r["tensor"]]
        lines.append(f"step {step:>{step_w}} |{''.join(cells)}| {_fmt_bytes(live):>{bytes_w}}")
    if legend:   # wrapped to the drawing's width (at least 80 columns)
        line = ""
        for r in rows:
            item = f"{letter[r['tensor']]}={r['tensor']}"
            if line and len(line) + 1 + len(item) > max(width + 20, 80):
                lines.append(line)
                line = item
            else:
                line = f"{line} {item}" if line else item
        lines.append(line)
    return "\n".join(lines)
