"""Loads libperegrine with cffi in ABI mode.

The cdef is the PG_CFFI_BEGIN..PG_CFFI_END region of peregrine.h, read at
import time, so the C header stays the one source of the API.  The library and
header are looked up next to this file (where `pip install .` puts them), or
where PEREGRINE_LIBRARY / PEREGRINE_HEADER point (a development build tree).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from cffi import FFI

from .errors import BY_STATUS, LibraryNotFoundError, PeregrineError

_HERE = Path(__file__).resolve().parent
_REBUILD_HINT = (
    "rebuild and reinstall the package from the source tree with `pip install .` "
    "(or point PEREGRINE_LIBRARY at a libperegrine.so built by meson)"
)


def _find(env: str, candidates: list[Path], what: str) -> Path:
    override = os.environ.get(env)
    if override:
        path = Path(override)
        if not path.is_file():
            raise LibraryNotFoundError(f"{env}={override} does not name a file; {_REBUILD_HINT}")
        return path
    for path in candidates:
        if path.is_file():
            return path
    raise LibraryNotFoundError(
        f"the Peregrine {what} was not found (looked in {', '.join(str(c) for c in candidates)}); "
        + _REBUILD_HINT
    )


def _cdef_from_header(text: str) -> str:
    m = re.search(r"/\* PG_CFFI_BEGIN \*/(.*)/\* PG_CFFI_END \*/", text, re.S)
    if not m:
        raise LibraryNotFoundError(f"peregrine.h has no PG_CFFI_BEGIN/END region; {_REBUILD_HINT}")
    body = re.sub(r"\bPG_API\s+", "", m.group(1))
    return body


header_path = _find(
    "PEREGRINE_HEADER",
    [_HERE / "include" / "peregrine.h", _HERE.parent / "engine" / "include" / "peregrine.h"],
    "C header (peregrine.h)",
)
library_path = _find(
    "PEREGRINE_LIBRARY",
    [_HERE / "libperegrine.so", _HERE / "libperegrine.dylib"],
    "shared library (libperegrine)",
)

ffi = FFI()
ffi.cdef(_cdef_from_header(header_path.read_text()))
try:
    lib = ffi.dlopen(str(library_path))
except OSError as e:  # a stale or foreign-architecture build
    raise LibraryNotFoundError(f"could not load {library_path}: {e}; {_REBUILD_HINT}") from None


def last_error() -> str:
    return ffi.string(lib.pg_last_error()).decode("utf-8", "replace")


def raise_last(status: int) -> None:
    name = ffi.string(lib.pg_status_name(status)).decode()
    raise BY_STATUS.get(name, PeregrineError)(last_error() or name, name)


def check(status: int) -> None:
    """Raise the exception matching a non-zero pg_status, with the C message."""
    if status != 0:
        raise_last(status)


def cstr(p) -> str:
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def bin_path(name: str) -> Path:
    """Path of a C program installed with the package (checkasm), or found
    next to PEREGRINE_LIBRARY in a build tree."""
    candidates = [_HERE / "bin" / name]
    lib_override = os.environ.get("PEREGRINE_LIBRARY")
    if lib_override:
        build = Path(lib_override).parent
        candidates += [build / "engine" / "checkasm" / name, build / "engine" / name]
    for c in candidates:
        if c.is_file():
            return c
    raise LibraryNotFoundError(f"{name} was not found (looked in {', '.join(map(str, candidates))}); {_REBUILD_HINT}")
