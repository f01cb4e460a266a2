#!/usr/bin/env bash
# gpuclk set / reset on the simulated 4x H100 node: a lock set by one process holds for the
# next, validation before any write (nearest values, --snap, Hopper memory locks), --dry-run,
# read-only mode and missing privileges.
source "$(dirname "$0")/lib.sh" "$1"

settings() {  # the settings NVML can read, one line per GPU
  gpuclk --sim query --query-gpu=index,persistence_mode,clocks.applications.graphics,clocks.applications.memory,power.limit --format=csv,noheader
}

settings; ORIGINAL=$OUT
expect_exit 0; expect_lines 4

# --- A lock set by one process holds for the next, seen through NVML by another process. ---
# (1005 MHz: low enough that the simulated training load never power-caps it below the lock.)
gpuclk --sim set --lock-gpu-clocks 1005 --power-limit 600
expect_exit 0
expect_out "changed 8 setting(s) on 4 GPU(s)"
expect_out_re "0 +locked GPU clocks +unknown +1005 MHz +SM 1005 MHz now +changed"
expect_out_re "3 +power limit +700 W +600 W +600 W +changed"
sleep 0.1
gpuclk --sim query --query-gpu=index,clocks.sm,power.limit --format=csv,noheader,nounits
expect_exit 0
expect_out "0, 1005, 600.00"; expect_out "3, 1005, 600.00"
# ... and `gpuclk` / `gpuclk clocks` show what gpuclk applied.
gpuclk --sim
expect_exit 0; expect_out "Set by gpuclk"; expect_out "GPU lock 1005 MHz, power 600 W"
# A lock shows in NVML as the "applications clocks setting" reason; with the application clocks
# at the maximum they are not blamed (issue 32: "application clocks hold the SM clock at 1980 of
# 1980 MHz", fix `reset --app-clocks`). The calibration card is busy (BF16 GEMM) from t = 62 s.
(
  export GPUCLK_SIM_STATE="$TEST_TMP/lock.state" GPUCLK_STATE_DIR="$TEST_TMP/lock-journal"
  export GPUCLK_SIM_START=62 GPUCLK_SIM_SPEED=1
  "$GPUCLK_BIN" --sim=h100-calibration set --lock-gpu-clocks 1200 >/dev/null
  sleep 0.3
  "$GPUCLK_BIN" --sim=h100-calibration
) >"$TEST_TMP/lock.out" 2>&1
OUT=$(cat "$TEST_TMP/lock.out"); RC=0; LAST_CMD="set --lock-gpu-clocks 1200; gpuclk (busy)"
expect_out "applications_clocks_setting"; expect_no_out "application clocks hold"
gpuclk --sim clocks -i 1
expect_exit 0; expect_out_re "locked GPU clocks +: 1005 MHz \(original unlocked\)"

# Setting the same again writes nothing and says so.
gpuclk --sim set --lock-gpu-clocks 1005 --power-limit 600
expect_exit 0; expect_out "nothing to change"; expect_no_out "| changed"

# --- One GPU set apart: status flags it. ---
gpuclk --sim set -i 3 --lock-gpu-clocks 990,1005
expect_exit 0
gpuclk --sim
expect_out "GPU 3: locked GPU clocks 990"; expect_out "differ from the other GPUs' 1005 MHz"
gpuclk --sim --format json clocks -i 3
expect_json '.gpus[0].gpuclk.differs_from_other_gpus' "locked GPU clocks 990–1005 MHz (others: 1005 MHz)"

# --- Validation: every GPU checked before the first write; errors name the nearest values. ---
gpuclk --sim set --app-clocks 2619,1234
expect_exit 2
expect_err "GPU 0: graphics clock (with memory 2619 MHz) 1234 MHz is not supported; nearest: 1230 MHz or 1245 MHz"
expect_err "GPU 3:"; expect_err "nothing was changed"; expect_err "--snap"
gpuclk --sim set --power-limit 900 -i 0
expect_exit 2; expect_err "power limit 900 W is outside this GPU's range 200 W–700 W; nearest: 700 W"
gpuclk --sim set --lock-gpu-clocks 1500,1400
expect_exit 2; expect_err "minimum 1500 MHz is above maximum 1400 MHz"
gpuclk --sim set --lock-gpu-clocks tdp,1500
expect_exit 2; expect_err "mixes MHz and a symbolic limit"
gpuclk --sim set
expect_exit 2; expect_err "nothing to set"
gpuclk --sim set --all -i 0 --power-limit 600
expect_exit 2; expect_err "not both"
# Hopper cannot lock memory clocks at run time: exit 3 naming application clocks instead.
gpuclk --sim set --lock-memory-clocks 2619
expect_exit 3; expect_err "cannot lock memory clocks at run time"; expect_err "--app-clocks MEM,GFX"
# Nothing of the above changed anything.
gpuclk --sim query --query-gpu=index,clocks.applications.graphics,power.limit --format=csv,noheader,nounits
expect_out "0, 1980, 600.00"

# --snap rounds; --dry-run writes nothing.
gpuclk --sim set -i 0 --app-clocks 2619,1234 --snap --dry-run
expect_exit 0
expect_out "graphics clock (with memory 2619 MHz) 1234 MHz snapped to 1230 MHz"
expect_out_re "0 +application clocks +1980/2619 MHz +1230/2619 MHz .*would change"
expect_out "dry run: would change 1 setting(s) on 1 GPU(s); nothing written"
gpuclk --sim query --query-gpu=clocks.applications.graphics --format=csv,noheader,nounits -i 0
expect_out "1980"
gpuclk --sim set -i 0 --app-clocks 2619,1234 --snap
expect_exit 0; expect_out_re "application clocks +1980/2619 MHz +1230/2619 MHz +1230/2619 MHz +changed"

# Symbolic limits: tdp locks the base clock (1590 MHz on an H100 SXM5).
gpuclk --sim set -i 2 --lock-gpu-clocks tdp
expect_exit 0; expect_out_re "locked GPU clocks +1005 MHz +tdp +SM [0-9]+ MHz now +changed"
gpuclk --sim journal --format json
expect_json '.gpus[2].applied.locked_gpu_clocks.min_mhz' "tdp"

# JSON output.
gpuclk --sim --format json set -i 1 --power-limit 650
expect_exit 0
expect_json '.settings[0].before' "600 W"; expect_json '.settings[0].read_back' "650 W"
expect_json '.settings[0].result' "changed"; expect_json '.exit_code' "0"

# --- reset: the driver's defaults. Memory locks are skipped on Hopper. ---
gpuclk --sim reset --dry-run
expect_exit 0; expect_no_out "locked memory clocks"; expect_out "would change"
gpuclk --sim reset
expect_exit 0
gpuclk --sim query --query-gpu=index,clocks.applications.graphics,power.limit --format=csv,noheader,nounits
expect_out "0, 1980, 700.00"; expect_out "2, 1980, 700.00"
gpuclk --sim reset
expect_exit 0; expect_out "nothing to reset"
# A dry run with nothing to change still says so, and reads nothing back: Read back is N/A.
gpuclk --sim reset --power-limit --dry-run
expect_exit 0; expect_out "nothing to reset: the GPUs already run the driver's defaults; dry run, nothing written"
expect_out_re "0 +power limit +700 W +700 W +N/A +unchanged"; expect_no_out "700 W      unchanged"
gpuclk --sim set -i 0 --power-limit 800 --snap --dry-run
expect_exit 0; expect_out "power limit 800 W clamped to 700 W"
expect_out_re "0 +power limit +700 W +700 W +N/A +unchanged"
expect_out "nothing to change: the GPUs already have these settings; dry run, nothing written"
gpuclk --sim --format json set -i 0 --power-limit 700 --dry-run
expect_exit 0; expect_json '.settings[0].read_back' "null"; expect_json '.settings[0].result' "unchanged"
gpuclk --sim reset --memory-clocks
expect_exit 0; expect_out "memory clocks cannot be locked on Hopper: nothing to reset"

gpuclk --sim restore
expect_exit 0
settings
[ "$OUT" == "$ORIGINAL" ] || fail "settings after restore differ from the original:
$OUT
vs
$ORIGINAL"

# --- Read-only mode refuses every write with exit 4 and changes nothing. ---
for args in "set --power-limit 600" "reset" "restore" "apply $(dirname "$0")/../../deploy/profiles/example.toml"; do
  GPUCLK_READ_ONLY=1 gpuclk --sim $args
  expect_exit 4; expect_err "read-only mode"; expect_err "GPUCLK_READ_ONLY"
  gpuclk --sim --read-only $args
  expect_exit 4; expect_err "read-only mode"
done
# A dry run only reads, so it is allowed.
GPUCLK_READ_ONLY=1 gpuclk --sim set --power-limit 600 --dry-run
expect_exit 0; expect_out "dry run"
settings
[ "$OUT" == "$ORIGINAL" ] || fail "read-only mode changed settings"

# --- Not root: the driver refuses; exit 4 naming what is needed, nothing changed. ---
gpuclk --sim unprivileged set --power-limit 600
expect_exit 4
expect_err "Insufficient Permissions"; expect_err "nothing was changed"; expect_err "root or grant CAP_SYS_ADMIN"
expect_out_re "0 +power limit +700 W +600 W .*FAILED"
gpuclk --sim unprivileged journal
expect_out "no GPU changed by gpuclk is recorded"

finish
