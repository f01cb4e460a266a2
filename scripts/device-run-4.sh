#!/usr/bin/env bash
# Fourth GPU-machine run: CLI latency and sampler cost after the lazy identity probe and the
# once-a-second memory read (issues 2 and 4). Read-only.
export GPUCLK_READ_ONLY=1
cd "$(dirname "$0")/.."
export GPUCLK_BIN=$PWD/.device/gpuclk TOOL=$PWD/.device/gpuclk-sampler-overhead
perf/cli_latency.sh .device/gpuclk 30
echo
timeout 200 perf/sampler_vs_pynvml.sh
