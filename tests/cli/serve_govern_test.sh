#!/usr/bin/env bash
# gpuclk serve --govern on the simulator (4x H100 looping memory-bound phases and idle gaps):
# bad arguments stop it before it starts; the governor writes through the journal and shows its
# state on /metrics; a `gpuclk set` from a shell is not kept waiting, and the governor stands
# aside on that GPU (never overwriting it) until the lock is released; SIGTERM restores the
# exact original settings; read-only mode runs it as a dry run; kill -9 then `gpuclk restore`.
source "$(dirname "$0")/lib.sh" "$1"
FIXTURES="$(cd "$(dirname "$0")" && pwd)/fixtures"
NODE="$FIXTURES/govern-4gpu.toml"
export GPUCLK_SIM_SPEED=4
SOCK="$TEST_TMP/gpuclk.sock"

settings() {
  gpuclk --sim "$NODE" --direct query --query-gpu=index,persistence_mode,clocks.applications.graphics,power.limit --format=csv,noheader
}
journal_json() { "$GPUCLK_BIN" --sim "$NODE" --format json journal 2>/dev/null; }
journal_gpus() { journal_json | jq -r '.gpus | length'; }
metric() { curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | grep -E "^$1" | head -1 | awk '{print $NF}'; }
# wait_for SECONDS CONDITION...: polls the shell condition every 0.2 s.
wait_for() {
  local n=$(($1 * 5)); shift
  for _ in $(seq "$(scaled "$n")"); do eval "$*" && return 0; sleep 0.2; done
  return 1
}

# --- Bad arguments: exit 2 before a socket or a GPU is touched. ---
gpuclk --sim "$NODE" --socket "$SOCK" serve --listen off --govern fastest
expect_exit 2; expect_err "unknown policy 'fastest'"
check; [ ! -e "$SOCK" ] || fail "a refused serve left its socket"
gpuclk --sim "$NODE" --socket "$SOCK" serve --listen off --govern phase --govern-max-slowdown 80%
expect_exit 2; expect_err "bad --govern-max-slowdown '80%'"
gpuclk --sim "$NODE" --socket "$SOCK" serve --listen off --govern phase --govern-interval 1ms
expect_exit 2; expect_err "bad --govern-interval '1ms'"

# An original that is not the driver's default (GPU 1), so "restored" cannot pass by resetting.
gpuclk --sim "$NODE" set -i 1 --power-limit 612.5 --app-clocks 2619,1755
expect_exit 0
rm -rf "$GPUCLK_STATE_DIR"
settings; ORIGINAL=$OUT

# --- The governor in the service: writes, journaled, on /metrics. ---
start_serve --sim "$NODE" --socket "$SOCK" -i 0,1 serve --listen 127.0.0.1:0 --govern phase \
  --govern-log "$TEST_TMP/serve.jsonl" || exit 1
LAST_CMD="serve --govern phase"
# The governor's thread says it once its sampler runs, which may be after the service's line.
check; wait_for 10 'grep -q "governing 2 GPU(s) with policy phase every 20 ms" "$TEST_TMP/serve.log"' ||
  fail "no governing line: $(cat "$TEST_TMP/serve.log")"
check; wait_for 15 '[ "$(journal_gpus)" == "2" ]' || fail "the governor never wrote to GPUs 0 and 1: $(cat "$TEST_TMP/serve.log")"
check; journal_json | jq -e '[.history[] | select(.command == "serve --govern phase")] | length > 0' >/dev/null ||
  fail "the journal's history does not name serve --govern"
LAST_CMD="/metrics while governing"
check; [ "$(metric 'gpuclk_governor_info\{policy="phase",dry_run="0"\}')" == "1" ] || fail "no gpuclk_governor_info{policy=\"phase\",dry_run=\"0\"} 1"
check; wait_for 10 '[ "$(metric "gpuclk_governor_writes_total\\{gpu=\"0\"")" -ge 1 ] 2>/dev/null' ||
  fail "gpuclk_governor_writes_total for GPU 0 stays 0"
check; [ "$(metric 'gpuclk_governor_decisions_total\{gpu="1"')" -ge 10 ] 2>/dev/null || fail "too few decisions for GPU 1"
# The class the governor gives GPU 0's memory-bound phase; at a phase boundary (or a sample a
# loaded machine delayed) it may pass through another for an interval, so wait for it.
check; wait_for 10 'curl -s "http://127.0.0.1:$PORT/metrics" | grep -qE "^gpuclk_governor_class\\{gpu=\"0\".*class=\"(memory_bound|idle)\".*\\} 1\$"' ||
  fail "GPU 0's class is neither memory_bound nor idle: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep governor_class | head -5)"
check; [ -z "$(metric 'gpuclk_governor_class\{gpu="2"')" ] || fail "GPU 2 is not governed (-i 0,1) but has a class series"

# --- A shell's `set` is not kept waiting; the governor leaves that GPU to it. ---
SECONDS=0
timeout 10 "$GPUCLK_BIN" --sim "$NODE" set -i 1 --lock-gpu-clocks 1200 >/dev/null 2>"$TEST_TMP/set.err"; rc=$?
LAST_CMD="gpuclk set -i 1 --lock-gpu-clocks 1200 while serve governs"
check; [ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$TEST_TMP/set.err")"
check; [ "$SECONDS" -le "$(scaled 3)" ] || fail "set waited ${SECONDS}s for the service"
check; wait_for 15 'grep -q "GPU 1: clocks held by \`gpuclk set\`" "$TEST_TMP/serve.log"' ||
  fail "the governor did not stand aside: $(tail -5 "$TEST_TMP/serve.log")"
check; [ "$(metric 'gpuclk_governor_standing_aside\{gpu="1"')" == "1" ] || fail "gpuclk_governor_standing_aside{gpu=1} is not 1"
sleep 2
check; [ "$(journal_json | jq -r '.gpus[] | select(.index == 1) | .applied.locked_gpu_clocks.max_mhz')" == "1200" ] ||
  fail "the governor overwrote the shell's lock: $(journal_json | jq -c '.gpus[] | select(.index == 1) | .applied')"
gpuclk --sim "$NODE" restore -i 1
expect_exit 0
check; wait_for 10 'grep -q "GPU 1: .* released its clocks; governing again" "$TEST_TMP/serve.log"' ||
  fail "the governor did not resume GPU 1: $(tail -5 "$TEST_TMP/serve.log")"

# --- SIGTERM: the governor's clocks go back, exit 0, the exact original settings. ---
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; rc=$?; SERVE_PID=""
LAST_CMD="serve --govern after SIGTERM"
check; [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -5 "$TEST_TMP/serve.log")"
check; grep -q "govern stopped: .* clocks restored" "$TEST_TMP/serve.log" || fail "no restore line: $(tail -5 "$TEST_TMP/serve.log")"
check; [ "$(journal_gpus)" == "0" ] || fail "SIGTERM left GPUs in the journal: $(journal_json | jq -c '.gpus')"
settings
check; [ "$OUT" == "$ORIGINAL" ] || fail "not the original settings after SIGTERM:
$OUT
vs
$ORIGINAL"
check; jq -s -e '[.[] | select(.written and .decision.locked)] | length > 0' "$TEST_TMP/serve.jsonl" >/dev/null ||
  fail "the decision log has no written lock"

# --- Read-only: a dry run, nothing written. ---
start_serve --sim "$NODE" --socket "$SOCK" --read-only serve --listen 127.0.0.1:0 --govern bandit || exit 1
LAST_CMD="serve --read-only --govern bandit"
check; grep -q "read-only mode: --govern runs as --govern-dry-run" "$TEST_TMP/serve.log" || fail "no read-only note"
check; wait_for 10 '[ "$(metric "gpuclk_governor_decisions_total\\{gpu=\"3\"")" -ge 10 ] 2>/dev/null' || fail "the dry run does not decide"
check; [ "$(metric 'gpuclk_governor_info\{policy="bandit",dry_run="1"\}')" == "1" ] || fail "no dry_run=\"1\" info series"
check; [ "$(metric 'gpuclk_governor_writes_total\{gpu="3"')" == "0" ] || fail "a dry run counted writes"
stop_serve
check; [ "$(journal_gpus)" == "0" ] || fail "the read-only service wrote the journal"

# --- kill -9 while governing 4 GPUs, then `gpuclk restore`: the exact original settings. ---
start_serve --sim "$NODE" --socket "$SOCK" serve --listen off --govern phase || exit 1
LAST_CMD="serve --govern phase before kill -9"
check; wait_for 15 '[ "$(journal_gpus)" == "4" ]' || fail "the governor never wrote to all 4 GPUs"
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""
gpuclk --sim "$NODE" restore
expect_exit 0
settings
check; [ "$OUT" == "$ORIGINAL" ] || fail "restore after kill -9 did not give the original settings"
check; [ "$(journal_gpus)" == "0" ] || fail "restore left GPUs in the journal"

# --- Held clocks at start: refuses, naming who. ---
gpuclk --sim "$NODE" set -i 2 --lock-gpu-clocks 1500
expect_exit 0
gpuclk --sim "$NODE" --socket "$SOCK" serve --listen off --govern phase
expect_exit 255; expect_err "GPU 2 has its clocks locked (1500 MHz) by \`gpuclk set\` (pid"
gpuclk --sim "$NODE" restore
expect_exit 0
finish
