#!/usr/bin/env bash
# Every signal whose default action ends a process, sent the way a node sends it (a closed
# terminal, a service manager, a resource limit, a person's kill), to `gpuclk serve --govern`
# while it holds GPU 0's clock lock: it stops as on SIGTERM — the governor's clocks back, the
# socket file gone, exit 0 — and every GPU's settings, clock locks included, are what they were
# before it started. A log reader that goes away (SIGPIPE) does not end the service at all. The
# commands that write (govern, sweep) handle the same signals as their SIGTERM.
source "$(dirname "$0")/lib.sh" "$1"
NODE="$FIXTURES/govern-4gpu.toml"
export GPUCLK_SIM_SPEED=4
SOCK="$TEST_TMP/gpuclk.sock"
BEFORE=$(sim_settings "$NODE")
check; grep -q "^GPU 3: locked_sm=none" <<<"$BEFORE" || fail "sim_settings: $BEFORE"

# One service per signal; each waits until the governor has written GPU 0's lock.
SIGNALS=${FAULT_SIGNALS:-"HUP INT QUIT USR1 USR2 ALRM TERM XCPU VTALRM PROF IO PWR STKFLT RTMIN RTMIN+3 RTMAX-2 RTMAX"}
for sig in $SIGNALS; do
  LAST_CMD="serve --govern phase -i 0, then SIG$sig"
  start_serve --sim "$NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase || {
    fail "did not start"
    continue
  }
  check; wait_for 15 '[ "$(journal_gpus "$NODE")" == 1 ]' || fail "the governor never locked GPU 0"
  kill -s "$sig" "$SERVE_PID"
  wait "$SERVE_PID"; rc=$?; SERVE_PID=""
  check; [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -3 "$TEST_TMP/serve.log")"
  check; grep -q "SIG$sig, stopping" "$TEST_TMP/serve.log" || fail "no 'SIG$sig, stopping': $(tail -3 "$TEST_TMP/serve.log")"
  check; grep -q "clocks restored" "$TEST_TMP/serve.log" || fail "no restore line: $(tail -3 "$TEST_TMP/serve.log")"
  check; [ "$(journal_gpus "$NODE")" == 0 ] || fail "the journal still holds a change"
  check; [ ! -e "$SOCK" ] || fail "the socket file was left behind"
  same_settings "$BEFORE" "$(sim_settings "$NODE")" "SIG$sig"
done

# --- SIGPIPE: the reader of the service's log goes away (`serve 2>&1 | head -2`). ---
LAST_CMD="serve --govern phase 2> a pipe whose reader exits"
mkfifo "$TEST_TMP/log"
"$GPUCLK_BIN" --sim "$NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase 2>"$TEST_TMP/log" &
SERVE_PID=$!
head -n 2 "$TEST_TMP/log" >"$TEST_TMP/head.out"
check; wait_for 15 '[ "$(journal_gpus "$NODE")" == 1 ]' || fail "the governor never locked GPU 0"
# A line the service writes now (a `gpuclk set` the governor stands aside for) meets no reader.
gpuclk --sim "$NODE" set -i 0 --lock-gpu-clocks 1200
expect_exit 0
sleep "$(scaled 1)"
check; kill -0 "$SERVE_PID" 2>/dev/null || fail "the service died when its log reader went away"
gpuclk --sim "$NODE" restore -i 0
expect_exit 0
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
check; [ "$rc" -eq 0 ] || fail "exit $rc after SIGTERM with no log reader"
check; [ "$(journal_gpus "$NODE")" == 0 ] || fail "the journal still holds a change"
same_settings "$BEFORE" "$(sim_settings "$NODE")" "SIGPIPE, then SIGTERM"

# --- SIGSTOP, then SIGCONT: a stream's next line is from after the pause, not from before. ---
unset GPUCLK_SIM_SPEED
start_serve --sim --socket "$SOCK" serve --listen off || exit 1
LAST_CMD="a stream across SIGSTOP/SIGCONT of the service"
# The reader stops the service itself, 2 s, right after a line came: the socket thread is then
# waiting for the next line's time. (Stopped between building a line and sending it, the service
# sends that line after the stop, stamped with its snapshot's time: under load the fixed 1.5 s
# of before landed there in 2 fresh-clone runs of 3 at ctest -j4.)
python3 - "$SOCK" "$SERVE_PID" >"$TEST_TMP/stopped.out" 2>&1 <<'PY' &
import json, os, signal, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"v":1,"request":"stream","interval_seconds":0.1}\n')
buf, lines, end, stopped = b"", [], time.time() + 5, False
while time.time() < end:
    s.settimeout(max(0.01, end - time.time()))
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        lines.append((time.time(), json.loads(line)["time"]))
        if not stopped and len(lines) >= 12 and b"\n" not in buf:
            stopped = True
            os.kill(int(sys.argv[2]), signal.SIGSTOP)
            time.sleep(2)
            os.kill(int(sys.argv[2]), signal.SIGCONT)
bad = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(lines, lines[1:]) if b[0] - a[0] > 1 and b[1] - a[1] < 1]
print(f"{len(lines)} lines; after a gap of more than 1 s, the line's time moved by less than 1 s {len(bad)} times: {bad}")
sys.exit(1 if bad or len(lines) < 10 else 0)
PY
reader=$!
wait "$reader"; rc=$?
echo "stream across SIGSTOP: $(cat "$TEST_TMP/stopped.out")"
check; [ "$rc" -eq 0 ] || fail "$(cat "$TEST_TMP/stopped.out")"
stop_serve
export GPUCLK_SIM_SPEED=4

# --- The writers: `gpuclk govern` and `gpuclk sweep` on signals other than SIGTERM. ---
for sig in HUP USR1 RTMIN+1; do
  "$GPUCLK_BIN" --sim "$NODE" -i 0 govern --policy phase >"$TEST_TMP/govern.out" 2>&1 &
  pid=$!
  LAST_CMD="govern --policy phase, then SIG$sig"
  check; wait_for 15 '[ "$(journal_gpus "$NODE")" == 1 ]' || fail "govern never locked GPU 0"
  kill -s "$sig" "$pid"; wait "$pid"; rc=$?
  check; [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -3 "$TEST_TMP/govern.out")"
  check; grep -q "clocks restored" "$TEST_TMP/govern.out" || fail "no restore: $(tail -3 "$TEST_TMP/govern.out")"
  same_settings "$BEFORE" "$(sim_settings "$NODE")" "govern, SIG$sig"
done
for sig in USR2 XCPU; do
  GPUCLK_SIM_SPEED=40 "$GPUCLK_BIN" --sim "$NODE" sweep -i 1 --sm-clocks 990:1980:90 --workload gemm-bf16 \
    --warmup 1 --duration 30 >"$TEST_TMP/sweep.out" 2>"$TEST_TMP/sweep.err" &
  pid=$!
  LAST_CMD="sweep, then SIG$sig"
  check; wait_for 20 '[ "$(journal_gpus "$NODE")" == 1 ]' || fail "the sweep never set GPU 1"
  kill -s "$sig" "$pid"; wait "$pid"; rc=$?
  want=$((128 + $(kill -l "$sig")))
  check; [ "$rc" -eq "$want" ] || fail "exit $rc, expected $want: $(tail -3 "$TEST_TMP/sweep.err")"
  check; grep -q "interrupted by" "$TEST_TMP/sweep.err" || fail "no interruption line: $(tail -3 "$TEST_TMP/sweep.err")"
  check; [ "$(journal_gpus "$NODE")" == 0 ] || fail "the journal still holds the sweep's change"
  same_settings "$BEFORE" "$(sim_settings "$NODE")" "sweep, SIG$sig"
done
finish
