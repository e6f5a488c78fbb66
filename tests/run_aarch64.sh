#!/usr/bin/env bash
# Cross-build the engine for AArch64 and run the C tests and checkasm under
# qemu-user twice: with SVE at 256 bits and with SVE off, so both detection
# paths (and every NEON variant) are exercised.  Needs gcc-aarch64-linux-gnu
# and qemu-user; fails if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v aarch64-linux-gnu-gcc >/dev/null || { echo "aarch64-linux-gnu-gcc is not installed" >&2; exit 1; }
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 is not installed" >&2; exit 1; }

build=${PEREGRINE_A64_BUILD:-build-aarch64}
[ -f "$build/build.ninja" ] || { rm -rf "$build"; meson setup "$build" --cross-file cross/aarch64-linux-gnu.ini -Dpython=false --werror; }
ninja -C "$build"
for cpu in "max,sve256=on:256" "max,sve=off:0"; do
  model=${cpu%:*} sve=${cpu##*:}
  echo "== qemu -cpu $model"
  QEMU_CPU=$model PEREGRINE_EXPECT_SVE_BITS=$sve CHECKASM_SMALL=1 \
    meson test -C "$build" --print-errorlogs --timeout-multiplier 4
done
