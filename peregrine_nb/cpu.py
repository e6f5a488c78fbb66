"""What the CPU can do, and the mask that restricts dispatch.

>>> import peregrine_nb as pg
>>> info = pg.cpu_info()
>>> "avx2" in info.flags or info.arch != "x86_64"
True
>>> with pg.cpu_mask("c"):
...     pg.cpu_info().level
'c'
"""
from __future__ import annotations

import html
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from ._lib import check, cstr, ffi, lib


def _flag_names(bits: int) -> list[str]:
    names = []
    for b in range(64):
        if bits & (1 << b):
            name = lib.pg_cpu_flag_name(1 << b)
            if name != ffi.NULL:
                names.append(cstr(name))
    return names


@dataclass(frozen=True)
class CpuInfo:
    """The detected CPU, the mask in force and what each kernel family
    dispatches to (``dispatch``: family name -> variant name)."""

    arch: str
    vendor: str
    brand: str
    flags: list[str]
    active_flags: list[str]
    level: str
    vector_bits: int
    sve_bits: int
    cores: int
    caches: dict[str, int]
    cacheline: int
    mask: int
    dispatch: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        masked = [f for f in self.flags if f not in self.active_flags]
        lines = [
            f"cpu      {self.arch} {self.vendor} {self.brand}".rstrip(),
            f"cores    {self.cores}",
            f"flags    {' '.join(self.flags)}",
            f"level    {self.level} ({self.vector_bits}-bit vectors)"
            + (f", SVE {self.sve_bits}-bit" if self.sve_bits else ""),
        ]
        if masked:
            lines.append(f"masked   {' '.join(masked)}")
        lines.append("caches   " + ", ".join(f"{k} {_kib(v)}" for k, v in self.caches.items()))
        if self.dispatch:
            lines.append("dispatch " + ", ".join(f"{family}: {v}" for family, v in self.dispatch.items()))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        def chip(name: str) -> str:
            on = name in self.active_flags
            style = "background:#2b7a0b;color:white" if on else "background:#ccc;color:#555"
            return f'<span style="{style};border-radius:4px;padding:1px 6px;margin:1px;display:inline-block">{html.escape(name)}</span>'

        rows = [
            ("CPU", f"{self.arch} · {html.escape(self.vendor)} {html.escape(self.brand)}"),
            ("Cores", str(self.cores)),
            ("Flags", " ".join(chip(f) for f in self.flags) or "none"),
            ("Dispatch level", f"<b>{html.escape(self.level)}</b> ({self.vector_bits}-bit vectors)"
             + (f", SVE {self.sve_bits}-bit" if self.sve_bits else "")),
            ("Caches", ", ".join(f"{k} {_kib(v)}" for k, v in self.caches.items())),
        ]
        if self.dispatch:
            rows.append(("Kernels", "<br>".join(
                f"{html.escape(family)} → <code>{html.escape(v)}</code>" for family, v in self.dispatch.items())))
        body = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{k}</th><td style='text-align:left'>{v}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"


def _kib(n: int) -> str:
    if n <= 0:
        return "unknown"
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def cpu_info() -> CpuInfo:
    """Detect the CPU (once, in C) and report it with the current mask."""
    ci = ffi.new("pg_cpu_info *")
    check(lib.pg_cpu_get_info(ci))
    dispatch = {}
    info = ffi.new("pg_variant_info *")
    for i in range(lib.pg_kernel_family_count()):
        check(lib.pg_variant_get_info(i, lib.pg_variant_selected(i), info))
        dispatch[cstr(info.family)] = cstr(info.name)
    return CpuInfo(
        arch=cstr(ci.arch),
        vendor=cstr(ci.vendor),
        brand=cstr(ci.brand),
        flags=_flag_names(ci.flags),
        active_flags=_flag_names(ci.active),
        level=cstr(ci.level),
        vector_bits=ci.vector_bits,
        sve_bits=ci.sve_bits,
        cores=ci.cores,
        caches={"L1d": ci.l1d_bytes, "L2": ci.l2_bytes, "L3": ci.l3_bytes},
        cacheline=ci.cacheline_bytes,
        mask=ci.mask,
        dispatch=dispatch,
    )


def cpu_levels() -> list[str]:
    """Dispatch levels of this architecture, lowest ("c") first."""
    return [cstr(lib.pg_cpu_level_name(i)) for i in range(lib.pg_cpu_level_count())]


def set_cpu_mask(level: str | int) -> None:
    """Restrict dispatch to a level ("c", "avx2", "neon", "all"), a
    comma-separated list of feature names, or a raw bit mask."""
    if isinstance(level, int):
        check(lib.pg_cpu_set_mask(level))
    else:
        check(lib.pg_cpu_set_mask_name(level.encode()))


def get_cpu_mask() -> int:
    return lib.pg_cpu_get_mask()


@contextmanager
def cpu_mask(level: str | int) -> Iterator[None]:
    """Restrict dispatch for the duration of a with-block."""
    previous = get_cpu_mask()
    set_cpu_mask(level)
    try:
        yield
    finally:
        check(lib.pg_cpu_set_mask(previous))
