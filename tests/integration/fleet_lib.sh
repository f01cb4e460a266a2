# What the fleet tests share (fleet_test.sh, fleet_job_test.sh): lib.sh's folder, processes and
# checks, then the simulated nodes' services and a real Prometheus scraping them. Sourced as
# `source fleet_lib.sh NAME TOOL...` (lib.sh's arguments). START: the test's start (date +%s).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
START=$(date +%s)

# wait_for_services N...: node N's service (PIDS, in NODES' order from the first) is listening:
# INSTANCE[N]=127.0.0.1:PORT from its log $TMP/nN.log. Exits 1 when one exits or never listens
# (the bound is only for a hang: four sanitized services starting on a loaded 2-core machine took
# more than 30 s).
declare -A INSTANCE
wait_for_services() {
  local i=0 n port
  for n in "$@"; do
    for _ in $(seq $((1200 * ${GPUCLK_TEST_TIME_SCALE:-1}))); do
      grep -q "metrics http://" "$TMP/n$n.log" && break
      kill -0 "${PIDS[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    i=$((i + 1))
    port=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/n$n.log" | head -1 | sed 's/.*://')
    [ -n "$port" ] || { echo "serve on node $n did not start: $(cat "$TMP/n$n.log")"; exit 1; }
    INSTANCE[$n]="127.0.0.1:$port"
  done
}

# start_prometheus N...: Prometheus scraping the services of nodes N every second (job gpuclk),
# on PROM_PORT, URL its address; `promql QUERY` prints the first result's value (0 for none).
start_prometheus() {
  PROM_PORT=$(free_port)
  local n
  {
    echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
    echo "scrape_configs:"
    echo "  - job_name: gpuclk"
    echo "    static_configs:"
    for n in "$@"; do echo "      - targets: ['${INSTANCE[$n]}']"; done
  } >"$TMP/prometheus.yml"
  prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  PIDS+=("$PROM_PID")
  URL="http://127.0.0.1:$PROM_PORT"
}
promql() { curl -sf --get "$URL/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // 0' 2>/dev/null; }
