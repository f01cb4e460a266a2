#!/usr/bin/env bash
# The journal's lock never freezes the service. Another gpuclk holds it (a `gpuclk set` paused
# after its write by a test hook, as one stuck on a slow GPU would be):
#   - `serve --govern` started meanwhile says which process holds it (pid and command), serves
#     reads at once (status answered by the service) and waits for the lock to start its
#     governor; SIGTERM ends the wait at once, exit 0, nothing written;
#   - a running `serve --govern` whose next write waits on the lock still stops on SIGTERM
#     within seconds (it used to ignore SIGTERM until systemd's SIGKILL), saying that the
#     journal keeps what it set, and `gpuclk restore` then puts every GPU back.
source "$(dirname "$0")/lib.sh" "$1"
NODE="$FIXTURES/govern-4gpu.toml"
export GPUCLK_SIM_SPEED=4
SOCK="$TEST_TMP/gpuclk.sock"
BEFORE=$(sim_settings "$NODE")

# hold_lock: a `gpuclk set -i 1` that keeps the journal's lock after its write; HOLDER is its pid.
hold_lock() {
  rm -f "$TEST_TMP/paused"
  GPUCLK_TEST_PAUSE_AFTER_WRITES=1 GPUCLK_TEST_PAUSE_MARKER="$TEST_TMP/paused" \
    "$GPUCLK_BIN" --sim "$NODE" set -i 1 --power-limit 550 >/dev/null 2>&1 &
  HOLDER=$!
  check; wait_for 10 '[ -s "$TEST_TMP/paused" ]' || fail "the holder never paused"
}

# --- Started while the lock is held: says who, serves no socket yet, SIGTERM ends the wait. ---
hold_lock
"$GPUCLK_BIN" --sim "$NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase 2>"$TEST_TMP/serve.log" &
SERVE_PID=$!
LAST_CMD="serve --govern while pid $HOLDER holds the journal's lock"
check; wait_for 10 "grep -q 'waiting for another gpuclk (pid $HOLDER: gpuclk --sim $NODE set -i 1 --power-limit 550)' '$TEST_TMP/serve.log'" ||
  fail "no line naming the holder: $(cat "$TEST_TMP/serve.log")"
check; wait_for 10 "grep -q 'serving reads on $SOCK' '$TEST_TMP/serve.log'" || fail "no word of serving reads"
SECONDS=0
gpuclk --sim "$NODE" --socket "$SOCK" status
expect_exit 0; expect_out "H100"
check; [ "$SECONDS" -le "$(scaled 3)" ] || fail "status waited $SECONDS s"
check; ! grep -q "reading the GPUs directly" <<<"$ERR" || fail "the service did not answer: $ERR"
SECONDS=0
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
LAST_CMD="SIGTERM while serve waits for the lock"
check; [ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$TEST_TMP/serve.log")"
check; [ "$SECONDS" -le "$(scaled 7)" ] || fail "it took $SECONDS s to stop"
check; grep -q "SIGTERM while waiting for the journal's lock: stopped; nothing was written" "$TEST_TMP/serve.log" ||
  fail "$(cat "$TEST_TMP/serve.log")"
kill -9 "$HOLDER"; wait "$HOLDER" 2>/dev/null
gpuclk --sim "$NODE" restore
expect_exit 0
same_settings "$BEFORE" "$(sim_settings "$NODE")" "serve stopped while waiting for the lock"

# --- Running, its writes held up by the lock: SIGTERM still stops it. ---
start_serve --sim "$NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase || exit 1
check; wait_for 15 '[ "$(journal_gpus "$NODE")" == 1 ]' || fail "the governor never locked GPU 0"
hold_lock
sleep "$(scaled 2)"
SECONDS=0
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
LAST_CMD="SIGTERM to serve --govern while pid $HOLDER holds the lock"
echo "serve --govern with its writes held up: stopped in $SECONDS s, exit $rc"
tail -3 "$TEST_TMP/serve.log"
check; [ "$SECONDS" -le "$(scaled 15)" ] || fail "it took $SECONDS s to stop"
if [ "$rc" -ne 0 ]; then
  # Its restore could not take the lock: it says so, and the journal keeps its change.
  check; [ "$rc" -eq 255 ] || fail "exit $rc: $(tail -5 "$TEST_TMP/serve.log")"
  check; grep -q "gpuclk restore" "$TEST_TMP/serve.log" || fail "no word of gpuclk restore: $(tail -5 "$TEST_TMP/serve.log")"
fi
kill -9 "$HOLDER"; wait "$HOLDER" 2>/dev/null
gpuclk --sim "$NODE" restore
expect_exit 0
check; [ "$(journal_gpus "$NODE")" == 0 ] || fail "the journal still holds a change"
same_settings "$BEFORE" "$(sim_settings "$NODE")" "serve --govern stopped while another gpuclk held the lock, then restore"
finish
