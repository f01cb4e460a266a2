#!/usr/bin/env bash
# nvtop (Debian's, which dlopens libnvidia-ml.so.1) on the simulator, as a user runs it:
# LD_LIBRARY_PATH=<build>/nvml-compat, in a tmux pane we read back. Every simulated GPU is listed
# with its name, SM clock, power and the scenario's process, on a frozen clock, with the values
# gpuclk query prints; the faults scenario's lost GPU is not listed as a working one.
# Skips (77) without nvtop or tmux: scripts/install-test-clients.sh installs nvtop.
source "$(dirname "$0")/lib.sh" "$1"

command -v nvtop >/dev/null || { echo "SKIP: nvtop is not installed (scripts/install-test-clients.sh)"; exit 77; }
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
COMPAT="$GPUCLK_BIN_DIR/nvml-compat"
[ -e "$COMPAT/libnvidia-ml.so.1" ] || { echo "FAIL: $COMPAT/libnvidia-ml.so.1 is missing (built with nvml_sim)"; exit 1; }

# One tmux server per screen: a server stopped by kill-server can still hold its socket when the
# next new-session connects to it ("server exited unexpectedly"; seen in CI), so none is reused.
SOCKETS=()
SOCKET=""
stop_servers() { local s; for s in "${SOCKETS[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done; }
trap 'stop_servers; rm -rf "$TEST_TMP"' EXIT
export HOME="$TEST_TMP/home"  # nvtop keeps its settings there
mkdir -p "$HOME"

# screen SCENARIO START [SPEED]: nvtop's screen for the scenario at START s, frozen unless SPEED
# is given, in $OUT.
screen() {
  local scenario=$1 start=$2 speed=${3:-0} pane
  stop_servers
  SOCKET="gpuclk-nvtop-$$-${#SOCKETS[@]}"
  SOCKETS+=("$SOCKET")
  tmux -L "$SOCKET" new-session -d -x 200 -y 60 \
    "env LD_LIBRARY_PATH='$COMPAT' LD_PRELOAD='$(sanitizer_runtime)' ASAN_OPTIONS=detect_leaks=0 \
       GPUCLK_SIM_SCENARIO=$scenario GPUCLK_SIM_SPEED=$speed \
       GPUCLK_SIM_START=$start GPUCLK_SIM_STATE='$TEST_TMP/$scenario-$speed.state' HOME='$HOME' \
       TERM=xterm-256color nvtop -d 5; sleep 30"
  for _ in $(seq "$(scaled 50)"); do
    pane=$(tmux -L "$SOCKET" capture-pane -p 2>/dev/null)
    grep -q "PID" <<<"$pane" && grep -q "POW" <<<"$pane" && break
    sleep 0.2
  done
  sleep 1  # one more refresh: processes are read after the devices
  OUT=$(tmux -L "$SOCKET" capture-pane -p)
  ERR=""
  LAST_CMD="nvtop ($scenario at ${start} s)"
}

# query SCENARIO START FIELDS: gpuclk query on the same frozen node, CSV without units.
query() {
  Q=$(GPUCLK_SIM_SCENARIO=$1 GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=$2 \
      GPUCLK_SIM_STATE="$TEST_TMP/$1-0.state" "$GPUCLK_BIN" --sim="$1" query \
      --fields "$3" --format csv,noheader,nounits 2>&1)
}

# Every GPU of the scenario: "Device N [name]", its SM clock and power as gpuclk sees them, and
# its process (pid, device, type) in the process list. A lost GPU (gpuclk: GPU is lost) is not
# listed; nvtop numbers the GPUs it shows from 0, so the ones after it move up.
expect_gpus() {
  local scenario=$1 start=$2 shown=0 index name sm draw limit pid
  query "$scenario" "$start" "index,name,clocks.sm,power.draw,power.limit"
  check; [ -n "$Q" ] || fail "gpuclk query printed nothing"
  while IFS=, read -r index name sm draw limit; do
    name=${name# }; sm=${sm// /}; draw=${draw// /}; limit=${limit// /}
    pid=$(($3 + index))
    if grep -qiE 'lost' <<<"$name $sm $draw"; then
      check; ! grep -qE "^ *$pid " <<<"$OUT" || fail "lost GPU $index: its process $pid is listed"
      continue
    fi
    check; grep -qF "Device $shown [$name]" <<<"$OUT" || fail "GPU $index: no 'Device $shown [$name]'"
    check; grep -qE "GPU ${sm}MHz" <<<"$OUT" || fail "GPU $index: no 'GPU ${sm}MHz' (gpuclk query: $sm MHz)"
    # nvtop prints whole watts (power.draw cut to W) and the limit.
    check; grep -qE "POW +${draw%.*} / ${limit%.*} W" <<<"$OUT" ||
      fail "GPU $index: no 'POW ${draw%.*} / ${limit%.*} W' (gpuclk query: $draw W of $limit W)"
    check; grep -qE "^ *$pid +[^ ]+ +$shown +Compute" <<<"$OUT" ||
      fail "GPU $index: process $pid not listed on device $shown"
    shown=$((shown + 1))
  done <<<"$Q"
  local listed
  listed=$(grep -oE 'Device [0-9]+ \[' <<<"$OUT" | wc -l)
  check; [ "$listed" -eq "$shown" ] || fail "$listed devices listed, expected $shown"
}

# default at t = 10 s: 4 H100s in the BF16 phase, each running pid 41000 + index.
screen default 10
expect_gpus default 10 41000

# Per-process utilization needs samples newer than the last one nvtop saw: with time running,
# each process shows the GPU's busy share (frozen, it stays at 0 %, as with a real idle sampler).
screen default 10 1
check; grep -qE "^ *41000 +[^ ]+ +0 +Compute +[1-9][0-9]*%" <<<"$OUT" ||
  fail "process 41000: no per-process GPU utilization with time running"

# misconfigured: shown as it is, GPU 2's link trained at Gen3 x8.
screen misconfigured 10
expect_gpus misconfigured 10 47000
check; grep -qF "PCIe GEN 3@ 8x" <<<"$OUT" || fail "misconfigured: GPU 2's Gen3 x8 link not shown"

# faults at 61 s: GPU 2 was lost at 60 s; nvtop lists the three others.
screen faults 61
expect_gpus faults 61 41000

finish
