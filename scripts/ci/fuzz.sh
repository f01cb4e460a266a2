#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, the `fuzz` preset: clang-14 with ASan and UBSan) and
# runs each for a bounded time. A crash, a leak, a UB report or an input slower than
# FUZZ_TIMEOUT_S fails the run; the input that did it is left in build/fuzz/findings/NAME/ —
# move it to tests/fuzz/regressions/NAME/ with the fix (the ctest fuzz.NAME replays it forever).
#   scripts/ci/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#   (SECONDS_PER_TARGET 0: build only, so .ci/run can compile them while the ci suite runs)
# FUZZ_TARGETS=parsers: every target but argv, the whole command line, which needs all of src/
# built for libFuzzer (the others about half): what CI runs. Its committed inputs are replayed by
# the ctest fuzz.argv in every build.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-30}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(values profile scenario batch journal bench_compare tool_output pod_resources)
  [ "${FUZZ_TARGETS:-all}" = parsers ] || TARGETS+=(argv)
fi
FUZZ_TIMEOUT_S=${FUZZ_TIMEOUT_S:-10}   # one input may take at most this long (a hang)
FUZZ_RSS_MB=${FUZZ_RSS_MB:-1024}       # and at most this much memory
FUZZ_SEED=${FUZZ_SEED:-0}              # libFuzzer's -seed: 0 picks one; CI fixes it (.ci/run)

test -f build/fuzz/CMakeCache.txt || cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"${JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}"
[ "$SECONDS_PER_TARGET" = 0 ] && exit 0

# One target: its verdict line, and the end of its log when it found something (exit 1).
fuzz_one() {
  local t=$1 work=build/fuzz/corpus/$1 findings=build/fuzz/findings/$1
  mkdir -p "$work" "$findings"
  # New inputs go to the scratch corpus; the committed seeds and regressions are read only.
  if ! ./build/fuzz/tests/fuzz/fuzz_"$t" "$work" tests/fuzz/corpus/"$t" tests/fuzz/regressions/"$t" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout="$FUZZ_TIMEOUT_S" -rss_limit_mb="$FUZZ_RSS_MB" \
      -max_len=65536 -seed="$FUZZ_SEED" -artifact_prefix="$findings/" -print_final_stats=1 \
      > "build/fuzz/$t.log" 2>&1; then
    echo "fuzz_$t: FOUND a problem (build/fuzz/$t.log, input in $findings/)"
    tail -30 "build/fuzz/$t.log"
    return 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build/fuzz/$t.log" | grep -o '[0-9]*$')
  echo "fuzz_$t: ${runs:-?} inputs in ${SECONDS_PER_TARGET} s, nothing found"
}

# FUZZ_JOBS targets at a time (default 1). FUZZ_WIDEN_WHEN=FILE: one at a time until FILE
# exists, then FUZZ_JOBS (CI: two once the TSan tests beside them are done). Each target's lines
# are printed whole, when it ends.
FUZZ_JOBS=${FUZZ_JOBS:-1}
jobs_now() {
  if [ -n "${FUZZ_WIDEN_WHEN:-}" ] && [ ! -e "$FUZZ_WIDEN_WHEN" ]; then echo 1; else echo "$FUZZ_JOBS"; fi
}
status=0
pids=() logs=()
finish_oldest() {
  wait "${pids[0]}" || status=1
  cat "${logs[0]}"
  rm -f "${logs[0]}"
  pids=("${pids[@]:1}") logs=("${logs[@]:1}")
}
for t in "${TARGETS[@]}"; do
  # Waits for the oldest to end; with room (FUZZ_WIDEN_WHEN appeared meanwhile) starts at once.
  while [ ${#pids[@]} -ge "$(jobs_now)" ]; do
    if [ ${#pids[@]} -gt 0 ] && ! kill -0 "${pids[0]}" 2>/dev/null; then finish_oldest; continue; fi
    [ ${#pids[@]} -lt "$FUZZ_JOBS" ] || { finish_oldest; continue; }
    sleep 1
  done
  log=$(mktemp)
  fuzz_one "$t" >"$log" 2>&1 &
  pids+=($!) logs+=("$log")
done
while [ ${#pids[@]} -gt 0 ]; do finish_oldest; done
exit $status
