#!/usr/bin/env bash
# gpuclk serve on the simulator: read commands give the same bytes through the service as
# directly through NVML (frozen simulator clock), the client really does not touch NVML, the
# socket protocol answers every bad request with an error, and SIGTERM stops it cleanly.
source "$(dirname "$0")/lib.sh" "$1"
export GPUCLK_SIM_SPEED=0  # frozen: both ways read the same instant
SOCK="$TEST_TMP/gpuclk.sock"


start_serve --sim --socket "$SOCK" serve --listen off --interval 50ms || exit 1
check; [ -S "$SOCK" ] || fail "no socket at $SOCK"
check; grep -q "4 GPUs (simulated: default)" "$TEST_TMP/serve.log" || fail "startup line: $(cat "$TEST_TMP/serve.log")"

# --- the same bytes both ways ---
# Through the service, NVML must not be needed: --nvml-lib points at nothing.
same_both_ways() {
  gpuclk --sim --direct "$@"; local direct="$OUT" direct_rc=$RC
  gpuclk --sim --socket "$SOCK" --nvml-lib /nonexistent/libnvidia-ml.so.1 "$@"
  check
  [ "$RC" -eq "$direct_rc" ] && [ "$OUT" == "$direct" ] ||
    fail "differs from --direct (rc $RC vs $direct_rc): $(diff <(echo "$direct") <(echo "$OUT") | head -8)"
}
same_both_ways status
same_both_ways status --format json
same_both_ways status --format csv
same_both_ways -i 2,0 status
same_both_ways query --fields index,name,uuid,pci.bus_id,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,utilization.gpu,pstate,persistence_mode,clocks_event_reasons.active,memory.used,ecc.mode.current
same_both_ways query --fields clocks.sm,power.draw --format csv,noheader,nounits
same_both_ways -i 1 query --fields index,uuid,clocks.applications.graphics --format json
same_both_ways clocks
same_both_ways clocks --format json
same_both_ways -i 3,1 clocks
same_both_ways info
same_both_ways -i 2 info --format json
same_both_ways topo
same_both_ways topo --format csv
# A setting made by gpuclk shows in clocks' "Set by gpuclk" section both ways (the journal is the
# client's; the settings compared across GPUs come from the service).
gpuclk --sim --direct -i 1 set --app-clocks 2619,1410
expect_exit 0
# The service sees it at its next refresh after the simulator notices the state file changed.
for _ in $(seq "$(scaled 50)"); do
  gpuclk --sim --socket "$SOCK" -i 1 query --fields clocks.applications.graphics --format csv,noheader,nounits
  [ "$OUT" == 1410 ] && break
  sleep 0.1
done
# status's settings are cached (read every 10 refreshes) but re-read as soon as gpuclk's journal
# changes: the new application clock shows within a couple of refreshes, not 10 s.
for _ in $(seq "$(scaled 30)"); do
  gpuclk --sim --socket "$SOCK" -i 1 --format json status
  [ "$(jq '.gpus[0]["clocks.applications.graphics"]' <<<"$OUT")" == 1410 ] && break
  sleep 0.1
done
expect_json '.gpus[0]["clocks.applications.graphics"]' 1410
sleep 1.1  # one more refresh: the two views are read one after the other
same_both_ways -i 1 clocks
expect_out "Set by gpuclk"; expect_out "Differs From Other GPUs"
gpuclk --sim --direct restore
expect_exit 0
gpuclk --sim --socket "$SOCK" --nvml-lib /nonexistent/lib.so status
# The service's node is frozen (GPUCLK_SIM_SPEED=0): its status says so, as a direct one does.
expect_exit 0; expect_out "(simulated node: default, time frozen at "; expect_out "H100"
# -i errors are the same, and come without NVML too
gpuclk --sim --socket "$SOCK" --nvml-lib /nonexistent/lib.so -i 7 status
expect_exit 6; expect_err "7"
# A client on another simulator state file does not use this service: it reads NVML itself
# (here: a library that does not exist, so it fails).
GPUCLK_SIM_STATE="$TEST_TMP/other.state" gpuclk --sim --socket "$SOCK" --nvml-lib /nonexistent/lib.so status
expect_exit 12
# A client on another scenario does not use this service (it reads its own simulated node).
gpuclk --sim=a100 --socket "$SOCK" query --fields name
expect_exit 0; expect_out "A100"

# --- protocol ---
OUT=$(ask '{"v":1,"request":"hello"}
'); LAST_CMD="hello"
expect_json .ok true; expect_json '.gpus | length' 4; expect_json .simulated default
expect_json '.peer.uid' "$(id -u)"
OUT=$(ask '{"v":1,"request":"history","seconds":5,"resolution":"interval","gpus":[1]}
'); LAST_CMD="history"
expect_json .ok true; expect_json '.gpus[0].index' 1
check; [ "$(jq '.gpus[0].samples | length' <<<"$OUT")" -ge 5 ] || fail "too few samples in 5 s at 50 ms"
expect_json '.gpus[0].samples[-1].sm_clock_mhz > 0' true
OUT=$(ask '{"v":1,"request":"summary","seconds":5}
'); LAST_CMD="summary"
expect_json '.gpus | length' 4; expect_json '.gpus[0].summary.power_mean_watts > 0' true
OUT=$(ask '{"v":1,"request":"snapshot"}
'); LAST_CMD="snapshot"
expect_json '.timing.ticks > 0' true; expect_json '.gpus[3].fast.power_watts > 0' true
# bad requests: each gets an error, the connection (and the service) go on
OUT=$(ask 'not json
{"v":1,"request":"nope"}
{"v":9,"request":"hello"}
{"v":1,"request":"history","resolution":"weekly"}
{"v":1,"request":"history","gpus":[42]}
{"v":1,"request":"view","name":"weekly"}
[1,2,3]
{"v":1,"request":"hello"}
'); LAST_CMD="bad requests"
check; [ "$(grep -c '"ok":false' <<<"$OUT")" -eq 7 ] || fail "expected 7 errors"
expect_out "malformed request"; expect_out "unknown request 'nope'"; expect_out "protocol version 9"
expect_out "no view 'weekly'"
expect_out "unknown resolution 'weekly'"; expect_out "no GPU with index 42"
check; [ "$(tail -1 <<<"$OUT" | jq -r .ok)" == true ] || fail "hello after errors failed"
# oversized: > 64 KiB without a newline → one error, then the connection closes
OUT=$(python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
try:
    s.sendall(b"x" * (1 << 20))
except OSError:
    pass
data = b""
while True:
    try:
        chunk = s.recv(65536)
    except OSError:
        break
    if not chunk: break
    data += chunk
print(data.decode().strip())
PY
); LAST_CMD="oversized request"
expect_out "request longer than 65536 bytes"
gpuclk --sim --socket "$SOCK" query --fields index --format csv,noheader
expect_exit 0; expect_lines 4

# --- a second service on the same socket refuses; the first goes on ---
gpuclk --sim --socket "$SOCK" serve --listen off
expect_exit 255; expect_err "a service already answers on $SOCK"

# --- clean stop on SIGTERM ---
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; RC=$?; SERVE_PID=""; LAST_CMD="serve (SIGTERM)"
expect_exit 0
check; [ ! -e "$SOCK" ] || fail "socket left behind"
check; grep -q "SIGTERM, stopping" "$TEST_TMP/serve.log" || fail "no stop message"
# without a service the commands read NVML themselves
gpuclk --sim --socket "$SOCK" query --fields index --format csv,noheader
expect_exit 0; expect_lines 4

# --- the counters (slow tier): every --counters-interval while nothing streams, every second
#     while a dmon does ---
GPUCLK_SIM_SPEED=1 start_serve --sim --socket "$SOCK" serve --listen off --counters-interval 3s ||
  exit 1
slow_in_6s() {
  ask '{"v":1,"request":"history","seconds":6,"resolution":"interval","gpus":[0]}
' | jq '.gpus[0].slow | length'
}
sleep 7
n=$(slow_in_6s); LAST_CMD="history, idle"
check; [ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "idle: $n slow samples in 6 s, expected 2 (every 3 s)"
GPUCLK_SIM_SPEED=1 "$GPUCLK_BIN" --sim --socket "$SOCK" -i 0 dmon -d 1 -c 9 >"$TEST_TMP/dmon.out" &
DMON_PID=$!
sleep 7.5
n=$(slow_in_6s); LAST_CMD="history, a dmon streaming"
check; [ "$n" -ge 5 ] || fail "streaming: $n slow samples in 6 s, expected ~6 (every second)"
wait "$DMON_PID"
stop_serve

# --- a GPU lost while the service runs is lost through it too (issue 32): the service opened
#     GPU 2 before it fell off the bus (t = 60 s on faults), yet status, its findings and /metrics
#     say what --direct says ---
GPUCLK_SIM_STATE="$TEST_TMP/lost.state" GPUCLK_SIM_START=59 GPUCLK_SIM_SPEED=1 \
  start_serve --sim=faults --socket "$SOCK" serve --listen 127.0.0.1:0 --interval 100ms || exit 1
for _ in $(seq "$(scaled 50)"); do
  GPUCLK_SIM_STATE="$TEST_TMP/lost.state" gpuclk --sim=faults --socket "$SOCK" -i 2 status
  grep -qF "(GPU is lost)" <<<"$OUT" && break
  sleep 0.2
done
expect_out "(GPU is lost)"; expect_out "CRITICAL: GPU 2: cannot be read"
# At the service's speed (a process with GPUCLK_SIM_SPEED=0 would say its time is frozen).
lost_direct=$(GPUCLK_SIM_SPEED=1 GPUCLK_SIM_STATE="$TEST_TMP/lost.state" "$GPUCLK_BIN" --sim=faults --direct -i 2 status)
check; [ "$OUT" == "$lost_direct" ] || fail "differs from --direct: $(diff <(echo "$lost_direct") <(echo "$OUT") | head -8)"
GPUCLK_SIM_STATE="$TEST_TMP/lost.state" gpuclk --sim=faults --socket "$SOCK" status --format json
expect_json '[.findings[] | select(.rule == "gpu_lost") | .gpus[0]] | tostring' '[2]'
sleep "$(scaled 1.5)"  # the service's findings refresh every second
OUT=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics"); LAST_CMD="curl /metrics (GPU 2 lost)"
expect_out_re '^gpuclk_gpu_lost\{gpu="2",.*\} 1$'; expect_out 'gpuclk_findings{severity="critical"} 1'
stop_serve

# --- bad arguments ---
gpuclk --sim --socket "$SOCK" serve --counters-interval 0.5s
expect_exit 2; expect_err "bad --counters-interval '0.5s'"
gpuclk --sim --socket "$SOCK" serve --interval 1ms
expect_exit 2; expect_err "bad --interval '1ms'"
gpuclk --sim --socket "$SOCK" serve --history 2weeks
expect_exit 2; expect_err "bad --history '2weeks'"
gpuclk --sim --socket "$SOCK" serve --listen nonsense
expect_exit 2; expect_err "bad --listen 'nonsense'"
# No octet wraps (999 is not 231), no shorthand or hex address, no port past 65535: exit 2,
# naming the part that is wrong, and no socket left behind.
gpuclk --sim --socket "$SOCK" serve --listen 999.1.1.1:80
expect_exit 2; expect_err "bad --listen '999.1.1.1:80': '999.1.1.1' is not an IPv4 address"
gpuclk --sim --socket "$SOCK" serve --listen 127.1:19411
expect_exit 2; expect_err "'127.1' is not an IPv4 address in dotted decimal"
gpuclk --sim --socket "$SOCK" serve --listen 0x7f.0.0.1:9400
expect_exit 2; expect_err "'0x7f.0.0.1' is not an IPv4 address"
gpuclk --sim --socket "$SOCK" serve --listen 127.0.0.1:99999
expect_exit 2; expect_err "'99999' is not a port (0-65535)"
gpuclk --sim --socket "$SOCK" serve --listen '[::1:9400'
expect_exit 2; expect_err "an IPv6 address is written [ADDRESS]:PORT"
check; [ ! -e "$SOCK" ] || fail "a refused --listen left the socket"
# A port another program holds: the system's reason, not civetweb's "null context".
python3 -c "import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
open(sys.argv[1], 'w').write(str(s.getsockname()[1])); time.sleep(30)" "$TEST_TMP/busy.port" \
  </dev/null >/dev/null 2>&1 &
BUSY=$!
for _ in $(seq "$(scaled 50)"); do [ -s "$TEST_TMP/busy.port" ] && break; sleep 0.1; done
BUSY_PORT=$(cat "$TEST_TMP/busy.port")
gpuclk --sim --socket "$SOCK" serve --listen "127.0.0.1:$BUSY_PORT"
expect_exit 255; expect_err "cannot listen on 127.0.0.1:$BUSY_PORT: Address already in use"
check; [ ! -e "$SOCK" ] || fail "a port in use left the socket"
kill "$BUSY" 2>/dev/null
finish
