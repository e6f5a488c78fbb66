"""Peregrine: a CPU inference engine in C and hand-written assembly, opened up
for notebooks.

>>> import peregrine_nb as pg
>>> pg.cpu_info().arch in ("x86_64", "aarch64", "generic")
True
"""
from __future__ import annotations

from ._lib import ffi as _ffi, lib as _lib
from .compiled import (CompiledModel, WeightCache, compile, compiled_file_info, get_memory_limit,
                       load_compiled, save_compiled, set_memory_limit)
from .cpu import CpuInfo, cpu_info, cpu_levels, cpu_mask, get_cpu_mask, set_cpu_mask
from .gguf import GGUFFile, load_gguf
from .graph import Graph
from .graph_ops import GraphOp, graph_ops
from .onnx_import import OnnxModel, load_onnx
from . import models
from .errors import (
    DTypeError,
    FormatError,
    GraphError,
    InvalidArgumentError,
    LibraryNotFoundError,
    PeregrineError,
    ShapeError,
    UnsupportedError,
)

__version__ = _ffi.string(_lib.pg_version()).decode()

__all__ = [
    "Graph", "graph_ops", "GraphOp", "compile", "CompiledModel", "WeightCache", "load_compiled", "save_compiled", "compiled_file_info", "set_memory_limit", "get_memory_limit", "load_onnx", "OnnxModel", "load_gguf", "GGUFFile", "models",
    "CpuInfo", "cpu_info", "cpu_levels", "cpu_mask", "get_cpu_mask", "set_cpu_mask",
    "PeregrineError", "InvalidArgumentError", "UnsupportedError", "ShapeError", "DTypeError",
    "GraphError", "FormatError", "LibraryNotFoundError",
]


def load_ipython_extension(ip):
    """``%load_ext peregrine_nb``: the %peregrine magics (peregrine_nb.magics)."""
    from .magics import load

    load(ip)
