#!/usr/bin/env bash
# What `gpuclk serve --metrics-compat dcgm-exporter` costs on /metrics: the text's size and
# series, and the scrape latency (curl's time_total, a new connection each, as a scraper without
# keep-alive sees it), with and without the option, on one node (SIM, default 8xh100). Scrapes
# come every 150 ms, more than the sampling interval (100 ms), so nearly each one builds the text
# afresh (it is built once per sample): the latency includes the build. RUNS runs of each,
# alternating, each with a fresh service; prints each run and the medians.
#   perf/dcgm_compat_cost.sh [GPUCLK_BIN] [SCRAPES]
#   SIM=8xh100 RUNS=3 perf/dcgm_compat_cost.sh build/hb/gpuclk 200
set -euo pipefail
BIN=${1:-build/release/gpuclk}
SCRAPES=${2:-200}
RUNS=${RUNS:-3}
SIM=${SIM:-8xh100}
TMP=$(mktemp -d)
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
export GPUCLK_SIM_SPEED=1 GPUCLK_SIM_START=5

one_run() {  # $1: the run's name; the rest: serve's options
  local name=$1
  shift
  export GPUCLK_SIM_STATE="$TMP/$name.state"
  rm -f "$TMP/gpuclk.sock"
  "$BIN" --sim "$SIM" --socket "$TMP/gpuclk.sock" serve --listen 127.0.0.1:0 "$@" 2>"$TMP/serve.log" &
  SERVE_PID=$!
  for _ in $(seq 100); do grep -q "metrics http://" "$TMP/serve.log" && break; sleep 0.1; done
  local port
  port=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.log" | head -1 | sed 's/.*://')
  [ -n "$port" ] || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
  sleep 2
  for _ in $(seq "$SCRAPES"); do
    curl -sf -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"
    sleep 0.15
  done >"$TMP/$name.times"
  # The size at the end, when every family is there (GPM needs two slow reads, 5 s apart).
  curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/$name.prom"
  kill "$SERVE_PID"
  wait "$SERVE_PID" || true
  SERVE_PID=""
  python3 - "$name" "$TMP/$name.prom" "$TMP/$name.times" <<'PY'
import json, sys
name, prom, times = sys.argv[1:]
text = open(prom, "rb").read()
lines = [l for l in text.decode().splitlines() if l and not l.startswith("#")]
t = sorted(float(x) * 1000 for x in open(times))
q = lambda p: t[min(len(t) - 1, int(p * len(t)))]
print(json.dumps({"run": name, "bytes": len(text), "series": len(lines),
                  "dcgm_series": sum(l.startswith("DCGM_") for l in lines),
                  "p50_ms": q(0.5), "p99_ms": q(0.99), "scrapes": len(t)}))
PY
}

for run in $(seq "$RUNS"); do
  one_run "plain$run" | tee -a "$TMP/runs.jsonl"
  one_run "compat$run" --metrics-compat dcgm-exporter | tee -a "$TMP/runs.jsonl"
done
python3 - "$TMP/runs.jsonl" "$SIM" "$SCRAPES" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for kind, label in (("plain", "without the option"), ("compat", "--metrics-compat dcgm-exporter")):
    r = [x for x in runs if x["run"].startswith(kind)]
    med = lambda k: statistics.median(x[k] for x in r)
    print(f"{sys.argv[2]}, {label}: {med('bytes') / 1000:.0f} KB, {med('series'):.0f} series "
          f"({med('dcgm_series'):.0f} DCGM_), scrape p50 {med('p50_ms'):.2f} ms, "
          f"p99 {med('p99_ms'):.2f} ms (medians of {len(r)} runs of {sys.argv[3]} scrapes)")
PY
