#!/usr/bin/env bash
# The test suite with every core busy: one CPU hog per core (a busy loop at the tests' own
# priority) runs beside ctest, RUNS times in a row, with as many tests at once as `make test`
# runs (TEST_JOBS, twice the cores). CI runs on a 2-core machine that may be
# busy; a test that fails here fails a submission at random (docs/hardening.md keeps the score).
#   scripts/ci/under-load.sh [BUILD_DIR] [RUNS] [CTEST_ARGS...]   (default build/ci, 3 runs)
# Exit: 0 when every run passed; the failing tests of each run are listed.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/ci}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "under-load: no built tests in $BUILD (make test PRESET=...)" >&2; exit 2; }

hogs=()
stop_hogs() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_hogs EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done
echo "under-load: ${#hogs[@]} CPU hogs running beside ctest (pids ${hogs[*]})"

passed=0
for run in $(seq "$RUNS"); do
  start=$SECONDS
  log=$BUILD/under-load-$run.log
  if ctest --test-dir "$BUILD" -j "${TEST_JOBS:-$((2 * $(nproc)))}" --output-on-failure "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "under-load: run $run passed ($((SECONDS - start)) s): $(grep -E 'tests passed' "$log")"
  else
    echo "under-load: run $run FAILED ($((SECONDS - start)) s, $log):"
    sed -n '/The following tests FAILED/,$p' "$log"
  fi
done
echo "under-load: $passed of $RUNS runs passed"
[ "$passed" -eq "$RUNS" ]
