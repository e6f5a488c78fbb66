"""The checkasm harness, run as the tests run everything: natively, every
variant this CPU can run against its C reference."""
import subprocess

from peregrine_nb._lib import bin_path


def run(*args):
    return subprocess.run([str(bin_path("checkasm")), *args], capture_output=True, text=True,
                          timeout=900)


def test_selftest_catches_planted_faults():
    r = run("--selftest")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "clobbered callee-saved register caught" in r.stdout


def test_all_variants_match_reference():
    r = run("--seed=12345")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert " 0 failed" in r.stdout


def test_list_names_every_op():
    r = run("--list")
    assert r.returncode == 0
    assert "vadd" in r.stdout and "f32_vadd_c" in r.stdout
