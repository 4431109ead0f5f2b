#!/usr/bin/env bash
# Longer fuzzing than CI's smoke run: every libFuzzer target of tests/fuzz (or those named) for N
# minutes each, one after another, on a working corpus seeded from tests/fuzz/corpus/<target>/.
# Prints, per target, executions per second, the final corpus size (inputs and bytes), the coverage
# and the findings (crash-*/leak-*/timeout-*/oom-* inputs, kept in the work folder).
#
#   bench/fuzz.sh                 10 minutes per target
#   bench/fuzz.sh 2 fuzz_cluster_spec fuzz_kineto_trace
#   FUZZ_BUILD_DIR=build-sanitize FUZZ_WORK_DIR=/tmp/fuzz bench/fuzz.sh 1
#   FUZZ_NO_BUILD=1 ...           use the targets already built in FUZZ_BUILD_DIR
#
# Builds the targets first (the same configuration as .ci/sanitize: clang, ASan+UBSan, -O1). A new
# finding's input belongs in tests/fuzz/corpus/<target>/ once fixed (a regression seed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MINUTES=${1:-10}
shift || true
BUILD_DIR=${FUZZ_BUILD_DIR:-$ROOT/build-sanitize}
SECONDS_EACH=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')
WORK=${FUZZ_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/clustersim-fuzz.XXXXXX")}

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_BUILD_PYTHON=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc 2>/dev/null || echo 2)" --target fuzz_targets >/dev/null
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$BUILD_DIR"/fuzz/fuzz_*; do targets+=("$(basename "$f")"); done
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
symbolizer=$(command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer

echo "bench/fuzz.sh: $MINUTES min per target, work folder $WORK"
printf '%-26s %10s %10s %9s %10s %6s %s\n' target execs exec_per_s corpus corpus_KiB cov findings
status=0
for name in "${targets[@]}"; do
  corpus=$WORK/$name/corpus artifacts=$WORK/$name/findings
  mkdir -p "$corpus" "$artifacts"
  cp -n "$ROOT/tests/fuzz/corpus/$name"/* "$corpus/" 2>/dev/null || true
  # -fork=1 keeps fuzzing after a finding (each finding saved; -ignore_crashes), within the time.
  "$BUILD_DIR/fuzz/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -artifact_prefix="$artifacts/" \
    "$corpus" >"$WORK/$name/log" 2>&1 || true
  # fork mode's status lines: "#N: cov: C ft: F corp: K exec/s E oom/timeout/crash: a/b/c time: Ts"
  last=$(grep -E '^#[0-9]+: cov:' "$WORK/$name/log" | tail -1)
  runs=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
  # exec/s over the whole run (the status line's own exec/s is the last fork job's only)
  secs=$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")
  rate=$([ -n "$runs" ] && [ "${secs:-0}" -gt 0 ] && echo $(( runs / secs )) || true)
  n=$(find "$corpus" -type f | wc -l)
  kib=$(( $(du -sk "$corpus" | cut -f1) ))
  found=$(find "$artifacts" -type f | wc -l)
  [ "$found" -eq 0 ] || status=1
  printf '%-26s %10s %10s %9s %10s %6s %s\n' "$name" "${runs:-?}" "${rate:-?}" "$n" "$kib" "${cov:-?}" "$found"
done
echo "bench/fuzz.sh: logs and findings in $WORK/<target>/"
exit "$status"
