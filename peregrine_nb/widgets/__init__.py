"""Notebook viewers (ipywidgets + plotly): the fusion stepper, the memory
pool viewer, the kernel comparison, and text generation as it arrives.  Each has ``.widget`` (the live
view), ``.figure`` (a plain plotly Figure in its current state) and shows a
static copy in a saved notebook.

>>> from peregrine_nb.widgets import FusionStepper, MemoryViewer, KernelComparison  # doctest: +SKIP
"""
from __future__ import annotations

from ._passlog import PassSnapshot, snapshots
from .fusion import FusionStepper
from .generate import GenerateWidget
from .kernel_compare import KernelComparison, bench_ops, parse_shapes
from .memory import PLANNERS, MemoryViewer
from .precision import PrecisionTradeoff

__all__ = ["FusionStepper", "MemoryViewer", "KernelComparison", "GenerateWidget", "PassSnapshot", "snapshots",
           "bench_ops", "parse_shapes", "PLANNERS", "PrecisionTradeoff"]
