#!/usr/bin/env bash
# First GPU-machine run (issues 2, 6, 7): binaries carried in .device/ (built here with the
# device preset, stripped). Read-only throughout.
export GPUCLK_READ_ONLY=1
cd "$(dirname "$0")/.."
export GPUCLK_BIN=$PWD/.device/gpuclk
mkdir -p "$OUT"
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.applications.graphics --format=csv
echo "=== foundation + latency"
scripts/device-check.sh foundation latency > "$OUT/foundation.md" 2>&1; echo "device-check rc=$?"
tail -45 "$OUT/foundation.md"
echo "=== occupancy device test"
OUT=$OUT tests/device/occupancy_device.sh > "$OUT/occupancy.log" 2>&1; echo "occupancy rc=$?"; tail -15 "$OUT/occupancy.log"
echo "=== bench GPU tests"
.device/gpuclk_device_tests > "$OUT/bench_device_tests.log" 2>&1; echo "bench tests rc=$?"; tail -5 "$OUT/bench_device_tests.log"
echo "=== bench vs torch"
PROBE=$PWD/.device/gpuclk-bench-probe perf/bench_vs_torch.sh > "$OUT/bench_vs_torch.log" 2>&1; echo "bench_vs_torch rc=$?"; tail -25 "$OUT/bench_vs_torch.log"
