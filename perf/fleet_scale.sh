#!/usr/bin/env bash
# gpuclk fleet at cluster scale (issue 44; docs/fleet.md, "At scale"): a fleet of N simulated nodes
# of 8 H100s, 1 h of history at a 15 s scrape, loaded into a real Prometheus or VictoriaMetrics
# the way a site backfills (promtool tsdb create-blocks-from openmetrics; VictoriaMetrics'
# /api/v1/import), then `gpuclk fleet --range 1h` and `gpuclk fleet --job ID` timed against it.
#
#   perf/fleet_scale.sh [--nodes N] [--engine prometheus|victoriametrics] [--plant NODE=SCENARIO.toml ...]
#
# --nodes N (default 1000): nodes n0000:9400 ... ; --engine (default prometheus); --plant gives
# node NODE (0-based) a simulator scenario instead of the healthy perf/fleet_scale/node.toml (the
# files beside it plant one fault each). The series come from real `gpuclk serve --sim` scrapes,
# one service per distinct scenario, replicated under the N instance labels with small per-node
# variation (perf/fleet_scale.py says how). It prints one line per planted node with the findings
# fleet gave it, one line of findings on nodes not planted, and the summary line
#   fleet_scale: N nodes, G GPUs, engine E, fleet answered in S s, planted P found F, extra X, server RSS M MiB
# Exit 0 only when every planted fault is found on its node and GPU and nothing else is above
# info; 1 otherwise; 2 for a bad option; 77 when Prometheus/promtool or victoria-metrics is missing.
# Environment: GPUCLK_BIN (default build/release/gpuclk), SCRAPES (scrapes captured per scenario,
# default 40, cycled over the hour), KEEP=1 (keep the work directory), TMPDIR, QUIET_BELOW=L (on
# a shared machine: wait, at most QUIET_WAIT s (default 3600), for a 1-minute load average below L
# before fleet is timed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "fleet_scale: needs python3" >&2; exit 77; }
exec python3 "$HERE/fleet_scale.py" "$@"
