#!/usr/bin/env bash
# What a Prometheus pays in memory for gpuclk's /metrics, per node: one `gpuclk serve` on the
# simulated 8x H100 node with each set of series (the default, and --metrics-detail all, which
# is the earlier default's every series and more), and a real Prometheus per set scraping it as
# NODES nodes (NODES targets of the same service, told apart by a `node` label) every 15 s for
# MINUTES, beside an empty Prometheus (no target) started with them. Prints each Prometheus's
# head series and, as the median of its last 4 readings of its own /metrics, its resident memory
# and Go heap in use; the cost per node is the difference to the empty one divided by NODES.
#   perf/metrics_prometheus_memory.sh [--nodes N] [--minutes M] [GPUCLK_BIN]
#   (defaults: 100 nodes, 8 minutes, build/release/gpuclk)
# The figures in docs/exporter.md ("What it costs a Prometheus") come from this script.
set -u
NODES=100 MINUTES=8 BIN=build/release/gpuclk
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    *) BIN=$1; shift ;;
  esac
done
for p in prometheus curl python3; do
  command -v $p >/dev/null || { echo "metrics_prometheus_memory: $p not installed" >&2; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-prom-memory.XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

SETS=(default all)
declare -A SERVE_PORT PROM_PORT
for set in "${SETS[@]}"; do
  args=()
  [ "$set" != default ] && args=(--metrics-detail "$set")
  GPUCLK_SIM_STATE="$TMP/$set.state" GPUCLK_STATE_DIR="$TMP/$set.journal" "$BIN" --sim 8xh100 \
    --socket "$TMP/$set.sock" serve --listen 127.0.0.1:0 "${args[@]}" 2>"$TMP/serve_$set.log" &
  PIDS+=($!)
done
for set in "${SETS[@]}"; do
  for _ in $(seq 300); do
    SERVE_PORT[$set]=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve_$set.log" | head -1 | sed 's/.*://')
    [ -n "${SERVE_PORT[$set]}" ] && break
    sleep 0.1
  done
  [ -n "${SERVE_PORT[$set]}" ] || { echo "serve ($set) did not start: $(cat "$TMP/serve_$set.log")" >&2; exit 1; }
  series=$(curl -sf "http://127.0.0.1:${SERVE_PORT[$set]}/metrics" | grep -vc '^#')
  echo "gpuclk serve --sim 8xh100 ($set): $series series on /metrics"
done

for set in none "${SETS[@]}"; do
  PROM_PORT[$set]=$(free_port)
  {
    echo "global: {scrape_interval: 15s}"
    echo "scrape_configs:"
    echo "  - job_name: gpuclk"
    echo "    static_configs:"
    if [ "$set" != none ]; then
      for n in $(seq "$NODES"); do
        echo "      - targets: ['127.0.0.1:${SERVE_PORT[$set]}']"
        echo "        labels: {node: node-$n}"
      done
    else
      echo "      - targets: []"
    fi
  } >"$TMP/prom_$set.yml"
  prometheus --config.file="$TMP/prom_$set.yml" --storage.tsdb.path="$TMP/tsdb_$set" \
    --web.listen-address="127.0.0.1:${PROM_PORT[$set]}" --log.level=warn >"$TMP/prom_$set.log" 2>&1 &
  PIDS+=($!)
done

# Each Prometheus's own gauges every 15 s: head series, resident memory, Go heap in use.
for _ in $(seq $((MINUTES * 4))); do
  sleep 15
  for set in none "${SETS[@]}"; do
    curl -sf "http://127.0.0.1:${PROM_PORT[$set]}/metrics" |
      awk -v set="$set" '/^(prometheus_tsdb_head_series|process_resident_memory_bytes|go_memstats_heap_inuse_bytes) / { print set, $1, $2 }' \
        >>"$TMP/readings.txt"
  done
done

python3 - "$TMP/readings.txt" "$NODES" "$MINUTES" <<'PY'
import collections, statistics, sys
readings = collections.defaultdict(list)
for line in open(sys.argv[1]):
    s, name, v = line.split()
    readings[(s, name)].append(float(v))
nodes, minutes = int(sys.argv[2]), sys.argv[3]
def last(s, name):
    return statistics.median(readings[(s, name)][-4:])
mib = 1024 * 1024
print(f"Prometheus 15 s scrapes for {minutes} min, {nodes} nodes per set; medians of the last 4 readings")
print("| series set | head series | per node | RSS | RSS per node | Go heap in use | heap per node | heap per series |")
print("|---|---|---|---|---|---|---|---|")
base_rss, base_heap = last("none", "process_resident_memory_bytes"), last("none", "go_memstats_heap_inuse_bytes")
print(f"| none (empty Prometheus) | {last('none', 'prometheus_tsdb_head_series'):.0f} | | {base_rss / mib:.0f} MiB | | {base_heap / mib:.0f} MiB | | |")
for s in ("default", "all"):
    series = last(s, "prometheus_tsdb_head_series")
    rss, heap = last(s, "process_resident_memory_bytes"), last(s, "go_memstats_heap_inuse_bytes")
    print(f"| {'default' if s == 'default' else '--metrics-detail all'} | {series:.0f} | {series / nodes:.0f} | "
          f"{rss / mib:.0f} MiB | {(rss - base_rss) / nodes / 1024:.0f} KiB | {heap / mib:.0f} MiB | "
          f"{(heap - base_heap) / nodes / 1024:.0f} KiB | {(heap - base_heap) / series:.0f} B |")
PY
