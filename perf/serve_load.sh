#!/usr/bin/env bash
# gpuclk serve under load for 30 s (wrk at ~1000 requests/s, RSS before/after, sampler lateness
# p99) plus the abuse cases: tests/integration/serve_robustness_test.sh with LOAD_SECONDS=30.
#   perf/serve_load.sh [GPUCLK_BIN]
BIN=${1:-build/release/gpuclk}
LOAD_SECONDS=${LOAD_SECONDS:-30} exec bash "$(dirname "$0")/../tests/integration/serve_robustness_test.sh" "$BIN"
