#!/usr/bin/env bash
# A crash of the service and the restart its unit makes (Restart=on-failure), on the simulated
# 4x H100 node: nothing it or its users set is left for nobody to put back.
#   - `serve --govern` killed (-9) with GPU 0 locked, then started again: it puts back the lock its
#     dead self left (it used to refuse to start, the lock "held" by that governor), governs,
#     and its SIGTERM returns every GPU to its settings before the first start.
#   - Delegated grants (users who are not root, through the socket) are kept beside the journal:
#     a grant whose session ended while the service was down is put back at the restart; one
#     whose session still runs is watched again and put back when it ends; the next user's
#     `restore` returns the GPU to what it was before any grant, never to another user's.
source "$(dirname "$0")/lib.sh" "$1"
SOCK="$TEST_TMP/gpuclk.sock"
# The GPUs idle with a context held: the governor locks GPU 0 and keeps it locked until killed.
GOVERN_NODE="$FIXTURES/govern-idle.toml"
export GPUCLK_SIM_SPEED=4

# --- serve --govern: kill -9, restart, SIGTERM. ---
BEFORE=$(sim_settings "$GOVERN_NODE")
start_serve --sim "$GOVERN_NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase || exit 1
LAST_CMD="serve --govern phase, kill -9"
# The journal is written before the lock (journal first): wait for both, or the kill can land
# between them (it did under ctest -j4: "GPU 0 was not locked at the kill").
check; wait_for 15 '[ "$(journal_gpus "$GOVERN_NODE")" == 1 ] && sim_settings "$GOVERN_NODE" | grep -q "^GPU 0: locked_sm=[0-9]"' ||
  fail "the governor never locked GPU 0"
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""
check; sim_settings "$GOVERN_NODE" | grep -q "^GPU 0: locked_sm=[0-9]" || fail "GPU 0 was not locked at the kill"
start_serve --sim "$GOVERN_NODE" --socket "$SOCK" -i 0 serve --listen off --govern phase || exit 1
LAST_CMD="serve --govern phase, started again after kill -9"
check; grep -q "GPU 0: its clocks were locked by a governor that is gone" "$TEST_TMP/serve.log" ||
  fail "no put-back line: $(cat "$TEST_TMP/serve.log")"
check; wait_for 10 'grep -q "governing 1 GPU" "$TEST_TMP/serve.log"' || fail "it does not govern: $(cat "$TEST_TMP/serve.log")"
sleep "$(scaled 2)"
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
check; [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -3 "$TEST_TMP/serve.log")"
check; [ "$(journal_gpus "$GOVERN_NODE")" == 0 ] || fail "the journal still holds a change"
same_settings "$BEFORE" "$(sim_settings "$GOVERN_NODE")" "serve --govern: kill -9, restart, SIGTERM"

# --- Delegated grants across a crash (clients as other users: root and setpriv needed). ---
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || [ ! -x /usr/bin/python3 ]; then
  echo "delegated grants across a restart: not run (needs root and setpriv)"
  finish
fi
skip_unless_others_reach nobody "$GPUCLK_BIN" "$GPUCLK_BIN_DIR/libnvml-sim.so"
unset GPUCLK_SIM_SPEED
chmod 755 "$TEST_TMP"
mkdir -m 755 "$TEST_TMP/etc"
POLICY="$TEST_TMP/etc/policy.toml"
cat >"$POLICY" <<'TOML'
version = 1
[[rule]]
name = "users-power"
users = ["nobody", "daemon"]
gpus = "all"
settings = ["power_limit"]
power_limit_min_w = 300
power_limit_max_w = 650
TOML
chmod 644 "$POLICY"
mkdir -m 777 "$TEST_TMP/users"
limits() {
  "$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits |
    tr '\n' ' ' | sed 's/ $//'
}
serve() { start_serve --sim --socket "$SOCK" serve --listen off --policy "$POLICY"; }
# session USER NAME ARGS...: USER runs `gpuclk ARGS` in a session of its own whose leader then
# stays (sleep) until killed; LEADER is its pid, and the command's exit code is in
# $TEST_TMP/users/NAME once it finished.
session() {
  local user=$1 name=$2
  shift 2
  rm -f "$TEST_TMP/users/$name"
  setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups setsid bash -c \
    "'$GPUCLK_BIN' --sim --socket '$SOCK' $* >'$TEST_TMP/users/$name.out' 2>&1; echo \$? >'$TEST_TMP/users/$name'; exec sleep 120" &
  LEADER=$!
  LAST_CMD="($user) gpuclk $*"
  check; wait_for 15 '[ -s "$TEST_TMP/users/$name" ]' || fail "did not finish"
  check; [ "$(cat "$TEST_TMP/users/$name")" == 0 ] || fail "$(cat "$TEST_TMP/users/$name.out")"
}
INITIAL="700.00 700.00 700.00 700.00"
check; [ "$(limits)" == "$INITIAL" ] || fail "the node does not start at 700 W: $(limits)"

serve || exit 1
session nobody a set -i 1 --power-limit 420
A=$LEADER
session daemon b set -i 2 --power-limit 500
B=$LEADER
check; [ "$(limits)" == "700.00 420.00 500.00 700.00" ] || fail "grants not applied: $(limits)"
# The service crashes; nobody's session ends while it is down, daemon's goes on.
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""
kill "$A"; wait "$A" 2>/dev/null
serve || exit 1
LAST_CMD="serve started again after kill -9"
check; wait_for 10 '[ "$(limits)" == "700.00 700.00 500.00 700.00" ]' ||
  fail "the ended session's grant was not put back at the restart: $(limits)"
check; grep -q "session $A: it ended while the service was down: GPUs 1 put back" "$TEST_TMP/serve.log" ||
  fail "no put-back line: $(cat "$TEST_TMP/serve.log")"
check; grep -q "session $B: the grant on 1 GPU(s) from before the restart is kept" "$TEST_TMP/serve.log" ||
  fail "the live session's grant was not recovered: $(cat "$TEST_TMP/serve.log")"
# Another user's set on the held GPU is still refused; the holder's session end puts it back.
session nobody c set -i 1 --power-limit 600
C=$LEADER
setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUCLK_BIN" --sim --socket "$SOCK" set -i 2 --power-limit 450 >/dev/null 2>"$TEST_TMP/held.err"
rc=$?
LAST_CMD="(nobody) set -i 2 while daemon's recovered grant holds it"
check; [ "$rc" -eq 4 ] || fail "exit $rc: $(cat "$TEST_TMP/held.err")"
check; grep -q "GPU 2 is held by daemon" "$TEST_TMP/held.err" || fail "$(cat "$TEST_TMP/held.err")"
kill "$B"; wait "$B" 2>/dev/null
LAST_CMD="daemon's session ends after the restart"
check; wait_for 10 '[ "$(limits)" == "700.00 600.00 700.00 700.00" ]' || fail "not put back: $(limits)"
# nobody's restore: GPU 1 goes back to 700 W (before any grant), not to the crashed 420 W.
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUCLK_BIN" --sim --socket "$SOCK" restore 2>&1)
rc=$?
LAST_CMD="(nobody) restore after the restart"
check; [ "$rc" -eq 0 ] || fail "exit $rc: $out"
check; [ "$(limits)" == "$INITIAL" ] || fail "restore did not return to before any grant: $(limits)"
# The service's own answers agree at once (a delegated restore showed the old limit for up to a
# refresh, 1 s): its answer went out once the service had re-read the settings.
gpuclk --sim --socket "$SOCK" --format json status
LAST_CMD="status through the service right after the delegated restore"
expect_exit 0
expect_json '[.gpus[]."power.limit"] | map(tostring) | join(" ")' "700 700 700 700"
kill "$C"; wait "$C" 2>/dev/null
stop_serve
check; [ "$("$GPUCLK_BIN" --sim --format json journal | jq '.gpus | length')" == 0 ] || fail "journal not clean"
check; jq -e '.holds == []' "$GPUCLK_STATE_DIR/delegated.json" >/dev/null || fail "grants left in delegated.json"
finish
