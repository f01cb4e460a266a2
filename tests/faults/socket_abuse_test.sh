#!/usr/bin/env bash
# Local users against the node service (its socket is open to every one of them by design):
# 200 clients that ask for a stream every 0.1 s and never read, 1030 idle connections (as root
# and as one user who is not), 40 HTTP clients that send a header line every 2 s. Through each,
# the service stays under its unit's MemoryMax (256 MiB) and every other user's `gpuclk status`
# answers within the client's timeout: from the service, or from NVML with a one-line note when
# the service refuses it. Scrapes of /metrics are not held up by the slow HTTP clients.
source "$(dirname "$0")/lib.sh" "$1"
SOCK="$TEST_TMP/gpuclk.sock"
CLIENTS="python3 $FAULTS_DIR/socket_clients.py"
# The unit's MemoryMax. A sanitized build's RSS is ASan's too (shadow memory, redzones, the
# quarantine of freed blocks, 256 MiB by default: kept to 16 here): it gets twice the limit.
MEMORY_MAX_KB=$((256 * 1024))
[ "$TIME_SCALE" -gt 1 ] && MEMORY_MAX_KB=$((2 * MEMORY_MAX_KB))
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"

# Other users reach the socket (mode 0666) through the test's folder.
chmod 755 "$TEST_TMP"
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"; }
# status_answers WHAT: `gpuclk status` (root's) exits 0 within 10 s, its table on stdout.
status_answers() {
  SECONDS=0
  gpuclk --sim --socket "$SOCK" status
  LAST_CMD="gpuclk status while $1"
  expect_exit 0; expect_out "H100"
  echo "gpuclk status while $1: $SECONDS s"
  check; [ "$SECONDS" -le "$(scaled 10)" ] || fail "status took $SECONDS s"
}

start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0 || exit 1
echo "service RSS at start: $(rss_kb) kB"

# --- 200 streams every 0.1 s that are never read, for 12 s (1.7 GB in 25 s before). ---
$CLIENTS streams 200 "${STREAM_SECONDS:-12}" "$SOCK" >"$TEST_TMP/streams.out" &
clients=$!
peak=0
for _ in $(seq "${STREAM_SECONDS:-12}"); do
  sleep 1
  r=$(rss_kb); [ "$r" -gt "$peak" ] && peak=$r
done
status_answers "200 streams are not read"
wait "$clients"
echo "200 unread streams: $(cat "$TEST_TMP/streams.out"), service RSS peak $peak kB"
LAST_CMD="200 unread streams"
check; [ "$peak" -lt "$MEMORY_MAX_KB" ] || fail "the service grew to $peak kB (MemoryMax 256 MiB)"
check; kill -0 "$SERVE_PID" || fail "the service died"

# --- 1030 idle connections from root: the cap refuses the last ones; status still answers. ---
# (The streams' connections are gone first: the service notices a closed one at its next poll.)
sleep "$(scaled 1)"
$CLIENTS idle 1030 8 "$SOCK" >"$TEST_TMP/idle.out" &
clients=$!
sleep "$(scaled 3)"
status_answers "1030 idle connections are open"
wait "$clients"
echo "1030 idle connections (root): $(cat "$TEST_TMP/idle.out")"
LAST_CMD="1030 idle connections as root"
check; grep -qE "opened 1030 refused [0-9]+" "$TEST_TMP/idle.out" || fail "$(cat "$TEST_TMP/idle.out")"
refused=$(awk '{print $4}' "$TEST_TMP/idle.out")
check; [ "$refused" -ge 6 ] || fail "the client cap (1024) did not refuse: $(cat "$TEST_TMP/idle.out")"
# With the table full status was refused too, and read the GPUs itself. A sanitized build's
# service is slow enough to be still dropping the streams' connections, or refusing the last
# ones after the client counted them: there status may have found a place (it answered, above).
if [ "$TIME_SCALE" -eq 1 ]; then
  check; grep -q "reading the GPUs directly" <<<"$ERR" || fail "status did not say it read the GPUs itself"
fi

# --- 1030 idle connections from one user who is not root: 64 taken; others served. ---
# The system's python3 (root's PATH may name one in root's home, which nobody cannot run).
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && [ -x /usr/bin/python3 ] &&
  $AS_NOBODY test -r "$FAULTS_DIR/socket_clients.py"; then
  $AS_NOBODY /usr/bin/python3 "$FAULTS_DIR/socket_clients.py" idle 1030 8 "$SOCK" >"$TEST_TMP/idle-user.out" &
  clients=$!
  sleep "$(scaled 3)"
  status_answers "a user holds 1030 idle connections"
  check; ! grep -q "reading the GPUs directly" <<<"$ERR" || fail "root's status was refused by the service: $ERR"
  wait "$clients"
  echo "1030 idle connections (nobody): $(cat "$TEST_TMP/idle-user.out")"
  LAST_CMD="1030 idle connections as nobody"
  check; grep -q "opened 1030 refused 966" "$TEST_TMP/idle-user.out" || fail "the per-user cap (64) did not hold: $(cat "$TEST_TMP/idle-user.out")"
else
  echo "per-user cap: not run (needs root and the user nobody able to read $FAULTS_DIR)"
fi

# --- 40 HTTP clients that send one header line every 2 s: scrapes still answer at once. ---
$CLIENTS slow-http 40 9 "$PORT" >"$TEST_TMP/slow.out" &
clients=$!
sleep 1
worst=0
for _ in 1 2 3 4; do
  t=$(curl -s -o /dev/null -w '%{time_total}' --max-time 10 "http://127.0.0.1:$PORT/metrics")
  worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
  sleep 1.5
done
wait "$clients"
echo "40 slow HTTP clients: the slowest of 4 scrapes took $worst s"
LAST_CMD="scrapes beside 40 slow HTTP clients"
check; awk -v w="$worst" -v s="$(scaled 2)" 'BEGIN { exit !(w > 0 && w < s) }' || fail "a scrape took $worst s"

# --- /healthz answers 503 while the sampler is stalled (a hung driver call), 200 after. ---
stop_serve
touch "$TEST_TMP/hang"
rm "$TEST_TMP/hang"
GPUCLK_SIM_HANG_WHILE="$TEST_TMP/hang" start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0 || exit 1
LAST_CMD="/healthz with the sampler stalled"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/healthz")
check; [ "$code" == 200 ] || fail "/healthz answered $code while healthy"
touch "$TEST_TMP/hang"
check; wait_for 20 '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 "http://127.0.0.1:$PORT/healthz")" == 503 ]' ||
  fail "/healthz never answered 503 with the sampler stalled"
check; curl -s --max-time 5 "http://127.0.0.1:$PORT/healthz" | grep -q '^gpuclk_serve_healthy 0' || fail "the body does not say 0"
rm "$TEST_TMP/hang"
check; wait_for 20 '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 "http://127.0.0.1:$PORT/healthz")" == 200 ]' ||
  fail "/healthz did not recover once the sampler ran again"
finish
