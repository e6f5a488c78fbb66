"""The Binder recipe in binder/ works: in a FRESH virtual environment,
`pip install -r binder/requirements.txt`, then binder/postBuild from the
repository root with that environment first on PATH (what repo2docker does,
less the apt packages of binder/apt.txt, which this machine must already
have), then the tour notebook executes in a kernel of that environment.

Slow (a few minutes: the packages come from PyPI or pip's cache, the engine
is compiled), and not skipped: without network access to PyPI it fails.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
TOUR = "00_tour.ipynb"


def _clean_env(venv: Path, tmp: Path) -> dict[str, str]:
    """This process's environment without anything pointing at our own
    Python or a build tree, with the venv first on PATH and Jupyter's paths
    inside the venv and tmp (so no kernelspec of the host is used)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PEREGRINE_LIBRARY", "VIRTUAL_ENV", "PEREGRINE_CPU_MASK")
           and not k.startswith(("JUPYTER", "IPYTHON", "PIP_TARGET", "PIP_PREFIX"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["JUPYTER_PATH"] = str(venv / "share" / "jupyter")
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter-data")
    env["JUPYTER_CONFIG_DIR"] = str(tmp / "jupyter-config")
    env["IPYTHONDIR"] = str(tmp / "ipython")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(argv, cwd, env, timeout, what):
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"{what}: {time.perf_counter() - t0:.0f} s")
    assert r.returncode == 0, f"{what} failed ({r.returncode}):\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"
    return r


EXECUTE = textwrap.dedent("""
    # Run by the venv's python: execute the tour with the venv's kernel, then
    # one more cell saying which Python and which peregrine_nb it used.
    import json, sys, nbformat
    from nbclient import NotebookClient
    src, out, workdir = sys.argv[1:4]
    nb = nbformat.read(src, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import sys, json, peregrine_nb\\n"
        "print('WHERE ' + json.dumps({'prefix': sys.prefix, 'package': peregrine_nb.__file__}))"))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": workdir}}).execute()
    nbformat.write(nb, out)
""")


def test_binder_recipe_in_a_fresh_venv(tmp_path):
    for f in ("requirements.txt", "postBuild", "apt.txt"):
        assert (BINDER / f).is_file(), f"binder/{f} is missing"
    for tool in ("gcc", "as"):   # binder/apt.txt: repo2docker installs them; here the machine must have them
        assert shutil.which(tool), f"{tool} is not installed (binder/apt.txt lists what the image needs)"

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, None, 300, "python -m venv")
    py = venv / "bin" / "python"
    env = _clean_env(venv, tmp_path)
    _run([str(py), "-m", "pip", "install", "--quiet", "-r", str(BINDER / "requirements.txt")],
         tmp_path, env, 1800, "pip install -r binder/requirements.txt")
    _run(["bash", str(BINDER / "postBuild")], ROOT, env, 1800, "binder/postBuild")
    # the kernel repo2docker's image would start: ipykernel of the venv, found first
    _run([str(py), "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "python3"],
         tmp_path, env, 300, "ipykernel install --prefix venv")
    spec = json.loads((venv / "share" / "jupyter" / "kernels" / "python3" / "kernel.json").read_text())
    assert Path(spec["argv"][0]).resolve() == py.resolve() or spec["argv"][0] == str(py), spec

    work = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)
    script = tmp_path / "execute_tour.py"
    script.write_text(EXECUTE)
    out = tmp_path / "tour-executed.ipynb"
    # run from the copy, not the repository, so `import peregrine_nb` is the installed package
    _run([str(py), str(script), str(work / TOUR), str(out), str(work)], work, env, 1800, "execute the tour")

    import nbformat

    nb = nbformat.read(out, as_version=4)
    texts, errors = [], []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type == "error":
                errors.append(o)
            texts.append(o.get("text", "") + o.get("data", {}).get("text/plain", ""))
    assert not errors, errors
    text = "\n".join(texts)
    assert "max |peregrine - numpy| = " in text
    where = json.loads(text.split("WHERE ", 1)[1].splitlines()[0])
    assert Path(where["prefix"]).resolve() == venv.resolve(), where
    assert Path(where["package"]).resolve().is_relative_to(venv.resolve()), where
