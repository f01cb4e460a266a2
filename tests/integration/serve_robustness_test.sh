#!/usr/bin/env bash
# gpuclk serve under abuse, loopback only, bounded in time (LOAD_SECONDS, default 5; the perf
# run, perf/serve_load.sh, uses 30): wrk at ~1000 requests/s on /metrics with RSS flat; malformed
# HTTP, a 1 MiB header, a client that sends one byte a second; 100 socket clients and 100 HTTP
# clients at once; malformed and oversized socket requests. Nothing crashes, every bad request
# gets an error or a closed connection, and the sampler keeps ticking (lateness p99 reported).
set -u
GPUCLK_BIN=${1:?usage: serve_robustness_test.sh /path/to/gpuclk}
LOAD_SECONDS=${LOAD_SECONDS:-5}
for p in wrk curl jq python3; do
  command -v $p >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-robust.XXXXXX")
SERVE_PID=""
cleanup() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
export GPUCLK_SIM_STATE="$TMP/sim.state" GPUCLK_STATE_DIR="$TMP/state" GPUCLK_SIM_SPEED=1
unset GPUCLK_SOCKET GPUCLK_NVML_LIB GPUCLK_SIM_SCENARIO
SOCK="$TMP/gpuclk.sock"
FAILURES=0 CHECKS=0
fail() { FAILURES=$((FAILURES + 1)); echo "FAIL: $*" >&2; }
check() { CHECKS=$((CHECKS + 1)); }

"$GPUCLK_BIN" --sim 8xh100 --socket "$SOCK" serve --listen 127.0.0.1:0 2>"$TMP/serve.log" &
SERVE_PID=$!
for _ in $(seq 200); do grep -q "metrics http://" "$TMP/serve.log" && break; sleep 0.1; done
PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.log" | head -1 | sed 's/.*://')
[ -n "$PORT" ] || { echo "serve did not start: $(cat "$TMP/serve.log")"; exit 1; }
URL="http://127.0.0.1:$PORT"
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVE_PID/status"; }
alive() { check; kill -0 "$SERVE_PID" 2>/dev/null || { fail "serve died after $1: $(tail -3 "$TMP/serve.log")"; exit 1; }; }
metrics_ok() { check; curl -sf -m 5 "$URL/metrics" | grep -q '^gpuclk_gpu_power_watts{' || fail "/metrics broken after $1"; }
sock() {  # sock PYTHON-BODY: runs with `path` set to the socket
  python3 - "$SOCK" <<PY
import socket, sys, threading, time
path = sys.argv[1]
$1
PY
}

# --- malformed HTTP ---
python3 - "$PORT" <<'PY' >"$TMP/bad_http.txt"
import socket, sys
port = int(sys.argv[1])
def talk(data, read=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(data)
        out = b""
        while read:
            chunk = s.recv(65536)
            if not chunk: break
            out += chunk
    except OSError:
        out = b"(connection reset)"
    s.close()
    return out.split(b"\r\n")[0].decode(errors="replace") or "(closed)"
print("garbage:", talk(b"\x00\xff\xfe garbage \r\n\r\n"))
print("bad method:", talk(b"BREW /metrics HTCPCP/1.0\r\n\r\n"))
print("no such path:", talk(b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
print("huge header:", talk(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"))
PY
cat "$TMP/bad_http.txt"
alive "malformed HTTP"; metrics_ok "malformed HTTP"
check; grep -q "no such path: HTTP/1.1 404" "$TMP/bad_http.txt" || fail "unknown path not a 404"

# --- a client sending one byte a second holds one server thread; the others go on ---
python3 - "$PORT" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
try:
    for b in b"GET /metrics HTTP/1.1\r\n":
        s.sendall(bytes([b])); time.sleep(1)
except OSError:
    pass
PY
SLOW_PID=$!
sleep 1
t0=$(date +%s%N); metrics_ok "slow client"; t1=$(date +%s%N)
echo "scrape while a slow client is connected: $(( (t1 - t0) / 1000000 )) ms"
kill $SLOW_PID 2>/dev/null; wait $SLOW_PID 2>/dev/null

# --- malformed and oversized socket requests, then 100 socket clients at once ---
OUT=$(sock '
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
s.sendall(b"\x00\x01garbage\n{\"v\":1}\n{\"v\":1,\"request\":\"history\",\"gpus\":\"x\"}\n")
data = b""
while data.count(b"\n") < 3:
    data += s.recv(65536)
print(data.decode())
big = socket.socket(socket.AF_UNIX); big.settimeout(5); big.connect(path)
try:
    big.sendall(b"{" * (200 * 1024))
    print(big.recv(65536).decode().strip())
except OSError as e:
    print("oversized: connection closed", e)
')
echo "$OUT" | cut -c1-160
check; [ "$(grep -c "\"ok\":false" <<<"$OUT")" -eq 4 ] || fail "bad socket requests did not all get errors"
check; grep -q "request longer than 65536 bytes" <<<"$OUT" || fail "oversized request not refused"
alive "bad socket requests"
OUT=$(sock '
results = []
def client():
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(path)
        s.sendall(b"{\"v\":1,\"request\":\"status\"}\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(1 << 20)
            if not chunk: break
            data += chunk
        results.append(b"\"ok\":true" in data)
    except OSError:
        results.append(False)
threads = [threading.Thread(target=client) for _ in range(100)]
t0 = time.time()
for t in threads: t.start()
for t in threads: t.join()
print(sum(results), "of 100 socket clients answered in %.0f ms" % ((time.time() - t0) * 1000))
')
echo "$OUT"
check; grep -q "^100 of 100" <<<"$OUT" || fail "100 socket clients: $OUT"
# 100 HTTP clients at once
# Every client answered is the property; how fast is perf/serve_cost.sh's. A sanitized service
# on a loaded machine took more than 10 s for the last of them (83 of 100 in time): curl waits
# a minute, scaled for slow builds.
pids=()
for i in $(seq 100); do
  curl -sf -m "$((60 * ${GPUCLK_TEST_TIME_SCALE:-1}))" -o /dev/null -w '%{http_code}\n' "$URL/metrics" >"$TMP/http.$i" &
  pids+=($!)
done
wait "${pids[@]}" 2>/dev/null
ok=$(cat "$TMP"/http.* 2>/dev/null | grep -c '^200$')
echo "$ok of 100 HTTP clients at once got 200"
check; [ "$ok" -eq 100 ] || fail "100 HTTP clients: $ok got 200"
alive "100 clients"

# --- up to ~1000 requests/s on /metrics for LOAD_SECONDS: RSS flat ---
cat >"$TMP/pace.lua" <<'LUA'
-- each of the 20 connections waits 18 ms between requests: ~1000 requests/s in all
function delay() return 18 end
LUA
# A warm-up first: the first use of each civetweb worker thread maps its stack and malloc arena
# (~3 MB at 32 threads); flat means no growth after that. 64 unpaced connections reach every
# worker: at the test's own pace, a loaded machine left some workers to the measured run (RSS
# +4.7 MB there, with nothing leaking).
# The warm-up leaves a backlog where scrapes are slow (ASan on a loaded CI box: ~100 ms each, 64
# queued when wrk stopped, so the measured run that followed completed none in 5 s): one scrape
# that waits its turn drains it before the measured run starts.
wrk -t 2 -c 64 -d 3s "$URL/metrics" >/dev/null 2>&1
curl -sf -m "$((60 * ${GPUCLK_TEST_TIME_SCALE:-1}))" -o /dev/null "$URL/metrics"
rss_before=$(rss_kb)
wrk -t 2 -c 20 -d "${LOAD_SECONDS}s" --timeout 30s --latency -s "$TMP/pace.lua" "$URL/metrics" \
  >"$TMP/wrk.txt" 2>&1
rss_after=$(rss_kb)
grep -E "Requests/sec|Non-2xx|Socket errors|50%|99%" "$TMP/wrk.txt"
rps=$(awk '/Requests\/sec/ {print int($2)}' "$TMP/wrk.txt")
echo "RSS before $rss_before kB, after $rss_after kB (${LOAD_SECONDS} s at $rps requests/s)"
# What wrk reaches depends on the machine (a shared 2-core CI box gets a few hundred; under
# TSan, ~90, and 19 with builds and other tests beside it); the figure is reported, the test
# asserts the service kept answering (at least one request a second: CI's 2 cores busy with two
# sanitized builds beside the suite gave 1); its speed is perf/serve_cost.sh's, not a test's.
SANITIZED=0
ldd "$GPUCLK_BIN" 2>/dev/null | grep -qE "libasan|libtsan" && SANITIZED=1
check; [ "${rps:-0}" -ge 1 ] || fail "wrk managed only $rps requests/s: the service stopped answering"
check; ! grep -q "Non-2xx" "$TMP/wrk.txt" || fail "non-2xx responses under load"
if [ "$SANITIZED" == 1 ]; then
  # ASan keeps freed memory in its quarantine (256 MB), TSan its shadow and history: RSS grows
  # by design there. LeakSanitizer checks for leaks when the service exits instead.
  echo "RSS bound not checked in a sanitized build"
else
  check; [ $((rss_after - rss_before)) -lt 4096 ] || fail "RSS grew by $((rss_after - rss_before)) kB under load"
fi
alive "load"

# --- the sampler kept its schedule ---
OUT=$(sock '
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
s.sendall(b"{\"v\":1,\"request\":\"snapshot\"}\n")
data = b""
while not data.endswith(b"\n"): data += s.recv(1 << 20)
print(data.decode())
')
echo "sampler during the run: $(jq -c .timing <<<"$OUT")"
check; [ "$(jq '.timing.ticks > 0' <<<"$OUT")" == true ] || fail "sampler not ticking"

kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
check; [ $rc -eq 0 ] || fail "serve exited $rc on SIGTERM after the load"
echo "$CHECKS checks, $FAILURES failed"
[ "$FAILURES" -eq 0 ]
