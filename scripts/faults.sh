#!/usr/bin/env bash
# The fault suite's long run (docs/hardening.md, "The node service under faults"): every test of
# tests/faults/ with the longer settings `make test` leaves out — every real-time signal besides
# the others, the 200 unread streams for 25 s (as the report that found 1.7 GB) — against a
# build's gpuclk, each test's output in build/faults/, a line per test and a summary.
#   scripts/faults.sh [BUILD_DIR]     (default build/release; `make build` first)
set -u
cd "$(dirname "$0")/.."
BIN_DIR=${1:-build/release}
[ -x "$BIN_DIR/gpuclk" ] || { echo "faults.sh: no $BIN_DIR/gpuclk; run make build first" >&2; exit 2; }
OUT=build/faults
mkdir -p "$OUT"
signals="HUP INT QUIT USR1 USR2 ALRM TERM XCPU VTALRM PROF IO PWR STKFLT"
for n in $(seq 0 15); do signals+=" RTMIN+$n"; done
for n in $(seq 14 -1 0); do signals+=" RTMAX-$n"; done
export FAULT_SIGNALS="${signals//RTMIN+0/RTMIN}"
export FAULT_SIGNALS="${FAULT_SIGNALS//RTMAX-0/RTMAX}"
export STREAM_SECONDS=25
passed=0 failed=0 skipped=0
for test in tests/faults/*_test.sh; do
  name=$(basename "$test" _test.sh)
  start=$SECONDS
  bash "$test" "$BIN_DIR/gpuclk" >"$OUT/$name.log" 2>&1
  rc=$?
  case $rc in
    0) result=passed; passed=$((passed + 1)) ;;
    77) result=skipped; skipped=$((skipped + 1)) ;;
    *) result="FAILED (exit $rc)"; failed=$((failed + 1)) ;;
  esac
  printf '%-16s %-18s %4d s  %s\n' "$name" "$result" $((SECONDS - start)) "$(tail -1 "$OUT/$name.log")"
done
echo "faults.sh: $passed passed, $failed failed, $skipped skipped (logs in $OUT/)"
[ "$failed" -eq 0 ]
