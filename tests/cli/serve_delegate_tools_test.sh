#!/usr/bin/env bash
# `gpuclk sweep` and `gpuclk govern` of a user who is not root go through the service's delegated
# settings (docs/serve.md): `gpuclk serve` runs as root on the simulator with a policy; nobody
# (setpriv, no supplementary groups) sweeps GPU 0's clock lock and governs GPU 1. Each point and
# each governor write is a `set` the service checks and logs; the end of the sweep, a refused
# point, SIGTERM of either, and govern's end put the GPU back through the service's `restore`;
# `--apply-best`'s lock stays the user's until their `gpuclk restore`. A point outside the
# policy's bounds stops the sweep with exit 4 naming the rule; a GPU another user holds makes the
# sweep and the governor refuse, naming the holder. Without a service they fail on permissions,
# naming `gpuclk serve`. Needs root (skips, 77, otherwise).
source "$(dirname "$0")/lib.sh" "$1"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
  echo "skipped: needs root and setpriv (util-linux) to run clients as other users"
  exit 77
fi
FIXTURES="$(cd "$(dirname "$0")" && pwd)/fixtures"
NODE="$FIXTURES/delegate-tools.toml" # GPU 0 idle (the sweep's job), GPU 1 phases (the governor's)
skip_unless_others_reach nobody "$GPUCLK_BIN" "$GPUCLK_BIN_DIR/libnvml-sim.so" "$NODE"
export GPUCLK_SIM_SPEED=4            # simulated seconds per wall second
chmod 755 "$TEST_TMP"
SOCK="$TEST_TMP/gpuclk.sock"
ETC="$TEST_TMP/etc"
POLICY="$ETC/policy.toml"
mkdir -m 755 "$ETC"
cat >"$POLICY" <<'TOML'
version = 1
[[rule]]
name = "nobody-sweep"
users = ["nobody"]
gpus = "0"
settings = ["locked_gpu_clocks"]
locked_gpu_clocks_max_mhz = 1755
[[rule]]
name = "nobody-govern"
users = ["nobody"]
gpus = "1"
settings = ["locked_gpu_clocks"]
[[rule]]
name = "daemon-power"
users = ["daemon"]
gpus = "all"
settings = ["power_limit"]
TOML
chmod 644 "$POLICY"

# The simulator's state file stands for the GPUs and their driver, which any user may read (and
# run work on) on a real host; only NVML's writes need root. The simulator keeps it as files it
# replaces by rename (sim/abi/state_file.h): the user's processes must be able to create files in
# its folder, and open the lock and generation counter beside it for writing (root created them,
# 0644). So the folder is nobody's and those two files are opened up; the journal stays root's.
export GPUCLK_SIM_STATE="$TEST_TMP/sim/sim.state"
mkdir -m 755 "$TEST_TMP/sim"
chown nobody "$TEST_TMP/sim"
"$GPUCLK_BIN" --sim "$NODE" query --query-gpu=index >/dev/null || exit 1
chmod 666 "$GPUCLK_SIM_STATE.lock" "$GPUCLK_SIM_STATE.gen"

# as USER ARGS...: gpuclk --sim NODE ARGS as USER (its own group, no other groups).
as() {
  local user=$1
  shift
  OUT=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \
    "$GPUCLK_BIN" --sim "$NODE" --socket "$SOCK" "$@" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
  LAST_CMD="($user) gpuclk $*"
}
journal_gpus() { "$GPUCLK_BIN" --sim "$NODE" --format json journal 2>/dev/null | jq -r '.gpus | length'; }
expect_journal_empty() {
  check
  [ "$(journal_gpus)" == 0 ] || fail "the journal still lists GPUs: $("$GPUCLK_BIN" --sim "$NODE" journal 2>&1)"
}
# A BF16 job on GPU 0 as root: its rate (TFLOP/s) says whether a clock lock holds the GPU back
# (990 MHz: ~480; none: the power cap's ~680).
gpu0_rate() {
  "$GPUCLK_BIN" --sim "$NODE" --format json sim-job -i 0 --workload gemm-bf16 --amount 300T |
    jq -r '.. | objects | select(has("rate")) | .rate' | head -1 | cut -d. -f1
}
# log_count PATTERN: lines of the service's log matching the extended regex.
log_count() { grep -cE "$1" "$TEST_TMP/serve.log"; }
T0=$(date +%s)

# --- Without a service: the permission error, now naming `gpuclk serve` with a policy. ---
as nobody sweep -i 0 --sm-clocks 990 --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline
expect_exit 4
expect_err "Permission denied"
expect_err '`gpuclk serve` with a policy'
as nobody -i 1 govern --policy phase --duration 1s
expect_exit 4
expect_err '`gpuclk serve` with a policy'
expect_journal_empty

start_serve --sim "$NODE" --socket "$SOCK" serve --listen off --policy "$POLICY" || exit 1

# --- A sweep: each point a `set` the service grants, the clocks land, the GPU is put back. ---
as nobody --format json sweep -i 0 --sm-clocks 990,1080 --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline
expect_exit 0
expect_json '[.points[] | .median_sm_mhz] | map(tostring) | join(",")' "990,1080"
check
[ "$(log_count "uid 65534 \(nobody\) pid [0-9]+ (session|process) [0-9]+: set locked_gpu_clocks=(990,990|1080,1080) gpus=\[0\]: granted by rule 'nobody-sweep'")" == 2 ] ||
  fail "not one grant per point: $(cat "$TEST_TMP/serve.log")"
check
[ "$(log_count "uid 65534 \(nobody\) pid [0-9]+: restore gpus=\[0\]: 1 setting\(s\) put back, exit 0")" == 1 ] ||
  fail "no restore line: $(tail -3 "$TEST_TMP/serve.log")"
expect_journal_empty
RATE=$(gpu0_rate)
LAST_CMD="sim-job on GPU 0 after the sweep"
check
[ "${RATE:-0}" -ge 650 ] || fail "GPU 0 still held back after the sweep: $RATE TFLOP/s"

# --- A point outside the policy's bounds: the sweep stops with exit 4 naming the rule, and what
# it set is put back. ---
as nobody sweep -i 0 --sm-clocks 990,1980 --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline
expect_exit 4
expect_err "refused by rule 'nobody-sweep'"
expect_err "locked GPU clock 1980 MHz is above the maximum 1755 MHz"
check
grep -qE "set locked_gpu_clocks=1980,1980 gpus=\[0\]: refused \(rule 'nobody-sweep', exit 4\)" "$TEST_TMP/serve.log" ||
  fail "no refusal line: $(tail -3 "$TEST_TMP/serve.log")"
check
[ "$(log_count "uid 65534 \(nobody\) pid [0-9]+: restore gpus=\[0\]: 1 setting\(s\) put back, exit 0")" == 2 ] ||
  fail "the refused sweep's 990 MHz was not put back: $(tail -3 "$TEST_TMP/serve.log")"
expect_journal_empty
RATE=$(gpu0_rate)
LAST_CMD="sim-job on GPU 0 after the refused sweep"
check
[ "${RATE:-0}" -ge 650 ] || fail "GPU 0 still held back after the refusal: $RATE TFLOP/s"

# SIGTERM mid-sweep: the sweep puts GPU 0 back through the service and exits 128 + 15 (a point's
# `set` in flight when the signal came is answered first, then undone by the `restore`).
setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUCLK_BIN" --sim "$NODE" --socket "$SOCK" \
  sweep -i 0 --sm-clocks 990:1755:15 --workload gemm-bf16 --warmup 0.5 --duration 2 --no-baseline \
  >"$TEST_TMP/sweep-term.out" 2>&1 &
SWEEP=$!
for _ in $(seq "$(scaled 100)"); do [ "$(journal_gpus)" == 1 ] && break; sleep 0.1; done
LAST_CMD="(nobody) sweep, then SIGTERM"
check
[ "$(journal_gpus)" == 1 ] || fail "the sweep set nothing: $(cat "$TEST_TMP/sweep-term.out")"
kill -TERM "$SWEEP"
wait "$SWEEP"
RC=$?
ERR=$(cat "$TEST_TMP/sweep-term.out")
expect_exit 143
expect_err "interrupted"
check
grep -qE "uid 65534 \(nobody\) pid $SWEEP: restore gpus=\[0\]: [01] setting\(s\) put back, exit 0" "$TEST_TMP/serve.log" ||
  fail "SIGTERM did not restore through the service: $(tail -3 "$TEST_TMP/serve.log")"
expect_journal_empty

# --apply-best: the chosen lock is the user's grant after the sweep, until `gpuclk restore`.
as nobody --format json sweep -i 0 --sm-clocks 990,1080 --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline --apply-best min_energy
expect_exit 0
check
[ "$(journal_gpus)" == 1 ] || fail "--apply-best left no lock"
as nobody restore
expect_exit 0
expect_out_re "0 +locked GPU clocks +(990|1080) MHz +unlocked .*changed"
expect_journal_empty

# --- The governor: every write a `set` through the service, and only when the decision changes
# (as many grants as the clock writes it reports, fewer than its decisions; how many fewer
# depends on how evenly a loaded machine spaces the decisions: cli.govern checks hysteresis). ---
as nobody -i 1 govern --policy phase --duration 4s
expect_exit 0
expect_err "clocks restored"
WRITES=$(sed -nE 's/.*govern stopped: ([0-9]+) decisions, ([0-9]+) clock writes.*/\2/p' <<<"$ERR")
DECISIONS=$(sed -nE 's/.*govern stopped: ([0-9]+) decisions.*/\1/p' <<<"$ERR")
GRANTS=$(log_count "uid 65534 \(nobody\) pid [0-9]+ (session|process) [0-9]+: set locked_gpu_clocks=[^ ]+ gpus=\[1\]: granted by rule 'nobody-govern'")
echo "govern through the service: $DECISIONS decisions, $WRITES clock writes, $GRANTS delegated sets"
check
[ -n "$WRITES" ] && [ "$WRITES" -ge 2 ] && [ "$GRANTS" == "$WRITES" ] && [ "$DECISIONS" -gt "$WRITES" ] ||
  fail "writes $WRITES, grants $GRANTS, decisions $DECISIONS"
check
grep -qE "set locked_gpu_clocks=345,345 gpus=\[1\]: granted" "$TEST_TMP/serve.log" ||
  fail "no idle lock written through the service"
check
[ "$(log_count "uid 65534 \(nobody\) pid [0-9]+: restore gpus=\[1\]: [01] setting\(s\) put back, exit 0")" == 1 ] ||
  fail "govern's end did not restore through the service: $(tail -3 "$TEST_TMP/serve.log")"
expect_journal_empty

# SIGTERM: the governor puts GPU 1 back through the service and exits 0. (The restore writes 0
# settings when the last decision had already released the clock, 1 otherwise; the journal says
# the GPU is back either way.)
setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUCLK_BIN" --sim "$NODE" --socket "$SOCK" \
  -i 1 govern --policy phase >"$TEST_TMP/term.out" 2>&1 &
GOV=$!
for _ in $(seq "$(scaled 100)"); do [ "$(journal_gpus)" == 1 ] && break; sleep 0.1; done
LAST_CMD="(nobody) govern, then SIGTERM"
check
[ "$(journal_gpus)" == 1 ] || fail "the governor wrote nothing: $(cat "$TEST_TMP/term.out")"
kill -TERM "$GOV"
wait "$GOV"
RC=$?
ERR=$(cat "$TEST_TMP/term.out")
expect_exit 0
expect_err "clocks restored"
check
grep -qE "uid 65534 \(nobody\) pid $GOV: restore gpus=\[1\]: [01] setting\(s\) put back, exit 0" "$TEST_TMP/serve.log" ||
  fail "SIGTERM did not restore through the service: $(tail -3 "$TEST_TMP/serve.log")"
expect_journal_empty

# --- Another user holding the GPUs (daemon's power limits): nobody's sweep and governor are
# refused, naming the holder; nothing of theirs stays. ---
as daemon set -i 0,1 --power-limit 600
expect_exit 0
as nobody sweep -i 0 --sm-clocks 990 --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline
expect_exit 4
expect_err "GPU 0 is held by daemon (uid 1)"
as nobody -i 1 govern --policy phase --duration 4s
expect_exit 4
expect_err "GPU 1 is held by daemon (uid 1)"
check
grep -qE "govern stopped: [0-9]+ decisions, 0 clock writes; nothing to restore" <<<"$ERR" ||
  fail "a refused first write counted or restored: $ERR"
check
[ "$(log_count "uid 65534 \(nobody\) .*refused \(rule 'holder', exit 4\)")" == 2 ] ||
  fail "no holder refusals in the log: $(tail -4 "$TEST_TMP/serve.log")"
as daemon restore
expect_exit 0
expect_journal_empty

echo "serve_delegate_tools: $(($(date +%s) - T0)) s"
finish
