"""The text drawing of a memory plan (the tour prints it)."""
import doctest

import pandas as pd

import peregrine_nb.memory_text as mt


def test_doctest_example():
    assert doctest.testmod(mt).failed == 0


def test_rows_follow_lifetimes_and_offsets():
    plan = pd.DataFrame({
        "tensor": ["x", "h", "y", "w"],
        "bytes": [512, 1024, 512, 4096],
        "offset": [0, 512, 0, -1],          # w is a weight (not in the arena)
        "first": [-1, 1, 2, 0],
        "last": [1, 2, 3, 3],
    })
    text = mt.draw_memory_plan(plan, arena_bytes=1536, width=12)
    lines = text.splitlines()
    assert lines[0].startswith("step 0 |AAAA........|")
    assert lines[1].startswith("step 1 |AAAABBBBBBBB|")
    assert lines[2].startswith("step 2 |CCCCBBBBBBBB|")
    assert lines[3].startswith("step 3 |CCCC........|")
    assert lines[-1] == "A=x B=h C=y"
