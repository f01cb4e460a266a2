#!/usr/bin/env bash
# One governor decision's CPU cost per GPU (classify + policy + hysteresis + signals from a
# sampler snapshot), per policy, against the 50 µs budget and against copying one GPU's sampler
# snapshot (the peer, measured in the same run). Build first:
#   cmake --build build/release --target gpuclk-govern-decision-cost
# Usage: perf/govern_decision_cost.sh [BUILD_DIR] [DECISIONS]   (figures: docs/govern.md "Loop cost")
set -euo pipefail
build=${1:-build/release}
"$build/gpuclk-govern-decision-cost" "${2:-200000}"
