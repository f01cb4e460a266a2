#!/usr/bin/env bash
# What gpuclk serve costs, each figure beside its goal (docs/serve.md, "Cost and latency"):
#   - scrape latency: p50/p99 over 1000 scrapes on one keep-alive connection, the way Prometheus
#     scrapes;
#   - the service's CPU at the default interval (100 ms) with one scrape per second over SECONDS
#     (default 60), in total and per thread (the service names its threads: gpuclk-fast,
#     gpuclk-slowN, gpuclk-events, gpuclk-refresh, civetweb-worker, ...); on real GPUs, the CPU of
#     `nvidia-smi dmon -d 1` on the same GPUs over the same window (the peer);
#   - its RSS at the end;
#   - its RSS once it holds an hour of history (its rings full: 10 min of samples at 100 ms, 1 h
#     at 1 s, 10 min of slow samples): on a simulated node with simulated time at 60x
#     (GPUCLK_SIM_SPEED=60: 75 s of wall time are 75 min of the service's), scraped once a wall
#     second; on real GPUs only with HOUR=1 (it takes the hour). HOUR=0 leaves it out.
# RUNS runs (default 3), each with a fresh service; the summary line gives each figure's median.
#   perf/serve_cost.sh [GPUCLK_BIN] [SECONDS]
#   SIM=8xh100 perf/serve_cost.sh build/release/gpuclk    # simulated 8x H100 node
#   SERVE_ARGS="--interval 1s --counters-interval 30s" perf/serve_cost.sh   # other cadences
# On a simulated node the simulator runs inside the service, so its cost is counted too.
set -euo pipefail
BIN=${1:-build/device/gpuclk}
SECONDS_RUN=${2:-60}
RUNS=${RUNS:-3}
SIM=${SIM:-}
read -ra SERVE_ARGS <<<"${SERVE_ARGS:-}"
HOUR=${HOUR:-$([ -n "$SIM" ] && echo 1 || echo 0)}
TMP=$(mktemp -d)
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
GLOBAL=()
if [ -n "$SIM" ]; then GLOBAL=(--sim "$SIM"); fi
PEER=""
if [ -z "$SIM" ] && command -v nvidia-smi >/dev/null; then PEER=nvidia-smi; fi

# A fresh service on a free port (SERVE_PID, PORT); arguments: what runs it (env VAR=...).
start_serve() {
  rm -f "$TMP/gpuclk.sock"
  "$@" "$BIN" "${GLOBAL[@]}" --socket "$TMP/gpuclk.sock" serve --listen 127.0.0.1:0 "${SERVE_ARGS[@]}" 2>"$TMP/serve.log" &
  SERVE_PID=$!
  for _ in $(seq 100); do grep -q "metrics http://" "$TMP/serve.log" && break; sleep 0.1; done
  PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.log" | head -1 | sed 's/.*://')
  [ -n "$PORT" ] || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
}

# One run's line, as it ends.
SHOW_RUN='
import json, sys
r = json.loads(sys.stdin.read())
extra = ", nvidia-smi dmon %.2f %%" % r["smi_cpu_pct"] if "smi_cpu_pct" in r else ""
threads = ", ".join("%s %.2f %%" % kv for kv in sorted(r["threads"].items(), key=lambda kv: -kv[1]))
print("run %d: scrape p50 %.3f ms, p99 %.3f ms; CPU %.2f %% of a core%s; RSS %.1f MiB; per thread: %s"
      % (r["run"], r["p50_ms"], r["p99_ms"], r["cpu_pct"], extra, r["rss_mib"], threads))'

for run in $(seq "$RUNS"); do
  [ -n "$SIM" ] && export GPUCLK_SIM_STATE="$TMP/sim$run.state"
  start_serve
  sleep 2
  python3 - "$PORT" "$SERVE_PID" "$SECONDS_RUN" "$PEER" "$run" >>"$TMP/runs.jsonl" <<'PY'
import http.client, json, os, subprocess, sys, time
port, pid, seconds, peer, run = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
tick = os.sysconf("SC_CLK_TCK")
def cpu(p):
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def rss_kib(p):
    for line in open(f"/proc/{p}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1])
conn = http.client.HTTPConnection("127.0.0.1", port)
def scrape():
    # civetweb closes an idle keep-alive connection after a while: reconnect, as Prometheus does.
    global conn
    for attempt in range(2):
        try:
            t0 = time.perf_counter()
            conn.request("GET", "/metrics"); body = conn.getresponse().read()
            return time.perf_counter() - t0, body
        except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port)
    raise RuntimeError("scrape failed twice")
times = []
for _ in range(1000):
    t, body = scrape(); times.append(t)
times.sort()
def threads():
    # schedstat's first field: the thread's time on a CPU in ns (stat's ticks are 10 ms: a
    # thread at 0.02 % of a core would read 0 over a minute).
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            ns = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        except OSError:
            continue
        out[(tid, name)] = ns / 1e9
    return out
smi = None
if peer:
    # The peer over the same window: nvidia-smi dmon at 1 s on every GPU, output discarded.
    smi = subprocess.Popen(["nvidia-smi", "dmon", "-d", "1"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(1)
    s0 = cpu(smi.pid)
c0, t0, w0 = cpu(pid), threads(), time.monotonic()
for i in range(seconds):
    scrape()
    time.sleep(max(0, w0 + i + 1 - time.monotonic()))
c1, t1, w1 = cpu(pid), threads(), time.monotonic()
wall = w1 - w0
result = {"run": int(run), "series": sum(1 for l in body.split(b"\n") if l and not l.startswith(b"#")),
          "bytes": len(body), "p50_ms": times[500] * 1e3, "p99_ms": times[990] * 1e3,
          "max_ms": times[-1] * 1e3, "cpu_pct": 100 * (c1 - c0) / wall, "seconds": wall,
          "rss_mib": rss_kib(pid) / 1024}
if smi:
    result["smi_cpu_pct"] = 100 * (cpu(smi.pid) - s0) / wall
    smi.terminate(); smi.wait()
by_name = {}
for key, v in t1.items():
    name = key[1].rstrip("0123456789") if key[1].startswith("gpuclk-slow") else key[1]
    by_name[name] = by_name.get(name, 0) + v - t0.get(key, 0)
result["threads"] = {n: round(100 * v / wall, 3) for n, v in by_name.items() if v > 0}
print(json.dumps(result))
PY
  kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=""
  tail -1 "$TMP/runs.jsonl" | python3 -c "$SHOW_RUN"
done

NODE="${SIM:+simulated $SIM; }$(grep -o '[0-9]* GPUs*.*ms' "$TMP/serve.log")"
python3 - "$TMP/runs.jsonl" "$NODE" "$SECONDS_RUN" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
node, seconds = sys.argv[2], sys.argv[3]
med = lambda k: statistics.median(r[k] for r in runs)
print(f"node: {node}; {len(runs)} runs of {seconds} s at 1 scrape/s, medians:")
print(f"  scrape: {runs[-1]['series']} series, {runs[-1]['bytes']} bytes; p50 {med('p50_ms'):.3f} ms, "
      f"p99 {med('p99_ms'):.3f} ms (goal: p99 <= 1 ms on real GPUs, <= 2 ms on 8 simulated)")
line = f"  CPU: {med('cpu_pct'):.2f} % of a core (goal: <= 0.5 % for 8 GPUs"
if all("smi_cpu_pct" in r for r in runs):
    line += f", and at most nvidia-smi dmon -d 1's: {med('smi_cpu_pct'):.2f} %"
print(line + ")")
names = sorted({n for r in runs for n in r["threads"]})
per = {n: statistics.median(r["threads"].get(n, 0) for r in runs) for n in names}
print("  per thread: " + ", ".join(f"{n} {v:.2f} %" for n, v in sorted(per.items(), key=lambda kv: -kv[1]) if v > 0))
print(f"  RSS: {med('rss_mib'):.1f} MiB at the end (goal: <= 30 MiB)")
PY

[ "$HOUR" = 1 ] || exit 0
# An hour of history: the service's rings fill, then its RSS is read (and once more 10 s later:
# it should stay flat).
HOUR_WALL=3660; HOUR_SPEED=(env)
if [ -n "$SIM" ]; then HOUR_WALL=75; HOUR_SPEED=(env GPUCLK_SIM_SPEED=60); export GPUCLK_SIM_STATE="$TMP/hour.state"; fi
start_serve "${HOUR_SPEED[@]}"
python3 - "$PORT" "$SERVE_PID" "$HOUR_WALL" "${SIM:+60}" <<'PY'
import sys, time, urllib.request
port, pid, wall, speed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def rss_mib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
start = time.monotonic()
def scrape_until(t):
    while time.monotonic() - start < t:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read()
        time.sleep(1)
scrape_until(wall)
full = rss_mib()
scrape_until(wall + 10)
later = rss_mib()
history = f"{wall * int(speed) / 60:.0f} min" if speed else f"{wall / 60:.0f} min"
print(f"  RSS after {history} of history{' (simulated time at ' + speed + 'x)' if speed else ''}: "
      f"{full:.1f} MiB, {later:.1f} MiB 10 s later (goal: <= 30 MiB after 1 h, flat)")
PY
