#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UBSan (the `debug` preset), then the threaded
# parts — the telemetry sampler, control, the service — under ThreadSanitizer (the `tsan`
# preset). .ci/run calls it after `make test PRESET=ci`.
#
# Sanitizer reports go to files (log_path) as well as failing their test, and any report fails
# the run: a test that failed only on time (a sanitized build runs 2-15x slower on a shared
# 2-core machine) gets one more try (ctest --repeat until-pass:2), a report never passes that way.
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-2}
REPORTS=$PWD/build/sanitizer-reports
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:log_path=$REPORTS/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/ubsan}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:log_path=$REPORTS/tsan}

# Any report file written so far fails the run, with its first lines.
check_reports() {
  local found
  found=$(find "$REPORTS" -type f -size +0 | sort)
  [ -z "$found" ] && return 0
  for f in $found; do
    echo "== sanitizer report $f"
    head -40 "$f"
  done
  return 1
}

status=0
echo "== ASan + UBSan: every test (debug preset)"
start=$(date +%s)
test -f build/debug/CMakeCache.txt || cmake --preset debug -DGPUCLK_WITH_CUDA=OFF >/dev/null
cmake --build build/debug -j"$JOBS"
echo "debug build: $(($(date +%s) - start)) s"
start=$(date +%s)
ctest --test-dir build/debug -j"$JOBS" --output-on-failure --timeout 600 --repeat until-pass:2 ||
  status=1
echo "debug tests: $(($(date +%s) - start)) s"
check_reports || status=1

echo "== TSan: sampler, control, serve (tsan preset)"
start=$(date +%s)
test -f build/tsan/CMakeCache.txt || cmake --preset tsan >/dev/null
cmake --build build/tsan -j"$JOBS" --target gpuclk gpuclk-serve nvml_sim gpuclk_unit_tests
echo "tsan build: $(($(date +%s) - start)) s"
start=$(date +%s)
# Unit tests of the threaded units, and the CLI tests that drive them end to end.
TSAN_TESTS='telemetry_sampler|control_|cli\.(set|restore|control_faults|apply|stat|dmon)|serve'
ctest --test-dir build/tsan -j"$JOBS" -R "$TSAN_TESTS" --output-on-failure --timeout 600 \
  --repeat until-pass:2 || status=1
echo "tsan tests: $(($(date +%s) - start)) s"
check_reports || status=1
exit $status
