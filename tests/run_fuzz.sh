#!/usr/bin/env bash
# Time-boxed coverage-guided fuzzing under AddressSanitizer +
# UndefinedBehaviorSanitizer:
#   the libFuzzer targets in engine/fuzz (fuzz_gguf, fuzz_tokenizer,
#   fuzz_graph), built with clang into their own build directory, and the
#   atheris target tests/fuzz/fuzz_onnx.py (peregrine_nb.load_onnx on a
#   plain build of the library),
# each for FUZZ_SECONDS (default 45) on a copy of its corpus
# (tests/fuzz/corpus/<target>, so the tree stays clean).  Exits non-zero on
# any crash, leak, sanitizer report or hang (-timeout=5) that is not one of
# the known open bugs of tests/fuzz/known_bugs.json (tests/fuzz/triage.py
# tells them apart by their sanitizer report), printing where the input was
# saved: minimise it (the fuzzer binary with -minimize_crash=1), add it to
# tests/fuzz/crashes/<target>/ and fix the bug (or, for code fixed
# elsewhere, list it in known_bugs.json).  Prints per target: executions,
# exec/s, coverage (cov: and ft: of libFuzzer's final stats line), corpus
# files, and the out-of-memory / timeout / crash counts of fork mode.
#
#   FUZZ_SECONDS=45         seconds per target
#   FUZZ_TARGETS="gguf tokenizer graph onnx"
#   FUZZ_BUILD=build-fuzz   the clang build (tests/test_fuzz_regressions.py
#                           runs the corpus and crashes through it when it
#                           exists); FUZZ_PY_BUILD=build-fuzz-py the plain
#                           library for atheris
#   FUZZ_JOBS=N             libFuzzer fork-mode jobs for the C targets
#                           (default: the CPU count, at most 4)
#   FUZZ_MERGE=1            merge what the run found (new coverage only)
#                           back into tests/fuzz/corpus/<target>
#
# Installs what it needs: clang and its compiler-rt (libclang-rt-dev:
# Debian ships the sanitizer and libFuzzer runtimes apart; apt-get, as root)
# when missing, meson,
# ninja, atheris, onnx, numpy and cffi (pip); fails loudly if it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_PER=${FUZZ_SECONDS:-45}
TARGETS=${FUZZ_TARGETS:-gguf tokenizer graph onnx}
BUILD=${FUZZ_BUILD:-build-fuzz}
PYBUILD=${FUZZ_PY_BUILD:-build-fuzz-py}
PY=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

die() { echo "run_fuzz.sh: $*" >&2; exit 1; }

# ---- tools -----------------------------------------------------------------
libfuzzer_ok() {
  command -v clang >/dev/null 2>&1 || return 1
  local d; d=$(mktemp -d)
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$d/t.c"
  clang -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" >/dev/null 2>&1
  local rc=$?
  rm -rf "$d"
  return $rc
}
if ! libfuzzer_ok; then
  [ "$(id -u)" = 0 ] || die "clang with libFuzzer is needed: run as root (apt-get install clang) or install it"
  echo "== apt-get install clang"
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libclang-rt-dev libc6-dev >/dev/null \
    || die "apt-get install clang failed"
  libfuzzer_ok || die "clang is installed but cannot link -fsanitize=fuzzer,address,undefined"
fi
echo "== $(clang --version | head -1)"
for tool in meson ninja; do
  command -v $tool >/dev/null || { echo "== pip install $tool"; "$PY" -m pip install --quiet $tool || die "pip install $tool failed"; }
done
for mod in numpy cffi atheris onnx; do
  "$PY" -c "import $mod" 2>/dev/null || { echo "== pip install $mod"; "$PY" -m pip install --quiet $mod || die "pip install $mod failed"; }
done
command -v meson >/dev/null || die "meson is not on PATH"
command -v ninja >/dev/null || die "ninja is not on PATH"

# ---- builds ----------------------------------------------------------------
needs_c=0; needs_py=0
for t in $TARGETS; do
  case $t in gguf|tokenizer|graph) needs_c=1 ;; onnx) needs_py=1 ;; *) die "unknown target '$t'" ;; esac
done
if [ $needs_c = 1 ]; then
  echo "== building the libFuzzer targets in $BUILD (clang, ASan + UBSan, coverage)"
  if [ ! -f "$BUILD/build.ninja" ]; then
    rm -rf "$BUILD"
    CC=clang meson setup "$BUILD" -Dfuzz=true -Dpython=false -Dbuildtype=debugoptimized \
      -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link >"$ROOT/$BUILD.setup.log" 2>&1 \
      || { tail -30 "$ROOT/$BUILD.setup.log"; die "meson setup of $BUILD failed"; }
  fi
  ninja -C "$BUILD" engine/fuzz/fuzz_gguf engine/fuzz/fuzz_tokenizer engine/fuzz/fuzz_graph >/dev/null \
    || die "building the fuzz targets failed (ninja -C $BUILD)"
fi
if [ $needs_py = 1 ]; then
  echo "== building libperegrine.so for atheris in $PYBUILD"
  if [ ! -f "$PYBUILD/build.ninja" ]; then
    rm -rf "$PYBUILD"
    meson setup "$PYBUILD" -Dpython=true -Dbuildtype=release >"$ROOT/$PYBUILD.setup.log" 2>&1 \
      || { tail -30 "$ROOT/$PYBUILD.setup.log"; die "meson setup of $PYBUILD failed"; }
  fi
  ninja -C "$PYBUILD" libperegrine.so >/dev/null || die "building libperegrine.so failed (ninja -C $PYBUILD)"
fi

# ---- runs ------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/peregrine-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ART="$ROOT/$BUILD/artifacts"
"$PY" tests/fuzz/triage.py suppressions "$WORK/ubsan.supp"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$WORK/ubsan.supp
export PG_FUZZ_VOCAB_DIR=$ROOT/tests/fuzz/vocab
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
[ "$JOBS" -le 4 ] || JOBS=4

max_len() { case $1 in gguf) echo 16384 ;; tokenizer) echo 4096 ;; graph) echo 2048 ;; onnx) echo 16384 ;; esac; }

declare -A RESULT
failed=0
for t in $TARGETS; do
  corpus="$WORK/corpus_$t"
  rm -rf "${ART:?}/$t"
  mkdir -p "$corpus" "$ART/$t"
  cp -r "tests/fuzz/corpus/$t/." "$corpus/"
  log="$WORK/$t.log"
  flags=(-max_total_time="$SECONDS_PER" -timeout=5 -max_len="$(max_len "$t")" -rss_limit_mb=4096
         -print_final_stats=1 -artifact_prefix="$ART/$t/")
  set +e
  if [ "$t" = onnx ]; then
    echo "== fuzzing $t (atheris) for ${SECONDS_PER}s ($(ls "$corpus" | wc -l) seed files)"
    # the plain library; the C code is not instrumented, the sanitizers stay off
    # (a check failing as a known bug does is counted, not a crash: PG_FUZZ_IGNORE_KNOWN)
    ASAN_OPTIONS= UBSAN_OPTIONS= PEREGRINE_LIBRARY="$ROOT/$PYBUILD/libperegrine.so" PYTHONPATH="$ROOT" \
      PG_FUZZ_IGNORE_KNOWN=1 timeout $((SECONDS_PER * 3 + 120)) "$PY" tests/fuzz/fuzz_onnx.py "${flags[@]}" "$corpus" >"$log" 2>&1
  else
    # fork mode: a crash of a known bug (tests/fuzz/known_bugs.json) ends one
    # job, not the run; every crash input is triaged below.  A hang, an
    # out-of-memory or a leak ends the run.
    echo "== fuzzing $t for ${SECONDS_PER}s, $JOBS job(s) ($(ls "$corpus" | wc -l) seed files)"
    timeout $((SECONDS_PER * 3 + 120)) "$BUILD/engine/fuzz/fuzz_$t" "${flags[@]}" -fork="$JOBS" \
      -ignore_crashes=1 -ignore_timeouts=0 -ignore_ooms=0 "$corpus" >"$log" 2>&1
  fi
  rc=$?
  set -e
  # stats: libFuzzer's last status line ("#N DONE cov: C ft: F corp: ... exec/s: E"),
  # in fork mode "#N: cov: C ft: F corp: K exec/s E oom/timeout/crash: ..."
  final=$(grep -E '^#[0-9]+:?[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse|cov:)' "$log" | tail -1 || true)
  execs=$(echo "$final" | sed -nE 's/^#([0-9]+).*/\1/p')
  cov=$(echo "$final" | sed -nE 's/.* cov: ([0-9]+).*/\1/p')
  ft=$(echo "$final" | sed -nE 's/.* ft: ([0-9]+).*/\1/p')
  eps=$(echo "$final" | sed -nE 's/.* exec\/s:? ([0-9]+).*/\1/p')
  crashes=$(echo "$final" | sed -nE 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p')
  files=$(ls "$corpus" | wc -l)
  status=ok
  artifacts=$(find "$ART/$t" -type f | sort)
  all_known=0
  if [ "$t" != onnx ] && [ -n "$artifacts" ]; then
    crash_files=$(echo "$artifacts" | grep -E '/crash-' || true)
    other=$(echo "$artifacts" | grep -vE '/crash-' || true)
    if [ -n "$crash_files" ]; then
      echo "---- $t: triage of $(echo "$crash_files" | wc -l) crash input(s)"
      # shellcheck disable=SC2086
      if "$PY" tests/fuzz/triage.py classify "$t" "$BUILD/engine/fuzz/fuzz_$t" $crash_files >"$WORK/$t.triage" 2>&1; then
        status="ok ($(grep -c '^  known' "$WORK/$t.triage") crash inputs of known bugs)"
        all_known=1
        grep -Eo 'known \([^)]*\)' "$WORK/$t.triage" | sort | uniq -c | sed 's/^/     /'
      else
        failed=1
        status="FAILED (new crash)"
        grep -v '^  known' "$WORK/$t.triage"
      fi
    fi
    if [ -n "$other" ]; then
      failed=1
      status="FAILED (hang, out-of-memory or leak)"
      all_known=0
      echo "---- $t: saved inputs that are no crash of a known bug:"; echo "$other" | sed 's/^/  /'
    fi
  fi
  # fork mode exits 1 after crashes it went past: fine when all were known
  [ "$t" != onnx ] && [ $rc = 1 ] && [ $all_known = 1 ] && grep -q '^INFO: exiting: 1' "$log" && rc=0
  if [ "$t" = onnx ] && grep -q '^fuzz_onnx: known bug' "$log"; then
    status="ok ($(grep -Eo 'known bug [^ ]+ hit [0-9]+' "$log" | sed 's/known bug //' | paste -sd, -))"
  fi
  if [ $rc -ne 0 ]; then
    failed=1
    status="FAILED (exit $rc)"
    [ $rc = 124 ] && status="HUNG (the fuzzer itself ran past its time box)"
    echo "---- $t: the end of its log:"
    tail -60 "$log"
  fi
  if [ "$status" != ok ] && [ "${status#ok (}" = "$status" ]; then
    saved=$(find "$ART/$t" -type f | head -5)
    [ -n "$saved" ] && echo "---- $t: the input(s) were saved to:" && echo "$saved" | sed 's/^/  /' &&
      echo "     (minimise: $BUILD/engine/fuzz/fuzz_$t -minimize_crash=1 -max_total_time=30 FILE; keep it in tests/fuzz/crashes/$t/)"
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ] && [ $rc -eq 0 ]; then
    if [ "$t" = onnx ]; then
      ASAN_OPTIONS= UBSAN_OPTIONS= PEREGRINE_LIBRARY="$ROOT/$PYBUILD/libperegrine.so" PYTHONPATH="$ROOT" \
        "$PY" tests/fuzz/fuzz_onnx.py -merge=1 -timeout=5 -max_len="$(max_len "$t")" "tests/fuzz/corpus/$t" "$corpus" >"$WORK/$t.merge.log" 2>&1
    else
      "$BUILD/engine/fuzz/fuzz_$t" -merge=1 -timeout=5 -max_len="$(max_len "$t")" "tests/fuzz/corpus/$t" "$corpus" >"$WORK/$t.merge.log" 2>&1
    fi || { tail -20 "$WORK/$t.merge.log"; die "merging the $t corpus failed"; }
    echo "== merged: tests/fuzz/corpus/$t has $(ls "tests/fuzz/corpus/$t" | wc -l) files"
  fi
  RESULT[$t]=$(printf '%-10s %12s %9s %8s %8s %8s %10s  %s' "$t" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$files" "${crashes:--}" "$status")
done

echo
echo "== fuzzing summary (${SECONDS_PER}s per target; the C targets under ASan + UBSan)"
printf '%-10s %12s %9s %8s %8s %8s %10s  %s\n' target executions exec/s cov ft corpus o/t/crash status
for t in $TARGETS; do echo "${RESULT[$t]}"; done
[ $failed = 0 ] || die "a fuzz target crashed (a new bug) or hung: see above"
echo "fuzzing: no new crash, no hang"
