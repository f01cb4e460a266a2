#!/usr/bin/env bash
# The sanitized test runs (docs/hardening.md):
#   asan  every test under AddressSanitizer + UBSan (the `ci` preset; .ci/run gets it from
#         `make test PRESET=ci`, so it names only tsan);
#   tsan  the parts with threads — the telemetry sampler (through stat and dmon), the node
#         service and its socket server, the event watcher — and the tests that drive them end to
#         end, under ThreadSanitizer (the `tsan` preset). Single-threaded code (control, the
#         simulator, rules) gains nothing from it and is left out to keep CI within its time:
#         the unit tests built are gpuclk_thread_tests (tests/unit/CMakeLists.txt), six files.
#   scripts/ci/sanitizers.sh [asan] [tsan] [tsan-build]     (default: asan tsan)
#   (tsan-build: only the build, so .ci/run can compile it while the ci suite runs)
#
# Sanitizer reports go to files (log_path) as well as failing their test, and any report fails
# the run: a test that failed only on time (a sanitized build runs 2-15x slower on a shared
# 2-core machine) gets one more try (ctest --repeat until-pass:2), a report never passes that way.
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-2}
TEST_JOBS=${TEST_JOBS:-$((2 * JOBS))}  # the tests mostly wait: twice as many as the build's jobs
STAGES=${*:-asan tsan}
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
for stage in $STAGES; do
  case $stage in
    asan)
      echo "== ASan + UBSan: every test (ci preset)"
      start=$SECONDS
      test -f build/ci/CMakeCache.txt || cmake --preset ci >/dev/null
      cmake --build build/ci -j"$JOBS"
      echo "ci build: $((SECONDS - start)) s"
      start=$SECONDS
      ctest --test-dir build/ci -j"$TEST_JOBS" --output-on-failure --timeout 600 --repeat until-pass:2 ||
        status=1
      echo "ci tests: $((SECONDS - start)) s"
      ;;
    tsan | tsan-build)
      echo "== TSan: sampler, service, event watcher (tsan preset)"
      start=$SECONDS
      test -f build/tsan/CMakeCache.txt || cmake --preset tsan >/dev/null
      cmake --build build/tsan -j"$JOBS" --target gpuclk gpuclk-serve nvml_sim gpuclk_thread_tests
      echo "tsan build: $((SECONDS - start)) s"
      [ "$stage" = tsan-build ] && continue
      start=$SECONDS
      # doctor and top run the same sampler as stat and dmon; under TSan on a busy machine
      # doctor's 20 s windows of simulated faults lost their timing (a GPU lost before the
      # window opened), so they stay in the ASan suite only.
      TSAN_TESTS='telemetry_sampler|host_child_process|event_watcher|serve|cli\.(stat|dmon)$'
      ctest --test-dir build/tsan -j"$TEST_JOBS" -R "$TSAN_TESTS" --output-on-failure --timeout 600 \
        --repeat until-pass:2 || status=1
      echo "tsan tests: $((SECONDS - start)) s"
      ;;
    *)
      echo "sanitizers.sh: unknown stage '$stage' (asan, tsan, tsan-build)" >&2
      exit 2
      ;;
  esac
  check_reports || status=1
done
exit $status
