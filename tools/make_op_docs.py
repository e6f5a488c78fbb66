"""Writes docs/graph_ops.md from the engine's op table (engine/graph/opdefs.def,
read through the C API), so the documented op list is the implemented one.
tests/test_graph_ops_table.py fails when the file is out of date.

    python3 tools/make_op_docs.py
"""
from pathlib import Path

from peregrine_nb.graph_ops import markdown

if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "docs" / "graph_ops.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(markdown())
    print(f"wrote {out}")
