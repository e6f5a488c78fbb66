#!/usr/bin/env python3
"""atheris target: peregrine_nb.load_onnx on mutated bytes, then compile at
levels 0 and 3 and run on zero feeds (replay.onnx).  Only PeregrineError
subclasses and FileNotFoundError are acceptable; any other exception, or a
crash of the process, is a bug that atheris saves as crash-<sha1>.  A
replay.KnownBug (a check failing as a bug of known_bugs.json makes it fail)
is counted and passed over when PG_FUZZ_IGNORE_KNOWN=1.

    python3 tests/fuzz/fuzz_onnx.py [libFuzzer flags] CORPUS_DIR...

(tests/run_fuzz.sh runs it on a copy of tests/fuzz/corpus/onnx.)  The
Python side (peregrine_nb) is instrumented for coverage; the C library is
the plain build the package loads.
"""
from __future__ import annotations

import atexit
import collections
import os
import sys
import warnings
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports(include=["peregrine_nb"]):
    import peregrine_nb  # noqa: F401
    import peregrine_nb.onnx_import  # noqa: F401
    import peregrine_nb.compiled  # noqa: F401

import onnx  # noqa: E402,F401  (imported before fuzzing starts: not timed per input)
import replay  # noqa: E402


IGNORE_KNOWN = os.environ.get("PG_FUZZ_IGNORE_KNOWN") == "1"
known_hits: collections.Counter = collections.Counter()


def one_input(data: bytes) -> None:
    try:
        replay.onnx(data)
    except replay.KnownBug as e:
        if not IGNORE_KNOWN:
            raise
        known_hits[e.bug_id] += 1


@atexit.register
def _report() -> None:
    for bug, n in sorted(known_hits.items()):
        print(f"fuzz_onnx: known bug {bug} hit {n} time(s) (tests/fuzz/known_bugs.json)", file=sys.stderr)


def main() -> None:
    warnings.filterwarnings("ignore")
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
