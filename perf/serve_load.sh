#!/usr/bin/env bash
# gpuclk serve under load, each figure beside its goal (docs/serve.md, "Cost and latency"):
#   1. the socket: CLIENTS keep-alive clients (default 10), each asking `status` and the `query`
#      view in turn at RATE requests/s in all (default 1000), for SECONDS (default 30): the rate
#      reached, latency p50/p99, errors;
#   2. /metrics: 10 keep-alive scrapers (wrk) pacing ~1000 requests/s in all for SECONDS (wrk
#      waits its delay after each answer: 9 ms, so that 10 connections ask a little over 1000/s);
#   3. over both: the sampler's ticks missed and its lateness p99 (from /metrics), the RSS before
#      and after.
# Then the abuse cases: tests/integration/serve_robustness_test.sh (ABUSE=0 skips them).
#   perf/serve_load.sh [GPUCLK_BIN]              (default build/release/gpuclk; SIM default 8xh100)
#   SIM= perf/serve_load.sh .devbin/main/gpuclk  # the host's GPUs
# WRK: the wrk to run (default: wrk on PATH; scripts/device-check.sh carries one to the GPU host).
set -euo pipefail
BIN=${1:-build/release/gpuclk}
SECONDS_RUN=${SECONDS_RUN:-30}
CLIENTS=${CLIENTS:-10}
RATE=${RATE:-1000}
SIM=${SIM-8xh100}
TMP=$(mktemp -d)
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
GLOBAL=()
if [ -n "$SIM" ]; then GLOBAL=(--sim "$SIM"); export GPUCLK_SIM_STATE="$TMP/sim.state"; fi
"$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock" serve --listen 127.0.0.1:0 2>"$TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q "metrics http://" "$TMP/serve.log" && break; sleep 0.1; done
PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.log" | head -1 | sed 's/.*://')
[ -n "$PORT" ] || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
sleep 3
echo "node: ${SIM:+simulated $SIM; }$(grep -o '[0-9]* GPUs*.*ms' "$TMP/serve.log")"

# The sampler's counters and the RSS, before and after each part.
sampler() {
  curl -s "http://127.0.0.1:$PORT/metrics" | awk '
    /^gpuclk_sampler_ticks_total / {t=$2} /^gpuclk_sampler_missed_ticks_total / {m=$2}
    /^gpuclk_sampler_lateness_p99_seconds / {l=$2} /^gpuclk_sampler_interval_seconds / {i=$2}
    END {printf "%d %d %s %s\n", t, m, l, i}'
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVE_PID/status"; }
report_sampler() {  # report_sampler BEFORE AFTER
  read -r t0 m0 _ _ <<<"$1"; read -r t1 m1 late interval <<<"$2"
  echo "  sampler: $((t1 - t0)) ticks, $((m1 - m0)) missed (goal: 0); lateness p99 $(awk -v l="$late" 'BEGIN {printf "%.2f", l * 1000}') ms (goal: < one interval, $(awk -v i="$interval" 'BEGIN {printf "%.0f", i * 1000}') ms)"
}

echo "socket: $CLIENTS clients, status and the query view in turn, $RATE requests/s asked, ${SECONDS_RUN} s"
# The socket's one poll thread answers every client: its CPU per answer, from schedstat (ns).
socket_cpu_ns() {
  local t
  t=$(grep -l '^gpuclk-socket$' /proc/"$SERVE_PID"/task/*/comm | head -1)
  cut -d' ' -f1 "$(dirname "$t")/schedstat"
}
before=$(sampler); rss0=$(rss); sock0=$(socket_cpu_ns)
python3 - "$TMP/gpuclk.sock" "$CLIENTS" "$RATE" "$SECONDS_RUN" "$TMP/answered" <<'PY'
import json, socket, sys, threading, time
path, clients, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
requests = [b'{"v":1,"request":"status"}\n', b'{"v":1,"request":"view","name":"query"}\n']
latencies, errors, lock = [], [0], threading.Lock()
start = time.monotonic() + 0.5
def client(k):
    s = socket.socket(socket.AF_UNIX); s.connect(path); f = s.makefile("rb")
    period = clients / rate
    mine, n = [], 0
    t_next = start + k * period / clients
    while True:
        now = time.monotonic()
        if t_next > start + seconds: break
        if t_next > now: time.sleep(t_next - now)
        t0 = time.perf_counter()
        s.sendall(requests[n % 2]); line = f.readline()
        mine.append(time.perf_counter() - t0)
        if not line or b'"ok":true' not in line:
            with lock: errors[0] += 1
        n += 1; t_next += period
    with lock: latencies.extend(mine)
threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
latencies.sort()
n = len(latencies)
print(f"  {n / seconds:.0f} requests/s (goal: >= 1000); p50 {latencies[n // 2] * 1e3:.2f} ms, "
      f"p99 {latencies[int(n * 0.99)] * 1e3:.2f} ms (goal: <= 5 ms), max {latencies[-1] * 1e3:.2f} ms; "
      f"{errors[0]} errors")
print(n, file=open(sys.argv[5], "w"))
PY
after=$(sampler); rss1=$(rss); sock1=$(socket_cpu_ns)
awk -v c="$((sock1 - sock0))" -v n="$(cat "$TMP/answered")" -v s="$SECONDS_RUN" 'BEGIN {
  printf "  socket thread: %.3f ms of CPU per answer, %.0f %% of a core\n", c / n / 1e6, c / s / 1e7 }'
report_sampler "$before" "$after"
echo "  RSS: $((rss0 / 1024)) MiB before, $((rss1 / 1024)) MiB after (goal: flat, <= 30 MiB)"

WRK=${WRK:-wrk}
if command -v "$WRK" >/dev/null; then
  echo "/metrics: 10 scrapers (wrk), each waiting 9 ms after an answer (~1000 requests/s asked), ${SECONDS_RUN} s"
  cat >"$TMP/pace.lua" <<'LUA'
function delay() return 9 end
LUA
  before=$(sampler); rss0=$(rss)
  "$WRK" -t 2 -c 10 -d "${SECONDS_RUN}s" --timeout 10s --latency -s "$TMP/pace.lua" \
    "http://127.0.0.1:$PORT/metrics" >"$TMP/wrk.txt" 2>&1 || true
  after=$(sampler); rss1=$(rss)
  awk '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
       /Non-2xx|Socket errors/ {err=err $0}
       END {printf "  %d requests/s (goal: >= 1000); p50 %s, p99 %s (goal: <= 5 ms)%s\n", rps, p50, p99, err ? "; " err : "; no errors"}' "$TMP/wrk.txt"
  report_sampler "$before" "$after"
  echo "  RSS: $((rss0 / 1024)) MiB before, $((rss1 / 1024)) MiB after (goal: flat, <= 30 MiB)"
else
  echo "/metrics: wrk is not installed (scripts/install-deps.sh); skipped"
fi
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=""

if [ "${ABUSE:-1}" = 1 ] && [ -n "$SIM" ]; then
  LOAD_SECONDS=$SECONDS_RUN bash "$(dirname "$0")/../tests/integration/serve_robustness_test.sh" "$BIN"
fi
