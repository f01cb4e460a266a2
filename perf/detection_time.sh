#!/usr/bin/env bash
# How soon the node service names a straggler (issue 44; docs/fleet.md, "Detection time"): a
# GPU of a running multi-GPU Slurm job on a simulated 8x H100 node starts to run slower than the
# job's others, and we time onset -> the service's `gpuclk_finding{rule="straggler"}` on its
# /metrics (what a Prometheus scrapes, and fleet reports on its next query).
#
#   perf/detection_time.sh [GPUCLK_BIN]      (default build/release/gpuclk)
#
# Cases (CASES, default 24), one after another on one node whose GPUs 0-5 run one job, GPU 6 a
# one-GPU job, GPU 7 nothing: each plants a slowdown on one of GPUs 0-5 at run time, in turn
#   - power: `gpuclk set -i K --power-limit 300` (the limit brakes it, as a power brake would),
#   - clock: `gpuclk set -i K --lock-gpu-clocks 1005,1005` (a lower clock),
# waits for the finding, takes the plant back and goes on with the next GPU; then THERMAL
# (default 4) runs of a fresh node whose GPU 3 is poorly cooled (cooling factor 3.5) and heats
# up under the job until thermal slowdown holds it back: onset is the first moment the
# simulator's truth shows the GPU's clock below 90 % of the job's others (and, reported beside
# it, its first thermal reason).
# Prints every case, then the median and worst onset -> finding, and the precision: findings
# above info that were planted (on the planted GPU, raised while it was planted) / all findings
# above info raised on the node in the whole run; and how many were on healthy or idle GPUs.
# Exit 0 when the median is at most 15 s, precision at least 0.95 and no finding fell on a
# healthy or idle GPU; 1 otherwise; 77 without python3.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "$HERE/detection_time.py" "${1:-build/release/gpuclk}"
