#!/usr/bin/env bash
# Second GPU-machine run (issues 2, 4, 5, 6, 7), read-only throughout. Binaries built here with
# the device preset and carried, stripped, in .device/. Logs are tarred into $OUT/logs.tar.gz
# (only 8 files come back); the summary goes to stdout.
export GPUCLK_READ_ONLY=1
cd "$(dirname "$0")/.."
D=$PWD/.device
export GPUCLK_BIN=$D/gpuclk GPUCLK=$D/gpuclk TOOL=$D/gpuclk-sampler-overhead PROBE=$D/gpuclk-bench-probe
FINAL_OUT=$OUT
export OUT=/tmp/run2; mkdir -p $OUT
step() { echo; echo "=== $1"; }
step "foundation + latency"; scripts/device-check.sh foundation latency > $OUT/foundation.md 2>&1; echo "rc=$?"
grep -E "^\| GPU0 |differ|supported graphics|^\| (query|clocks|status)" $OUT/foundation.md
step "read-only refusals"; tests/device/readonly_test.sh $D/gpuclk > $OUT/readonly.log 2>&1; echo "rc=$?"; tail -14 $OUT/readonly.log
step "occupancy device test"; tests/device/occupancy_device.sh > $OUT/occupancy.log 2>&1; echo "rc=$?"; grep -iE "mismatch|cases|agree|differ|FAIL" $OUT/occupancy.log | head -12
step "sampler vs pynvml"; timeout 150 perf/sampler_vs_pynvml.sh > $OUT/sampler.log 2>&1; echo "rc=$?"; tail -14 $OUT/sampler.log
step "dmon vs nvidia-smi dmon, stat around a BF16 GEMM"; timeout 170 perf/dmon_vs_nvidia_smi.sh > $OUT/dmon.log 2>&1; echo "rc=$?"; tail -40 $OUT/dmon.log
step "gpuclk bench"; timeout 150 tests/device/bench_cli_test.sh $D/gpuclk > $OUT/bench_cli.log 2>&1; echo "rc=$?"; tail -20 $OUT/bench_cli.log
tar czf $FINAL_OUT/logs.tar.gz -C /tmp run2
