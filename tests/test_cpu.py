"""CPU detection against what the kernel reports, and the dispatch mask."""
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import peregrine_nb as pg

# /proc/cpuinfo names for our flags where they differ from ours.
PROC_NAME = {"sse41": "sse4_1", "avx512vnni": "avx512_vnni", "avxvnni": "avx_vnni",
             "avx512bf16": "avx512_bf16", "amxbf16": "amx_bf16", "amxint8": "amx_int8"}


def proc_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 flags")
def test_x86_flags_match_proc_cpuinfo():
    info = pg.cpu_info()
    have = proc_flags()
    for ours in ["sse2", "sse41", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                 "avx512vl", "avx512dq", "avx512vnni", "avxvnni", "avx512bf16", "amxbf16",
                 "amxint8"]:
        assert (ours in info.flags) == (PROC_NAME.get(ours, ours) in have), ours
    assert info.arch == "x86_64"


# What each x86 level's kernels execute, in /proc/cpuinfo's names, written
# from the ISA manuals rather than read back from the engine.
X86_LEVEL_NEEDS = {
    "c": set(), "sse2": {"sse2"}, "sse41": {"sse2", "sse4_1"},
    "avx": {"sse4_1", "avx"}, "avx2": {"avx", "avx2", "fma", "f16c"},
    "avxvnni": {"avx2", "fma", "f16c", "avx_vnni"},
    "avx512": {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"},
}
X86_LEVEL_NEEDS["avx512vnni"] = X86_LEVEL_NEEDS["avx512"] | {"avx512_vnni"}
X86_LEVEL_NEEDS["avx512bf16"] = X86_LEVEL_NEEDS["avx512vnni"] | {"avx512_bf16"}
X86_LEVEL_NEEDS["amx"] = X86_LEVEL_NEEDS["avx512bf16"] | {"amx_tile", "amx_bf16", "amx_int8"}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 levels")
def test_x86_level_is_the_highest_the_cpu_can_run():
    """The detected level is the top one whose instructions the CPU has: a
    level asking for more than its kernels use (AVX512-VNNI once also asked
    for AVX-VNNI, which Zen 4 lacks) strands a machine below its kernels."""
    have = proc_flags()
    levels = pg.cpu_levels()
    assert set(levels) == set(X86_LEVEL_NEEDS)
    expect = [lv for lv in levels if X86_LEVEL_NEEDS[lv] <= have][-1]
    assert pg.cpu_info().level == expect, (expect, sorted(have & set().union(*X86_LEVEL_NEEDS.values())))


def test_caches_and_cores_are_sane():
    info = pg.cpu_info()
    assert info.cores >= 1
    assert 8 * 1024 <= info.caches["L1d"] <= 4 * 1024 * 1024
    assert info.caches["L2"] >= info.caches["L1d"]
    assert info.cacheline in (32, 64, 128, 256)


def test_mask_restricts_dispatch_and_restores():
    before = pg.cpu_info()
    with pg.cpu_mask("c"):
        info = pg.cpu_info()
        assert info.level == "c"
        assert info.active_flags == []
        assert all(v.endswith("_c") for v in info.dispatch.values()), info.dispatch
    after = pg.cpu_info()
    assert after.level == before.level and after.dispatch == before.dispatch


def test_dispatch_names_every_kernel_family():
    from peregrine_nb import kernels

    info = pg.cpu_info()
    assert list(info.dispatch) == kernels.families()
    df = kernels.variants()
    selected = dict(zip(df[df.selected].family, df[df.selected].variant))
    assert info.dispatch == selected


def test_every_level_dispatches_inside_itself():
    info = pg.cpu_info()
    for level in pg.cpu_levels():
        with pg.cpu_mask(level):
            got = pg.cpu_info()
            # the reported level never exceeds the mask
            assert pg.cpu_levels().index(got.level) <= pg.cpu_levels().index(level)
            assert set(got.active_flags) <= set(info.flags)


def test_bad_mask_names_the_level():
    with pytest.raises(pg.InvalidArgumentError, match="nonsense"):
        pg.set_cpu_mask("nonsense")


def test_env_mask_selects_c_level():
    out = subprocess.run(
        [sys.executable, "-c", "import peregrine_nb as pg; print(pg.cpu_info().level)"],
        env={**__import__("os").environ, "PEREGRINE_CPU_MASK": "c"},
        capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "c"


def test_html_repr_lists_flags():
    html = pg.cpu_info()._repr_html_()
    assert "<table>" in html and pg.cpu_info().level in html


def test_cli_info_runs():
    from peregrine_nb._lib import bin_path
    try:
        exe = bin_path("peregrine")
    except pg.LibraryNotFoundError:
        import shutil
        exe = shutil.which("peregrine")
    assert exe, "the peregrine CLI is installed with the package"
    out = subprocess.run([str(exe), "info"], capture_output=True, text=True, check=True).stdout
    assert "level" in out and "dispatch" in out


def test_python_main_prints_report():
    out = subprocess.run([sys.executable, "-m", "peregrine_nb"], capture_output=True, text=True,
                         check=True).stdout
    assert "level" in out
