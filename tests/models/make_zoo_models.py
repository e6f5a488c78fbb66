"""Export every architecture of zoo_models.py (the families beyond the
issue's list: ALBERT to wav2vec2) with make_models.py's exporters,
references and manifest, for tests/test_onnx_zoo.py.

    python3 tests/models/make_zoo_models.py --out DIR [--exporters ...] [--size tiny|bench]

takes make_models.py's options; without --only it makes all of zoo_models.KINDS.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402
import zoo_models  # noqa: E402


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--only" not in argv:
        argv += ["--only", *zoo_models.KINDS]
    return make_models.main(argv)


if __name__ == "__main__":
    sys.exit(main())
