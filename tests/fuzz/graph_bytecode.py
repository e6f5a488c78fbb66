"""The graph fuzz target's byte code (engine/fuzz/fuzz_graph.c) in Python.

`run(data)` interprets a program exactly as the C target does, through the
C API by cffi (peregrine_nb._lib), and raises AssertionError where the C
target would abort on a broken invariant; a PG_ERR_* status from the engine
is never an error here.  tests/test_fuzz_regressions.py replays the corpus
and the crashes through it, so they are checked by the normal test suite
without clang.

`Asm` writes programs (make_seeds.py assembles the seed corpus with it):

    a = Asm()
    a.input("t0", "float32", (2, 3))
    a.node("Relu", ["t0"], ["t1"], name="n1")
    a.output("t1")
    data = a.bytes()

The tables below must stay equal to the C target's; the file's layout is
documented at the top of fuzz_graph.c.
"""
from __future__ import annotations

import math
from typing import Sequence

MAX_NODES = 64
MAX_INSNS = 512
MAX_RUN_BYTES = 32 << 20

F32, U8, I8, I32, I64, BOOL, F64 = 1, 2, 3, 6, 7, 9, 11
DTYPES = [F32, F32, F32, F32, I64, I64, BOOL, I32, U8, I8, F64, 0, 13]
DTYPE_NAMES = {"float32": F32, "uint8": U8, "int8": I8, "int32": I32, "int64": I64, "bool": BOOL,
               "float64": F64, "undefined": 0, "uint64": 13}
DIMS = [1, 2, 3, 4, 1, 2, 8, 5, 6, 7, 0, 1, 2, 4, 3, -1]
INTS = [0, 1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8, 1, 0, 2]
BIG_INTS = [2**63 - 1, -2**63, -5, 9, 16, 64, 2**31, -2**31, 100, 1000, 1 << 40, -1000, 255, 256, 7, -7]
FLOATS = [0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, 0.25, 1e-5, 10.0, -0.5, 100.0, math.nan, math.inf,
          -math.inf, 1e30]
ATTRS = ["axis", "axes", "perm", "transA", "transB", "alpha", "beta", "epsilon", "keepdims", "to",
         "approximate", "activation", "splits", "split", "scale", "causal", "k_transposed",
         "num_heads", "qkv_layout", "value", "value_float", "value_floats", "value_int",
         "value_ints", "allowzero", "noop_with_empty_axes", "start", "end", "num_outputs", "bogus",
         "batch_dims", "equation", "exclusive", "fmod", "largest", "mode", "num_groups", "reduction",
         "reverse", "select_last_index", "upper", "sorted", "min", "max",
         # the GGUF decoder's ops, then the NCHWc reorders and Conv
         "wtype", "n_embd", "act_type", "K", "N", "tail", "heads", "head_dim", "n_rot", "neox",
         "positions", "width", "layer", "n_head", "n_head_kv", "window", "softcap", "kq_scale", "q_scale",
         "nchwc", "channels", "kernel_shape", "strides", "pads", "dilations", "group", "auto_pad", "blocksize",
         "f16"]
STRINGS = ["none", "relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu", "bshd",
           "bhsd", "erf", "", "bogus", "1", "axis", "NONE", "gelu_erf",
           "constant", "reflect", "edge", "wrap", "add", "mul", "ij,jk->ik", "ii->i",
           "...ij->...ji", "bij,bjk->bik", "i,i->", "ij->"]
EXTRA_OPS = ["LayerNorm", "RMSNormalization", "Conv", "", "matmul", "FusedMatMulX", "Loop", "If"]
PLANNERS = [None, "greedy_by_size", "greedy_by_first_use", "naive", None, None, None, "bogus"]

_NP = {F32: "float32", U8: "uint8", I8: "int8", I32: "int32", I64: "int64", BOOL: "bool", F64: "float64"}
_STATUS_MAX = 9   # PG_ERR_INTERNAL


def _lib():
    from peregrine_nb._lib import ffi, lib
    return ffi, lib


def op_names() -> list[str]:
    ffi, lib = _lib()
    out = []
    info = ffi.new("pg_graph_op_info *")
    for i in range(lib.pg_graph_op_count()):
        assert lib.pg_graph_op_get_info(i, info) == 0
        out.append(ffi.string(info.name).decode())
    return out


def pass_names() -> list[str]:
    ffi, lib = _lib()
    out = []
    pi = ffi.new("pg_pass_info *")
    for i in range(lib.pg_pass_registry_count()):
        assert lib.pg_pass_registry_info(i, pi) == 0
        out.append(ffi.string(pi.name).decode())
    return out


def tensor_name(k: int) -> str:
    """fuzz_graph.c's name k: "t<k>", t15 padded with 'x' to 3000 bytes."""
    return f"t{k}".ljust(3000, "x") if k == 15 else f"t{k}"


class _Reader:
    def __init__(self, data: bytes):
        self.p, self.i = data, 0

    def u8(self) -> int:
        if self.i < len(self.p):
            self.i += 1
            return self.p[self.i - 1]
        return 0

    def more(self) -> bool:
        return self.i < len(self.p)


def _check(st: int, what: str, trace: list | None = None, args=()) -> int:
    _, lib = _lib()
    if trace is not None:
        from peregrine_nb._lib import last_error
        args = [a.decode() if isinstance(a, bytes) else a for a in args]
        trace.append(f"{what}({', '.join(map(repr, args))}) -> " + ("ok" if st == 0 else last_error()))
    assert 0 <= st <= _STATUS_MAX, f"{what} returned status {st}, which is no pg_status"
    if st == _STATUS_MAX:
        from peregrine_nb._lib import last_error
        raise AssertionError(f"{what} returned PG_ERR_INTERNAL: {last_error()}")
    return st


class _Interp:
    def __init__(self, data: bytes, trace: list | None = None):
        self.ffi, self.lib = _lib()
        self.r = _Reader(data)
        self.trace = trace
        self.ops = op_names()
        self.passes = pass_names()
        self.keep: list = []

    # -- operands
    def name(self) -> str:
        return tensor_name(self.r.u8() % 16)

    def inname(self) -> str:
        k = self.r.u8() % 17
        return "" if k == 16 else tensor_name(k)

    def dtype(self) -> int:
        return DTYPES[self.r.u8() % 13]

    def shape(self):
        k = self.r.u8() % 6
        rank = k if k < 5 else (-1 if self.r.u8() & 1 else 9)
        dims, numel = [], 1
        for _ in range(max(rank, 0)):
            d = DIMS[self.r.u8() % 16]
            dims.append(d)
            numel = 0 if d < 0 else numel * d
        if rank < 0 or rank > 8:
            numel = 0
        dims += [0] * (9 - len(dims))
        return rank, dims, numel

    def data(self, t: int, numel: int):
        buf = self.ffi.new("uint8_t[]", max(numel, 1) * 8)
        arrays = {F32: ("float *", lambda b: FLOATS[b % 16]), F64: ("double *", lambda b: FLOATS[b % 16]),
                  I64: ("int64_t *", lambda b: INTS[b % 16]), I32: ("int32_t *", lambda b: INTS[b % 16]),
                  I8: ("int8_t *", lambda b: INTS[b % 16]), U8: ("uint8_t *", lambda b: b % 9),
                  BOOL: ("uint8_t *", lambda b: b & 1)}
        if t in arrays:
            ctype, f = arrays[t]
            view = self.ffi.cast(ctype, buf)
            for i in range(numel):
                view[i] = f(self.r.u8())
        else:
            for _ in range(numel):
                self.r.u8()
        return buf

    def int_(self) -> int:
        b = self.r.u8()
        return INTS[b % 16] if b < 240 else BIG_INTS[b - 240]

    def float_(self) -> float:
        return FLOATS[self.r.u8() % 16]

    def nodename(self):
        b = self.r.u8()
        if b % 4 == 0:
            return None
        if b == 255:
            return ""
        return f"n{b // 4}"

    def noderef(self, g) -> str:
        b = self.r.u8()
        if b < 192:
            last = self.lib.pg_graph_last_node(g)
            return "n0" if last == self.ffi.NULL else self.ffi.string(last).decode()
        return f"n{b % 64}"

    def attr(self) -> bytes:
        return ATTRS[self.r.u8() % len(ATTRS)].encode()

    # -- the program
    def run(self) -> None:
        ffi, lib, r = self.ffi, self.lib, self.r
        h = r.u8()
        gp = ffi.new("pg_graph **")
        assert lib.pg_graph_new(gp) == 0
        try:
            self.program(gp[0], h)
        finally:
            lib.pg_graph_free(gp[0])

    def program(self, g, h: int) -> None:
        ffi, lib, r = self.ffi, self.lib, self.r
        planner = PLANNERS[h & 7]
        disabled = self.passes[(h >> 4) % len(self.passes)] if (h & 8) and self.passes else None
        threads = 1 + (h >> 7)
        nodes = 0
        insn = 0
        while insn < MAX_INSNS and r.more():
            insn += 1
            op = r.u8() % 10
            if op in (0, 1):
                name = self.name().encode()
                t = self.dtype()
                rank, dims, numel = self.shape()
                cdims = ffi.new("int64_t[9]", dims)
                if op == 0:
                    _check(lib.pg_graph_add_input(g, name, t, rank, cdims), "add_input", self.trace, (name.decode(), t, dims[:max(rank, 0)] if rank <= 8 else dims))
                else:
                    buf = self.data(t, numel)
                    _check(lib.pg_graph_add_initializer(g, name, t, rank, cdims, buf), "add_initializer",
                           self.trace, (name.decode(), t, dims[:max(rank, 0)] if rank <= 8 else dims))
            elif op == 2:
                k = r.u8() % (len(self.ops) + 8)
                op_type = self.ops[k] if k < len(self.ops) else EXTRA_OPS[k - len(self.ops)]
                nn = self.nodename()
                ins = [self.inname() for _ in range(r.u8() % 6)]
                outs = [self.name() for _ in range(1 + r.u8() % 3)]
                if nodes >= MAX_NODES:
                    continue
                cins = [ffi.new("char[]", s.encode()) for s in ins]
                couts = [ffi.new("char[]", s.encode()) for s in outs]
                st = lib.pg_graph_add_node(g, op_type.encode(), ffi.NULL if nn is None else nn.encode(),
                                           ffi.new("const char *[]", cins or [ffi.NULL]), len(ins),
                                           ffi.new("const char *[]", couts), len(outs))
                nodes += _check(st, "add_node", self.trace, (op_type, nn, ins, outs)) == 0
            elif op == 3:
                node, attr = self.noderef(g).encode(), self.attr()
                v = self.int_()
                _check(lib.pg_graph_set_attr_int(g, node, attr, v), "set_attr_int", self.trace, (node, attr, v))
            elif op == 4:
                node, attr = self.noderef(g).encode(), self.attr()
                v = self.float_()
                _check(lib.pg_graph_set_attr_float(g, node, attr, v), "set_attr_float", self.trace, (node, attr, v))
            elif op == 5:
                node, attr = self.noderef(g).encode(), self.attr()
                v = [self.int_() for _ in range(r.u8() % 9)]
                _check(lib.pg_graph_set_attr_ints(g, node, attr, ffi.new("int64_t[8]", v), len(v)),
                       "set_attr_ints", self.trace, (node, attr, v))
            elif op == 6:
                node, attr = self.noderef(g).encode(), self.attr()
                v = [self.float_() for _ in range(r.u8() % 9)]
                _check(lib.pg_graph_set_attr_floats(g, node, attr, ffi.new("float[8]", v), len(v)),
                       "set_attr_floats", self.trace, (node, attr, v))
            elif op == 7:
                node, attr = self.noderef(g).encode(), self.attr()
                v = STRINGS[r.u8() % len(STRINGS)]
                _check(lib.pg_graph_set_attr_string(g, node, attr, v.encode()), "set_attr_string",
                       self.trace, (node, attr, v))
            elif op == 8:
                node, attr = self.noderef(g).encode(), self.attr()
                t = self.dtype()
                rank, dims, numel = self.shape()
                buf = self.data(t, numel)
                _check(lib.pg_graph_set_attr_tensor(g, node, attr, t, rank, ffi.new("int64_t[9]", dims), buf),
                       "set_attr_tensor", self.trace, (node, attr, t, dims[:max(rank, 0)]))
            else:
                v = self.name()
                _check(lib.pg_graph_add_output(g, v.encode()), "add_output", self.trace, (v,))
        if lib.pg_graph_text(g) == ffi.NULL:
            _check(lib.pg_last_status(), "pg_graph_text")
        _check(lib.pg_graph_check(g), "pg_graph_check", self.trace)
        c_planner = ffi.new("char[]", planner.encode()) if planner else ffi.NULL
        c_disabled = ffi.new("char[]", disabled.encode()) if disabled else ffi.NULL
        for level in (0, 3):
            opts = ffi.new("pg_compile_options *")
            opts.level, opts.planner, opts.disabled, opts.threads = level, c_planner, c_disabled, threads
            mp = ffi.new("pg_model **")
            st = _check(lib.pg_compile(g, opts, mp), "pg_compile", self.trace, (level,))
            assert (st == 0) == (mp[0] != ffi.NULL), f"compile status {st} with model {mp[0]}"
            if st == 0:
                try:
                    self.exercise(mp[0])
                finally:
                    lib.pg_model_free(mp[0])

    def exercise(self, m) -> None:
        ffi, lib = self.ffi, self.lib
        stats = ffi.new("pg_model_stats *")
        assert lib.pg_model_get_stats(m, stats) == 0
        lib.pg_model_text(m)
        si = ffi.new("pg_step_info *")
        for i in range(lib.pg_model_step_count(m)):
            assert lib.pg_model_step_info(m, i, si) == 0
        row = ffi.new("pg_plan_row *")
        for i in range(lib.pg_model_plan_count(m)):
            assert lib.pg_model_plan_row(m, i, row) == 0
        pi, ch, sn = ffi.new("pg_pass_info *"), ffi.new("pg_pass_change *"), ffi.new("pg_snapshot_node *")
        for p in range(lib.pg_model_pass_count(m)):
            assert lib.pg_model_pass_info(m, p, pi) == 0
            for i in range(pi.n_changes):
                assert lib.pg_model_pass_change(m, p, i, ch) == 0
            for i in range(pi.n_nodes):
                assert lib.pg_model_snapshot_node(m, p, i, sn) == 0
        if stats.arena_bytes > MAX_RUN_BYTES:
            return
        n_in = lib.pg_model_input_count(m)
        if n_in > 64:
            return
        info = ffi.new("pg_tensor_info *")
        names, bufs, ranks, shapes, total = [], [], [], [], 0
        for i in range(n_in):
            assert lib.pg_model_input_info(m, i, info) == 0
            assert 0 <= info.rank <= 8, f"input rank {info.rank}"
            total += info.nbytes
            names.append(ffi.new("char[]", ffi.string(info.name)))
            ranks.append(info.rank)
            shapes.append(ffi.new("int64_t[8]", list(info.dims)))
            bufs.append(ffi.new("uint8_t[]", max(info.nbytes, 1)) if total <= MAX_RUN_BYTES else None)
        if total > MAX_RUN_BYTES:
            return
        c_names = ffi.new("const char *[]", names or [ffi.NULL])
        c_data = ffi.new("const void *[]", bufs or [ffi.NULL])
        c_ranks = ffi.new("int[]", ranks or [0])
        c_shapes = ffi.new("const int64_t *[]", shapes or [ffi.NULL])
        out = ffi.new("pg_tensor_info *")
        for rep in range(3):
            if rep == 2 and _check(lib.pg_model_rebind(m), "pg_model_rebind") != 0:
                break
            allocs = lib.pg_alloc_count()
            st = _check(lib.pg_model_run(m, n_in, c_names, c_data, c_ranks, c_shapes), "pg_model_run", self.trace)
            assert lib.pg_alloc_count() == allocs, "a run allocated"
            if st != 0:
                break
            for o in range(lib.pg_model_output_count(m)):
                assert lib.pg_model_output_info(m, o, out) == 0
                if out.nbytes:
                    bytes(ffi.buffer(out.data, out.nbytes))


def run(data: bytes, trace: list | None = None) -> None:
    """Interpret one program (see the module doc); with a list as trace,
    each API call is appended to it with its outcome."""
    _Interp(bytes(data), trace).run()


def disasm(data: bytes) -> str:
    """The API calls a program makes (it is run: the outcome of each call
    decides what "the last node" is), one per line, for reading crashes."""
    trace: list = []
    try:
        run(data, trace)
    except AssertionError as e:
        trace.append(f"check failed: {e}")
    return "\n".join(trace)


# ---------------------------------------------------------------------------
# the assembler
# ---------------------------------------------------------------------------

def _index(table: Sequence, value, what: str) -> int:
    for i, v in enumerate(table):
        if v == value or (isinstance(v, float) and isinstance(value, float) and math.isnan(v) and math.isnan(value)):
            return i
    raise ValueError(f"{what} {value!r} cannot be written (choices: {list(table)})")


class Asm:
    """Writes graph programs for the byte code (see the module doc)."""

    def __init__(self, planner: str | None = None, disable: str | None = None, threads: int = 1):
        h = _index(PLANNERS, planner, "planner")
        if disable is not None:
            h |= 8 | (pass_names().index(disable) << 4)
        if threads == 2:
            h |= 128
        self.out = bytearray([h])
        self._ops = None

    def _name(self, s: str) -> int:
        k = int(s[1:])
        assert s[0] == "t" and 0 <= k < 16, s
        return k

    def _inname(self, s: str) -> int:
        return 16 if s == "" else self._name(s)

    def _shape(self, shape) -> list[int]:
        b = [len(shape)]
        assert len(shape) <= 4
        return b + [_index(DIMS, d, "dim") for d in shape]

    def _data(self, dtype: int, values) -> list[int]:
        import numpy as np
        flat = np.asarray(values).reshape(-1).tolist()
        if dtype in (F32, F64):
            return [_index(FLOATS, float(v), "float") for v in flat]
        if dtype in (I64, I32, I8):
            return [_index(INTS, int(v), "int") for v in flat]
        if dtype == U8:
            return [int(v) for v in flat]
        return [int(bool(v)) for v in flat]

    def _int(self, v: int) -> int:
        if v in INTS:
            return INTS.index(v)
        return 240 + _index(BIG_INTS, v, "int")

    def _ref(self, node: str | None) -> int:
        return 0 if node is None else 192 + int(node[1:])

    def input(self, name: str, dtype: str, shape) -> "Asm":
        self.out += bytes([0, self._name(name), DTYPES.index(DTYPE_NAMES[dtype])] + self._shape(shape))
        return self

    def init(self, name: str, dtype: str, values) -> "Asm":
        import numpy as np
        a = np.asarray(values)
        t = DTYPE_NAMES[dtype]
        self.out += bytes([1, self._name(name), DTYPES.index(t)] + self._shape(a.shape) + self._data(t, a))
        return self

    def node(self, op: str, inputs, outputs, name: str | None = None) -> "Asm":
        if self._ops is None:
            self._ops = op_names() + EXTRA_OPS
        nb = 0 if name is None else int(name[1:]) * 4 + 1
        assert name is None or 0 <= int(name[1:]) < 64
        self.out += bytes([2, self._ops.index(op), nb, len(inputs)] + [self._inname(s) for s in inputs]
                          + [len(outputs) - 1] + [self._name(s) for s in outputs])
        return self

    def attr(self, node: str | None, key: str, value) -> "Asm":
        """node None: the last node added."""
        a = ATTRS.index(key)
        ref = self._ref(node)
        if isinstance(value, bool) or isinstance(value, int):
            self.out += bytes([3, ref, a, self._int(int(value))])
        elif isinstance(value, float):
            self.out += bytes([4, ref, a, _index(FLOATS, value, "float")])
        elif isinstance(value, str):
            self.out += bytes([7, ref, a, STRINGS.index(value)])
        elif isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
            self.out += bytes([5, ref, a, len(value)] + [self._int(v) for v in value])
        elif isinstance(value, (list, tuple)):
            self.out += bytes([6, ref, a, len(value)] + [_index(FLOATS, float(v), "float") for v in value])
        else:   # a numpy array: a tensor attribute
            import numpy as np
            arr = np.asarray(value)
            t = {np.dtype("float32"): F32, np.dtype("int64"): I64, np.dtype("bool"): BOOL,
                 np.dtype("int32"): I32, np.dtype("float64"): F64}[arr.dtype]
            self.out += bytes([8, ref, a, DTYPES.index(t)] + self._shape(arr.shape) + self._data(t, arr))
        return self

    def output(self, name: str) -> "Asm":
        self.out += bytes([9, self._name(name)])
        return self

    def bytes(self) -> bytes:
        return bytes(self.out)
