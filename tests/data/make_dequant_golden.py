#!/usr/bin/env python3
"""Golden data for the dequantisation tests, made by ggml itself.

    CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python
    python3 tests/data/make_dequant_golden.py tests/data/dequant_golden.npz

Seeded random rows (normal, with a few large outliers) are quantised by
ggml's reference quantisers (quantize_row_<type>_ref) and expanded again by
ggml's dequantize_row_<type>, both called through ctypes from the
libggml-base.so that llama-cpp-python installs ($GGML_BASE_LIB overrides).
The npz holds, per type, the input row (<type>_x), the packed blocks
(<type>_blocks, uint8) and ggml's expansion (<type>_y).  q8_1 has no
dequantiser in ggml; its blocks serve the quantised dot-product tests.
"""
import ctypes
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

# type: (elements per block, bytes per block, has dequantize_row)
TYPES = {
    "q4_0": (32, 18, True), "q4_1": (32, 20, True), "q5_0": (32, 22, True),
    "q5_1": (32, 24, True), "q8_0": (32, 34, True), "q8_1": (32, 36, False),
    "q2_K": (256, 84, True), "q3_K": (256, 110, True), "q4_K": (256, 144, True),
    "q5_K": (256, 176, True), "q6_K": (256, 210, True), "q8_K": (256, 292, True),
}
N = 1024  # elements per type: 4 super-blocks, 32 small blocks


def libggml() -> ctypes.CDLL:
    path = os.environ.get("GGML_BASE_LIB")
    if not path:
        spec = importlib.util.find_spec("llama_cpp")
        path = str(Path(spec.origin).parent / "lib" / "libggml-base.so")
    return ctypes.CDLL(path)


def main(out: str) -> None:
    lib = libggml()
    rng = np.random.default_rng(20240601)
    arrays = {}
    for name, (block, nbytes, has_deq) in TYPES.items():
        x = rng.standard_normal(N).astype(np.float32)
        x[rng.integers(0, N, 8)] *= 8.0  # outliers, so scales differ per block
        x[:32] = 0.0 if name == "q8_0" else x[:32]  # an all-zero block (d = 0)
        blocks = np.zeros(N // block * nbytes, dtype=np.uint8)
        q = getattr(lib, f"quantize_row_{name}_ref")
        q.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        q(x.ctypes.data, blocks.ctypes.data, N)
        arrays[f"{name}_x"] = x
        arrays[f"{name}_blocks"] = blocks
        if has_deq:
            y = np.zeros(N, dtype=np.float32)
            d = getattr(lib, f"dequantize_row_{name}")
            d.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            d(blocks.ctypes.data, y.ctypes.data, N)
            arrays[f"{name}_y"] = y
    np.savez_compressed(out, **arrays)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dequant_golden.npz")
