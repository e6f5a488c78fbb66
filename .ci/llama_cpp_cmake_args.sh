#!/usr/bin/env bash
# The CMAKE_ARGS llama-cpp-python is built with in CI, from the CPU's flags
# (/proc/cpuinfo, or the file given as $1 for a dry run):
#
#   .ci/llama_cpp_cmake_args.sh                 # this machine
#   .ci/llama_cpp_cmake_args.sh cpuinfo.txt     # another machine's flags line
#
# Not GGML_NATIVE: on Sapphire Rapids the native build turns on AMX, and that
# build segfaults in llama_decode; so every ISA extension is named explicitly,
# each only where the CPU has it (a Zen 3 gets AVX2 and no AVX-512, a Zen 4/5
# or an Intel Xeon AVX-512 and its VNNI / BF16 / VBMI where present), and AMX
# is always off.  Prints one line.
set -euo pipefail
info=${1:-/proc/cpuinfo}
flags=" $(grep -m1 '^flags' "$info" | cut -d: -f2) "
has() { [[ "$flags" == *" $1 "* ]]; }
onoff() { if has "$1"; then echo on; else echo off; fi; }
args="-DGGML_NATIVE=off -DGGML_AMX_INT8=off -DGGML_AMX_TILE=off -DGGML_AMX_BF16=off"
args+=" -DGGML_AVX=$(onoff avx) -DGGML_AVX2=$(onoff avx2) -DGGML_FMA=$(onoff fma)"
args+=" -DGGML_F16C=$(onoff f16c) -DGGML_BMI2=$(onoff bmi2) -DGGML_AVX_VNNI=$(onoff avx_vnni)"
# ggml's GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw
avx512=on
for f in avx512f avx512cd avx512vl avx512dq avx512bw; do has "$f" || avx512=off; done
args+=" -DGGML_AVX512=$avx512"
if [ "$avx512" = on ]; then
  args+=" -DGGML_AVX512_VBMI=$(onoff avx512vbmi) -DGGML_AVX512_VNNI=$(onoff avx512_vnni)"
  args+=" -DGGML_AVX512_BF16=$(onoff avx512_bf16)"
else
  args+=" -DGGML_AVX512_VBMI=off -DGGML_AVX512_VNNI=off -DGGML_AVX512_BF16=off"
fi
echo "$args"
