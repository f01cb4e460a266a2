#!/usr/bin/env bash
# What gpuclk serve costs: scrape latency (p50/p99 over 1000 scrapes on one keep-alive
# connection, the way Prometheus scrapes) and the service's CPU at the default interval (100 ms)
# with one scrape per second, over SECONDS (default 60).
#   perf/serve_cost.sh [GPUCLK_BIN] [SECONDS]
#   SIM=8xh100 perf/serve_cost.sh build/release/gpuclk    # simulated 8x H100 node
# The CPU figure includes the sampler (fast tier every 100 ms, slow tier every second) and the
# refresher (status and query fields every second): the whole service.
set -euo pipefail
BIN=${1:-build/device/gpuclk}
SECONDS_RUN=${2:-60}
SIM=${SIM:-}
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
sleep 2
python3 - "$PORT" "$SERVE_PID" "$SECONDS_RUN" <<'PY'
import http.client, os, sys, time
port, pid, seconds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
conn = http.client.HTTPConnection("127.0.0.1", port)
def scrape():
    # civetweb closes an idle keep-alive connection after 500 ms: reconnect, as Prometheus does.
    global conn
    for attempt in range(2):
        try:
            t0 = time.perf_counter()
            conn.request("GET", "/metrics"); body = conn.getresponse().read()
            return time.perf_counter() - t0, body
        except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port)
    raise RuntimeError("scrape failed twice")
times, size, series = [], 0, 0
for _ in range(1000):
    t, body = scrape(); times.append(t)
size = len(body); series = sum(1 for l in body.split(b"\n") if l and not l.startswith(b"#"))
times.sort()
print(f"scrape: {series} series, {size} bytes; over 1000 scrapes p50 {times[500]*1e3:.3f} ms, "
      f"p99 {times[990]*1e3:.3f} ms, max {times[-1]*1e3:.3f} ms")
def threads():
    # Per thread (the service names its loops: gpuclk-fast, gpuclk-slowN, gpuclk-refresh, ...).
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            f = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[(tid, name)] = (int(f[11]) + int(f[12])) / tick
    return out
c0, t0, w0 = cpu(), threads(), time.monotonic()
for i in range(seconds):
    scrape()
    time.sleep(max(0, w0 + i + 1 - time.monotonic()))
c1, t1, w1 = cpu(), threads(), time.monotonic()
print(f"service CPU at 1 scrape/s over {w1-w0:.0f} s: {100*(c1-c0)/(w1-w0):.2f} % of a core")
by_name = {}
for key, v in t1.items():
    name = key[1].rstrip("0123456789") if key[1].startswith("gpuclk-slow") else key[1]
    by_name[name] = by_name.get(name, 0) + v - t0.get(key, 0)
print("per thread: " + ", ".join(f"{n} {100*v/(w1-w0):.2f} %" for n, v in
                                 sorted(by_name.items(), key=lambda kv: -kv[1]) if v > 0))
PY
echo "node: ${SIM:+simulated $SIM}; $(grep -o '[0-9]* GPUs.*ms' "$TMP/serve.log")"
