"""Compile a :class:`~peregrine_nb.graph.Graph` and run it.

>>> import numpy as np, peregrine_nb as pg
>>> g = pg.Graph(); g.add_input("x", (4,)); _ = g.add_node("Relu", ["x"], ["y"]); g.add_output("y")
>>> pg.compile(g, level=0).run({"x": np.array([-1, 2, -3, 4], np.float32)})["y"]
array([0., 2., 0., 4.], dtype=float32)
"""
from __future__ import annotations

import html
import os
import threading
import weakref
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._lib import check, cstr, ffi, lib
from .errors import DTypeError
from .graph import Graph, dtype_code, numpy_dtype

_KINDS = {0: "arena", 1: "view", 2: "inplace", 3: "input", 4: "weight", 5: "persistent"}
# compile(precision=...): the names and pg_compile_options.precision's codes
PRECISIONS = {"fp32": 0, "bf16": 1, "int8-dynamic": 2}


def _precision_code(precision: str) -> int:
    if precision not in PRECISIONS:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(f"precision {precision!r} is not one of {list(PRECISIONS)}")
    return PRECISIONS[precision]


class WeightCache:
    """The weights compiles have packed, kept for compiling the same weights
    again at other input shapes (``pg_weight_cache``): a compile given the
    cache takes the packings an earlier one made from the same lent arrays
    (``Graph.add_initializer(copy=False)``) instead of packing them again.
    The engine knows a lent array by its address, so the cache holds every
    array of the graphs compiled with it: none moves or is freed while it
    lives (lent arrays are read-only).  ``OnnxModel`` keeps one."""

    def __init__(self) -> None:
        p = ffi.new("pg_weight_cache **")
        check(lib.pg_weight_cache_new(p))
        self._c = ffi.gc(p[0], lib.pg_weight_cache_free)
        self._arrays: dict[int, np.ndarray] = {}
        # graph -> how many of its initializers are held: a graph compiled
        # at every step of a decode loop is walked once (a name is never
        # added twice, so the count says whether any is new)
        self._held: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _lend(self, graph: Graph) -> None:
        if self._held.get(graph) == len(graph.initializers):
            return
        for a in graph.initializers.values():
            self._arrays.setdefault(id(a), a)
        self._held[graph] = len(graph.initializers)

    @property
    def stats(self) -> dict[str, int]:
        """``entries`` and ``bytes`` held; ``hits`` and ``misses``: of the
        large constants compiles kept (packed weights, lent arrays), those
        found here and those added."""
        s = ffi.new("pg_weight_cache_stats *")
        check(lib.pg_weight_cache_get_stats(self._c, s))
        return {"entries": int(s.entries), "bytes": int(s.bytes), "hits": int(s.hits),
                "misses": int(s.misses)}

    def __repr__(self) -> str:
        s = self.stats
        return (f"<WeightCache {s['entries']} constants, {s['bytes'] / 2**20:.1f} MiB, "
                f"{s['hits']} hits, {s['misses']} misses>")


class CompiledModel:
    """A compiled graph.  ``run(feeds)`` returns a dict of numpy arrays (copies)."""

    def __init__(self, graph: Graph, level: int, disable: Iterable[str], threads: int | None,
                 planner: str, precision: str = "fp32",
                 weight_cache: WeightCache | None = None,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 pass_log: bool = True) -> None:
        self.graph = graph              # kept so a viewer can recompile (another planner)
        self._input_shapes = dict(input_shapes) if input_shapes else None
        self._weight_cache = weight_cache
        self._log_twin: CompiledModel | None = None   # compiled with the log, when asked
        self.level = level
        self.requested_precision = precision
        self.planner = planner
        self.disable = list(disable)
        self.threads = threads
        self.path: str | None = None    # the file it was loaded from (load_compiled)
        self.index = 0
        self.load_note = ""
        opts = ffi.new("pg_compile_options *")
        opts.level = level
        self._disabled = ffi.new("char[]", ",".join(disable).encode())
        self._planner = ffi.new("char[]", planner.encode())
        opts.disabled = self._disabled
        opts.threads = threads or 0
        opts.planner = self._planner
        opts.precision = _precision_code(precision)
        opts.no_pass_log = not pass_log
        if weight_cache is not None:
            weight_cache._lend(graph)
            opts.weight_cache = weight_cache._c
        if self._input_shapes:
            keep = [[ffi.new("char[]", k.encode()) for k in self._input_shapes],
                    [ffi.new("int64_t[]", [int(d) for d in v] or [0])
                     for v in self._input_shapes.values()]]
            names = ffi.new("const char *[]", keep[0])
            ranks = ffi.new("int[]", [len(v) for v in self._input_shapes.values()])
            dims = ffi.new("const int64_t *[]", keep[1])
            opts.n_input_shapes = len(self._input_shapes)
            opts.input_shape_names, opts.input_shape_ranks, opts.input_shape_dims = names, ranks, dims
        p = ffi.new("pg_model **")
        check(lib.pg_compile(graph._g, opts, p))
        self._attach(p[0])

    def _pass_log_handle(self):
        """The pg_model whose pass log the viewers read: this one's, or,
        for a model compiled without its log (``pass_log=False``: an
        OnnxModel's shape sets), a twin compiled the same way with it, the
        first time it is asked for."""
        if lib.pg_model_pass_count(self._m) or self.level == 0 or getattr(self, "_graph", None) is None:
            return self._m
        if self._log_twin is None:
            self._log_twin = CompiledModel(self._graph, self.level, self.disable, self.threads,
                                           self.planner, self.requested_precision,
                                           self._weight_cache, self._input_shapes)
        return self._log_twin._m

    @property
    def graph(self) -> Graph | None:
        """The graph this model was compiled from (a viewer recompiles it,
        with another planner).  For a compile at other input shapes than the
        source graph's (``input_shapes``), the source's copy with them, made
        when first asked: a decode loop compiles a shape set per step and
        never asks."""
        if self._input_shapes:
            self._graph = self._graph.with_input_shapes(self._input_shapes)
            self._input_shapes = None
        return self._graph

    @graph.setter
    def graph(self, graph: Graph | None) -> None:
        self._graph = graph
        self._input_shapes = None

    @classmethod
    def _borrowed(cls, handle, owner) -> "CompiledModel":
        """A view of a pg_model someone else owns (an LLM's compiled graph,
        LLM.model()): the viewers work on it; running it is refused."""
        self = cls.__new__(cls)
        self.graph = None
        self.level = 3
        self.requested_precision = "fp32"
        self.planner = "greedy_by_size"
        self.disable = []
        self.threads = None
        self.path = None
        self.index = 0
        self.load_note = ""
        self._owner = owner
        self._attach(handle, own=False)
        return self

    def _attach(self, handle, own: bool = True) -> None:
        """Own a pg_model handle and build what a run needs from it alone
        (its inputs and outputs): no source Graph is needed."""
        self._m = ffi.gc(handle, lib.pg_model_free) if own else handle
        info = ffi.new("pg_tensor_info *")
        self.inputs: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for i in range(lib.pg_model_input_count(self._m)):
            check(lib.pg_model_input_info(self._m, i, info))
            self.inputs[cstr(info.name)] = (tuple(ffi.unpack(info.dims, info.rank)), numpy_dtype(info.dtype))
        self.outputs: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        self._out_specs = []    # per output index: name, shape, dtype, bytes
        for i in range(lib.pg_model_output_count(self._m)):
            check(lib.pg_model_output_info(self._m, i, info))
            name, spec = cstr(info.name), (tuple(ffi.unpack(info.dims, info.rank)), numpy_dtype(info.dtype))
            self.outputs[name] = spec
            self._out_specs.append((name, *spec, int(info.nbytes)))
        # the run arguments are built once: a run only fills them in
        n = len(self.inputs)
        self._names_c = [ffi.new("char[]", k.encode()) for k in self.inputs]
        self._names = ffi.new("const char *[]", self._names_c or [ffi.NULL])
        self._data = ffi.new("const void *[]", max(n, 1))
        self._ranks = ffi.new("int[]", [len(s) for s, _ in self.inputs.values()] or [0])
        self._shape_c = [ffi.new("int64_t[]", list(s) or [0]) for s, _ in self.inputs.values()]
        self._shapes = ffi.new("const int64_t *[]", self._shape_c or [ffi.NULL])
        self._out_data = ffi.new("void *[]", max(len(self._out_specs), 1))
        # the run arguments above and the engine's arena are one state per
        # model: runs from several threads take turns (safe, not parallel)
        self._lock = threading.Lock()

    # -- saved to a file, loaded back -------------------------------------------
    def save(self, path: str | os.PathLike) -> str:
        """Write the compiled model to ``path`` (the graph after its passes,
        the packed weights, the CPU level it is bound for); load it with
        :func:`load_compiled` - in another process, on another machine with
        the same build - without compiling again.  Returns the path."""
        path = os.fspath(path)
        with self._lock:
            check(lib.pg_model_save(self._m, os.fsencode(path)))
        return path

    @property
    def load_info(self) -> dict[str, Any]:
        """Where the constants live: ``mapped_bytes`` read in place from the
        file (zero copy), ``owned_bytes`` in the model's own memory;
        ``loaded``, ``repacked`` (weights re-packed at load for this CPU),
        ``rebound`` (bound under other CPU flags than the file's)."""
        li = ffi.new("pg_model_load_info *")
        check(lib.pg_model_get_load_info(self._m, li))
        return {"loaded": bool(li.loaded), "mapped_bytes": int(li.mapped_bytes),
                "owned_bytes": int(li.owned_bytes), "repacked": int(li.repacked),
                "rebound": bool(li.rebound), "file_flags": int(li.file_flags)}

    def run(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Run on ``feeds`` (name -> array); missing or extra names, wrong
        shapes and dtypes that do not convert safely (float to int, a
        string) raise with the input's name.  Any array layout is taken
        (non-contiguous and read-only arrays are copied).  Calls from several
        threads are safe: they take turns."""
        self._check_runnable()
        with self._lock:
            return self._run(feeds)

    def _check_runnable(self) -> None:
        if getattr(self, "_owner", None) is not None:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError("this is an LLM's compiled graph (LLM.model()): it runs "
                                       "through the LLM, which feeds its cache and positions")

    def _run(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        keep, reshaped = [], []
        try:   # a feed of another shape changes the run arguments: put back after
            for i, (name, (shape, dt)) in enumerate(self.inputs.items()):
                if name not in feeds:
                    raise KeyError(f"input {name!r} is not fed (inputs: {list(self.inputs)})")
                a = np.asarray(feeds[name])
                if a.dtype != dt and not np.can_cast(a.dtype, dt, "same_kind"):
                    raise DTypeError(f"feed {name!r} is {a.dtype}; the model takes {np.dtype(dt)} "
                                     "(convert it explicitly)")
                a = np.asarray(a, dtype=dt, order="C")   # (ascontiguousarray would make 0-d 1-d)
                if a.shape != shape:
                    # let the engine phrase the error, with the actual shape
                    self._shape_c[i] = ffi.new("int64_t[]", list(a.shape) or [0])
                    self._shapes[i] = self._shape_c[i]
                    self._ranks[i] = a.ndim
                    reshaped.append(i)
                keep.append(a)
                self._data[i] = ffi.from_buffer(a) if a.size else ffi.NULL
            extra = set(feeds) - set(self.inputs)
            if extra:
                raise KeyError(f"feeds {sorted(extra)} are not inputs of the model "
                               f"(inputs: {list(self.inputs)})")
            # the outputs are computed straight into the arrays returned (64-byte
            # aligned, so the engine's kernels may write them); no copy of the
            # arena afterwards for those the plan gives a buffer of their own
            out = {}
            for i, (name, shape, dt, nbytes) in enumerate(self._out_specs):
                raw = np.empty(nbytes + 64, np.uint8)
                p = ffi.from_buffer(raw)   # (raw.ctypes.data makes a ctypes object per read)
                off = -int(ffi.cast("uintptr_t", p)) % 64
                out[name] = raw[off:off + nbytes].view(dt).reshape(shape)
                self._out_data[i] = p + off if nbytes else ffi.NULL
            check(lib.pg_model_run_into(self._m, len(self.inputs), self._names, self._data, self._ranks,
                                        self._shapes, len(self._out_specs), self._out_data))
        finally:
            shapes = list(self.inputs.values())
            for i in reshaped:   # back to the model's own
                shape = shapes[i][0]
                self._shape_c[i] = ffi.new("int64_t[]", list(shape) or [0])
                self._shapes[i] = self._shape_c[i]
                self._ranks[i] = len(shape)
        return out

    __call__ = run

    # -- the kernels it is bound to -------------------------------------------
    @property
    def stale(self) -> bool:
        """True when the CPU mask has changed since the model was bound to its
        kernels: it keeps running those (this CPU has them) until :meth:`rebind`."""
        return bool(lib.pg_model_is_stale(self._m))

    def rebind(self) -> "CompiledModel":
        """Bind every step again under the current CPU mask: the variants it
        selects now, the weights re-packed for the new SGEMM panel width, the
        memory planned anew.  Returns the model."""
        with self._lock:
            check(lib.pg_model_rebind(self._m))
        return self

    @property
    def kernels(self) -> list[dict[str, str]]:
        """Per step that runs kernels from variant tables: node, op_type and the
        variants it is bound to (``kernel=`` entries of the step's detail)."""
        out = []
        for s in self.steps:
            words = s["detail"].split()
            names = [w.split("=", 1)[1] for w in words if w.startswith("kernel=")]
            prec = [w.split("=", 1)[1] for w in words if w.startswith("precision=")]
            if names:
                out.append({"node": s["node"], "op_type": s["op_type"], "kernels": names,
                            "precision": prec[0] if prec else "fp32"})
        return out

    @property
    def precision(self) -> str:
        """The precision its products run in: "bf16" or "int8-dynamic" when
        any MatMul is bound to a low-precision kernel, else "fp32" (what a
        CPU without the kernels - or a lower CPU mask at compile time -
        falls back to).  Per step: :attr:`kernels` (``precision`` key)."""
        got = {k["precision"] for k in self.kernels if k["precision"] != "fp32"}
        return got.pop() if len(got) == 1 else ("mixed" if got else "fp32")

    def compare(self, reference: "CompiledModel", feeds: Mapping[str, Any]) -> "Any":
        """Run this model and ``reference`` on the same ``feeds`` and return,
        per output, the error of this one against the reference: max_abs,
        max_rel (max |a - r| / max |r|), cosine (of the flattened outputs)
        and rmse, as a pandas DataFrame indexed by output name.
        ``m_bf16.compare(m_fp32, feeds)``."""
        import pandas as pd

        got, want = self.run(feeds), reference.run(feeds)
        rows = []
        for name, r in want.items():
            if name not in got:
                raise KeyError(f"output {name!r} of the reference is not an output of this model")
            a = np.asarray(got[name], np.float64).ravel()
            b = np.asarray(r, np.float64).ravel()
            if a.shape != b.shape:
                from .errors import ShapeError
                raise ShapeError(f"output {name!r}: {got[name].shape} against the reference's {r.shape}")
            d = np.abs(a - b)
            na, nb = np.linalg.norm(a), np.linalg.norm(b)
            cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else float(na == nb)
            scale = float(np.max(np.abs(b))) if b.size else 0.0
            rows.append({"output": name, "max_abs": float(d.max()) if d.size else 0.0,
                         "max_rel": float(d.max() / scale) if d.size and scale > 0 else 0.0,
                         "cosine": cos, "rmse": float(np.sqrt(np.mean(d * d))) if d.size else 0.0})
        return pd.DataFrame(rows).set_index("output")

    # -- the plan and the steps ---------------------------------------------
    @property
    def memory_plan(self):
        """The memory plan as a pandas DataFrame: tensor, bytes, offset,
        first, last, kind, alias_of."""
        import pandas as pd

        rows = []
        r = ffi.new("pg_plan_row *")
        for i in range(lib.pg_model_plan_count(self._m)):
            check(lib.pg_model_plan_row(self._m, i, r))
            rows.append({
                "tensor": cstr(r.tensor), "bytes": int(r.bytes), "offset": int(r.offset),
                "first": int(r.first), "last": int(r.last), "kind": _KINDS.get(int(r.kind), "?"),
                "alias_of": cstr(r.alias_of) if r.alias_of != ffi.NULL else None,
            })
        return pd.DataFrame(rows, columns=["tensor", "bytes", "offset", "first", "last", "kind", "alias_of"])

    @property
    def memory_stats(self) -> dict[str, Any]:
        """arena (bytes this plan needs), naive (sum of all buffers),
        lower_bound (max bytes live at one step), weights, weights_shared
        (of those, the bytes another live model - another shape set of the
        same OnnxModel - holds too: one copy in the process), steps,
        planner."""
        s = ffi.new("pg_model_stats *")
        check(lib.pg_model_get_stats(self._m, s))
        return {"arena": int(s.arena_bytes), "naive": int(s.naive_bytes),
                "lower_bound": int(s.lower_bound_bytes), "weights": int(s.weight_bytes),
                "weights_shared": int(s.shared_weight_bytes), "persistent": int(s.persistent_bytes),
                "steps": int(s.steps), "planner": cstr(s.planner)}

    @property
    def steps(self) -> list[dict[str, str]]:
        """The execution order: node, op_type, inputs, outputs, detail."""
        out = []
        s = ffi.new("pg_step_info *")
        for i in range(lib.pg_model_step_count(self._m)):
            check(lib.pg_model_step_info(self._m, i, s))
            out.append({"node": cstr(s.node), "op_type": cstr(s.op_type), "inputs": cstr(s.inputs),
                        "outputs": cstr(s.outputs), "detail": cstr(s.detail)})
        return out

    def profile(self, feeds: Mapping[str, Any], runs: int = 10, warmup: int = 1):
        """Run ``runs`` times on ``feeds`` (after ``warmup`` untimed runs)
        with each step timed by the engine: a
        :class:`~peregrine_nb.profile.StepProfile` of every step's time per
        run, its share, and GFLOP/s for the convs and matrix products."""
        import time

        from .profile import StepProfile
        self._check_runnable()
        if runs < 1:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(f"profile: runs={runs}, at least 1")
        for _ in range(warmup):
            self.run(feeds)
        walls = []
        with self._lock:
            check(lib.pg_model_profile(self._m, 1))
            try:
                for _ in range(runs):
                    t0 = time.perf_counter()
                    self._run(feeds)
                    walls.append(time.perf_counter() - t0)
            finally:
                check(lib.pg_model_profile(self._m, 0))
            t = ffi.new("pg_step_time *")
            times = []
            for i in range(lib.pg_model_step_count(self._m)):
                check(lib.pg_model_step_time(self._m, i, t))
                times.append((int(t.ns), int(t.runs), float(t.flops)))
        total = sum(ns for ns, _, _ in times) or 1
        kern = {k["node"]: k["kernels"] for k in self.kernels}
        rows = []
        for i, (s, (ns, n, flops)) in enumerate(zip(self.steps, times)):
            ms = ns / max(n, 1) / 1e6
            rows.append({"step": i, "node": s["node"], "op_type": s["op_type"], "kernels": kern.get(s["node"], []),
                         "ms": ms, "share": ns / total, "flops": flops,
                         "gflops": flops / (ms * 1e6) if flops and ms > 0 else None})
        return StepProfile(rows=rows, runs=runs, wall_ms=float(np.mean(walls)) * 1e3,
                           threads=int(getattr(self, "threads", None) or lib.pg_get_num_threads()))

    @property
    def op_types(self) -> list[str]:
        return [s["op_type"] for s in self.steps]

    @property
    def passes(self) -> list[dict[str, Any]]:
        """What each optimisation pass did: entry 0 is the input graph, then
        one dict per registered pass (name, level, enabled, ran, ms, changes,
        nodes = the graph snapshot after it).  Empty at level 0."""
        out = []
        pi = ffi.new("pg_pass_info *")
        ch = ffi.new("pg_pass_change *")
        sn = ffi.new("pg_snapshot_node *")
        kinds = {0: "added", 1: "removed", 2: "rewritten"}
        m = self._pass_log_handle()
        for p in range(lib.pg_model_pass_count(m)):
            check(lib.pg_model_pass_info(m, p, pi))
            changes, nodes = [], []
            for i in range(pi.n_changes):
                check(lib.pg_model_pass_change(m, p, i, ch))
                changes.append({"kind": kinds.get(int(ch.kind), "?"), "node": cstr(ch.node),
                                "op": cstr(ch.op), "reason": cstr(ch.reason)})
            for i in range(pi.n_nodes):
                check(lib.pg_model_snapshot_node(m, p, i, sn))
                nodes.append({"name": cstr(sn.name), "op": cstr(sn.op), "inputs": cstr(sn.inputs),
                              "outputs": cstr(sn.outputs), "shapes": cstr(sn.shapes),
                              "dtypes": cstr(sn.dtypes), "attrs": cstr(sn.attrs), "fused": bool(sn.fused)})
            out.append({"name": cstr(pi.name), "description": cstr(pi.description), "level": int(pi.level),
                        "enabled": bool(pi.enabled), "ran": bool(pi.ran), "ms": float(pi.ms),
                        "const_bytes": int(pi.const_bytes), "changes": changes, "nodes": nodes})
        return out

    @property
    def graph_text(self) -> str:
        """The compiled (optimised) graph as text."""
        return cstr(lib.pg_model_text(self._m))

    def report(self) -> str:
        st = self.memory_stats
        lines = [f"compiled at level {self.level}, planner {st['planner']}: {st['steps']} steps"
                 + (f" (loaded from {self.path}{'; ' + self.load_note if self.load_note else ''})"
                    if self.path else ""),
                 f"arena {st['arena']} B, naive {st['naive']} B, lower bound {st['lower_bound']} B, "
                 f"weights {st['weights']} B"
                 + (f" ({st['weights_shared']} B of them shared with other compiled models)"
                    if st["weights_shared"] else "")]
        for i, s in enumerate(self.steps):
            lines.append(f"{i:4d} {s['op_type']:<18} {s['node']:<24} {s['inputs']} -> {s['outputs']}"
                         + (f"  [{s['detail']}]" if s["detail"] else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        st = self.memory_stats
        src = f" from {os.path.basename(self.path)}" if self.path else ""
        return f"<CompiledModel level={self.level} steps={st['steps']} arena={st['arena']}B{src}>"

    def _repr_html_(self) -> str:
        return "<pre style='font-size:12px'>" + html.escape(self.report()) + "</pre>"


def compile(graph: Graph, level: int = 3, disable: Iterable[str] = (), threads: int | None = None,
            planner: str = "greedy_by_size", precision: str = "fp32",
            weight_cache: WeightCache | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pass_log: bool = True) -> CompiledModel:
    """Compile ``graph``: verify, infer shapes, optimise at ``level`` (0 none
    .. 3 all, minus the passes named in ``disable``), plan memory with
    ``planner`` ("greedy_by_size", "greedy_by_first_use", "naive").
    ``precision``: "fp32" (default), "bf16" (MatMul weights in bf16, fp32
    accumulation; AVX512-BF16) or "int8-dynamic" (int8 weights with
    per-column scales, activations quantised per row at run time; VNNI) -
    level 3 only; the CPU (mask) lacking the kernels gives fp32.
    ``model.precision`` says what it got, ``model.compare(ref, feeds)`` the
    error.  ``weight_cache``: a :class:`WeightCache` shared by compiles of
    the same weights, which then pack each weight once.  ``input_shapes``
    (input name -> shape): compile as if those inputs had these shapes (as
    ``graph.with_input_shapes(input_shapes)`` would, without that copy).
    ``pass_log=False`` records no pass log (~20% of a compile): the viewers
    then compile a twin with it the first time they ask (``passes``)."""
    if isinstance(disable, str):
        disable = [disable]
    return CompiledModel(graph, level, disable, threads, planner, precision, weight_cache,
                         input_shapes, pass_log)


def set_memory_limit(nbytes: int | None) -> None:
    """The most bytes one tensor or a model's arena may take; a graph that
    needs more is refused when it compiles (ShapeError naming the tensor).
    None restores the default: the machine's memory (or $PEREGRINE_MEMORY_LIMIT)."""
    check(lib.pg_set_memory_limit(int(nbytes or 0)))


def get_memory_limit() -> int:
    return int(lib.pg_get_memory_limit())


def save_compiled(models: Iterable[CompiledModel], path: str | os.PathLike) -> str:
    """Several compiled models in one file, every constant stored once (one
    network compiled for several input shapes shares its weights): load
    model ``i`` with ``load_compiled(path, index=i)``.  Returns the path."""
    models = list(models)
    if not models:
        raise ValueError("save_compiled: no models")
    path = os.fspath(path)
    arr = ffi.new("const pg_model *[]", [m._m for m in models])
    locks = [m._lock for m in models]
    for lk in locks:
        lk.acquire()
    try:
        check(lib.pg_model_save_many(arr, len(models), os.fsencode(path)))
    finally:
        for lk in locks:
            lk.release()
    return path


def compiled_file_info(path: str | os.PathLike, index: int = 0) -> dict[str, Any]:
    """What a file written by :meth:`CompiledModel.save` says about itself
    (its header and model ``index``, checked): models in the file, engine
    version, format version, arch, the CPU
    level and flags it was bound for, compile level, threads, planner,
    SGEMM panel width of its packed weights, sizes, and the precision
    its products run in ("fp32", "bf16" or "int8-dynamic": what its
    packed weights are for)."""
    fi = ffi.new("pg_model_file_info *")
    check(lib.pg_model_file_info_get(os.fsencode(os.fspath(path)), int(index), fi))
    return {"models": int(fi.n_models), "engine_version": cstr(fi.engine_version), "format_version": int(fi.format_version),
            "arch": cstr(fi.arch), "bound_level": cstr(fi.bound_level), "bound_flags": int(fi.bound_flags),
            "level": int(fi.level), "threads": int(fi.threads), "threads_resolved": int(fi.threads_resolved),
            "pack_nr": int(fi.pack_nr), "planner": cstr(fi.planner), "file_bytes": int(fi.file_bytes),
            "graph_bytes": int(fi.graph_bytes), "data_bytes": int(fi.data_bytes),
            "tensors": int(fi.n_tensors), "nodes": int(fi.n_nodes),
            "precision": {v: k for k, v in PRECISIONS.items()}.get(int(fi.precision), "fp32")}


def load_compiled(path: str | os.PathLike, index: int = 0, threads: int | None = None,
                  planner: str | None = None, verify: bool = False) -> CompiledModel:
    """A model saved by :meth:`CompiledModel.save` (or model ``index`` of a
    file written by :func:`save_compiled`).  The weights are used in
    place from the read-only mapped file (processes loading one file share
    its pages); kernels are bound and memory planned for this CPU and its
    mask now - weights packed for a panel width the selected SGEMM kernel
    lacks are re-packed (``load_info["repacked"]``, and ``load_note`` says
    so).  ``threads`` / ``planner``: None = as compiled.  ``verify`` also
    checks the weights' checksum (reads them all).  A file from another
    engine version or format, or a damaged one, is a FormatError saying
    which."""
    path = os.fspath(path)
    opts = ffi.new("pg_model_load_options *")
    opts.index = int(index)
    opts.threads = int(threads or 0)
    keep = ffi.new("char[]", (planner or "").encode())
    opts.planner = keep if planner else ffi.NULL
    opts.verify_data = int(bool(verify))
    p = ffi.new("pg_model **")
    check(lib.pg_model_load(os.fsencode(path), opts, p))
    m = CompiledModel.__new__(CompiledModel)
    m.graph = None
    m.disable = []
    m.threads = threads
    m.path = path
    m.load_note = ""
    m._attach(p[0])
    info = compiled_file_info(path, index)
    m.index = int(index)
    m.level = info["level"]
    m.planner = m.memory_stats["planner"]
    li = m.load_info
    if li["rebound"]:
        from .cpu import cpu_info
        here = cpu_info().level
        m.load_note = (f"saved bound for {info['bound_level']}; rebound for {here} here"
                       + (f", {li['repacked']} weight(s) re-packed" if li["repacked"] else ""))
    return m
