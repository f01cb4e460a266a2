#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UBSan (the `debug` preset), then the threaded
# parts — the telemetry sampler, control, and the service once it exists — under ThreadSanitizer
# (the `tsan` preset). .ci/run calls it after `make test PRESET=ci`.
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-2}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

echo "== ASan + UBSan: every test (debug preset)"
test -f build/debug/CMakeCache.txt || cmake --preset debug -DGPUCLK_WITH_CUDA=OFF >/dev/null
cmake --build build/debug -j"$JOBS"
ctest --test-dir build/debug -j"$JOBS" --output-on-failure --timeout 600

echo "== TSan: sampler, control, serve (tsan preset)"
test -f build/tsan/CMakeCache.txt || cmake --preset tsan >/dev/null
cmake --build build/tsan -j"$JOBS" --target gpuclk nvml_sim gpuclk_unit_tests
# Unit tests of the threaded units, and the CLI tests that drive them end to end.
TSAN_TESTS='telemetry_sampler|control_|cli\.(set|restore|control_faults|apply|stat|dmon)|serve'
ctest --test-dir build/tsan -j"$JOBS" -R "$TSAN_TESTS" --output-on-failure --timeout 600
