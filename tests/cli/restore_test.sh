#!/usr/bin/env bash
# gpuclk restore: the exact original state, idempotent; and after kill -9 in the middle of a
# multi-GPU set (between two writes), restore still returns every GPU to its original state.
source "$(dirname "$0")/lib.sh" "$1"

settings() {
  gpuclk --sim query --query-gpu=index,persistence_mode,clocks.applications.graphics,clocks.applications.memory,power.limit --format=csv,noheader
}

# An original that is not the driver's default, so "restore" cannot pass by resetting.
gpuclk --sim set -i 1 --power-limit 612.5 --app-clocks 2619,1755
expect_exit 0
gpuclk --sim journal
# Forget that change: it is now simply how GPU 1 was before the test.
rm -rf "$GPUCLK_STATE_DIR"
settings; ORIGINAL=$OUT
expect_out "1, Enabled, 1755 MHz, 2619 MHz, 612.50 W"

# --- Every setting at once, then restore. ---
gpuclk --sim set --persistence off --app-clocks 1593,1410 --lock-gpu-clocks 1005 --power-limit 500
expect_exit 0; expect_out "changed 16 setting(s) on 4 GPU(s)"
settings
expect_out "1, Disabled, 1410 MHz, 1593 MHz, 500.00 W"
gpuclk --sim journal
expect_exit 0
expect_out_re "1 +GPU-[0-9a-f-]+ +power limit +612.500 W +500 W +applied"
expect_out_re "locked GPU clocks +unlocked \(assumed\) +1005 MHz +applied"
gpuclk --sim --format json journal
expect_json '.gpus | length' "4"
expect_json '.gpus[1].original.power_limit_mw' "612500"
expect_json '.gpus[1].original.application_clocks.graphics_mhz' "1755"
expect_json '.format' "gpuclk-journal"

gpuclk --sim restore
expect_exit 0
expect_out_re "1 +power limit +500 W +612.500 W +612.500 W +changed"
expect_out_re "1 +persistence mode +off +on +on +changed"
settings
[ "$OUT" == "$ORIGINAL" ] || fail "restore did not return the exact original state:
$OUT
vs
$ORIGINAL"
sleep 0.1
gpuclk --sim query --query-gpu=index,clocks.sm --format=csv,noheader,nounits
expect_no_out "1005"   # the locked clock; the load alone never runs at it
# Idempotent.
gpuclk --sim restore
expect_exit 0; expect_out "nothing to restore"
gpuclk --sim journal
expect_out "no GPU changed by gpuclk is recorded"
gpuclk --sim
expect_no_out "Set by gpuclk"

# --- restore --dry-run shows, writes nothing. ---
gpuclk --sim set -i 0 --power-limit 500
gpuclk --sim restore --dry-run
expect_exit 0; expect_out_re "0 +power limit +500 W +700 W .*would change"
gpuclk --sim restore -i 0
expect_exit 0
# A setting already back at its original is unchanged, and a dry run reads nothing back (N/A).
gpuclk --sim set -i 0 --power-limit 500 --lock-gpu-clocks 1005
gpuclk --sim set -i 0 --lock-gpu-clocks default
gpuclk --sim restore --dry-run
expect_exit 0; expect_out_re "0 +power limit +500 W +700 W +N/A +would change"
expect_out_re "0 +locked GPU clocks .* N/A +unchanged"
gpuclk --sim restore -i 0
expect_exit 0

# --- kill -9 between two writes of a 4-GPU set, then restore. ---
# The hook (simulator only) stops after the 5th write (GPU 0's three settings, GPU 1's first
# two), announces it, and waits to be killed.
marker="$TEST_TMP/paused"
GPUCLK_TEST_PAUSE_AFTER_WRITES=5 GPUCLK_TEST_PAUSE_MARKER="$marker" \
  "$GPUCLK_BIN" --sim set --app-clocks 2619,1605 --lock-gpu-clocks 1005 --power-limit 550 >"$TEST_TMP/killed.out" 2>&1 &
pid=$!
for _ in $(seq "$(scaled 100)"); do [ -s "$marker" ] && break; sleep 0.1; done
check; [ -s "$marker" ] || fail "the set never reached its 5th write"
kill -9 "$pid"; wait "$pid" 2>/dev/null
LAST_CMD="kill -9 mid-set"
settings
expect_out "0, Enabled, 1605 MHz, 2619 MHz, 550.00 W"   # GPU 0 changed
expect_out "1, Enabled, 1605 MHz, 2619 MHz, 612.50 W"   # GPU 1 half changed
expect_out "2, Enabled, 1980 MHz, 2619 MHz, 700.00 W"   # GPU 2, 3 untouched
# The journal was on disk before the first write: all four GPUs, with the writes pending.
gpuclk --sim journal
expect_out "interrupted while setting 1005 MHz"
expect_out_re "3 +GPU-[0-9a-f-]+ +power limit +700 W"
gpuclk --sim
expect_out "(interrupted)"
# Another gpuclk is not blocked: the kernel released the dead process's lock.
gpuclk --sim restore
expect_exit 0
settings
[ "$OUT" == "$ORIGINAL" ] || fail "restore after kill -9 did not return the exact original state:
$OUT
vs
$ORIGINAL"
sleep 0.1
gpuclk --sim query --query-gpu=index,clocks.sm --format=csv,noheader,nounits
expect_no_out "1005"
gpuclk --sim restore
expect_exit 0; expect_out "nothing to restore"

# --- A concurrent gpuclk waits for the journal lock instead of interleaving. ---
GPUCLK_TEST_PAUSE_AFTER_WRITES=1 GPUCLK_TEST_PAUSE_MARKER="$marker.2" \
  "$GPUCLK_BIN" --sim set -i 0 --power-limit 550 >/dev/null 2>&1 &
pid=$!
for _ in $(seq "$(scaled 100)"); do [ -s "$marker.2" ] && break; sleep 0.1; done
timeout 2 "$GPUCLK_BIN" --sim set -i 0 --power-limit 560 >/dev/null 2>"$TEST_TMP/waiter.err"
rc=$?
LAST_CMD="second gpuclk while the first holds the lock"
check; [ "$rc" -eq 124 ] || fail "the second gpuclk did not wait (exit $rc)"
check; grep -q "waiting for another gpuclk (pid $pid: gpuclk" "$TEST_TMP/waiter.err" || fail "no waiting message: $(cat "$TEST_TMP/waiter.err")"
kill -9 "$pid"; wait "$pid" 2>/dev/null
gpuclk --sim restore
expect_exit 0

# --- Under --sim the journal defaults to a directory beside the simulator's state. ---
unset GPUCLK_STATE_DIR
gpuclk --sim set -i 0 --power-limit 600
expect_exit 0; expect_out "journal $GPUCLK_SIM_STATE.gpuclk/journal.json"
gpuclk --sim restore
expect_exit 0

finish
