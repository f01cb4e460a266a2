#!/usr/bin/env bash
# perf/fleet_scale.sh at 20 nodes (its 1000-node run is a perf script, docs/results/fleet_scale.md):
# the series of real `gpuclk serve --sim` scrapes replicated under 20 instance labels, 1 h of
# history backfilled into a real Prometheus (promtool) or VictoriaMetrics (its import API), and
# gpuclk fleet must find the four planted faults — a hot GPU (the straggler of its job), a lost
# GPU, a lowered power limit, a node's application clocks — each on its node and GPU, and
# nothing else above info. The script's exit code says it; its summary line is checked too.
#   fleet_scale_test.sh GPUCLK_BIN prometheus|victoriametrics
set -u
GPUCLK_BIN=${1:?usage: fleet_scale_test.sh /path/to/gpuclk ENGINE}
ENGINE=${2:-prometheus}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
out=$(GPUCLK_BIN=$GPUCLK_BIN SCRAPES=12 bash "$HERE/perf/fleet_scale.sh" --nodes 20 --engine "$ENGINE" \
  --plant 3="$HERE/perf/fleet_scale/hot_gpu.toml" --plant 9="$HERE/perf/fleet_scale/lost_gpu.toml" \
  --plant 12="$HERE/perf/fleet_scale/power_limit.toml" --plant 19="$HERE/perf/fleet_scale/app_clocks.toml" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: perf/fleet_scale.sh exited $rc"; exit 1; }
echo "$out" | grep -Eq "^fleet_scale: 20 nodes, 160 GPUs, engine $ENGINE, fleet answered in [0-9.]+ s, planted 4 found 4, extra 0, server RSS [0-9]+ MiB$" ||
  { echo "FAIL: no summary line with 4 of 4 planted faults found and none extra"; exit 1; }
echo "$out" | grep -q "^fleet --job 1000: 32 GPUs on 4 nodes, .* straggler n0003:9400 GPU 3, exit 10" ||
  { echo "FAIL: fleet --job 1000 did not name node 3's hot GPU 3 the straggler"; exit 1; }
