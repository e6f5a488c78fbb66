"""IPython magics: ``%load_ext peregrine_nb``, then ``%peregrine ...``.

Line magics::

    %peregrine cpu [-o VAR]
    %peregrine compile MODEL [--level N] [--disable PASS,...] [--planner P]
                             [--shape NAME=DIMS ...] [--threads N] [-o VAR]
    %peregrine passes MODEL [--graph GRAPHVAR] [-o VAR]
    %peregrine memory MODEL [--graph GRAPHVAR] [-o VAR]
    %peregrine bench FAMILY [--shape DIMS ...] [--variants V,...] [--threads N] [--run] [-o VAR]

Cell magics::

    %%peregrine graph [--level N] [--disable PASS,...] [--planner P] [--seed N]
                      [--show report|passes|memory] [-o VAR] [-g GRAPHVAR]
    %%peregrine kernel --family NAME --isa ISA [--no-bench] [--seed N] [--timeout S] [-o VAR]

Every magic returns a rich object (displayed when it ends the cell) and
``-o VAR`` stores it in the notebook's namespace.  A bad argument is one
clean UsageError line.
"""
from __future__ import annotations

import os
import shlex

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from .errors import PeregrineError

SUBCOMMANDS = ("cpu", "compile", "passes", "memory", "bench", "graph", "kernel")


def _parser(prog: str, description: str) -> magic_arguments.MagicArgumentParser:
    p = magic_arguments.MagicArgumentParser(prog=prog, description=description, add_help=False)
    return p


def _out(p) -> None:
    p.add_argument("-o", "--output", metavar="VAR", help="store the result in the namespace as VAR")


def _compile_opts(p) -> None:
    p.add_argument("--level", type=int, default=3, choices=range(4), metavar="N",
                   help="optimisation level: 0 none, 1 basic, 2 extended (fusions), 3 + layout (default)")
    p.add_argument("--disable", default="", metavar="PASS,...", help="comma-separated passes to skip")
    p.add_argument("--planner", default="greedy_by_size",
                   choices=("greedy_by_size", "greedy_by_first_use", "naive"), help="memory planner")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="threads the model runs on")


def _build_parsers() -> dict[str, magic_arguments.MagicArgumentParser]:
    ps = {}
    p = ps["cpu"] = _parser("peregrine cpu", "the CPU panel: flags, vector width, caches, "
                            "the variant each kernel family dispatches to, the mask in force")
    _out(p)
    p = ps["compile"] = _parser("peregrine compile", "compile a model and show the report")
    p.add_argument("model", metavar="MODEL", help="an .onnx path, a Graph, or a variable holding one")
    _compile_opts(p)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                   help="an input's (or a symbolic dim's) size for an ONNX model, e.g. x=1x128; repeatable")
    _out(p)
    p = ps["passes"] = _parser("peregrine passes", "the fusion stepper over a compiled model's passes")
    p.add_argument("model", metavar="MODEL", help="a variable holding a compiled model (or a Graph)")
    p.add_argument("--graph", metavar="GRAPHVAR", default=None,
                   help="the Graph MODEL was compiled from (lets the viewer recompile)")
    _out(p)
    p = ps["memory"] = _parser("peregrine memory", "the memory pool viewer of a compiled model")
    p.add_argument("model", metavar="MODEL", help="a variable holding a compiled model (or a Graph)")
    p.add_argument("--graph", metavar="GRAPHVAR", default=None,
                   help="the Graph MODEL was compiled from (lets the viewer recompile)")
    _out(p)
    p = ps["bench"] = _parser("peregrine bench", "the kernel comparison: race a kernel family's variants")
    p.add_argument("family", metavar="FAMILY",
                   help="a kernel family: sgemm (shapes MxNxK), gemv (NxK), softmax, vexp, ...")
    p.add_argument("--shape", action="append", default=[], metavar="DIMS", help="e.g. 256x256x256; repeatable")
    p.add_argument("--variants", default=None, metavar="V,...", help="variants to race (default: all runnable)")
    p.add_argument("--threads", type=int, default=1, metavar="N")
    p.add_argument("--run", action="store_true", help="run at once instead of waiting for the Run button")
    _out(p)
    p = ps["graph"] = _parser("%peregrine graph", "build a graph from the cell's text form and compile it "
                              "(grammar: help(peregrine_nb.graph_cell))")
    _compile_opts(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    p.add_argument("--show", default="report", choices=("report", "passes", "memory"),
                   help="what to show: the compile report, the fusion stepper or the memory viewer")
    p.add_argument("-g", "--graph", metavar="GRAPHVAR", default=None, help="also store the Graph as GRAPHVAR")
    _out(p)
    p = ps["kernel"] = _parser("%peregrine kernel", "assemble the cell's routine, check it against the kernel "
                               "family's C reference in a subprocess, benchmark it")
    p.add_argument("--family", required=True, metavar="NAME",
                   help="the kernel family it implements (see peregrine_nb.asm_cell.SIGNATURES)")
    p.add_argument("--isa", required=True, help="avx2, avx2_fma3, sse2, avx, neon, ...")
    p.add_argument("--no-bench", action="store_true", help="check only")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60, metavar="S",
                   help="seconds the check may take before it is stopped (an endless loop)")
    _out(p)
    return ps


PARSERS = _build_parsers()


def _usage() -> str:
    lines = []
    for name, p in PARSERS.items():
        text = p.format_usage().replace("usage: ", "").replace("::", "")
        lines += [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines)


def _one_line(e: BaseException) -> str:
    msg = str(e).strip() or type(e).__name__
    return msg


@magics_class
class PeregrineMagics(Magics):
    """The ``%peregrine`` magics (see the module docstring)."""

    @magic_arguments.magic_arguments()
    @magic_arguments.argument("command", choices=SUBCOMMANDS, help="what to do")
    @magic_arguments.argument("args", nargs="*", help="the command's own arguments (below)")
    @line_cell_magic
    def peregrine(self, line: str, cell: str | None = None):
        """Peregrine in the notebook.

        %peregrine cpu [-o VAR]
            The CPU panel: flags, vector width, caches, variant per kernel family, mask.
        %peregrine compile MODEL [--level N] [--disable PASS,...] [--planner P]
                                 [--shape NAME=DIMS ...] [--threads N] [-o VAR]
            Compile an ONNX file, a Graph or a variable holding one; shows the report.
        %peregrine passes MODEL [--graph GRAPHVAR] [-o VAR]
            The fusion stepper: the graph pass by pass, what each pass changed and why.
        %peregrine memory MODEL [--graph GRAPHVAR] [-o VAR]
            The memory pool viewer: tensors in the arena over the execution steps
            (--graph names the source Graph, so the planner menu can recompile).
        %peregrine bench FAMILY [--shape DIMS ...] [--variants V,...] [--threads N] [--run] [-o VAR]
            The kernel comparison: a kernel family's variants raced, GFLOP/s
            per variant and a roofline.
        %%peregrine graph [--level N] [--disable ...] [--planner P] [--seed N]
                          [--show report|passes|memory] [-o VAR] [-g GRAPHVAR]
            The cell is a graph in a small text form, e.g.
                input x: f32[128, 384]
                weight w1: f32[384, 384] = random
                h = MatMul(x, w1)
                y = Softmax(h, axis=-1)
                output y
            (full grammar: help(peregrine_nb.graph_cell)); it is built and compiled.
        %%peregrine kernel --family NAME --isa ISA [--no-bench] [--seed N] [--timeout S] [-o VAR]
            The cell is GNU assembly for one kernel family's routine
            (PG_FUNC(name) ... PG_ENDFUNC(name)); it is assembled, checked
            against the C reference by checkasm in a subprocess and benchmarked
            against the built-in variants.  Families and signatures:
            peregrine_nb.asm_cell.SIGNATURES.

        -o VAR stores the result (a rich object) in the namespace.
        """
        try:
            words = shlex.split(line, posix=True)
        except ValueError as e:
            raise UsageError(f"%peregrine: cannot split the arguments: {e}") from None
        if not words:
            raise UsageError("%peregrine needs a command: " + ", ".join(SUBCOMMANDS))
        cmd, rest = words[0], words[1:]
        if cmd not in PARSERS:
            raise UsageError(f"%peregrine: unknown command {cmd!r} (one of {', '.join(SUBCOMMANDS)})")
        if cmd in ("graph", "kernel") and cell is None:
            raise UsageError(f"%peregrine {cmd} is a cell magic: write %%peregrine {cmd} on the cell's first line")
        if cmd not in ("graph", "kernel") and cell is not None:
            raise UsageError(f"%%peregrine {cmd} takes no cell body: use %peregrine {cmd} on one line")
        try:
            args = PARSERS[cmd].parse_args(rest)
        except UsageError as e:
            raise UsageError(f"%{PARSERS[cmd].prog}: {e}") from None
        try:
            result = getattr(self, "_" + cmd)(args, cell)
        except UsageError:
            raise
        except (PeregrineError, ValueError, TypeError, KeyError, OSError, ImportError) as e:
            raise UsageError(_one_line(e)) from None
        if getattr(args, "output", None):
            self.shell.user_ns[args.output] = result
        return result

    # -- helpers -------------------------------------------------------------------
    def _lookup(self, name: str):
        ns = self.shell.user_ns
        if name in ns:
            return ns[name]
        try:
            return eval(name, ns)  # noqa: S307 - the notebook's own expression
        except Exception:  # noqa: BLE001
            raise UsageError(f"{name!r} is not defined in the notebook (nor an expression that evaluates)") from None

    def _model(self, name: str, graph_name: str | None = None):
        from .compiled import CompiledModel, compile as pg_compile
        from .graph import Graph

        obj = self._lookup(name)
        if isinstance(obj, CompiledModel):
            if graph_name:
                g = self._lookup(graph_name)
                if not isinstance(g, Graph):
                    raise UsageError(f"--graph {graph_name}: a {type(g).__name__}, not a Graph")
                obj.graph = g
            return obj
        if isinstance(obj, Graph):
            return pg_compile(obj)
        raise UsageError(f"{name} is a {type(obj).__name__}, not a compiled model or a Graph")

    @staticmethod
    def _compile_graph(graph, args):
        from .compiled import compile as pg_compile

        disable = [p.strip() for p in args.disable.split(",") if p.strip()]
        return pg_compile(graph, level=args.level, disable=disable, threads=args.threads, planner=args.planner)

    # -- commands ---------------------------------------------------------------------
    def _cpu(self, args, cell):
        from .widgets.cpu_panel import CpuPanel

        return CpuPanel()

    def _compile_cmd_source(self, args):
        from .graph import Graph

        src = args.model
        shapes = {}
        for s in args.shape:
            if "=" not in s:
                raise UsageError(f"--shape {s!r}: write NAME=DIMS, e.g. x=1x128")
            k, v = s.split("=", 1)
            try:
                shapes[k.strip()] = tuple(int(d) for d in v.replace(",", "x").split("x") if d)
            except ValueError:
                raise UsageError(f"--shape {s!r}: dimensions must be integers, e.g. x=1x128") from None
        if src.endswith(".onnx") or os.path.sep in src or (os.path.exists(src) and src not in self.shell.user_ns):
            if not os.path.exists(src):
                raise UsageError(f"no such file: {src}")
            import peregrine_nb

            load = getattr(peregrine_nb, "load_onnx", None)
            if load is None:
                try:
                    from .onnx_import import load_onnx as load
                except ImportError:
                    load = None
            if load is None:
                raise UsageError("this build of peregrine_nb cannot read ONNX files yet (no peregrine_nb.load_onnx)")
            return load(src, shapes=shapes) if shapes else load(src)
        if shapes:
            raise UsageError("--shape applies to ONNX files only")
        obj = self._lookup(src)
        from .compiled import CompiledModel

        if isinstance(obj, CompiledModel):
            from .widgets._passlog import source_graph

            g = source_graph(obj)
            if g is None:
                raise UsageError(f"{src} is a compiled model whose source graph was not kept: pass the Graph")
            return g
        if not isinstance(obj, Graph):
            raise UsageError(f"{src} is a {type(obj).__name__}: give an .onnx path, a Graph or a variable holding one")
        return obj

    def _compile(self, args, cell):
        return self._compile_graph(self._compile_cmd_source(args), args)

    def _passes(self, args, cell):
        from .widgets import FusionStepper

        return FusionStepper(self._model(args.model, args.graph))

    def _memory(self, args, cell):
        from .widgets import MemoryViewer

        return MemoryViewer(self._model(args.model, args.graph))

    def _bench(self, args, cell):
        from .widgets import KernelComparison, bench_ops, parse_shapes

        if args.family not in bench_ops():
            raise UsageError(f"bench: kernel family {args.family!r} cannot be benchmarked "
                             f"(choose from {', '.join(bench_ops())})")
        shapes = None
        if args.shape:
            try:
                shapes = parse_shapes(", ".join(args.shape))
            except ValueError as e:
                raise UsageError(f"bench: {e}") from None
            want = 3 if args.family == "sgemm" else 2
            bad = [s for s in shapes if len(s) != want]
            if bad:
                raise UsageError(f"bench: {args.family} shapes have {want} dimensions "
                                 f"({'MxNxK' if want == 3 else 'NxK'}), not {'x'.join(map(str, bad[0]))}")
        variants = None
        if args.variants:
            from . import kernels

            variants = [v.strip() for v in args.variants.split(",") if v.strip()]
            known = kernels.runnable_variants(args.family)
            unknown = [v for v in variants if v not in known]
            if unknown:
                raise UsageError(f"bench: {args.family} has no runnable variant {unknown[0]!r} (it has: {', '.join(known)})")
        if args.threads < 1:
            raise UsageError("bench: --threads must be at least 1")
        w = KernelComparison(args.family, shapes=shapes, variants=variants, threads=args.threads)
        if args.run:
            w.run()
        return w

    def _graph(self, args, cell):
        from .graph_cell import parse_graph

        g = parse_graph(cell, seed=args.seed)
        m = self._compile_graph(g, args)
        if args.graph:
            self.shell.user_ns[args.graph] = g
        if args.show == "passes":
            from .widgets import FusionStepper

            return FusionStepper(m, graph=g)
        if args.show == "memory":
            from .widgets import MemoryViewer

            return MemoryViewer(m, graph=g)
        return m

    def _kernel(self, args, cell):
        from .asm_cell import KernelBuildError, run_cell

        try:
            return run_cell(cell, args.family, args.isa, bench=not args.no_bench, seed=args.seed,
                            timeout=args.timeout)
        except KernelBuildError as e:
            raise UsageError(str(e)) from None


# `%peregrine?` ends with every command's own argparse usage line
PeregrineMagics.peregrine.__doc__ += "\nEvery command's arguments::\n\n" + "\n".join(
    "  " + ln for ln in _usage().splitlines()) + "\n"


def load(ip) -> None:
    """Register the magics with an IPython shell (``%load_ext peregrine_nb``)."""
    ip.register_magics(PeregrineMagics)


load_ipython_extension = load
